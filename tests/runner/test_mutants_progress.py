"""Progress, the parts the run-level tests leave open: what the bar and the heartbeat thread are
built with, the finished line's text, closing, and the heartbeat thread's decisions on a clock
the test moves."""

import threading
import time

import pytest

from mlx.runner.progress import Progress
from tests.runner.test_progress import _Cell


def _wait_for(predicate, seconds=3.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


@pytest.mark.parametrize("quiet, bar, total, disabled, thread", [
    (False, False, 3, True, True), (False, True, 3, False, True), (True, True, 3, True, False),
    (False, True, 0, True, False)])
def test_the_bar_and_the_heartbeat_thread_as_built(quiet, bar, total, disabled, thread):
    now = [5.0]
    p = Progress(total, quiet=quiet, bar=bar, jobs=2, heartbeat=1000.0, desc="cells",
                 clock=lambda: now[0])
    try:
        assert (p.total, p.quiet, p.jobs, p.done, p.started, p.interval) == \
               (total, quiet, 2, 0, 5.0, 1000.0)
        assert p._bar.disable is disabled
        if not disabled:
            assert (p._bar.total, p._bar.desc, p._bar.unit, p._bar.leave) == \
                   (3, "cells", "cell", False)
        if thread:
            assert p._thread.name == "mlx-heartbeat" and p._thread.daemon
            assert p._thread.is_alive()
        else:
            assert p._thread is None
    finally:
        p.close()
    if thread:
        assert not p._thread.is_alive()               # close stops the heartbeat
    assert p._bar.disable or p._bar.n == 0


def test_the_defaults_and_the_heartbeat_from_the_environment(monkeypatch):
    monkeypatch.setenv("MLX_HEARTBEAT", "7")
    p = Progress(2)
    try:
        assert p.quiet is False and p.interval == 7.0 and p._thread is not None
        assert p.jobs == 1 and p._bar.disable                 # no bar unless asked for
    finally:
        p.close()
    p = Progress(2, bar=True, quiet=False)
    try:
        assert p._bar.desc == ""
    finally:
        p.close()


def test_a_finished_cell_prints_its_numbered_line_and_moves_the_bar(capsys):
    now = [0.0]
    p = Progress(3, bar=True, jobs=1, heartbeat=1000.0, clock=lambda: now[0])
    a, b = _Cell("a"), _Cell("b")
    p.dispatched(a)
    p.dispatched(b)
    now[0] = 10.0
    p.finished(a, "a done 1.00s")
    assert p.done == 1 and p._bar.n == 1
    assert [c.name for c, _ in p.running()] == ["b"]     # the next in line starts running
    assert p._last_output == 10.0
    p.close()
    out = capsys.readouterr().out.splitlines()
    assert out == ["[1/3] a done 1.00s (elapsed 0:10, ETA 0:20)"]


def test_timing_has_an_eta_only_while_cells_are_left():
    now = [0.0]
    p = Progress(2, quiet=True, clock=lambda: now[0])
    now[0] = 61.0
    assert p.timing() == "elapsed 1:01"                  # nothing finished: no rate yet
    p.finished(_Cell("a"), "a")
    assert p.timing() == "elapsed 1:01, ETA 1:01"
    p.finished(_Cell("b"), "b")
    assert p.timing() == "elapsed 1:01"                  # nothing left
    later = [0.0]
    four = Progress(4, quiet=True, clock=lambda: later[0])
    later[0] = 60.0
    for name in "ab":
        four.finished(_Cell(name), name)
    assert four.timing() == "elapsed 1:00, ETA 1:00"     # 2 left at 30 s each
    assert p.heartbeat_line() == "[2/2] 0 cell(s) not finished yet (elapsed 1:01)"


def test_the_heartbeat_writes_after_a_silent_interval_and_names_cells_on_the_bar(capsys):
    now = [100.0]
    p = Progress(3, bar=True, jobs=2, heartbeat=0.5, clock=lambda: now[0])
    cell, other = _Cell("slow"), _Cell("x" * 130)
    p.dispatched(cell)
    p.dispatched(other)
    try:
        time.sleep(0.6)                   # a tick (0.5 s) passed, the clock has not moved: silent
        assert "running" not in capsys.readouterr().out
        # the bar names the running cells, at most 120 characters of them
        assert _wait_for(lambda: p._bar.postfix == "slow, " + "x" * 114)
        now[0] = 100.5                                   # exactly one interval of silence
        assert _wait_for(lambda: p._last_output == 100.5)
        lines = capsys.readouterr().out.splitlines()
        assert lines and lines[0] == ("[0/3] running: slow for 0:00, " + "x" * 130
                                      + " for 0:00 (elapsed 0:00)")
        for c in (cell, other, _Cell("third")):
            p.finished(c, "done")
        capsys.readouterr()
        now[0] = 110.0                                   # every cell done: no more beats
        time.sleep(0.1)
        assert capsys.readouterr().out == ""
    finally:
        p.close()


def test_the_heartbeat_ticks_at_most_every_second(monkeypatch):
    waits = []
    original = threading.Event.wait

    def spy(self, timeout=None):
        waits.append(timeout)
        return original(self, min(timeout, 0.01) if timeout else timeout)

    monkeypatch.setattr(threading.Event, "wait", spy)
    for interval, tick in ((30.0, 1.0), (0.25, 0.25)):
        waits.clear()
        p = Progress(2, quiet=False, heartbeat=interval, clock=lambda: 0.0)
        assert _wait_for(lambda: len([w for w in waits if w is not None]) >= 2)
        p.close()
        assert [w for w in waits if w is not None][0] == tick   # None: the thread's start
