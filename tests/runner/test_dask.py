"""The Dask backend: same results as a local run, data shipped once, faults survived.

A :class:`distributed.LocalCluster` of two worker processes on 127.0.0.1 stands in for a
cluster. The promises checked are the README's: results.csv equals the local run's (timing
columns aside), a worker killed mid-sweep loses nothing and duplicates nothing, an
unreachable scheduler is a one-line error, and workers with another mlx are refused.
"""

import os
import signal
import textwrap
import threading
import time

import pandas as pd
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

from mlx.cli import cli  # noqa: E402
from mlx.config import load_config  # noqa: E402
from mlx.errors import ConfigError, MlxError  # noqa: E402
from mlx.runner import dask_backend  # noqa: E402
from mlx.runner.dask_backend import check_worker_versions  # noqa: E402
from mlx.runner.experiment import run_experiment  # noqa: E402
from mlx.runner.results import TIMING_COLUMNS  # noqa: E402

TIMING = list(TIMING_COLUMNS)

CONFIG = """
name: dsk
seed: 3
dataset:
  synthetic: {n_samples: 300, n_features: 40, n_labels: 12, rank: 3, seed: 2, n_test: 100}
preprocess: [l2_normalize, bias]
methods:
  - name: br
    label: BR
    params: {loss: squared}
    select: {l2_reg: [0.1, 10.0]}
  - name: leml
    label: LEML
    params: {loss: logistic, max_iter: 2, l2_reg: 0.1}
  - name: wsabie
    params: {epochs: 1, learning_rate: 1.0e-3}
sweep:
  rank_ratio: [0.25, 0.5]
  observed_ratio: [1.0, 0.5]
metrics: [p@1, auc, hamming]
"""

# Slower cells (a few tenths of a second each), so a worker can be killed while it runs one.
SLOW = """
name: slow
seed: 1
dataset:
  synthetic: {n_samples: 1500, n_features: 200, n_labels: 40, rank: 5, seed: 3, n_test: 200,
              density: 0.3}
methods:
  - name: leml
    params: {loss: logistic, max_iter: 3, l2_reg: 0.1}
sweep:
  rank_ratio: [0.2, 0.4, 0.6]
  observed_ratio: [1.0, 0.5]
metrics: [p@1, auc]
"""


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory):
    """results.csv of the local runs of CONFIG and SLOW (``-j 1``), the references."""
    tmp = tmp_path_factory.mktemp("local")
    return {name: _run(_write(tmp, text, name), tmp / f"out-{name}", jobs=1)[1]
            for name, text in (("c", CONFIG), ("slow", SLOW))}


def _write(tmp_path, text, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def _run(path, out, **kw):
    summary = run_experiment(load_config(path), output=str(out), quiet=True, progress=False,
                             **kw)
    frame = pd.read_csv(summary.output / "results.csv",
                        dtype={"selected": str, "candidate": str, "message": str})
    return summary, frame.drop(columns=TIMING)


def test_a_dask_run_equals_the_local_run(tmp_path, cluster, local_runs):
    path = _write(tmp_path, CONFIG, "c")
    local = local_runs["c"]
    summary, remote = _run(path, tmp_path / "dask", backend="dask",
                           scheduler=cluster.scheduler_address)
    assert set(local["status"]) == {"ok"}
    pd.testing.assert_frame_equal(local, remote)
    assert summary.n_cells == 2 + 4 + 4          # BR has no rank axis


def test_shipped_data_gives_the_same_results(tmp_path, cluster, local_runs):
    path = _write(tmp_path, CONFIG, "c")
    local = local_runs["c"]
    _, shipped = _run(path, tmp_path / "ship", backend="dask",
                      scheduler=cluster.scheduler_address, ship_data=True)
    pd.testing.assert_frame_equal(local, shipped)


def test_a_shipped_dataset_is_never_read_from_disk(tmp_path):
    """A worker primed with shipped data runs cells of a dataset whose file it cannot see."""
    from dataclasses import replace

    from mlx.data.catalog import identify
    from mlx.runner import protocol
    from mlx.runner.sweep import expand

    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n" + "\n".join(f"{i % 5},{i % 3},{i * 0.1}" for i in range(60)))
    cfg = _write(tmp_path, f"""
        name: csvrun
        dataset: {{format: csv, train: {data}}}
        split: {{test_fraction: 0.3}}
        methods: [{{name: constant}}]
        metrics: [mse]
        """, "csv")
    config = load_config(cfg)
    cells = expand(replace(config, dataset=identify(config.dataset)))
    loaded = protocol.load_data(cells[0].dataset, whole=True)
    data.unlink()
    protocol._DATA_MEMO.clear()
    record = dask_backend._shipped(cells[0], loaded)
    assert record["status"] == "ok", record["message"]
    protocol._DATA_MEMO.clear()
    from mlx.runner.cells import run_cell
    assert run_cell(cells[0])["status"] == "error"          # without shipping: the file is gone


def test_a_worker_killed_mid_sweep_loses_and_duplicates_nothing(tmp_path, local_runs):
    path = _write(tmp_path, SLOW, "slow")
    local = local_runs["slow"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c, \
            distributed.Client(c) as client:
        result = {}

        def sweep():
            try:
                result["out"] = _run(path, tmp_path / "dask", backend="dask",
                                     scheduler=c.scheduler_address)
            except BaseException as exc:  # noqa: BLE001 - reported below
                result["exc"] = exc

        thread = threading.Thread(target=sweep)
        thread.start()
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and time.monotonic() < deadline:
            busy = [addr for addr, keys in client.processing().items() if keys]
            if busy:
                victim = busy[0]
            else:
                time.sleep(0.05)
        assert victim is not None, "no cell ever started"
        pid = client.run(os.getpid, workers=[victim])[victim]
        time.sleep(0.1)                                      # inside the cell's fit
        os.kill(pid, signal.SIGKILL)
        thread.join(180)
        assert not thread.is_alive()
    assert "exc" not in result, result.get("exc")
    summary, remote = result["out"]
    assert summary.n_cells == 6 and summary.counts == {"ok": 6}
    assert not remote.duplicated(subset=["cell_id", "split", "metric", "candidate"]).any()
    pd.testing.assert_frame_equal(local, remote)


def test_an_unreachable_scheduler_is_a_one_line_error_and_writes_nothing(tmp_path):
    path = _write(tmp_path, CONFIG, "c")
    started = time.monotonic()
    res = CliRunner().invoke(cli, ["run", "-q", "--backend", "dask", "--scheduler",
                                   "tcp://127.0.0.1:9", "--scheduler-timeout", "2",
                                   "-o", str(tmp_path / "out"), str(path)])
    assert res.exit_code == 1
    assert time.monotonic() - started < 30
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0].startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9 "
                               "within 2 s (")
    assert lines[0].endswith("); check the address and that the scheduler is running")
    assert not (tmp_path / "out").exists()


PORT_HINT = "(the scheduler listens on port 8786 unless told otherwise)"


@pytest.mark.parametrize("address", ["not a url", "tcp://", "tcp://host", "http://host:8786",
                                     "tcp://host:0", "tcp://host:99999", "host:port",
                                     "tcp://a b:8786", "tcp://host:8786/extra/path"])
def test_a_malformed_scheduler_address_is_refused_before_connecting(tmp_path, address):
    path = _write(tmp_path, CONFIG, "c")
    res = CliRunner().invoke(cli, ["run", "-q", "--backend", "dask", "--scheduler", address,
                                   "-o", str(tmp_path / "out"), str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == (f"Error: --scheduler: {address!r} is not a Dask scheduler address; "
                          "expected tcp://HOST:PORT (or tls, ws, wss, ucx), e.g. "
                          f"tcp://10.0.0.5:8786 {PORT_HINT}\n")
    assert not (tmp_path / "out").exists()
    cfg = CONFIG.replace("name: dsk", f"name: dsk\nrunner: {{backend: dask, scheduler: "
                                      f"'{address}'}}")
    res = CliRunner().invoke(cli, ["validate", str(_write(tmp_path, cfg, "r"))])
    assert res.exit_code == 2
    assert res.output.startswith(f"Error: {tmp_path / 'r.yaml'}: runner.scheduler: "
                                 f"{address!r} is not a Dask scheduler address;")


@pytest.fixture
def http_peer():
    """A web server on 127.0.0.1 (what the dashboard port or a proxy is)."""
    import http.server

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def talking_peer():
    """A server on 127.0.0.1 that answers every connection with an HTTP error at once."""
    import socket

    sock = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join()
    sock.close()


def test_a_web_server_as_scheduler_is_a_one_line_error_within_the_timeout(tmp_path, http_peer):
    path = _write(tmp_path, CONFIG, "c")
    started = time.monotonic()
    res = CliRunner().invoke(cli, ["run", "-q", "--backend", "dask", "--scheduler", http_peer,
                                   "--scheduler-timeout", "1", "-o", str(tmp_path / "out"),
                                   str(path)])
    elapsed = time.monotonic() - started
    assert res.exit_code == 1, res.output
    assert res.output == (f"Error: {http_peer} accepted the connection but sent no Dask "
                          "handshake within 1 s: it is not a Dask scheduler (a web server such "
                          "as the Dask dashboard, port 8787, waits silently); give the "
                          f"scheduler's address {PORT_HINT}\n")
    assert elapsed < 5, f"took {elapsed:.1f}s with a 1 s timeout"
    assert not (tmp_path / "out").exists()


def test_a_peer_answering_http_is_not_taken_for_a_scheduler(tmp_path, talking_peer):
    path = _write(tmp_path, CONFIG, "c")
    res = CliRunner().invoke(cli, ["run", "-q", "--backend", "dask", "--scheduler",
                                   talking_peer, "-o", str(tmp_path / "out"), str(path)])
    assert res.exit_code == 1, res.output
    assert res.output == (f"Error: {talking_peer} answered 'HTTP/1.1 400 Bad Request' instead "
                          "of a Dask handshake: it is not a Dask scheduler; give the "
                          f"scheduler's address {PORT_HINT}\n")


def test_a_lost_scheduler_keeps_the_finished_cells_for_a_resume(tmp_path):
    """The scheduler goes away after the first cells: one-line error; rerunning resumes."""
    path = _write(tmp_path, SLOW, "slow")
    out = tmp_path / "out"
    c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 host="127.0.0.1", dashboard_address=None)
    done = []
    stop = threading.Event()

    def killer():
        while not stop.is_set() and not list((out / "cells").glob("*.json")):
            time.sleep(0.05)
        done.append(len(list((out / "cells").glob("*.json"))))
        c.close(timeout=5)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        # The client retries a lost scheduler for distributed.comm.timeouts.connect (30 s by
        # default) before giving up: shortened here.
        with pytest.raises(MlxError) as e, \
                dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
            _run(path, out, backend="dask", scheduler=c.scheduler_address)
    finally:
        stop.set()
        thread.join(60)
    assert str(e.value).startswith(f"lost the Dask scheduler at {c.scheduler_address} (")
    assert str(e.value).endswith("); the cells finished so far are kept: run the same command "
                                 "again to resume")
    kept = len(list((out / "cells").glob("*.json")))
    assert 1 <= kept < 6
    summary, _ = _run(path, out, jobs=1)                     # resume locally
    assert summary.n_reused == kept and summary.counts == {"ok": 6}


def test_workers_without_mlx_or_with_another_version_are_refused():
    with pytest.raises(MlxError) as e:
        check_worker_versions({"tcp://a:1": "0.1.0", "tcp://b:2": ModuleNotFoundError("x")},
                              "0.1.0")
    assert str(e.value) == ("Dask worker tcp://b:2 does not have mlx-multilabel installed (1 of "
                            "2 workers); install version 0.1.0 on every worker (pip install "
                            "'mlx-multilabel[dask]')")
    with pytest.raises(MlxError) as e:
        check_worker_versions({"tcp://a:1": "0.1.0", "tcp://b:2": "0.0.9"}, "0.1.0")
    assert str(e.value) == ("Dask worker tcp://b:2 has mlx-multilabel 0.0.9, but this run uses "
                            "0.1.0 (1 of 2 workers differ); install 0.1.0 on every worker")
    check_worker_versions({"tcp://a:1": "0.1.0"}, "0.1.0")


def test_the_cluster_workers_are_checked_before_any_cell(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(dask_backend, "local_version", lambda: "9.9.9")
    path = _write(tmp_path, CONFIG, "c")
    with pytest.raises(MlxError) as e:
        _run(path, tmp_path / "v", backend="dask", scheduler=cluster.scheduler_address)
    assert "but this run uses 9.9.9 (2 of 2 workers differ)" in str(e.value)
    assert not (tmp_path / "v").exists()


def test_without_distributed_the_backend_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kw):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", fake)
    path = _write(tmp_path, CONFIG, "c")
    res = CliRunner().invoke(cli, ["run", "-q", "--backend", "dask", "-o", str(tmp_path / "o"),
                                   str(path)])
    assert res.exit_code == 2
    assert res.output.strip() == ("Error: --backend dask needs dask.distributed, which is not "
                                  "installed; install it with: pip install "
                                  "'mlx-multilabel[dask]'")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("runner, key, message", [
    ("{backend: spark}", "runner.backend",
     "must be 'local' (a process pool on this machine) or 'dask' (a Dask cluster). Got "
     "'spark' instead."),
    ("{scheduler: 'tcp://h:1'}", "runner.scheduler",
     "is only used with backend 'dask'; set runner.backend: dask"),
    ("{backend: dask, ship_data: maybe}", "runner.ship_data", "must be"),
])
def test_runner_keys_are_checked(tmp_path, runner, key, message):
    path = _write(tmp_path, CONFIG + f"runner: {runner}\n", "r")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert e.value.key_path == key and message in str(e.value)


# ----------------------------------------------------------------------------- shipped data
class _FakeFuture:
    def __init__(self, key, thunk):
        self.key, self._thunk = key, thunk

    def result(self):
        return self._thunk()


class _NoSharedDiskClient:
    """A client whose "workers" cannot see the data files: they are deleted once the data
    are scattered, and every task runs with empty per-process memos on an unpickled copy of
    what was scattered (as a worker on another machine would)."""

    def __init__(self, files):
        self.files, self.scattered, self.mapped = files, [], []

    def scheduler_info(self):
        return {"workers": {"tcp://w:1": {}}}

    def run(self, fn, *args, on_error=None):
        return {"tcp://w:1": dask_backend.local_version()}

    def scatter(self, value, *, broadcast=False, hash=True):
        self.scattered.append((value, broadcast))
        return ("scattered", len(self.scattered) - 1)

    def map(self, fn, cells, *, pure=True, **kwargs):
        import pickle

        from mlx.data import catalog
        from mlx.runner import protocol

        self.mapped.append((fn, kwargs))
        for f in self.files:
            f.unlink()

        def task(cell):
            protocol._DATA_MEMO.clear()
            catalog.clear_memo()
            args = {k: pickle.loads(pickle.dumps(self.scattered[v[1]][0]))
                    if isinstance(v, tuple) and v[:1] == ("scattered",) else v
                    for k, v in kwargs.items()}
            return fn(pickle.loads(pickle.dumps(cell)), **args)

        return [_FakeFuture(i, lambda c=c: task(c)) for i, c in enumerate(cells)]

    def cancel(self, futures):
        pass

    def close(self, timeout=None):
        pass


class _FakeKilledWorker(Exception):
    pass


class _LostSchedulerClient:
    """A client whose scheduler goes away as soon as cells are submitted."""

    def scheduler_info(self):
        return {"workers": {"tcp://w:1": {}}}

    def run(self, fn, *args, on_error=None):
        return {"tcp://w:1": dask_backend.local_version()}

    def map(self, fn, cells, *, pure=True, **kwargs):
        raise OSError("Timed out trying to connect to tcp://fake:1")

    def cancel(self, futures):
        pass

    def close(self, timeout=None):
        pass


@pytest.mark.parametrize("force", [False, True])
def test_lost_scheduler_hint_is_right_after_force(tmp_path, monkeypatch, force):
    """After a --force run lost its scheduler, "run the same command again" would recompute
    every cell: the hint says to run it without --force."""
    from mlx.runner.experiment import resume_hint
    from mlx.runner.sweep import expand

    cfg = _write(tmp_path, """
        name: lost
        dataset: {synthetic: {n_samples: 40, n_test: 20, n_features: 5, n_labels: 4, seed: 1}}
        methods: [{name: constant}]
        metrics: [p@1]
        """, "lost")
    _fake_distributed(monkeypatch, _LostSchedulerClient())
    with pytest.raises(MlxError) as e:
        dask_backend.run_cells_dask(expand(load_config(cfg)), on_done=lambda c, r: None,
                                    scheduler="tcp://fake:1", force=force)
    assert str(e.value).endswith("the cells finished so far are kept: " + resume_hint(force))
    assert ("without --force" in str(e.value)) is force


def _fake_distributed(monkeypatch, client):
    """Route :func:`dask_backend.run_cells_dask` to ``client`` (no scheduler, no workers)."""
    import types

    fake = types.SimpleNamespace(as_completed=iter, KilledWorker=_FakeKilledWorker,
                                 comm=types.SimpleNamespace(CommClosedError=OSError))
    monkeypatch.setattr(dask_backend, "_import_distributed", lambda: fake)
    monkeypatch.setattr(dask_backend, "_connect", lambda *a, **k: (client, None))


@pytest.mark.parametrize("split, n_cells", [("", None), ("", 1),
                                            ("split: {test_fraction: 0.3, pool: true}", None)])
def test_shipped_data_reach_workers_without_the_files(tmp_path, monkeypatch, split, n_cells):
    """--ship-data scatters the loaded data (the official split, or all rows for a random
    split) once, to every worker, and each task takes it by reference; a worker never needs
    the files. Official split and random split both."""
    from dataclasses import replace

    from mlx.data.catalog import identify
    from mlx.runner import protocol
    from mlx.runner.cells import run_cell
    from mlx.runner.sweep import expand

    files = [tmp_path / "tr.csv", tmp_path / "te.csv"]
    for f, n in zip(files, (40, 20)):
        f.write_text("a,b,y\n" + "\n".join(f"{i % 5},{i % 3},{(i * 7) % 11 * 0.1}"
                                            for i in range(n)))
    cfg = _write(tmp_path, f"""
        name: ship
        dataset: {{format: csv, train: {files[0]}, test: {files[1]}}}
        {split}
        methods: [{{name: constant}}, {{name: br, params: {{loss: squared}}}}]
        metrics: [mse]
        """, "ship")
    config = load_config(cfg)
    cells = expand(replace(config, dataset=identify(config.dataset)))[:n_cells]
    local = [run_cell(c) for c in cells]
    assert {r["status"] for r in local} == {"ok"}
    expected = protocol.load_data(cells[0].dataset, whole=bool(split))

    client = _NoSharedDiskClient(files)
    _fake_distributed(monkeypatch, client)
    protocol._DATA_MEMO.clear()
    done = {}
    dask_backend.run_cells_dask(cells, on_done=lambda c, r: done.__setitem__(c.cell_id(), r),
                                scheduler="tcp://fake:1", ship_data=True)
    assert len(client.scattered) == 1
    value, broadcast = client.scattered[0]
    assert broadcast and type(value) is type(expected)
    assert (value.X != expected.X).nnz == 0 if not hasattr(value, "train") else \
        (value.train.X != expected.train.X).nnz == 0 and (value.test.X != expected.test.X).nnz == 0
    [(fn, kwargs)] = client.mapped
    assert kwargs == {"data": ("scattered", 0)}          # by reference, not the data per task
    for cell, ref in zip(cells, local):
        got = done[cell.cell_id()]
        assert got["status"] == "ok", got["message"]
        assert got["results"] == ref["results"]


def test_a_cell_whose_workers_keep_dying_is_recorded_as_an_error(tmp_path, monkeypatch):
    """After Dask gives up on a cell (KilledWorker), the cell gets an error record of its own
    (its id, empty results, the reason) and the others still report."""
    from mlx.runner.sweep import expand

    cells = expand(load_config(_write(tmp_path, CONFIG, "c")))[:3]

    class Dying(_NoSharedDiskClient):
        def map(self, fn, cells, *, pure=True, **kwargs):
            def result(i):
                if i == 1:
                    raise _FakeKilledWorker("Attempted to run task x on 3 different workers\nmore")
                return {"cell_id": cells[i].cell_id(), "status": "ok"}
            return [_FakeFuture(i, lambda i=i: result(i)) for i in range(len(cells))]

    _fake_distributed(monkeypatch, Dying([]))
    done = []
    dask_backend.run_cells_dask(cells, on_done=lambda c, r: done.append((c, r)),
                                scheduler="tcp://fake:1")
    assert [c for c, _ in done] == cells
    dead = done[1][1]
    assert dead["cell_id"] == cells[1].cell_id() and dead["status"] == "error"
    assert dead["results"] == {} and dead["fit_seconds"] is None
    assert dead["message"] == ("the cell's Dask worker died too often (_FakeKilledWorker: "
                               "Attempted to run task x on 3 different workers)")
    assert [r["status"] for _, r in done] == ["ok", "error", "ok"]
