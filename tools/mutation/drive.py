"""Mutation testing of one module against chosen tests, the tests collected once.

``make mutants`` lets mutmut run every mutant's covering tests in a new process each time,
which costs seconds a mutant before a test even starts. This driver uses mutmut only to write
the mutants (``mutants/``, mutmut's layout), then runs the chosen test files against each
mutant in a fork of one pytest process that collected them once (:mod:`plugin`): a mutant
costs the time of the tests up to the first that fails. Run from the project root:

    .venv/bin/python tools/mutation/drive.py mlx/methods/bcs.py \\
        tests/methods/test_mutants_bcs.py tests/methods/test_bcs.py [--only REGEX] [--out FILE]

Order the tests fastest and most targeted first. The results go to ``mutants/<module>.jsonl``
(one line per mutant: killed, survived, timeout or error, with the test that killed it);
a rerun skips the mutants already there (delete the file, or use ``--out``, after changing the
tests). The survivors are printed at the end: read one with ``.venv/bin/mutmut show NAME``.
The tests are copied into ``mutants/`` before every run, so edit them in ``tests/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate(module: str) -> list[str]:
    """Write the mutants of ``module`` under mutants/ and return their names."""
    from mutmut import configuration
    from mutmut.__main__ import create_mutants
    from mutmut.mutation.trampoline import set_mutant_under_test
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir

    configuration.config().only_mutate = [module]
    set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    create_mutants(1)
    meta = Path("mutants") / (module + ".meta")
    if not meta.exists():
        raise SystemExit(f"drive: no mutants written for {module}")
    return list(json.loads(meta.read_text())["exit_code_by_key"])


def summarise(out: Path, names: list[str]) -> int:
    rows = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        rows[row["name"]] = row
    rows = [rows[n] for n in names if n in rows]
    print(f"{len(rows)} of {len(names)} mutants run:",
          dict(Counter(r["status"] for r in rows)))
    per = {}
    for r in rows:
        fn = re.sub(r"__mutmut_\d+$", "", r["name"].rsplit(".", 1)[-1])
        per.setdefault(fn, Counter())[r["status"]] += 1
    for fn, c in sorted(per.items()):
        print(f"  {fn}: {dict(c)}")
    left = [r for r in rows if r["status"] in ("survived", "error")]
    for r in left:
        print(f"{r['status']}: {r['name']} {r['by'][:120]}")
    return 1 if left else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("module", help="the file to mutate, e.g. mlx/methods/bcs.py")
    ap.add_argument("tests", nargs="+", help="test files or node ids, fastest first")
    ap.add_argument("--only", default=None, help="a regex on mutant names")
    ap.add_argument("--out", default=None, help="results file (default mutants/<module>.jsonl)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds a mutant (default: 5x the clean run + 10)")
    args = ap.parse_args()
    names = generate(args.module)
    if args.only:
        names = [n for n in names if re.search(args.only, n)]
    out = Path(args.out or Path("mutants") / (args.module.replace("/", ".") + ".jsonl"))
    out = out.resolve()
    shutil.copytree("tests", "mutants/tests", dirs_exist_ok=True)
    listing = Path("mutants") / "names.txt"
    listing.write_text("\n".join(names) + "\n")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "pytest", "-p", "plugin", "-q", "-p", "no:cacheprovider",
           "--tb=native", "-m", "not slow", "--mut-list", "names.txt", "--mut-out", str(out),
           *(["--mut-timeout", str(args.timeout)] if args.timeout else []), *args.tests]
    code = subprocess.call(cmd, cwd="mutants", env=env)
    if code not in (0, 5) or not out.exists():     # 5: pytest ran no test of its own
        print(f"drive: pytest stopped with exit code {code}", file=sys.stderr)
        return 2
    return summarise(out, names)


if __name__ == "__main__":
    sys.exit(main())
