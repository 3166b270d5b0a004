"""The caches of dataset loading: content checksums, parsed matrices and recent splits.

Caches (all under ``$MLX_HOME/cache``, default ``~/.cache/mlx/cache``)
--------------------------------------------------------------------
* ``sha256-index.json``: content checksums keyed by (absolute path, size, mtime), so a file is
  hashed once, not on every load (:func:`content_sha256`).
* ``parsed/<key>.npz``: parsed matrices (:func:`save_parsed`, :func:`load_parsed`), keyed by
  the content checksums of the files, the format, its options and :data:`PARSER_VERSION`.
  Written atomically (temporary file, then ``os.replace``), so concurrent loaders never see a
  partial file; the loader ignores and rewrites a damaged cache file.
* In each process, the last few loaded splits are kept in memory (:func:`memo_get`,
  :func:`memo_put`, :func:`clear_memo`). They are shared: do not modify their matrices in
  place.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from pathlib import Path

from mlx.data.dataset import Dataset
from mlx.data.lineparse import reading
from mlx.data.paths import cache_dir
from mlx.io import atomic_write_bytes
from mlx.lazy import lazy_module

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = [
    "PARSER_VERSION",
    "content_sha256",
    "parsed_path",
    "save_parsed",
    "load_parsed",
    "memo_get",
    "memo_put",
    "clear_memo",
]

log = logging.getLogger(__name__)

#: Bump when a reader changes what it returns, to invalidate cached parses.
PARSER_VERSION = 1

_MEMO_SIZE = 4
_memo: OrderedDict = OrderedDict()


# ----------------------------------------------------------------------------- checksums
def _sha_index_path() -> Path:
    return cache_dir() / "sha256-index.json"


def _read_sha_index() -> dict:
    try:
        with open(_sha_index_path(), encoding="utf-8") as fh:
            index = json.load(fh)
        return index if isinstance(index, dict) else {}
    except (OSError, ValueError):
        return {}


def content_sha256(path) -> str:
    """sha256 of the file's content, decompressed if it is gzip.

    Remembered in ``$MLX_HOME/cache/sha256-index.json`` by (absolute path, size, mtime), so
    an unchanged file is hashed once.
    """
    path = Path(path).resolve()
    st = path.stat()
    stamp = [st.st_size, st.st_mtime_ns]
    index = _read_sha_index()
    hit = index.get(str(path))
    if isinstance(hit, list) and len(hit) == 3 and hit[:2] == stamp:
        return hit[2]
    h = hashlib.sha256()
    with reading(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    index = _read_sha_index()  # re-read: another process may have added entries
    index[str(path)] = stamp + [digest]
    try:
        atomic_write_bytes(_sha_index_path(), json.dumps(index, indent=0).encode())
    except OSError as exc:
        log.debug("cannot update the checksum index: %s", exc)
    return digest


# ----------------------------------------------------------------------------- parsed data
def parsed_path(key: str) -> Path:
    """Where the parsed matrices with cache key ``key`` are stored."""
    return cache_dir() / "parsed" / f"{key}.npz"


def save_parsed(path: Path, parts: dict) -> None:
    """Write ``parts`` (role -> :class:`~mlx.data.dataset.Dataset`) to ``path`` atomically."""
    arrays = {}
    meta = {"roles": list(parts), "parts": {}}
    for role, ds in parts.items():
        for mat_name in ("X", "Y"):
            M = getattr(ds, mat_name)
            arrays[f"{role}.{mat_name}.data"] = M.data
            arrays[f"{role}.{mat_name}.indices"] = M.indices
            arrays[f"{role}.{mat_name}.indptr"] = M.indptr
            arrays[f"{role}.{mat_name}.shape"] = np.asarray(M.shape, dtype=np.int64)
        meta["parts"][role] = {"name": ds.name, "task": ds.task,
                               "label_names": list(ds.label_names)
                               if ds.label_names is not None else None}
    arrays["meta"] = np.array(json.dumps(meta))
    atomic_write_bytes(path, lambda fh: np.savez(fh, **arrays))


def load_parsed(path: Path) -> dict:
    """Read what :func:`save_parsed` wrote; a damaged file raises ``OSError``, ``ValueError``,
    ``KeyError`` or :class:`zipfile.BadZipFile`."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        parts = {}
        for role in meta["roles"]:
            mats = {}
            for mat_name in ("X", "Y"):
                shape = tuple(int(s) for s in z[f"{role}.{mat_name}.shape"])
                mats[mat_name] = sp.csr_matrix((z[f"{role}.{mat_name}.data"],
                                                z[f"{role}.{mat_name}.indices"],
                                                z[f"{role}.{mat_name}.indptr"]), shape=shape)
            m = meta["parts"][role]
            names = tuple(m["label_names"]) if m["label_names"] is not None else None
            parts[role] = Dataset(X=mats["X"], Y=mats["Y"], name=m["name"], task=m["task"],
                                  label_names=names)
    return parts


# ----------------------------------------------------------------------------- memo
def clear_memo() -> None:
    """Forget the splits kept in memory by this process."""
    _memo.clear()


def memo_get(key):
    """The value remembered under ``key`` (now the most recent one), or None."""
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]
    return None


def memo_put(key, value) -> None:
    """Remember ``value`` under ``key``, forgetting the least recently used beyond a few."""
    _memo[key] = value
    _memo.move_to_end(key)
    while len(_memo) > _MEMO_SIZE:
        _memo.popitem(last=False)
