"""MoM benchmark: fit time against LEML-SQ on bibtex, and time and memory as the corpus grows.

Prints, in one run and on the same data:

1. bibtex, K = 150 (``--rank``): MoM's fit (default parameters: the paper's moments, robust
   tensor power method) and LEML-SQ's fit at k = 150 (10 alternating iterations, as the MoM
   paper ran it), medians of ``--repeats`` fits in wall and CPU seconds, their ratios, MoM's
   seconds per pass, how many tensor eigenpairs converged and in how many iterations.
   Target: MoM <= 5 s on 2 cores. ``--baseline`` adds MoM without the acceleration
   (``anderson=0``) and ``--single`` MoM with ``selection_precision="single"``, in the same
   run. With ``--code-power`` also the authors' power method (one start, no shift, at most
   1000 iterations) at K = 50, to count its unconverged eigenpairs.
2. Scaling: corpora drawn from the model (:func:`mlx.data.synthetic.sample_corpus`) at the MoM
   paper's NYTimes scale (25,000 words, 4,000 labels, about 370 distinct words per
   document) with n = ``--sizes`` documents (default 15,000 to 150,000, i.e. NYTimes and
   10x), MoM and LEML-SQ at rank ``--scale-rank``, each fit in its own child process: fit
   seconds, the peak memory the fit allocates beyond its input (``tracemalloc``, which
   sees every numpy and scipy array), the child's peak RSS, the slope of
   log(time) against log(nnz(X)) (1 = linear), and one figure of both against n
   (``-o DIR``, default ``results/bench``).

``-o DIR --figure RESULTS...`` instead draws the paper's Figure 2 (AUC against K, one panel per
dataset, one line per series label) from finished runs of configs/mom-*.yaml, with the AUC of
the authors' code on the same splits as open markers, and prints the numbers.

Needs bibtex on the data path for part 1 (skipped with a note when absent). BLAS threads:
``--threads`` (default 2, the machine's cores). Run with
``.venv/bin/python benchmarks/bench_mom.py`` (``--quick``: part 1 only, one repeat).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
from mlx.data.synthetic import sample_corpus
method, n, rank, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
kw = json.loads(sys.argv[5])
_, _, truth = sample_corpus(10, kw["d"], kw["L"], kw["topics"], doc_length=kw["length"],
                            labels_per_doc=kw["labels"], word_concentration=kw["conc"], seed=seed)
X, Y, _ = sample_corpus(n, kw["d"], kw["L"], kw["topics"], doc_length=kw["length"],
                        labels_per_doc=kw["labels"], word_concentration=kw["conc"],
                        counts=False, seed=seed + n, truth=truth)
del truth
import tracemalloc
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
data_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
if method == "mom":
    from mlx.methods.mom import MoM
    model = MoM(rank=rank, random_state=0).fit(X, Y)
    extra = {"converged": int(model.component_converged_.sum()), "timings": model.timings_,
             "iters": float(np.median(model.n_iter_))}
else:
    from mlx.methods.leml import LEML
    model = LEML(rank=rank, loss="squared", max_iter=10, random_state=0).fit(X, Y)
    extra = {}
fit = time.perf_counter() - t0
cpu = time.process_time() - c0
fit_peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"method": method, "n": n, "nnz": int(X.nnz), "fit": fit, "cpu": cpu,
                  "fit_peak": fit_peak,
                  "x_bytes": data_bytes, "rss_peak": rss(), **extra}))
"""


def _parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="2", help="BLAS threads (default 2)")
    p.add_argument("--repeats", type=int, default=3, help="fits per timing (median)")
    p.add_argument("--quick", action="store_true", help="bibtex only, one repeat")
    p.add_argument("--bibtex-only", action="store_true",
                   help="bibtex only, --repeats repeats (no scaling runs)")
    p.add_argument("--code-power", action="store_true",
                   help="also time the authors' power method at K = 50")
    p.add_argument("--rank", type=int, default=150, help="K of the bibtex part (default 150)")
    p.add_argument("--baseline", action="store_true",
                   help="also time MoM without acceleration (anderson=0) in the same run")
    p.add_argument("--single", action="store_true",
                   help="also time MoM with selection_precision='single'")
    p.add_argument("--sizes", default="15000,30000,60000,150000",
                   help="documents per synthetic corpus (comma-separated)")
    p.add_argument("--scale-rank", type=int, default=50, help="rank K of the scaling runs")
    p.add_argument("--methods", default="mom,leml", help="methods of the scaling runs")
    p.add_argument("--leml-max-n", type=int, default=None,
                   help="run LEML-SQ only up to this many documents (it needs over 30 min "
                        "at 150,000)")
    p.add_argument("-o", "--output-dir", default="results/bench", help="figure directory")
    p.add_argument("--figure", nargs="+", metavar="RESULTS",
                   help="draw AUC against K from these results directories and exit")
    return p.parse_args(argv)


def _median_fit(make, X, Y, repeats):
    """Median wall and CPU seconds of ``repeats`` fits, and the last fitted model."""
    import numpy as np

    wall, cpu, model = [], [], None
    for _ in range(repeats):
        model = make()
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(X, Y)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)), float(np.median(cpu)), model


def _power_summary(model) -> str:
    import numpy as np

    it = model.n_iter_
    return (f"{int(model.component_converged_.sum())}/{model.rank_} eigenpairs converged, "
            f"iterations median {int(np.median(it))} max {int(it.max())}")


def bibtex_part(args) -> None:
    from mlx.data.catalog import load_split, resolve_dataset
    from mlx.errors import MlxError
    from mlx.methods.leml import LEML, clear_gram_cache
    from mlx.methods.mom import MoM

    try:
        split = load_split(resolve_dataset("bibtex", source=None))
    except MlxError as exc:
        print(f"bibtex: skipped ({exc})")
        return
    X, Y = split.train.X, split.train.Y
    repeats = 1 if args.quick else args.repeats
    K = args.rank

    def leml():
        clear_gram_cache()                       # start cold: no cached eigendecomposition
        return LEML(rank=K, loss="squared", max_iter=10, random_state=0)

    variants = [("MoM", {})]
    if args.baseline:
        variants.append(("MoM unaccelerated (anderson=0)", {"anderson": 0}))
    if args.single:
        variants.append(("MoM float32 ranking of the starts", {"selection_precision": "single"}))
    results = {}
    for name, params in variants:
        results[name] = _median_fit(lambda params=params: MoM(rank=K, random_state=0, **params),
                                    X, Y, repeats)
    leml_wall, leml_cpu, _ = _median_fit(leml, X, Y, repeats)
    print(f"bibtex K={K} ({args.threads} BLAS threads for LEML, MoM fits on 1; median of "
          f"{repeats}): LEML-SQ k={K} {leml_wall:.2f}s wall, {leml_cpu:.2f}s CPU")
    for name, (wall, cpu, mom) in results.items():
        parts = ", ".join(f"{k} {v:.2f}s" for k, v in mom.timings_.items() if k != "total")
        print(f"  {name}: {wall:.2f}s wall, {cpu:.2f}s CPU ({parts}; {_power_summary(mom)}); "
              f"MoM/LEML = {wall / leml_wall:.2f} wall, {cpu / leml_cpu:.2f} CPU "
              f"(target MoM <= 5 s)")
    if args.code_power:
        t0 = time.perf_counter()
        code = MoM(rank=50, n_restarts=1, max_iter=1000, adaptive_shift=False, shift=0.0,
                   random_state=0).fit(X, Y)
        print(f"bibtex K=50, authors' power method (1 start, shift 0, <= 1000 iterations): "
              f"{time.perf_counter() - t0:.1f}s, {int(code.component_converged_.sum())}/50 "
              f"eigenpairs converged (tol {code.tol:g})")


def scaling_part(args) -> list[dict]:
    import numpy as np

    corpus = {"d": 25000, "L": 4000, "topics": 100, "length": 450.0, "labels": 5.4,
              "conc": 0.05}
    env = dict(os.environ)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for method in args.methods.split(","):
            if method == "leml" and args.leml_max_n is not None and n > args.leml_max_n:
                print(f"leml  n={n:7d} not run (--leml-max-n {args.leml_max_n})")
                continue
            out = subprocess.run([sys.executable, "-c", CHILD, method, str(n),
                                  str(args.scale_rank), "0", json.dumps(corpus)],
                                 capture_output=True, text=True, env=env)
            if out.returncode:
                print(f"{method} n={n}: failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{method:5s} n={n:7d} nnz={row['nnz']:10d} fit {row['fit']:8.1f}s "
                  f"(CPU {row.get('cpu', float('nan')):.1f}s)  fit peak "
                  f"{row['fit_peak'] / 2**20:7.0f} MB allocated (X itself "
                  f"{row['x_bytes'] / 2**20:.0f} MB; process peak RSS "
                  f"{row['rss_peak'] / 2**20:.0f} MB, data generation included)"
                  + (f"  {row['converged']}/{args.scale_rank} converged, median "
                     f"{row.get('iters', float('nan')):.0f} power iterations" if method == "mom"
                     else ""), flush=True)
    for method in sorted({r["method"] for r in rows}):
        mine = [r for r in rows if r["method"] == method]
        if len(mine) >= 2:
            slope = np.polyfit(np.log([r["nnz"] for r in mine]),
                               np.log([r["fit"] for r in mine]), 1)[0]
            cslope = np.polyfit(np.log([r["nnz"] for r in mine]),
                                np.log([r["cpu"] for r in mine]), 1)[0]
            print(f"{method}: fit time ~ nnz(X)^{slope:.2f} (wall), ^{cslope:.2f} (CPU)")
    by_n = {}
    for r in rows:
        by_n.setdefault(r["n"], {})[r["method"]] = r["fit"]
    for n, t in sorted(by_n.items()):
        if "mom" in t and "leml" in t:
            print(f"n={n}: LEML/MoM = {t['leml'] / t['mom']:.2f}")
    return rows


def plot(rows, out_dir) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    for method, label in (("mom", "MoM"), ("leml", "LEML-SQ")):
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        if not mine:
            continue
        n = [r["n"] for r in mine]
        a.plot(n, [r["fit"] for r in mine], "o-", label=label)
        b.plot(n, [r["fit_peak"] / 2**30 for r in mine], "o-", label=label)
    for ax, title in ((a, "fit time (s)"), (b, "memory allocated by the fit (GB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents n (25k words, 4k labels)")
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(out_dir, "mom-scaling.png")
    fig.savefig(path, dpi=120)
    print(f"figure: {path}")


AUTHORS_CODE_AUC = {"bibtex": {50: 0.848, 100: 0.866, 150: 0.863},
                    "delicious": {50: 0.856, 100: 0.851, 150: 0.851}}
"""AUC of the authors' released code on the Mulan splits (run under Octave; seed spread
0.002-0.010), the reproduction target."""


def figure(results, out_dir, metric="auc") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    frames = []
    for r in results:
        path = r if r.endswith(".csv") else os.path.join(r, "results.csv")
        frames.append(pd.read_csv(path))
    df = pd.concat(frames)
    df = df[(df["split"] == "test") & (df["metric"] == metric) & (df["status"] == "ok")]
    datasets = sorted(df["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.6), squeeze=False)
    for ax, ds in zip(axes[0], datasets):
        sub = df[df["dataset"] == ds]
        for label, g in sub.groupby("label"):
            g = g.groupby("rank")["value"].mean()
            ax.plot(g.index, g.values, "o-", label=label)
            print(f"{ds} {label}: " + ", ".join(f"K={k} {v:.4f}" for k, v in g.items()))
        ref = AUTHORS_CODE_AUC.get(ds)
        if ref and metric == "auc":
            ax.plot(list(ref), list(ref.values()), "ks", mfc="none", label="authors' code")
        ax.set_xlabel("latent dimension K")
        ax.set_ylabel(metric.upper() if metric == "auc" else metric)
        ax.set_title(ds)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    for ext in ("png", "pdf"):
        path = os.path.join(out_dir, f"mom-figure2-{metric.replace('@', '')}.{ext}")
        fig.savefig(path, dpi=120)
    print(f"figure: {path[:-4]}.png/.pdf")


def main(argv=None) -> int:
    args = _parse_args(argv)
    if args.figure:
        figure(args.figure, args.output_dir)
        return 0
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    bibtex_part(args)
    if not (args.quick or args.bibtex_only):
        rows = scaling_part(args)
        if rows:
            plot(rows, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
