"""Running cells on a Dask cluster (``mlx run --backend dask``).

:func:`run_cells_dask` has the contract of :func:`mlx.runner.cells.run_cells`: it calls
``on_done(cell, record)`` in this process as each cell finishes, so the cell cache,
results.csv and the progress lines are the same as a local run's. The cells go to the
workers with ``client.map(run_cell, cells)``; :func:`~mlx.runner.cells.run_cell` pins BLAS
to one thread itself and never raises for a failing method, so a deterministic failure is
recorded once as ``error`` and never retried.

* **Data.** By default a worker finds the files on its own data search path
  (``MLX_DATA_PATH``): the right choice when the workers share a file system. With
  ``ship_data`` the data are loaded here once, scattered to every worker once
  (``client.scatter(..., broadcast=True)``), and each cell task takes the scattered object
  by reference: never re-sent per cell.
* **Faults.** A worker that dies mid-cell loses only that attempt: the scheduler gives the
  cell to another worker (Dask's own rescheduling, up to
  ``distributed.scheduler.allowed-failures`` deaths per cell, after which the cell is
  recorded as ``error``). A scheduler that cannot be reached, or that goes away during the
  run, is a one-line :class:`~mlx.errors.MlxError`; the cells finished before that are in
  the cell cache, so running the same command again resumes.
* **Versions.** Every worker must have the same version of mlx as this process; a worker
  without it, or with another version, is refused before any cell is sent.

Without a scheduler address a :class:`distributed.LocalCluster` of ``jobs`` single-threaded
worker processes is started on 127.0.0.1 for the run (useful to test a setup locally).
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import struct
import time
from concurrent.futures import CancelledError

from mlx.errors import ConfigError, MlxError

__all__ = ["run_cells_dask", "check_worker_versions", "check_scheduler_address", "DIST_NAME",
           "INSTALL_HINT"]

log = logging.getLogger(__name__)

DIST_NAME = "mlx-multilabel"
INSTALL_HINT = "pip install 'mlx-multilabel[dask]'"


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ConfigError(None, None, f"--backend dask needs dask.distributed, which is not "
                                      f"installed; install it with: {INSTALL_HINT}") from None
    return distributed


def local_version() -> str:
    try:
        return importlib.metadata.version(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a tree
        from mlx import __version__
        return __version__


def check_worker_versions(versions: dict, expected: str) -> None:
    """Refuse workers without mlx or with another version.

    ``versions`` maps each worker address to what ``importlib.metadata.version`` gave there
    (a string) or the exception it raised.
    """
    missing = sorted(addr for addr, v in versions.items() if not isinstance(v, str))
    if missing:
        raise MlxError(f"Dask worker {missing[0]} does not have {DIST_NAME} installed "
                       f"({len(missing)} of {len(versions)} workers); install version "
                       f"{expected} on every worker ({INSTALL_HINT})")
    wrong = sorted((addr, v) for addr, v in versions.items() if v != expected)
    if wrong:
        addr, v = wrong[0]
        raise MlxError(f"Dask worker {addr} has {DIST_NAME} {v}, but this run uses {expected} "
                       f"({len(wrong)} of {len(versions)} workers differ); install {expected} "
                       f"on every worker")


_ADDRESS = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
                      r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})/?")
_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_PORT_HINT = "the scheduler listens on port 8786 unless told otherwise"
#: A Dask handshake is a few hundred bytes; its 8-byte length prefix says so.
_MAX_HANDSHAKE = 1 << 20


def check_scheduler_address(address: str, *, source: str | None = None,
                            key_path: str = "--scheduler") -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a Dask scheduler address such as ``tcp://host:8786``
    (scheme optional: tcp); anything else is a one-line :class:`ConfigError`."""
    m = _ADDRESS.fullmatch(str(address).strip())
    scheme = (m.group("scheme") or "tcp").lower() if m else None
    port = int(m.group("port")) if m else 0
    if m is None or scheme not in _SCHEMES or not 1 <= port <= 65535:
        raise ConfigError(source, key_path,
                          f"{str(address)[:80]!r} is not a Dask scheduler address; expected "
                          f"tcp://HOST:PORT (or {', '.join(_SCHEMES[1:])}), e.g. "
                          f"tcp://10.0.0.5:8786 ({_PORT_HINT})")
    return scheme, m.group("host").strip("[]"), port


def _probe(address: str, host: str, port: int, timeout: float) -> None:
    """Check within ``timeout`` that ``host:port`` speaks Dask's TCP protocol: a scheduler
    sends its handshake as soon as it accepts a connection, an 8-byte length then that many
    bytes. A web server (the dashboard, a proxy) waits silently or answers with text."""
    import socket

    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise _unreachable(address, timeout, exc) from None
    head = b""
    try:
        while len(head) < 8:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(8 - len(head))
            if not chunk:
                break
            head += chunk
    except (socket.timeout, TimeoutError):
        sock.close()
        raise MlxError(f"{address} accepted the connection but sent no Dask handshake within "
                       f"{timeout:g} s: it is not a Dask scheduler (a web server such as the "
                       f"Dask dashboard, port 8787, waits silently); give the scheduler's "
                       f"address ({_PORT_HINT})") from None
    except OSError as exc:
        sock.close()
        raise _unreachable(address, timeout, exc) from None
    size = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
    if not 0 < size <= _MAX_HANDSHAKE and head:
        try:                                        # the rest of its first line, to show
            sock.settimeout(0.2)
            head += sock.recv(72)
        except OSError:
            pass
    sock.close()
    if not 0 < size <= _MAX_HANDSHAKE:
        what = "closed the connection"
        if head:                            # (a peer closing at once sent nothing to show)
            shown = head.decode("ascii", "replace").splitlines()[0].strip()[:80]
            what = f"answered {shown!r}"
        raise MlxError(f"{address} {what} instead of a Dask handshake: it is not a Dask "
                       f"scheduler; give the scheduler's address ({_PORT_HINT})")


def _unreachable(scheduler, timeout, exc) -> MlxError:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return MlxError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                    f"({reason}); check the address and that the scheduler is running")


def _connect(distributed, scheduler: str | None, jobs: int, timeout: float):
    """``(client, cluster)``; ``cluster`` is None when connecting to ``scheduler``."""
    if scheduler is None:
        cluster = distributed.LocalCluster(n_workers=jobs, threads_per_worker=1,
                                           processes=True, host="127.0.0.1",
                                           dashboard_address=None)
        return distributed.Client(cluster), cluster
    scheme, host, port = check_scheduler_address(scheduler)
    started = time.monotonic()
    if scheme == "tcp":
        _probe(scheduler, host, port, timeout)
    try:
        client = distributed.Client(scheduler,
                                    timeout=max(0.1, timeout - (time.monotonic() - started)))
    except (OSError, TimeoutError) as exc:
        raise _unreachable(scheduler, timeout, exc) from None
    return client, None


def _shipped(cell, data):
    """Run ``cell`` with the scattered ``data`` as its dataset (no file access)."""
    from mlx.runner.cells import run_cell
    from mlx.runner.protocol import prime_data

    prime_data(cell.dataset, whole=cell.split is not None, value=data)
    return run_cell(cell)


def _killed_record(cell, exc) -> dict:
    from mlx.runner.cells import run_cell_record

    record = run_cell_record(cell)
    record.update(status="error", results={},
                  message=f"the cell's Dask worker died too often "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    return record


def run_cells_dask(cells, *, on_done, scheduler: str | None = None, jobs: int = 2,
                   ship_data: bool = False, timeout: float = 10.0, force: bool = False) -> None:
    """Run ``cells`` on Dask; call ``on_done(cell, record)`` here as each finishes.

    ``force``: the run recomputes finished cells, so the resume hint after a lost scheduler
    says to run the command without ``--force``."""
    distributed = _import_distributed()
    if not cells:
        return
    client, cluster = _connect(distributed, scheduler, jobs, timeout)
    where = scheduler or "a local Dask cluster"
    futures = []
    try:
        if not client.scheduler_info().get("workers"):
            client.wait_for_workers(1, timeout=timeout)
        versions = client.run(importlib.metadata.version, DIST_NAME, on_error="return")
        check_worker_versions(versions, local_version())
        from mlx.runner.cells import run_cell

        if ship_data:
            from mlx.runner.protocol import load_data

            first = cells[0]
            data = client.scatter(load_data(first.dataset, whole=first.split is not None),
                                  broadcast=True, hash=False)
            futures = client.map(_shipped, cells, data=data, pure=False)
        else:
            futures = client.map(run_cell, cells, pure=False)
        by_key = {f.key: cell for f, cell in zip(futures, cells)}
        for fut in distributed.as_completed(futures):
            cell = by_key[fut.key]
            try:
                record = fut.result()
            except distributed.KilledWorker as exc:
                record = _killed_record(cell, exc)
            on_done(cell, record)
    except MlxError:
        raise
    except (OSError, TimeoutError, CancelledError, distributed.comm.CommClosedError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        from mlx.runner.experiment import resume_hint

        raise MlxError(f"lost the Dask scheduler at {where} ({reason}); the cells finished so "
                       f"far are kept: {resume_hint(force)}") from None
    finally:
        try:
            if futures:
                client.cancel(futures)
            client.close(timeout=2)
        except Exception:  # noqa: BLE001 - closing a client whose scheduler is gone
            log.debug("closing the Dask client failed", exc_info=True)
        if cluster is not None:
            cluster.close(timeout=5)
