"""Download registered datasets from their public sources, checksum verified.

Each file of a registry entry records its source (repository, commit, path) and the raw URL
``https://raw.githubusercontent.com/<repository>/<commit>/<path>``. The URL serves the raw,
uncompressed file; it is streamed to a temporary file next to its destination while its sha256
is computed, and renamed into place only when the checksum matches, so a failed or interrupted
download leaves nothing behind. A destination name ending in ``.gz`` (as in the registry, e.g.
``bibtex/bibtex-train.arff.gz``) is written gzip-compressed; others are written as downloaded.
The registered sha256 is that of the decompressed content, so both forms verify alike.

``base_url`` (or the environment variable ``MLX_DATA_MIRROR``) replaces
``https://raw.githubusercontent.com`` to use a mirror; the rest of the address is kept.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from mlx.data.cache import content_sha256
from mlx.data.paths import find_file, search_path, user_data_dir
from mlx.data.registry import get_entry
from mlx.errors import DataNotFoundError, MlxError
from mlx.io import atomic_write_bytes

__all__ = ["fetch", "file_url", "download", "DEFAULT_BASE_URL"]

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
_CHUNK = 1 << 16


def file_url(file_entry: dict, base_url: str | None = None) -> str:
    """The download address of one registry file.

    Built from its ``source`` (``repository``, ``commit``, ``path``) as
    ``<base>/<repository>/<commit>/<path>``, where ``base`` is ``base_url``, else
    ``$MLX_DATA_MIRROR``, else :data:`DEFAULT_BASE_URL`. A file without ``source`` uses its
    ``url`` as written.
    """
    base = base_url or os.environ.get("MLX_DATA_MIRROR") or DEFAULT_BASE_URL
    src = file_entry.get("source")
    if not src:
        if "url" not in file_entry:
            raise ValueError("a registry file needs 'source' or 'url'")
        url = file_entry["url"]
        if url.startswith(DEFAULT_BASE_URL):
            url = base.rstrip("/") + url[len(DEFAULT_BASE_URL):]
        return url
    return f"{base.rstrip('/')}/{src['repository']}/{src['commit']}/{src['path'].lstrip('/')}"


def download(url: str, dest, sha256: str, *, progress: bool = True, timeout: float = 60.0,
             label: str | None = None) -> Path:
    """Stream ``url`` to ``dest`` if its content has the given sha256.

    Written to a temporary file in ``dest``'s directory and renamed on success; ``dest``
    ending in ``.gz`` is written gzip-compressed. Raises
    :class:`~mlx.errors.DataNotFoundError` naming the URL on a network error, an HTTP error
    or a checksum mismatch; nothing is left behind then.
    """
    from tqdm import tqdm

    dest = Path(dest)
    who = f"{label}: " if label else ""

    def stream(out) -> None:
        h = hashlib.sha256()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                total = resp.headers.get("Content-Length")
                with tqdm(total=int(total) if total and total.isdigit() else None,
                          unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
                          desc=dest.name, disable=not progress, leave=False) as bar:
                    for chunk in iter(lambda: resp.read(_CHUNK), b""):
                        h.update(chunk)
                        out.write(chunk)
                        bar.update(len(chunk))
        except urllib.error.HTTPError as exc:
            raise DataNotFoundError(f"{who}download failed: {url}: HTTP {exc.code} "
                                    f"{exc.reason}") from None
        except urllib.error.URLError as exc:
            raise DataNotFoundError(f"{who}download failed: {url}: {exc.reason}") from None
        except (TimeoutError, OSError) as exc:
            raise DataNotFoundError(f"{who}download failed: {url}: {exc}") from None
        digest = h.hexdigest()
        if digest != sha256:
            raise DataNotFoundError(f"{who}checksum mismatch for {url}: content sha256 is "
                                    f"{digest}, the registry expects {sha256}; nothing was "
                                    "written")

    # Renamed into place only when the checksum matched: a failed download leaves nothing.
    return atomic_write_bytes(dest, stream, compress=dest.suffix == ".gz", suffix=".part")


def fetch(name: str, *, dest_dir=None, base_url: str | None = None, progress: bool = True,
          timeout: float = 60.0, entry: dict | None = None) -> list[Path]:
    """Download the files of registered dataset ``name`` that are not present yet.

    Parameters
    ----------
    name : str
        Registry name (also used in messages).
    dest_dir : path-like, optional
        Where to write; default the user data directory ``$MLX_HOME/datasets``. Each file goes
        to ``<dest_dir>/<relative path in the registry>``.
    base_url : str, optional
        Replaces ``https://raw.githubusercontent.com`` (default: ``$MLX_DATA_MIRROR``).
    progress : bool
        Show a progress bar per file on stderr.
    timeout : float
        Seconds to wait for the server on each connect or read.
    entry : dict, optional
        A registry entry to use instead of the registered one (``{"files": {role: {"path",
        "sha256", "source" or "url"}}}``).

    Returns
    -------
    list of Path
        The path of every file of the dataset: already present and verified (anywhere on the
        search path or in ``dest_dir``), or downloaded.

    Raises
    ------
    UnknownNameError
        ``name`` is not registered (and no ``entry`` is given).
    DataNotFoundError
        A download failed or did not match its checksum (the message names the URL).
    """
    if entry is None:
        entry = get_entry(name)
    dest_root = Path(dest_dir) if dest_dir is not None else user_data_dir()
    dirs = [dest_root] + [d for d in search_path() if d != dest_root]
    paths = []
    for role, f in entry["files"].items():
        rel = f["path"]
        present = find_file(rel, dirs)
        if present is not None:
            try:
                ok = content_sha256(present) == f["sha256"]
            except MlxError:  # a corrupt gzip file
                ok = False
            if ok:
                log.info("%s: %s already present at %s", name, role, present)
                paths.append(present)
                continue
            log.warning("%s: %s does not match its checksum; downloading it again", name,
                        present)
        url = file_url(f, base_url)
        dest = dest_root / rel
        log.info("%s: downloading %s -> %s", name, url, dest)
        try:
            paths.append(download(url, dest, f["sha256"], progress=progress, timeout=timeout,
                                  label=f"dataset '{name}'"))
        except DataNotFoundError as exc:
            if "checksum mismatch" in str(exc):
                raise
            raise DataNotFoundError(
                f"{exc}; to install it by hand, download that URL and save it (or its "
                f"gzip-compressed form) as ./datasets/{rel} or under a directory on "
                f"MLX_DATA_PATH, where its content will be checked against sha256 "
                f"{f['sha256']}") from None
    return paths
