"""The Dask backend's checks in isolation: the scheduler probe against scripted peers on
127.0.0.1, address parsing at its bounds, and the texts of its error records and messages.

Each peer accepts one connection and plays a script (send bytes, wait, close, reset), so
every branch of :func:`mlx.runner.dask_backend._probe` runs without a scheduler.
"""

import socket
import struct
import threading
import time

import pytest

from mlx.errors import ConfigError, MlxError
from mlx.runner import dask_backend
from mlx.runner.dask_backend import check_scheduler_address

PORT_HINT = "the scheduler listens on port 8786 unless told otherwise"


class Peer:
    """A one-connection server on 127.0.0.1 playing ``script``: a list of bytes to send,
    float seconds to wait, ``"close"`` or ``"reset"`` (close with RST)."""

    def __init__(self, script):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.script = script
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.sock.accept()
        try:
            for step in self.script:
                if isinstance(step, bytes):
                    conn.sendall(step)
                elif isinstance(step, float):
                    if self.done.wait(step):
                        break
                elif step == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
                    break
                elif step == "close":
                    break
        finally:
            conn.close()

    def probe(self, timeout=2.0):
        dask_backend._probe(self.address, "127.0.0.1", self.port, timeout)

    def close(self):
        self.done.set()
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def peer():
    made = []

    def make(*script):
        made.append(Peer(list(script)))
        return made[-1]

    yield make
    for p in made:
        p.close()


def handshake(size, body=b""):
    return struct.pack("<Q", size) + body


@pytest.mark.parametrize("script", [
    [handshake(100, b"x" * 100), 5.0],                             # prefix and body at once
    [handshake(100)[:3], 0.05, handshake(100)[3:] + b"x" * 100, 5.0],   # prefix in two parts
    [0.3, handshake(100, b"x" * 100), 5.0],                        # a scheduler slow to answer
    [handshake(1, b"x"), 5.0],                                     # the smallest size
    [handshake(1 << 20), 5.0],                                     # the largest size accepted
])
def test_a_dask_handshake_passes(peer, script):
    peer(*script).probe()


def test_a_handshake_over_the_largest_size_is_refused(peer):
    p = peer(handshake((1 << 20) + 1), "close")
    with pytest.raises(MlxError, match="instead of a Dask handshake"):
        p.probe()


def test_a_peer_closing_at_once_closed_the_connection(peer):
    p = peer("close")
    with pytest.raises(MlxError) as e:
        p.probe()
    assert str(e.value) == (f"{p.address} closed the connection instead of a Dask handshake: "
                            f"it is not a Dask scheduler; give the scheduler's address "
                            f"({PORT_HINT})")


def test_a_short_answer_is_not_a_handshake(peer):
    p = peer(b"abc", "close")
    with pytest.raises(MlxError) as e:
        p.probe()
    assert str(e.value).startswith(f"{p.address} answered 'abc' instead of a Dask handshake")


def test_a_zero_size_prefix_is_shown_with_what_follows(peer):
    p = peer(b"\x00" * 8 + b"tail", "close")
    with pytest.raises(MlxError) as e:
        p.probe()
    assert str(e.value).startswith(f"{p.address} answered {chr(0) * 8 + 'tail'!r} instead of")


def test_non_ascii_answers_are_shown_replaced(peer):
    p = peer(b"\xff\xfeHELLO\xc3\xa9 more", "close")
    with pytest.raises(MlxError) as e:
        p.probe()
    assert str(e.value).startswith(f"{p.address} answered '\ufffd\ufffdHELLO\ufffd\ufffd more' "
                                   f"instead of a Dask handshake")


def test_the_rest_of_a_wrong_answer_is_awaited_briefly_not_until_the_peer_closes(peer):
    p = peer(b"HTTP/1.1", 8.0)                 # eight bytes of text, then silence
    started = time.monotonic()
    with pytest.raises(MlxError, match="answered 'HTTP/1.1' instead of a Dask handshake"):
        p.probe(timeout=5.0)
    assert time.monotonic() - started < 1.0


def test_a_silent_peer_fails_at_the_timeout(peer):
    p = peer(8.0)
    started = time.monotonic()
    with pytest.raises(MlxError) as e:
        p.probe(timeout=0.3)
    assert time.monotonic() - started < 0.9
    assert str(e.value).startswith(f"{p.address} accepted the connection but sent no Dask "
                                   f"handshake within 0.3 s: it is not a Dask scheduler")


def test_a_closed_port_is_unreachable_with_the_system_reason():
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    address = f"tcp://127.0.0.1:{port}"
    with pytest.raises(MlxError) as e:
        dask_backend._probe(address, "127.0.0.1", port, 2.0)
    assert str(e.value) == (f"cannot reach the Dask scheduler at {address} within 2 s "
                            f"([Errno 111] Connection refused); check the address and that the "
                            f"scheduler is running")


def test_a_connection_reset_while_waiting_is_unreachable(peer):
    p = peer(0.05, "reset")
    with pytest.raises(MlxError) as e:
        p.probe(timeout=2.0)
    assert str(e.value) == (f"cannot reach the Dask scheduler at {p.address} within 2 s "
                            f"([Errno 104] Connection reset by peer); check the address and "
                            f"that the scheduler is running")


def test_the_unreachable_reason_is_the_first_line_or_the_exception_type():
    e = dask_backend._unreachable("tcp://h:1", 2.5, OSError("refused here\nand more"))
    assert str(e) == ("cannot reach the Dask scheduler at tcp://h:1 within 2.5 s (refused "
                      "here); check the address and that the scheduler is running")
    e = dask_backend._unreachable("tcp://h:1", 1.0, TimeoutError())
    assert str(e) == ("cannot reach the Dask scheduler at tcp://h:1 within 1 s (TimeoutError); "
                      "check the address and that the scheduler is running")


@pytest.mark.parametrize("address, expected", [
    ("tcp://host:65535", ("tcp", "host", 65535)),
    ("tcp://host:1", ("tcp", "host", 1)),
    ("[::1]:8786", ("tcp", "::1", 8786)),
    ("TLS://XENON-X:8786/", ("tls", "XENON-X", 8786)),
])
def test_scheduler_addresses_at_the_bounds(address, expected):
    assert check_scheduler_address(address) == expected


def test_a_port_past_65535_is_refused():
    with pytest.raises(ConfigError, match="'tcp://host:65536' is not a Dask scheduler address"):
        check_scheduler_address("tcp://host:65536")


def test_a_long_bad_address_is_shown_cut_at_80_characters():
    address = "x" * 100
    with pytest.raises(ConfigError) as e:
        check_scheduler_address(address)
    assert str(e.value).startswith(f"--scheduler: {'x' * 80!r} is not a Dask scheduler address")


class _Killed(Exception):
    pass


def test_a_killed_cell_without_a_reason_text_names_the_exception_alone():
    from mlx.config import parse_config
    from mlx.runner.sweep import expand

    config = parse_config({"name": "k", "dataset": {"synthetic": {
        "n_samples": 20, "n_test": 10, "n_features": 3, "n_labels": 3, "seed": 1}},
        "methods": ["constant"], "metrics": ["p@1"]}, source="k.yaml")
    cell = expand(config)[0]
    record = dask_backend._killed_record(cell, _Killed())
    assert record["message"] == "the cell's Dask worker died too often (_Killed: )"
    assert record["status"] == "error" and record["results"] == {}


# ------------------------------------------------------------ what is asked of Dask, exactly
class _SpyCluster:
    made = []

    def __init__(self, **kwargs):
        self.kwargs, self.closed = kwargs, []
        _SpyCluster.made.append(self)

    def close(self, **kwargs):
        self.closed.append(kwargs)


class _SpyFuture:
    def __init__(self, key, value):
        self.key, self.value = key, value

    def result(self):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


class _SpyClient:
    """Records every call; ``map`` answers each cell with an ok record (or raises
    ``map_raises``) without running it."""

    def __init__(self, target, **kwargs):
        self.target, self.kwargs, self.calls = target, kwargs, []
        self.map_raises = None

    def scheduler_info(self):
        return {"workers": {}}                     # none yet: the run waits for one

    def wait_for_workers(self, *args, **kwargs):
        self.calls.append(("wait_for_workers", args, kwargs))

    def run(self, fn, *args, **kwargs):
        self.calls.append(("run", (fn,) + args, kwargs))
        return {"tcp://w:1": dask_backend.local_version()}

    def scatter(self, value, **kwargs):
        self.calls.append(("scatter", (), kwargs))
        return "token"

    def map(self, fn, cells, **kwargs):
        self.calls.append(("map", (fn, len(cells)), kwargs))
        if self.map_raises is not None:
            raise self.map_raises
        return [_SpyFuture(i, {"cell_id": c.cell_id(), "status": "ok"})
                for i, c in enumerate(cells)]

    def cancel(self, futures):
        self.calls.append(("cancel", (list(futures),), {}))

    def close(self, **kwargs):
        self.calls.append(("close", (), kwargs))


@pytest.fixture
def spy(monkeypatch):
    """A stand-in for ``distributed`` that records what the backend asks of it."""
    import types

    clients = []

    def client(target, **kwargs):
        if isinstance(target, str) and target.endswith(":9"):
            raise OSError("refused by the spy\nsecond line")
        clients.append(_SpyClient(target, **kwargs))
        return clients[-1]

    _SpyCluster.made = []
    fake = types.SimpleNamespace(LocalCluster=_SpyCluster, Client=client, as_completed=iter,
                                 KilledWorker=_Killed,
                                 comm=types.SimpleNamespace(CommClosedError=EOFError))
    probes = []
    monkeypatch.setattr(dask_backend, "_import_distributed", lambda: fake)
    monkeypatch.setattr(dask_backend, "_probe", lambda *a: probes.append(a))
    return types.SimpleNamespace(clients=clients, probes=probes)


def _cells(n=2):
    from mlx.config import parse_config
    from mlx.runner.sweep import expand

    config = parse_config({"name": "k", "dataset": {"synthetic": {
        "n_samples": 20, "n_test": 10, "n_features": 3, "n_labels": 3, "seed": 1}},
        "methods": ["constant"], "metrics": ["p@1"], "sweep": {"repetitions": n}},
        source="k.yaml")
    return expand(config)


def test_a_local_cluster_is_single_threaded_processes_on_loopback_without_a_dashboard(spy):
    from mlx.runner.cells import run_cell

    cells, done = _cells(), []
    dask_backend.run_cells_dask(cells, on_done=lambda c, r: done.append(c))   # defaults
    assert done == cells
    (cluster,) = _SpyCluster.made
    assert cluster.kwargs == {"n_workers": 2, "threads_per_worker": 1, "processes": True,
                              "host": "127.0.0.1", "dashboard_address": None}
    assert cluster.closed == [{"timeout": 5}]
    (client,) = spy.clients
    assert client.target is cluster and client.kwargs == {}
    assert client.calls[0] == ("wait_for_workers", (1,), {"timeout": 10.0})
    assert client.calls[1] == ("run", (importlib_version(), dask_backend.DIST_NAME),
                               {"on_error": "return"})
    assert client.calls[2] == ("map", (run_cell, 2), {"pure": False})
    assert client.calls[3][0] == "cancel" and len(client.calls[3][1][0]) == 2
    assert client.calls[4] == ("close", (), {"timeout": 2})
    assert spy.probes == []


def importlib_version():
    import importlib.metadata

    return importlib.metadata.version


def test_jobs_and_timeout_reach_the_cluster_and_the_wait(spy):
    dask_backend.run_cells_dask(_cells(), on_done=lambda c, r: None, jobs=5, timeout=3.5)
    assert _SpyCluster.made[0].kwargs["n_workers"] == 5
    assert spy.clients[0].calls[0] == ("wait_for_workers", (1,), {"timeout": 3.5})


def test_shipped_data_are_scattered_once_unhashed_and_passed_by_reference(spy, monkeypatch):
    from mlx.runner import protocol

    monkeypatch.setattr(protocol, "load_data", lambda dataset, whole: "the data")
    dask_backend.run_cells_dask(_cells(), on_done=lambda c, r: None, ship_data=True)
    calls = spy.clients[0].calls
    assert ("scatter", (), {"broadcast": True, "hash": False}) in calls
    assert ("map", (dask_backend._shipped, 2), {"data": "token", "pure": False}) in calls


def test_a_scheduler_is_probed_then_connected_within_what_is_left_of_the_timeout(spy):
    dask_backend.run_cells_dask(_cells(), on_done=lambda c, r: None,
                                scheduler="tcp://10.1.2.3:8786", timeout=4.0)
    assert spy.probes == [("tcp://10.1.2.3:8786", "10.1.2.3", 8786, 4.0)]
    (client,) = spy.clients
    assert client.target == "tcp://10.1.2.3:8786"
    assert set(client.kwargs) == {"timeout"} and 3.0 < client.kwargs["timeout"] <= 4.0
    assert _SpyCluster.made == []


def test_a_scheduler_that_refuses_the_client_is_unreachable(spy):
    with pytest.raises(MlxError) as e:
        dask_backend.run_cells_dask(_cells(), on_done=lambda c, r: None,
                                    scheduler="tcp://10.1.2.3:9", timeout=4.0)
    assert str(e.value) == ("cannot reach the Dask scheduler at tcp://10.1.2.3:9 within 4 s "
                            "(refused by the spy); check the address and that the scheduler is "
                            "running")


@pytest.mark.parametrize("exc, reason", [(OSError(), "OSError"),
                                         (EOFError("gone\nmore"), "gone")])
def test_a_scheduler_lost_on_a_local_cluster_names_it(spy, monkeypatch, exc, reason):
    from mlx.runner.experiment import resume_hint

    monkeypatch.setattr(_SpyClient, "map_raises", exc, raising=False)
    monkeypatch.setattr(_SpyClient, "__init__", _spy_init_keeping_class_raise)
    with pytest.raises(MlxError) as e:
        dask_backend.run_cells_dask(_cells(), on_done=lambda c, r: None)
    assert str(e.value) == (f"lost the Dask scheduler at a local Dask cluster ({reason}); the "
                            f"cells finished so far are kept: {resume_hint(False)}")


def _spy_init_keeping_class_raise(self, target, **kwargs):
    self.target, self.kwargs, self.calls = target, kwargs, []


def test_a_short_timeout_is_not_stretched_for_the_client(spy):
    dask_backend.run_cells_dask(_cells(1), on_done=lambda c, r: None,
                                scheduler="tcp://10.1.2.3:8786", timeout=0.5)
    assert 0.1 <= spy.clients[0].kwargs["timeout"] <= 0.5
