"""Atomic file writes: a file appears complete under its name, or not at all.

The content goes to a temporary file in the destination's directory (so the final rename
never crosses a file system), which is then renamed over the destination with
:func:`os.replace`. Readers, including other processes, see the old file or the new one,
never a partial one; on any failure, including ``KeyboardInterrupt``, the temporary file is
removed and the destination is left as it was, and directories created for it are removed
again. The file gets the mode any new file gets under the user's umask (``0o666 & ~umask``,
as other tools' files do; ``mkstemp`` alone would give ``0o600``); the destination's
directory is created when missing.

Nothing is written through a symbolic link: a destination that is a link is refused with
:class:`~mlx.errors.LinkRefusedError` (replacing it would be safe for its target, but
the user meant the link for something). A write that fails (``ENOSPC``, ``EFBIG`` under a
file-size limit, ``EIO``) raises :class:`~mlx.errors.WriteFailedError` naming the path and the
reason; both are :class:`OSError` subclasses.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from mlx.errors import LinkRefusedError, WriteFailedError

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_failed"]


def write_failed(path, exc: OSError) -> WriteFailedError:
    """The one-line error for a failed write of ``path`` (the reason and what to do)."""
    import errno

    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        todo = "free space on that file system or choose another output directory"
    elif exc.errno == errno.EFBIG:
        todo = "the file-size limit (ulimit -f) is too small for it; raise it"
    else:
        todo = "check the file system and its permissions"
    return WriteFailedError(f"{path}: cannot write: {reason}; {todo}")


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
    if path.is_symlink():
        raise LinkRefusedError(path)
    created = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
    write = content if callable(content) else (lambda fh: fh.write(content))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    except OSError as exc:
        raise write_failed(path, exc) from None
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
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        for directory in created:                # deepest first; only if still empty
            try:
                directory.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError) and not isinstance(exc, (LinkRefusedError,
                                                             WriteFailedError)):
            raise write_failed(path, exc) from None
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
