"""Start-up benchmark: what mlx costs before its first cell, against a 0.15 s target.

Prints, each the median of ``--repeat`` fresh subprocesses:

1. the interpreter alone (``python -c pass``, wall): the floor nothing in mlx can lower;
2. numpy and scipy.sparse alone (seconds inside the process): what any command that reads
   data pays, whatever mlx does;
3. ``import mlx.cli, mlx.runner.experiment`` and reading and checking ``configs/bibtex.yaml``
   (seconds inside the process, nothing imported before): a run's imports before its
   data are read, with the heavy libraries they load;
4. the wall time of ``mlx --help`` and of ``mlx validate configs/bibtex.yaml`` with the data
   not on the path, each minus the interpreter alone;
5. with the bibtex files on ``MLX_DATA_PATH`` (``--data-path``; else the repository's
   ``../shared/datasets`` when present): the wall time of ``mlx validate`` (which then reads
   the data and runs the data checks), and the seconds inside ``mlx run configs/bibtex.yaml
   -j 1`` until its first cell starts (data from the parsed-data cache, preflight included),
   with the libraries loaded by then;
6. which heavy libraries (numba, pandas, matplotlib, liblinear, sklearn, plotly, scipy.linalg)
   the imports of 3 and the validate of 4 load: none should.

The machine's load average is printed first and last: on a busy machine every wall figure
grows, so the runs of 4 and 5 also give their CPU seconds (user + system), which load
changes little.
A first, unmeasured run writes the compiled bytecode that the measured runs read.
Run with ``.venv/bin/python benchmarks/bench_startup.py`` (``--repeat 9`` by default).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 0.15
HEAVY = ("numba", "pandas", "matplotlib", "liblinear", "sklearn", "plotly", "scipy.linalg")
LOADED = ("numpy", "scipy.sparse", *HEAVY)

NUMERIC = """
import time
t0 = time.perf_counter()
import numpy, scipy.sparse
print(time.perf_counter() - t0)
"""

IMPORTS = """
import sys, time
t0 = time.perf_counter()
import mlx.cli, mlx.runner.experiment
from mlx.config import load_config
load_config({config!r})
t1 = time.perf_counter()
print(t1 - t0, ",".join(m for m in {loaded!r} if m in sys.modules) or "-")
"""

VALIDATE = """
import sys
from mlx.cli import cli
try:
    cli.main(["validate", {config!r}], prog_name="mlx", obj={{}})
except SystemExit as exc:
    assert not exc.code, exc.code
print(",".join(m for m in {loaded!r} if m in sys.modules) or "-", file=sys.stderr)
"""

FIRST_CELL = """
import sys, time
t0 = time.perf_counter()
import mlx.runner.experiment as experiment

class FirstCell(Exception):
    pass

def first_cell(*args, **kwargs):
    print(time.perf_counter() - t0, ",".join(m for m in {loaded!r} if m in sys.modules) or "-")
    raise FirstCell

experiment.run_cells = first_cell
from mlx.cli import cli
try:
    cli.main(["--debug", "run", {config!r}, "-j", "1", "-q", "--force", "-o", {out!r}],
             prog_name="mlx", obj={{}})
except FirstCell:
    pass
"""


def _env(data_path: str | None) -> dict:
    # Compiled bytecode is written and read, as in an installed package (a first run writes
    # it; PYTHONDONTWRITEBYTECODE would have every module compiled from source each time).
    env = {k: v for k, v in os.environ.items()
           if k not in ("MLX_DATA_PATH", "PYTHONDONTWRITEBYTECODE")}
    if data_path:
        env["MLX_DATA_PATH"] = data_path
    return env


def _child(code: str, env: dict) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO, env=env)
    return out.stdout.split()


def _wall(argv: list[str], env: dict) -> tuple[float, str, float]:
    """Wall seconds, the last line of stderr, and CPU seconds (user + system) of a run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=REPO, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, out.stderr.strip().splitlines()[-1] if out.stderr else "", cpu


def _cpu_note(runs, floor_cpu: float) -> str:
    cpu = statistics.median(r[2] for r in runs)
    return f"; CPU {cpu:.3f} s, minus the interpreter's {cpu - floor_cpu:.3f} s"


def _verdict(seconds: float) -> str:
    return "ok" if seconds <= TARGET_SECONDS else "MISSED"


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _has_bibtex(data_path: str | None) -> bool:
    return bool(data_path) and any(
        (Path(d) / "bibtex" / "bibtex-train.arff.gz").is_file() for d in data_path.split(":"))


# Complexity 16 (over 15): one block per printed figure, in the order of the docstring.
def main(argv=None) -> int:  # noqa: C901
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure (median)")
    parser.add_argument("--data-path", default=None,
                        help="directories holding bibtex/ (default: MLX_DATA_PATH, else "
                             "../shared/datasets when present)")
    args = parser.parse_args(argv)
    config = str(REPO / "configs" / "bibtex.yaml")
    shared = REPO.parent / "shared" / "datasets"
    data_path = args.data_path or os.environ.get("MLX_DATA_PATH") or \
        (str(shared) if shared.is_dir() else None)
    no_data = _env(tempfile.mkdtemp(prefix="mlx-bench-nodata-"))
    with_data = _env(data_path)
    mlx_cmd = [sys.executable, "-m", "mlx"]
    reps = range(args.repeat)

    _wall([sys.executable, "-c", VALIDATE.format(config=config, loaded=LOADED)], no_data)
    print(f"load average {_load()} on {os.cpu_count()} cores; medians of {args.repeat} runs; "
          f"target <= {TARGET_SECONDS} s")
    runs = [_wall([sys.executable, "-c", "pass"], no_data) for _ in reps]
    floor = statistics.median(r[0] for r in runs)
    floor_cpu = statistics.median(r[2] for r in runs)
    print(f"  interpreter alone (python -c pass), wall:            {floor:.3f} s; CPU "
          f"{floor_cpu:.3f} s")
    numeric = statistics.median(float(_child(NUMERIC, no_data)[0]) for _ in reps)
    print(f"  numpy + scipy.sparse alone, in process:              {numeric:.3f} s "
          f"[{_verdict(numeric)}] (any command that reads data pays it)")

    heavy = set()
    times = []
    for _ in reps:
        seconds, loaded = _child(IMPORTS.format(config=config, loaded=LOADED), no_data)
        times.append(float(seconds))
        heavy.update(m for m in loaded.split(",") if m in HEAVY)
    imports = statistics.median(times)
    print(f"  import mlx.cli, mlx.runner.experiment + config:      {imports:.3f} s "
          f"[{_verdict(imports)}]; loads: {loaded.replace(',', ', ')}")

    runs = [_wall([*mlx_cmd, "--help"], no_data) for _ in reps]
    help_wall = statistics.median(r[0] for r in runs)
    print(f"  {'mlx --help, wall:':<52} {help_wall:.3f} s; minus the interpreter "
          f"{help_wall - floor:.3f} s [{_verdict(help_wall - floor)}]{_cpu_note(runs, floor_cpu)}")
    runs = [_wall([sys.executable, "-c", VALIDATE.format(config=config, loaded=LOADED)],
                  no_data) for _ in reps]
    wall = statistics.median(r[0] for r in runs)
    heavy.update(m for m in runs[-1][1].split(",") if m in HEAVY)
    print(f"  {'mlx validate configs/bibtex.yaml (no data), wall:':<52} {wall:.3f} s; minus "
          f"the interpreter {wall - floor:.3f} s [{_verdict(wall - floor)}]"
          f"{_cpu_note(runs, floor_cpu)}; loads: {runs[-1][1].replace(',', ', ')}")

    if _has_bibtex(data_path):
        runs = [_wall([*mlx_cmd, "validate", config], with_data) for _ in reps]
        wall = statistics.median(r[0] for r in runs)
        print(f"  {'mlx validate configs/bibtex.yaml (data read), wall:':<52} {wall:.3f} s; "
              f"minus the interpreter {wall - floor:.3f} s (imports and reading the data)"
              f"{_cpu_note(runs, floor_cpu)}")
        with tempfile.TemporaryDirectory(prefix="mlx-bench-run-") as out:
            code = FIRST_CELL.format(config=config, out=out, loaded=LOADED)
            firsts = [_child(code, with_data) for _ in reps]
        first = statistics.median(float(f[0]) for f in firsts)
        print(f"  {'mlx run configs/bibtex.yaml -j 1, to its first cell:':<52} {first:.3f} s "
              f"in process (numpy + scipy.sparse {numeric:.3f} s of it, then the cached data "
              f"and preflight); loads: {firsts[-1][1].replace(',', ', ')}")
    else:
        print("  the bibtex files are not on the data path (--data-path): validate with data "
              "and a run to its first cell not measured")

    print(f"  heavy libraries loaded before any data is read: {', '.join(sorted(heavy)) or 'none'}")
    print(f"load average {_load()} at the end")
    return 1 if heavy else 0


if __name__ == "__main__":
    raise SystemExit(main())
