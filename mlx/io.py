"""Atomic file writes: a file appears complete under its name, or not at all.

The content goes to a temporary file in the destination's directory (so the final rename
never crosses a file system), which is then renamed over the destination with
:func:`os.replace`. Readers, including other processes, see the old file or the new one,
never a partial one; on any failure, including ``KeyboardInterrupt``, the temporary file is
removed and the destination is left as it was, and directories created for it are removed
again. The file gets the mode any new file gets under the user's umask (``0o666 & ~umask``,
as other tools' files do; ``mkstemp`` alone would give ``0o600``); the destination's
directory is created when missing.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write_bytes", "atomic_write_text"]


def atomic_write_bytes(path: str | os.PathLike, content: bytes | Callable[[BinaryIO], object],
                       *, compress: bool = False, suffix: str = ".tmp") -> Path:
    """Write ``content`` to ``path`` atomically; return ``path`` as a :class:`~pathlib.Path`.

    Parameters
    ----------
    path : path-like
    content : bytes or callable
        The bytes to write, or ``content(fileobj)``, which writes to a binary file object.
        An exception raised by the callable (for instance after checking what it wrote)
        leaves nothing behind and propagates.
    compress : bool, default False
        Write gzip-compressed (header mtime 0, so equal content gives equal files); a callable
        then writes the uncompressed bytes.
    suffix : str, default ".tmp"
        Suffix of the temporary file ``.<name>.<random><suffix>``.
    """
    path = Path(path)
    created = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    write = content if callable(content) else (lambda fh: fh.write(content))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            if compress:
                gz = gzip.GzipFile(fileobj=fh, mode="wb", mtime=0)
                write(gz)
                gz.close()  # only on success: a failure stays the exception raised
            else:
                write(fh)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        for directory in created:                # deepest first; only if still empty
            try:
                directory.rmdir()
            except OSError:
                break
        raise
    return path


def _umask() -> int:
    """The process umask (read by setting it and restoring it at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (encoded, no newline translation); return
    ``path`` as a :class:`~pathlib.Path`. See :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode(encoding))
