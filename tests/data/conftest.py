import gzip
import os
from pathlib import Path

import pytest

from mlx.data import catalog

# MLX_DATA_PATH may be relative to where pytest was started; the tests below change the
# working directory, so make it absolute once, now.
_DATA_PATH = os.pathsep.join(
    str(Path(p).resolve()) for p in os.environ.get("MLX_DATA_PATH", "").split(os.pathsep) if p)


@pytest.fixture(autouse=True)
def _isolated_data_env(tmp_path, monkeypatch):
    """Per test: an empty MLX_HOME, an empty working directory, no mirror, no memo."""
    monkeypatch.setenv("MLX_HOME", str(tmp_path / "mlx-home"))
    if _DATA_PATH:
        monkeypatch.setenv("MLX_DATA_PATH", _DATA_PATH)
    else:
        monkeypatch.delenv("MLX_DATA_PATH", raising=False)
    monkeypatch.delenv("MLX_DATA_MIRROR", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    catalog.clear_memo()
    yield
    catalog.clear_memo()


@pytest.fixture
def write(tmp_path):
    """write(name, text, gz=False) -> Path: a file under tmp_path/files."""
    root = tmp_path / "files"

    def _write(name: str, text: str, *, gz: bool = False) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
        return path

    return _write


@pytest.fixture
def data_dirs():
    """Directories of MLX_DATA_PATH (absolute); the real-data tests use only these."""
    return [Path(p) for p in _DATA_PATH.split(os.pathsep) if p]


@pytest.fixture
def staged(data_dirs):
    """staged(rel) -> Path: the data file ``rel`` in the first MLX_DATA_PATH directory that has
    it; skips the test when none does."""

    def _staged(rel: str) -> Path:
        for d in data_dirs:
            if (d / rel).is_file():
                return d / rel
        pytest.skip(f"{rel} not on MLX_DATA_PATH")

    return _staged
