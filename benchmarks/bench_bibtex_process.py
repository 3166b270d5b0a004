"""Whole process on bibtex: LEML-SQ beside napkinXC's PLT, from the interpreter's start to the
test set's top-1 predictions.

Each side runs as a fresh subprocess (the median of ``--repeat`` runs, after one unmeasured
run that writes the bytecode and the parsed-data cache): start Python, import what it needs,
read Mulan's bibtex train and test files through mlx's loader (the same call for both), fit,
score the test rows and compute P@1. Printed per side: wall time, CPU seconds (user + system
of the child), and the seconds inside the process spent importing and reading, fitting, and
predicting; then LEML's wall time over PLT's (the target: at most 1).

* LEML-SQ: the authors' settings (k = 32, lambda = 0.1, 10 outer iterations, ``tol=0``), the
  default W-step (exact, from the tridiagonal form of X'X), as a cell alone on the machine
  runs it: mlx's own kernels (here the sparse product X'X) on every core, bit-identical to
  one thread; BLAS on one thread.
* PLT: napkinXC's defaults (``threads=0``: every core), when the ``xmc`` extra is installed
  (``pip install 'mlx-multilabel[xmc]'``); otherwise the benchmark says so and prints LEML alone.

The machine's load average is printed first and last. Needs bibtex on the data path
(``MLX_DATA_PATH``; else ``../shared/datasets`` beside the repository when present); exits with
status 2 when it is missing. Run with ``.venv/bin/python benchmarks/bench_bibtex_process.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LEML = """
import time
t0 = time.perf_counter()
import numpy as np
from mlx.data.catalog import load_split, resolve_dataset
from mlx.methods.leml import LEML
from mlx.numerics.spmm import available_cores, threads
split = load_split(resolve_dataset("bibtex", source=None))
t1 = time.perf_counter()
with threads(available_cores()):
    model = LEML(rank=32, l2_reg=0.1, max_iter=10, tol=0, random_state=0).fit(split.train.X,
                                                                              split.train.Y)
t2 = time.perf_counter()
top = model.decision_function(split.test.X).argmax(axis=1)
p1 = float(np.asarray(split.test.Y.tocsr()[np.arange(top.size), top]).mean())
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, p1)
"""

PLT = """
import time
t0 = time.perf_counter()
import os, tempfile
import numpy as np
from mlx.data.catalog import load_split, resolve_dataset
from napkinxc.models import PLT
split = load_split(resolve_dataset("bibtex", source=None))
Y = split.train.Y.tocsr()
labels = [[int(j) for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]]] for i in range(Y.shape[0])]
t1 = time.perf_counter()
with tempfile.TemporaryDirectory() as tmp:
    model = PLT(tmp, seed=0, verbose=0)
    model.fit(split.train.X.tocsr(), labels)
    t2 = time.perf_counter()
    top = model.predict(split.test.X.tocsr(), top_k=1)
Yt = split.test.Y.tocsr()
p1 = float(np.mean([1.0 if row and Yt[i, row[0]] != 0 else 0.0 for i, row in enumerate(top)]))
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, p1)
"""


def _env(data_path: str | None, blas_one: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if data_path:
        env["MLX_DATA_PATH"] = data_path
    if blas_one:
        for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
            env[var] = "1"
    return env


def _run(code: str, env: dict) -> tuple[float, float, list[float]]:
    """Wall seconds, child CPU seconds and the child's own figures of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"bench_bibtex_process: the child failed:\n{out.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, [float(v) for v in out.stdout.split()]


def _side(name: str, code: str, env: dict, repeat: int) -> float:
    _run(code, env)                                    # bytecode and parsed-data cache
    runs = [_run(code, env) for _ in range(repeat)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    parts = [statistics.median(r[2][i] for r in runs) for i in range(3)]
    lo, hi = (100 * f(r[2][3] for r in runs) for f in (min, max))
    p1 = f"{lo:.2f}" if lo == hi else f"{lo:.2f}-{hi:.2f} (differs between runs)"
    print(f"  {name}: wall {wall:.2f}s (CPU {cpu:.2f}s); inside: imports and data "
          f"{parts[0]:.2f}s, fit {parts[1]:.2f}s, predict {parts[2]:.3f}s; test P@1 {p1}")
    return wall


def _data_path(given: str | None) -> str | None:
    if given:
        return given
    if os.environ.get("MLX_DATA_PATH"):
        return os.environ["MLX_DATA_PATH"]
    shared = REPO.parent / "shared" / "datasets"
    return str(shared) if shared.is_dir() else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per side (median)")
    parser.add_argument("--data-path", default=None, help="where bibtex is (MLX_DATA_PATH)")
    args = parser.parse_args(argv)
    data_path = _data_path(args.data_path)
    probe = subprocess.run(
        [sys.executable, "-c", "from mlx.data.catalog import find_files, resolve_dataset; "
         "import sys; sys.exit(1 if find_files(resolve_dataset('bibtex', source=None)) else 0)"],
        env=_env(data_path, False), capture_output=True, text=True)
    if probe.returncode != 0:
        print("bench_bibtex_process: bibtex is not on the data path (set MLX_DATA_PATH)",
              file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} runs per side, medians")
    leml = _side("LEML-SQ k=32 lambda=0.1, 10 iterations (kernels on every core, BLAS 1)", LEML,
                 _env(data_path, True), args.repeat)
    have_plt = subprocess.run([sys.executable, "-c", "import napkinxc"],
                              capture_output=True).returncode == 0
    if not have_plt:
        print("  napkinXC is not installed (pip install 'mlx-multilabel[xmc]'): LEML alone above")
    else:
        plt = _side("napkinXC PLT (defaults, every core)", PLT, _env(data_path, False),
                    args.repeat)
        print(f"  LEML-SQ whole process / PLT whole process: {leml / plt:.2f}x "
              f"(target <= 1: {'met' if leml <= plt else 'MISSED'})")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
