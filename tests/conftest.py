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
