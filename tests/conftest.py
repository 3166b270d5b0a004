import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Each test session gets its own user cache, so tests never touch ~/.cache/mlx."""
    home = tmp_path_factory.getbasetemp() / "mlx-home"
    monkeypatch.setenv("MLX_HOME", str(home))


def data_available(*relpaths: str) -> bool:
    for d in os.environ.get("MLX_DATA_PATH", "").split(os.pathsep):
        if d and all((Path(d) / p).exists() for p in relpaths):
            return True
    return False


_CORPUS_OUTPUTS: dict = {}


@pytest.fixture(scope="session")
def corpus_outputs() -> dict:
    """What each hostile or bad input of the corpora printed, by case id, for the test that
    greps them all (tests/test_hostile.py)."""
    return _CORPUS_OUTPUTS


def write_dense_multilabel(directory, seed: int = 0, sizes=(60, 30)) -> tuple[Path, Path]:
    """LIBSVM multi-label train and test files with dense real features (every one of 6
    values stored, none a count) and two of 4 labels per row: ``(train, test)`` paths."""
    import numpy as np

    rng = np.random.default_rng(seed)
    paths = (Path(directory) / "dense-train.svm", Path(directory) / "dense-test.svm")
    for path, n in zip(paths, sizes):
        path.write_text("".join(
            ",".join(map(str, sorted(rng.choice(4, 2, replace=False)))) + " "
            + " ".join(f"{j}:{v:.3f}" for j, v in enumerate(rng.uniform(0.1, 1, 6), 1)) + "\n"
            for _ in range(n)))
    return paths


def random_multilabel(seed=0, n=30, d=5, L=6, *, density=0.7, positive_rate=0.3, mask=None,
                      positives_observed=False):
    """A small random multi-label problem ``(X, Y, observed)`` for method tests: Gaussian
    features kept with probability ``density``, labels positive with ``positive_rate``, and
    with ``mask`` an observed-entry mask of that rate (None: every entry observed).
    ``positives_observed`` keeps only the positives inside the mask."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.normal(size=(n, d)) * (rng.random((n, d)) < density))
    Y = sp.csr_matrix((rng.random((n, L)) < positive_rate).astype(float))
    observed = None
    if mask is not None:
        observed = sp.csr_matrix((rng.random((n, L)) < mask).astype(float))
        if positives_observed:
            Y = Y.multiply(observed).tocsr()
    return X, Y, observed


def exact_tolerance(change: float, scale: float):
    """A relative tolerance ``tol`` with ``tol * scale == change`` exactly in floating point,
    or None when no float has that product (rounding can skip it)."""
    import numpy as np

    tol = change / scale
    while tol * scale < change:
        tol = np.nextafter(tol, 1.0)
    while tol * scale > change:
        tol = np.nextafter(tol, 0.0)
    return tol if tol * scale == change else None


def tolerance_at_equality(change: float, scale: float) -> float:
    """A relative tolerance ``tol`` with ``tol * scale == change`` exactly in floating point,
    to test a stopping rule at its boundary (``change <= tol * |scale|`` must stop)."""
    tol = exact_tolerance(change, scale)
    if tol is None:
        pytest.fail("no tolerance equals this relative change exactly")
    return tol
