"""Out-of-the-box configs on Mulan sets nobody tuned for: every method against the constant.

For each dataset (scene, yeast, corel5k by default) a config with the dataset and the
methods only -- no ``preprocess``, no ``select``, default k/L -- runs every registered
multi-label method and the ``constant`` baseline, and the benchmark prints each method's
Hamming loss and AUC beside the constant's. ``--preprocess`` replaces the default feature
preprocessing (``none`` = ``[]``) to compare candidate defaults; the test split is only read
to print this report, never to choose anything.

    python benchmarks/bench_defaults.py                       # the shipped defaults
    python benchmarks/bench_defaults.py --preprocess none     # no preprocessing at all
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

import pandas as pd

METHODS = ["constant", "br", "leml", "cplst", "bcs", "wsabie"]


def run(dataset: str, preprocess: str | None, jobs: int, out: Path) -> pd.DataFrame:
    from mlx.config import load_config
    from mlx.runner.experiment import run_experiment

    lines = [f"name: defaults-{dataset}", f"dataset: {dataset}",
             "methods: [" + ", ".join(METHODS) + "]", "metrics: [hamming, auc, p@1]"]
    if preprocess is not None:
        steps = "[]" if preprocess == "none" else f"[{preprocess}]"
        lines.append(f"preprocess: {steps}")
    cfg = out / f"{dataset}.yaml"
    cfg.write_text(textwrap.dedent("\n".join(lines)) + "\n")
    summary = run_experiment(load_config(cfg), jobs=jobs, output=str(out / dataset),
                             quiet=True, progress=False)
    frame = pd.read_csv(summary.output / "results.csv")
    return frame[frame["split"] == "test"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="scene,yeast,corel5k")
    ap.add_argument("--preprocess", default=None,
                    help="feature preprocessing for every method, e.g. 'none', 'bias', "
                         "'minmax, bias' (default: the config default)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ds in args.datasets.split(","):
            test = run(ds, args.preprocess, args.jobs, Path(tmp))
            values = test.pivot_table(index="method", columns="metric", values="value")
            base = values.loc["constant"]
            for method in METHODS:
                if method not in values.index:
                    rows.append({"dataset": ds, "method": method, "status": "no result"})
                    continue
                v = values.loc[method]
                rows.append({"dataset": ds, "method": method,
                             "hamming": v["hamming"], "constant hamming": base["hamming"],
                             "auc": v["auc"], "p@1": v["p@1"],
                             "ok": "" if method == "constant" else (
                                 "yes" if (pd.isna(v["hamming"])   # no threshold: n/a
                                           or v["hamming"] <= base["hamming"] + 1e-12)
                                 and v["auc"] >= 0.5 else "NO")})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(f"preprocess: {args.preprocess or '(config default)'}")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    bad = table[table.get("ok", pd.Series(dtype=str)) == "NO"]
    print(f"\n{len(bad)} method/dataset pairs lose to the constant on Hamming loss or have "
          f"AUC < 0.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
