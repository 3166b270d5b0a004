"""The output directory of a run: checked writable before any work, and held by one run.

:func:`probe_output` creates the directory and writes and removes a temporary file in it, so
an output path that is a file, lies under a file, or is not writable fails in a second with
``<path>: cannot write results: <reason>`` rather than after hours of computing.

:class:`OutputLock` is an advisory lock (``fcntl.flock``) on ``<output>/.mlx.lock``: a second
``mlx run`` on the same directory says which run holds it and stops (or, with ``--wait``,
waits), instead of computing every cell twice. The kernel releases the lock when its process
ends, however it ends, so a killed run never leaves a stale lock behind.

Nothing outside the output directory is ever touched: the lock is opened without following
a symbolic link (``O_NOFOLLOW``) and must be a regular file with one name, so a planted link
(symbolic or hard) to another file is refused before anything is truncated;
:func:`check_no_links` refuses, before any work, a link where a run writes (``cells``,
``results.csv``, ...), and every file is written as a new temporary file renamed into place
(:mod:`mlx.io`), which refuses a destination that is a link.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import tempfile
import time
from pathlib import Path

from mlx.errors import LinkRefusedError, OutputError

__all__ = ["probe_output", "remove_created", "check_no_links", "OutputLock", "LOCK_NAME"]

LOCK_NAME = ".mlx.lock"


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def probe_output(out: str | os.PathLike) -> list[Path]:
    """Create ``out`` if needed and check that files can be written in it.

    Returns the directories it created (deepest last), so that a run failing before it
    writes anything can remove them with :func:`remove_created` and leave no trace.
    """
    out = Path(out)
    if "\0" in str(out):
        raise OutputError(f"{str(out)!r}: cannot write results: the path contains a NUL "
                          f"byte, which no file name can hold; choose another output")
    created = [p for p in [out, *out.parents] if not p.exists()][::-1]
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".mlx-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        remove_created(created)
        raise OutputError(f"{out}: cannot write results: {_reason(exc)}") from None
    return created


#: What a run writes in its output directory.
RUN_FILES = ("cells", "models", "results.csv", "manifest.json", "table.md", "table.csv",
             "table.tex", "config.resolved.yaml")


def check_no_links(out: str | os.PathLike, names=RUN_FILES) -> None:
    """Refuse entries ``names`` of ``out`` that are symbolic links, before any work (what a
    run writes into must be the output directory's own)."""
    for name in names:
        if (Path(out) / name).is_symlink():
            raise LinkRefusedError(Path(out) / name)


def remove_created(created: list[Path]) -> None:
    """Remove ``created`` directories (deepest first) that hold nothing but a lock file."""
    for path in reversed(created):
        try:
            lock = path / LOCK_NAME
            if lock.exists() and not lock.stat().st_size:
                lock.unlink()
            path.rmdir()
        except OSError:
            return


class OutputLock:
    """Hold ``<out>/.mlx.lock`` for the duration of a ``with`` block.

    Parameters
    ----------
    out : path
        The (existing, writable) output directory.
    wait : bool
        Block until the lock is free instead of failing.
    """

    def __init__(self, out: str | os.PathLike, *, wait: bool = False):
        self.path = Path(out) / LOCK_NAME
        self.wait = wait
        self._fh = None

    def _holder(self) -> str:
        try:
            info = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            info = {}
        if not info:
            return "another mlx run"
        return (f"another mlx run (pid {info.get('pid')} on {info.get('host')}, started "
                f"{info.get('started')})")

    def __enter__(self):
        import fcntl

        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
        except OSError as exc:
            if self.path.is_symlink():
                raise LinkRefusedError(self.path) from None
            raise OutputError(f"{self.path}: cannot create the lock file: {_reason(exc)}") \
                from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(fd)
            raise LinkRefusedError(self.path, "a hard link to another file" if
                                   stat.S_ISREG(st.st_mode) else "not a regular file")
        os.set_blocking(fd, True)
        fh = open(fd, "a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BlockingIOError:
            fh.close()
            raise OutputError(f"{self.path.parent}: {self._holder()} is writing to this output "
                              f"directory; wait for it (mlx run --wait) or choose another "
                              f"--output") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "started": time.strftime("%Y-%m-%dT%H:%M:%S")}))
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc):
        import fcntl

        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
        return False
