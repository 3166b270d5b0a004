"""Atomic writes: the file appears complete or not at all, and nothing is left behind."""

import gzip
import stat

import pytest

from mlx.io import atomic_write_bytes, atomic_write_text


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_text_is_written_as_utf8_without_newline_translation(tmp_path):
    path = tmp_path / "sub" / "a.txt"
    assert atomic_write_text(path, "é\r\nx\n") == path
    assert path.read_bytes() == "é\r\nx\n".encode()
    from mlx.io import _umask

    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert leftovers(path.parent) == []


def test_bytes_or_a_writer_and_replacing_an_existing_file(tmp_path):
    path = tmp_path / "b.bin"
    atomic_write_bytes(str(path), b"old")
    atomic_write_bytes(path, lambda fh: fh.write(b"new"))
    assert path.read_bytes() == b"new"


def test_compressed_output_is_reproducible(tmp_path):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    atomic_write_bytes(a, b"x" * 1000, compress=True)
    atomic_write_bytes(b, lambda fh: fh.write(b"x" * 1000), compress=True)
    assert gzip.decompress(a.read_bytes()) == b"x" * 1000
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("exc", [ValueError("checksum"), KeyboardInterrupt()])
def test_a_failure_keeps_the_old_file_and_removes_the_temporary(tmp_path, exc):
    path = tmp_path / "c.txt"
    atomic_write_text(path, "old")

    def fail(fh):
        fh.write(b"partial")
        raise exc

    for compress in (False, True):
        with pytest.raises(type(exc)):
            atomic_write_bytes(path, fail, compress=compress, suffix=".part")
        assert path.read_text() == "old"
        assert leftovers(tmp_path) == []


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_the_users_umask(tmp_path, umask, mode):
    import os

    old = os.umask(umask)
    try:
        path = atomic_write_text(tmp_path / f"u{umask:o}.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_a_failed_write_removes_the_directories_it_created(tmp_path):
    def fail(fh):
        raise ValueError("download failed")

    with pytest.raises(ValueError):
        atomic_write_bytes(tmp_path / "new" / "deeper" / "f.gz", fail, compress=True)
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(ValueError):
        atomic_write_bytes(tmp_path / "kept" / "sub" / "f", fail)
    assert (tmp_path / "kept").exists() and not (tmp_path / "kept" / "sub").exists()
