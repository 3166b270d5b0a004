"""plt (napkinXC) and omikuji: what the shared contract checks cannot see (the optional
package missing, the packages' quirks, reproducibility, learning something)."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from mlx.cli import cli
from mlx.data.synthetic import make_low_rank_multilabel
from mlx.methods import METHODS
from mlx.methods.base import FitContext, InvalidParameterError
from mlx.methods.xmc import PLT, Omikuji

pytest.importorskip("napkinxc")
pytest.importorskip("omikuji")


def _p_at_1(scores, Y) -> float:
    top = np.argmax(scores, axis=1)
    return float(np.asarray(Y.tocsr()[np.arange(Y.shape[0]), top]).mean())


@pytest.fixture(scope="module")
def problem():
    split = make_low_rank_multilabel(n_samples=600, n_test=300, n_features=40, n_labels=25,
                                     rank=4, density=0.3, seed=3)
    return split.train, split.test


# ----------------------------------------------------------------------------- the extra
@pytest.mark.parametrize("name, package", [("plt", "napkinxc"), ("omikuji", "omikuji")])
def test_missing_package_is_a_one_line_message(monkeypatch, tmp_path, name, package):
    monkeypatch.setitem(sys.modules, package, None)  # import raises ImportError
    message = (f"{name} needs the optional package {package}, which is not installed; "
               "install it with pip install 'mlx-multilabel[xmc]'")
    method = METHODS.get(name)()
    with pytest.raises(InvalidParameterError) as info:
        method.check_context(FitContext(n_samples=10, n_features=3, n_labels=2))
    assert info.value.param == "name" and str(info.value) == message
    X = sp.csr_matrix(np.eye(4, 3))
    with pytest.raises(ModuleNotFoundError) as info:
        method.fit(X, sp.csr_matrix(np.eye(4, 2)))
    assert str(info.value) == message
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent(f"""\
        name: t
        dataset:
          synthetic: {{n_samples: 40, n_features: 6, n_labels: 4, rank: 2, seed: 0}}
        methods:
          - name: constant
          - name: {name}
        metrics: [p@1]
        """))
    r = CliRunner().invoke(cli, ["validate", str(config)], obj={})
    assert r.exit_code == 2
    assert r.output == f"Error: {config}: methods[1].name: {message}\n"


def test_missing_labels_are_skipped_with_the_reason():
    for cls in (PLT, Omikuji):
        reason = cls().skip(FitContext(n_samples=10, n_features=3, n_labels=2,
                                       observed_ratio=0.5))
        assert reason == f"{cls.name} does not support missing labels"


# ----------------------------------------------------------------------------- plt
def test_plt_learns_and_is_reproducible_across_threads(problem):
    train, test = problem
    base = PLT(c=10.0, random_state=5).fit(train.X, train.Y)
    scores = base.decision_function(test.X)
    assert np.all((scores >= 0) & (scores <= 1))
    constant = METHODS.get("constant")().fit(train.X, train.Y).decision_function(test.X)
    assert _p_at_1(scores, test.Y) > _p_at_1(constant, test.Y) + 0.15
    two = PLT(c=10.0, random_state=5, n_threads=2).fit(train.X, train.Y)
    np.testing.assert_array_equal(two.decision_function(test.X), scores)


def test_plt_takes_the_runners_seeds_above_2_31():
    """The runner's method seeds go up to 2^32 - 1; napkinXC's seed is a C int."""
    X = sp.csr_matrix(np.eye(6, 3) + 0.5)
    Y = sp.csr_matrix(np.tile([[1.0, 0], [0, 1]], (3, 1)))
    big = PLT(c=10.0, random_state=2 ** 32 - 1).fit(X, Y)
    assert big.seed_ == (2 ** 32 - 1) % (2 ** 31 - 1)
    np.testing.assert_array_equal(big.decision_function(X), PLT(c=10.0, random_state=big.seed_).fit(
        X, Y).decision_function(X))


def test_plt_dual_solver_is_the_packages_default_and_close(problem):
    """The dual solver is not reproducible (unseeded coordinate order); its scores stay
    close to the primal solver's on a learnable problem."""
    train, test = problem
    primal = PLT(c=10.0, random_state=5).fit(train.X, train.Y).decision_function(test.X)
    dual = PLT(c=10.0, random_state=5, solver="dual").fit(train.X, train.Y)
    dual = dual.decision_function(test.X)
    assert abs(_p_at_1(primal, test.Y) - _p_at_1(dual, test.Y)) < 0.05


def test_plt_gets_python_int_labels(monkeypatch, problem):
    """napkinXC refuses numpy integers as labels ("Unsupported row data type")."""
    from napkinxc.models import PLT as _PLT

    seen = {}
    original = _PLT.fit

    def spy(self, X, Y):
        seen["types"] = {type(j) for row in Y for j in row}
        return original(self, X, Y)

    monkeypatch.setattr(_PLT, "fit", spy)
    train, _ = problem
    PLT(c=10.0, random_state=0).fit(train.X, train.Y)
    assert seen["types"] == {int}


# ----------------------------------------------------------------------------- omikuji
def _training_file(monkeypatch, X, Y, **params) -> str:
    import omikuji

    seen = {}
    original = omikuji.Model.train_on_data

    def spy(path, *args, **kwargs):
        seen["text"] = open(path, encoding="ascii").read()
        return original(path, *args, **kwargs)

    monkeypatch.setattr(omikuji.Model, "train_on_data", spy)
    method = Omikuji(**params).fit(X, Y)
    return seen["text"], method


def test_omikuji_training_file_and_input_forms(monkeypatch):
    X = sp.csr_matrix(np.array([[0.5, 0, 2], [0, 0, 0], [0, 1.25, 0], [3, 0, 0]]))
    Y = sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 0], [0, 1]], dtype=float))
    text, method = _training_file(monkeypatch, X, Y)
    assert text == "3 3 2\n0 0:0.5 2:2.0\n 1:1.25\n1 0:3.0\n"
    assert method.message_ == ("omikuji: 1 training row(s) without features left out (the "
                               "package cannot load rows with labels but no features)")
    assert np.isfinite(method.decision_function(X)).all()
    # dense, boolean and non-canonical inputs write the same file
    assert _training_file(monkeypatch, X.toarray(), Y.toarray() != 0)[0] == text
    Xz = X.copy()
    Xz.data[0] = 0.0  # an explicitly stored zero is no feature
    assert _training_file(monkeypatch, Xz, Y)[0].startswith("3 3 2\n0 2:2.0\n")


def test_omikuji_learns_and_its_variation_is_bounded(problem):
    """Omikuji cannot be seeded; two fits differ, but little, on a learnable problem."""
    train, test = problem
    constant = METHODS.get("constant")().fit(train.X, train.Y).decision_function(test.X)
    p1 = [_p_at_1(Omikuji().fit(train.X, train.Y).decision_function(test.X), test.Y)
          for _ in range(2)]
    assert min(p1) > _p_at_1(constant, test.Y) + 0.15
    assert abs(p1[0] - p1[1]) < 0.05
    bonsai = Omikuji(cluster_k=100, cluster_balanced=False, max_depth=3)
    assert _p_at_1(bonsai.fit(train.X, train.Y).decision_function(test.X), test.Y) > \
        _p_at_1(constant, test.Y) + 0.15


def test_no_positive_label_gives_zero_scores():
    """The packages abort the process on label sets without any positive."""
    X = sp.csr_matrix(np.eye(5, 3))
    for cls in (PLT, Omikuji):
        method = cls().fit(X, sp.csr_matrix((5, 2)))
        assert method.message_ == f"{cls.name}: no positive label in the training data; " \
                                  "every label scores 0"
        np.testing.assert_array_equal(method.decision_function(X), np.zeros((5, 2)))


def test_omikuji_ranks_the_labels_outside_its_beam_by_frequency(problem):
    train, _ = problem
    model = Omikuji(beam_size=1, n_trees=1).fit(train.X, train.Y)
    scores = model.decision_function(train.X[:20])
    freq = np.asarray(train.Y.sum(axis=0)).ravel() / train.Y.shape[0]
    outside = scores <= 0
    assert outside.any() and (~outside).any()
    for row, out in zip(scores, outside):
        np.testing.assert_array_equal(row[out], freq[out] - 1.0)
        assert not out.all() and row[~out].min() > row[out].max()
