"""Start-up benchmark: what mlx costs before its first cell, against a 0.15 s target.

Prints, each the median of ``--repeat`` fresh subprocesses:

1. the interpreter alone (``python -c pass``, wall): the floor nothing in mlx can lower;
2. ``import mlx.cli, mlx.runner.experiment`` (seconds inside the process), and how much of
   it is numpy and scipy.sparse, which every run needs for its data;
3. a run's imports before its first cell: those two modules plus reading and checking
   ``configs/bibtex.yaml`` (which loads the modules of the methods it names; no data read);
4. the wall time of ``mlx --help`` and of ``mlx validate configs/bibtex.yaml``, each
   minus the interpreter alone;
5. which heavy libraries (numba, pandas, matplotlib, liblinear, sklearn, plotly) the imports
   of 2 load: none should.

The machine's load average is printed first: on a busy machine every figure grows.
Run with ``.venv/bin/python benchmarks/bench_startup.py`` (``--repeat 9`` by default).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 0.15
HEAVY = ("numba", "pandas", "matplotlib", "liblinear", "sklearn", "plotly")

IMPORTS = """
import sys, time
t0 = time.perf_counter()
import numpy, scipy.sparse
t1 = time.perf_counter()
import mlx.cli, mlx.runner.experiment
t2 = time.perf_counter()
{extra}
t3 = time.perf_counter()
heavy = ",".join(m for m in {heavy!r} if m in sys.modules) or "-"
print(t1 - t0, t2 - t0, t3 - t0, heavy)
"""

READ_CONFIG = "from mlx.config import load_config; load_config({config!r})"


def _child(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    return out.stdout.split()


def _wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, cwd=REPO)
    return time.perf_counter() - t0


def _verdict(seconds: float) -> str:
    return "ok" if seconds <= TARGET_SECONDS else "MISSED"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure (median)")
    args = parser.parse_args(argv)
    config = str(REPO / "configs" / "bibtex.yaml")
    mlx_cmd = [sys.executable, "-m", "mlx"]

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} cores; medians of {args.repeat} runs; "
          f"target <= {TARGET_SECONDS} s")

    floor = statistics.median(_wall([sys.executable, "-c", "pass"]) for _ in range(args.repeat))
    print(f"  interpreter alone (python -c pass), wall:          {floor:.3f} s")

    bare, with_config, heavy = [], [], set()
    numeric = []
    for _ in range(args.repeat):
        num, imp, _, loaded = _child(IMPORTS.format(extra="", heavy=HEAVY))
        numeric.append(float(num))
        bare.append(float(imp))
        heavy.update(x for x in loaded.split(",") if x != "-")
        _, _, run, _ = _child(IMPORTS.format(extra=READ_CONFIG.format(config=config),
                                             heavy=HEAVY))
        with_config.append(float(run))
    imports = statistics.median(bare)
    print(f"  import mlx.cli, mlx.runner.experiment:             {imports:.3f} s "
          f"(numpy + scipy.sparse {statistics.median(numeric):.3f} s of it) "
          f"[{_verdict(imports)}]")
    run = statistics.median(with_config)
    print(f"  a run before its first cell (imports + config):    {run:.3f} s [{_verdict(run)}]")

    for label, argv_ in (("mlx --help", [*mlx_cmd, "--help"]),
                         ("mlx validate configs/bibtex.yaml", [*mlx_cmd, "validate", config])):
        wall = statistics.median(_wall(argv_) for _ in range(args.repeat))
        print(f"  {label + ', wall:':<50} {wall:.3f} s; minus the interpreter "
              f"{wall - floor:.3f} s [{_verdict(wall - floor)}]")

    print(f"  heavy libraries loaded by those imports: {', '.join(sorted(heavy)) or 'none'}")
    return 1 if heavy else 0


if __name__ == "__main__":
    raise SystemExit(main())
