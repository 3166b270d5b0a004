"""Start-up stays light: the command-line module and the runner load no heavy library."""

import subprocess
import sys

import pytest

HEAVY = ("numba", "pandas", "matplotlib", "liblinear", "sklearn", "plotly")


def _loaded(code: str, modules=HEAVY) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print(' '.join(m for m in {tuple(modules)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("code", [
    "import mlx.cli",
    "import mlx.cli, mlx.runner.experiment",
    "from mlx.methods import METHODS; METHODS.names(); 'leml' in METHODS",
])
def test_import_loads_no_heavy_library(code):
    assert _loaded(code) == []


def test_the_cli_and_the_runner_load_no_numpy_until_a_cell_runs():
    assert _loaded("import mlx.cli, mlx.runner.experiment", ("numpy", "scipy")) == []


def test_the_runners_blas_threads_are_the_fits():
    from mlx.numerics.spmm import BLAS_THREADS
    from mlx.runner.cells import BLAS_THREADS_PER_CELL

    assert BLAS_THREADS_PER_CELL == BLAS_THREADS == 1


def test_method_module_loads_when_used():
    methods = ("mlx.methods.br", "mlx.methods.leml")
    assert _loaded("from mlx.methods import METHODS; METHODS.names(); 'br' in METHODS",
                   methods) == []
    assert _loaded("from mlx.methods import METHODS; METHODS.get('br')", methods) == [methods[0]]


def test_liblinear_loads_when_br_fits():
    code = ("import numpy as np, scipy.sparse as sp\n"
            "from mlx.methods import METHODS\n"
            "X = sp.csr_matrix(np.eye(4)); Y = sp.csr_matrix(np.eye(4)[:, :2])\n"
            "METHODS.get('br')(loss='logistic').fit(X, Y)")
    assert _loaded(code, ("liblinear",)) == ["liblinear"]


@pytest.mark.parametrize("name", ["leml", "cplst", "br", "bcs", "constant"])
def test_fitting_and_scoring_a_method_loads_no_scikit_learn(name):
    """Methods implement scikit-learn's estimator protocol without inheriting from it:
    importing scikit-learn (with scipy.stats and pandas) would cost a run 0.7 s."""
    code = ("import numpy as np, scipy.sparse as sp\n"
            "from mlx.methods import METHODS\n"
            "rng = np.random.default_rng(0)\n"
            "X = sp.csr_matrix(rng.random((40, 6))); Y = sp.csr_matrix(rng.random((40, 5)) < 0.3)\n"
            f"m = METHODS.get({name!r})(**({{'rank': 2}} if {name!r} in ('leml', 'cplst', 'bcs') "
            "else {})).fit(X, Y)\n"
            "m.decision_function(X)")
    assert _loaded(code, ("sklearn", "pandas")) == []


def test_lazy_registry_lists_every_method_and_suggests():
    from mlx.errors import UnknownNameError
    from mlx.methods import METHODS

    assert METHODS.names() == ["bcs", "br", "constant", "cplst", "landmark", "leml", "lsvv",
                               "mom", "omikuji", "plt", "wsabie"]
    assert "leml" in METHODS
    assert METHODS.get("leml").name == "leml"
    with pytest.raises(UnknownNameError, match="Did you mean 'leml'"):
        METHODS.get("lemll")
