"""Stopping a run: SIGTERM and SIGINT end a 2-job sweep quickly, leave no process behind and
keep the finished cells; the output directory is checked and locked before any work."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from mlx.cli import cli

SLOW = """
name: slow
dataset:
  synthetic: {n_samples: 600, n_features: 100, n_labels: 30, rank: 4, seed: 1, n_test: 100}
methods:
  - name: leml
    params: {loss: logistic, max_iter: 4, l2_reg: 0.1}
sweep:
  rank_ratio: [0.5]
  repetitions: 12
metrics: [p@1]
"""


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            ppid = next((line.split()[1] for line in status.splitlines()
                         if line.startswith("PPid:")), None)
            if ppid == str(pid):
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _wait_for_workers(proc, cells, n=2, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline and (not cells.exists() or not list(cells.glob("*.json"))):
        time.sleep(0.05)
    return _children(proc.pid)


def test_workers_exit_when_the_main_process_is_killed(tmp_path):
    # SIGKILL (what the out-of-memory killer sends) lets the parent stop nothing: the workers
    # must notice by themselves (parent-death signal, else the watchdog), and the resource
    # tracker follows when their pipes close.
    cfg = tmp_path / "slow.yaml"
    cfg.write_text(textwrap.dedent(SLOW))
    cmd = [sys.executable, "-m", "mlx", "run", "-q", "-j", "2", "-o", str(tmp_path / "o"),
           str(cfg)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = _wait_for_workers(proc, tmp_path / "o" / "cells")
    assert len(workers) >= 2, "expected the pool's worker processes"
    sent = time.monotonic()
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.02)
    gone = time.monotonic() - sent
    left = [p for p in workers if _alive(p)]
    for pid in left:                                   # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert not left, "worker processes outlived a killed main process"
    # Milliseconds with the parent-death signal, about a second with the watchdog alone.
    assert gone < 5.0, f"took {gone:.2f}s"
    print(f"workers gone {gone:.3f}s after SIGKILL of the main process")


def test_the_watchdog_alone_ends_a_worker_of_a_dead_parent(tmp_path):
    # Without the parent-death signal (as off Linux): the watchdog thread must do it.
    code = textwrap.dedent("""
        import os, sys, time
        from mlx.runner import cells
        child = os.fork()
        if child == 0:
            import ctypes

            def no_prctl(*args, **kwargs):
                raise OSError("no prctl here")

            ctypes.CDLL = no_prctl
            cells.exit_with_parent(os.getppid())
            time.sleep(60)
            os._exit(3)
        print(child, flush=True)
        time.sleep(0.5)
        os._exit(0)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    child = int(proc.stdout.split()[0])
    deadline = time.time() + 10
    while time.time() < deadline and _alive(child):
        time.sleep(0.02)
    alive = _alive(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive, "the watchdog did not end the orphaned worker"


@pytest.mark.parametrize("sig, code, force", [(signal.SIGTERM, 143, False),
                                               (signal.SIGINT, 130, True)])
def test_signal_stops_a_two_job_sweep_and_keeps_finished_cells(tmp_path, sig, code, force):
    cfg = tmp_path / "slow.yaml"
    cfg.write_text(textwrap.dedent(SLOW))
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "mlx", "run", "-q", "-j", "2", "-o", str(out), str(cfg)]
    if force:   # then the same command would recompute everything: the hint drops --force
        cmd.insert(4, "--force")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    cells = out / "cells"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(cells.glob("*.json")) if cells.exists() else []) < 2:
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert len(workers) >= 2, "expected the pool's worker processes"
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - sent
    assert proc.returncode == code, err
    # About 0.9 s on a quiet 2-core machine; the bound leaves room for a loaded one.
    assert elapsed < 5.0, f"took {elapsed:.2f}s to stop"
    deadline = time.time() + 5
    while time.time() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.05)
    assert not any(_alive(p) for p in workers), "worker processes outlived the run"
    kept = len(list(cells.glob("*.json")))
    assert 2 <= kept < 12
    name = signal.Signals(sig).name
    assert err.strip().splitlines()[-1] == (
        f"mlx: interrupted by {name}: {kept} cell(s) finished in this run are kept in "
        f"{out}/cells; " + ("to resume, run the same command without --force (with it, "
                            "every cell is recomputed)" if force else
                            "run the same command again to resume"))
    assert "Traceback" not in err
    assert not list(cells.glob(".*.tmp"))
    if sig != signal.SIGTERM:
        return
    # the rerun resumes: every cell once (checked once; SIGKILL resumption is tested elsewhere)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out / "results.csv")
    assert frame["cell_id"].nunique() == 12


def _cfg(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent("""
        name: c
        dataset: {synthetic: {n_samples: 40, n_features: 5, n_labels: 3, rank: 1}}
        methods: [constant]
        """))
    return p


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_directory_fails_before_any_work(tmp_path):  # pragma: no cover
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o500)
    r = CliRunner().invoke(cli, ["run", "-q", "-o", str(locked / "x"), str(_cfg(tmp_path))])
    assert r.exit_code == 2
    assert r.output == f"Error: {locked / 'x'}: cannot write results: Permission denied\n"


@pytest.mark.parametrize("where, reason", [
    ("file", "File exists"),
    ("under-file", "Not a directory"),
    ("proc", None),
])
def test_output_that_cannot_be_a_directory_fails_before_any_work(tmp_path, where, reason):
    (tmp_path / "f").write_text("x")
    out = {"file": tmp_path / "f", "under-file": tmp_path / "f" / "sub",
           "proc": Path("/proc/mlx-test")}[where]
    r = CliRunner().invoke(cli, ["run", "-q", "-o", str(out), str(_cfg(tmp_path))])
    assert r.exit_code == 2, r.output
    assert r.output.startswith(f"Error: {out}: cannot write results: ")
    if reason:
        assert r.output == f"Error: {out}: cannot write results: {reason}\n"
    assert len(r.output.splitlines()) == 1


def test_a_failing_run_leaves_no_output_directory(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("name: b\ndataset: {format: libsvm-multilabel, train: nope.txt, test: nope.txt, "
                   "n_labels: 2}\nmethods: [constant]\n")
    out = tmp_path / "deep" / "o"
    r = CliRunner().invoke(cli, ["run", "-q", "-o", str(out), str(cfg)])
    assert r.exit_code != 0
    assert not (tmp_path / "deep").exists()


def test_a_second_run_on_the_same_output_is_refused_while_the_first_holds_it(tmp_path):
    from mlx.runner.output import OutputLock

    out = tmp_path / "o"
    out.mkdir()
    with OutputLock(out):
        r = CliRunner().invoke(cli, ["run", "-q", "-o", str(out), str(_cfg(tmp_path))])
        assert r.exit_code == 2
        assert r.output.startswith(f"Error: {out}: another mlx run (pid {os.getpid()} on ")
        assert r.output.rstrip().endswith("is writing to this output directory; wait for it "
                                          "(mlx run --wait) or choose another --output")
        assert not (out / "results.csv").exists()
    r = CliRunner().invoke(cli, ["run", "-q", "-o", str(out), str(_cfg(tmp_path))])
    assert r.exit_code == 0, r.output
    assert (out / "results.csv").exists()


def test_wait_blocks_until_the_other_run_releases_the_directory(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import time
            from mlx.runner.output import OutputLock
            with OutputLock({str(out)!r}):
                print("held", flush=True)
                time.sleep(1.5)
            """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "mlx", "run", "-q", "--wait", "-o", str(out),
                        str(_cfg(tmp_path))], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 > 0.5
    holder.wait(timeout=10)
