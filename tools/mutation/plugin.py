"""pytest plugin of drive.py: run the collected tests against many mutants, collected once.

Each mutant runs in a fork of the collecting process: the tests run in collection
order and stop at the first failure (killed). A fork that exceeds the timeout is
killed (timeout; counted as killed by mutmut too). Resumable: names already in
--mut-out are skipped. First a clean run ("" must pass) and a forced-fail run.
Result lines: {"name", "status": killed|survived|timeout|error, "by": nodeid, "s"}.
"""
import json
import os
import sys
import time

import pytest


def pytest_addoption(parser):
    g = parser.getgroup("mutants")
    g.addoption("--mut-list", required=True)
    g.addoption("--mut-out", required=True)
    g.addoption("--mut-timeout", type=float, default=None,
                help="seconds per mutant; default 5x the clean run + 10")


def _child(items, name, wfd):
    from _pytest.runner import runtestprotocol
    try:
        os.environ["MUTANT_UNDER_TEST"] = name
        try:
            from mutmut.mutation.trampoline import set_mutant_under_test
            set_mutant_under_test(name)
        except Exception:
            pass
        for i, item in enumerate(items):
            nxt = items[i + 1] if i + 1 < len(items) else None
            reports = runtestprotocol(item, nextitem=nxt, log=False)
            if any(r.failed for r in reports):
                os.write(wfd, item.nodeid.encode())
                os._exit(1)
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001
        os.write(wfd, ("error: %r" % (exc,)).encode()[:2000])
        os._exit(3)


def _run(items, name, timeout):
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(items, name, w)
    os.close(w)
    status = None
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
            break
        if timeout is not None and time.monotonic() - t0 > timeout:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            status = "timeout"
            break
        time.sleep(0.01)
    msg = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        msg += chunk
    os.close(r)
    return status, msg.decode(errors="replace"), time.monotonic() - t0


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    import mlx
    if "/mutants/" not in mlx.__file__:
        raise SystemExit("drive: mlx imported from %s, not from mutants/" % mlx.__file__)
    cfg = session.config
    items = list(session.items)
    names = [s.strip() for s in open(cfg.getoption("--mut-list")) if s.strip()]
    out = cfg.getoption("--mut-out")
    done = set()
    if os.path.exists(out):
        for line in open(out):
            done.add(json.loads(line)["name"])
    tw = sys.__stderr__
    status, msg, base = _run(items, "", None)
    if status != 0:
        raise SystemExit("drive: the clean run fails (%s): %s" % (status, msg))
    status, msg, _ = _run(items, "fail", None)
    if status != 1:
        raise SystemExit("drive: the forced-fail run did not fail (%s)" % status)
    timeout = cfg.getoption("--mut-timeout") or 5 * base + 10
    print("drive: %d tests, clean run %.1f s, timeout %.0f s, %d mutants (%d done)"
          % (len(items), base, timeout, len(names), len(done & set(names))), file=tw, flush=True)
    counts = {}
    with open(out, "a") as fh:
        for name in names:
            if name in done:
                continue
            st, msg, secs = _run(items, name, timeout)
            kind = {0: "survived", 1: "killed", "timeout": "timeout"}.get(st, "error")
            counts[kind] = counts.get(kind, 0) + 1
            row = {"name": name, "status": kind, "by": msg, "s": round(secs, 2)}
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if kind in ("survived", "error"):
                print("drive: %s %s %s" % (kind, name, msg[:200]), file=tw, flush=True)
    print("drive: done", counts, file=tw, flush=True)
    return True
