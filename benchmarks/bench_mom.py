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

Measurements behind MoM's documented choices (bibtex, K = ``--rank``, each on request):

* ``--tensor``: why the whitened tensor stays implicit (:mod:`mlx.numerics.moments`):
  milliseconds of ``T(I, u, u)`` per column from ``A = X W`` and from the dense tensor (one
  column, and per column in blocks of ``n_restarts``), of forming the dense tensor, of one
  Hessian ``T(I, I, u)`` from ``A`` and from the dense tensor, the single-precision
  products against the double ones, and the products and Hessians one power-method run
  takes (from which: how many Hessians would repay forming the tensor);
* ``--restarts``: ``n_restarts`` 10, 3 and 1, each fitted on 80% of the training rows: CPU
  seconds and the AUC on the other 20%;
* ``--threads-whiten``: the whitening pass (the Lanczos eigenpairs of ``M2``) on 1 and on
  ``--threads`` BLAS threads.

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
    p.add_argument("--tensor", action="store_true",
                   help="time the implicit whitened tensor against the dense one (bibtex)")
    p.add_argument("--restarts", action="store_true",
                   help="time MoM with 10, 3 and 1 starts, with their validation AUC")
    p.add_argument("--threads-whiten", action="store_true",
                   help="time the whitening pass on 1 and --threads BLAS threads")
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


def _median_ms(fn, repeats=20) -> float:
    """Median milliseconds of ``repeats`` calls of ``fn()``."""
    import numpy as np

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def _bibtex_train():
    from mlx.data.catalog import load_split, resolve_dataset
    from mlx.errors import MlxError

    try:
        return load_split(resolve_dataset("bibtex", source=None)).train
    except MlxError as exc:
        print(f"bibtex: skipped ({exc})")
        return None


def tensor_part(args, train) -> None:
    """The implicit whitened tensor against the dense one, on one BLAS thread."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from mlx.methods.mom import MoM
    from mlx.numerics.moments import WhitenedMoments, second_moment_eigenpairs
    from mlx.numerics.tensor_power import tensor_power_method

    X, K, r = train.X, args.rank, 10
    with threadpool_limits(limits=1):
        evals, evecs = second_moment_eigenpairs(X, K, moments="paper",
                                                rng=np.random.default_rng(0))
        moments = WhitenedMoments(X, evecs / np.sqrt(evals), moments="paper")
        K = moments.dim
        A = moments.A
        t0 = time.perf_counter()
        T = np.empty((K, K, K))
        for i in range(K):                                   # T[i] = A' diag(A[:, i]) A
            T[i] = A.T @ (A * A[:, i:i + 1])
        T *= moments.scale
        form_s = time.perf_counter() - t0
        T2 = T.reshape(K, K * K)
        rng = np.random.default_rng(1)
        u = rng.standard_normal((K, 1))
        U = rng.standard_normal((K, r))

        def dense_products(V):
            return T2 @ np.einsum("ir,jr->ijr", V, V).reshape(K * K, V.shape[1])

        np.testing.assert_allclose(dense_products(U), moments.products(U), rtol=1e-8,
                                   atol=1e-12 * np.abs(T).max())
        one_a = _median_ms(lambda: moments.products(u))
        block_a = _median_ms(lambda: moments.products(U)) / r
        one_d = _median_ms(lambda: dense_products(u))
        block_d = _median_ms(lambda: dense_products(U)) / r
        single = _median_ms(lambda: moments.single_products(U)) / r
        hess_a = _median_ms(lambda: moments.hessian(u[:, 0]), 5)
        hess_d = _median_ms(lambda: T2.reshape(K * K, K) @ u[:, 0], 5)
        mom = MoM(rank=K)                                    # its defaults
        res = tensor_power_method(moments.products, K, K, n_restarts=mom.n_restarts,
                                  max_iter=mom.max_iter, tol=mom.tol, shift=mom.shift,
                                  adaptive_shift=mom.adaptive_shift, anderson=mom.anderson,
                                  hessian=moments.hessian, rng=np.random.default_rng(0))
    mb = T.nbytes / 2**20
    print(f"bibtex K={K}, n={X.shape[0]}, one BLAS thread; dense tensor {mb:.0f} MB")
    print(f"  T(I,u,u) from A: {one_a:.3f} ms per column, {block_a:.3f} ms per column in "
          f"blocks of {r}; float32 {single:.3f} ms per column in blocks of {r} "
          f"({block_a / single:.1f}x)")
    print(f"  T(I,u,u) from the dense tensor: {one_d:.3f} ms per column, {block_d:.3f} ms per "
          f"column in blocks of {r}; forming the tensor {form_s:.2f} s")
    print(f"  Hessian T(I,I,u): {hess_a:.2f} ms from A, {hess_d:.2f} ms from the dense tensor")
    per_hess = hess_a - hess_d
    repay = f"{form_s * 1e3 / per_hess:.0f}" if per_hess > 0 else "never"
    print(f"  one power-method run (MoM's defaults): {res.n_products} products, "
          f"{res.n_hessians} Hessians; Hessians that would repay forming the tensor: {repay}")
    implicit = res.n_products * block_a + res.n_hessians * hess_a
    dense = 1e3 * form_s + res.n_products * block_d + res.n_hessians * hess_d
    print(f"  the run's tensor work at the block costs: implicit {implicit / 1e3:.2f} s, dense "
          f"{dense / 1e3:.2f} s (forming included)")


def restarts_part(args, train) -> None:
    """MoM with 10, 3 and 1 starts, fitted on 80% of the training rows."""
    import numpy as np

    from mlx.methods.mom import MoM
    from mlx.metrics.functions import instance_auc

    perm = np.random.default_rng(0).permutation(train.X.shape[0])
    cut = int(0.8 * perm.size)
    fit_rows, val_rows = np.sort(perm[:cut]), np.sort(perm[cut:])
    X, Y = train.X[fit_rows], train.Y[fit_rows]
    repeats = 1 if args.quick else args.repeats
    for n_restarts in (10, 3, 1):
        wall, cpu, model = _median_fit(
            lambda n_restarts=n_restarts: MoM(rank=args.rank, n_restarts=n_restarts,
                                              random_state=0), X, Y, repeats)
        auc = np.nanmean(instance_auc(train.Y[val_rows], model.decision_function(
            train.X[val_rows])))
        print(f"bibtex K={args.rank} n_restarts={n_restarts:2d}: {cpu:.2f}s CPU, {wall:.2f}s "
              f"wall (median of {repeats}), validation AUC {auc:.4f}; {_power_summary(model)}")


def threads_whiten_part(args, train) -> None:
    """The whitening pass on one BLAS thread and on --threads."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from mlx.numerics.moments import second_moment_eigenpairs

    repeats = 1 if args.quick else args.repeats
    for threads in sorted({1, int(args.threads)}):
        with threadpool_limits(limits=threads):
            ms = _median_ms(lambda: second_moment_eigenpairs(
                train.X, args.rank, moments="paper", rng=np.random.default_rng(0)), repeats)
        print(f"bibtex K={args.rank} whitening on {threads} BLAS thread(s): {ms / 1e3:.2f} s "
              f"(median of {repeats})")


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
    parts = [(args.tensor, tensor_part), (args.restarts, restarts_part),
             (args.threads_whiten, threads_whiten_part)]
    if any(flag for flag, _ in parts):
        train = _bibtex_train()
        for flag, part in parts:
            if flag and train is not None:
                part(args, train)
        return 0
    bibtex_part(args)
    if not (args.quick or args.bibtex_only):
        rows = scaling_part(args)
        if rows:
            plot(rows, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
