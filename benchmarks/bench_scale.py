"""Scale benchmark: LEML on XMC-shaped synthetic data on one machine.

Data come from :mod:`mlx.data.xmc_synth` (shapes of LEML Table 2, power-law frequencies,
labels planted through a low-rank map of the features), generated in memory. LEML-SQ runs
as in the Table 4 configs (``configs/leml-table4-synth/*.yaml``): squared loss, 5 outer
iterations (tol 0), l2_reg 0.1, random start of H, CG W-steps truncated after 5 iterations
(the authors' solver; ``--nus-solver auto`` uses the exact eigendecomposition path there).

Prints:

1. eurlex-shaped (scale 1: 17,413 x 5000, L = 3993): LEML-SQ k = 250, wall seconds of the
   fit (target < 60 s on 2 cores; the paper: 175 s on 32 cores), generation time, test
   P@1 / P@3 / AUC against the most-frequent-labels baseline, peak RSS (asserted below 4 GB).
2. nus-wide-shaped (scale 1: 161,789 x 1134, 863 non-zeros per row, L = 1000): k = 50
   (target < 60 s); peak RSS asserted below 8 GB.
3. wiki-shaped at a scale that fits in 16 GB (``--wiki-scale``, default 0.25 of the rows;
   d = 366,932 and L = 213,707 in full): k = 250 with CG W-steps, run to the end; peak RSS
   asserted below 16 GB, beside what one dense n x L and d x d float64 array would take.
4. Fit time against n, L and k on log-log axes, with a least-squares fit (per shape: the
   constants depend on whether W stays in cache) of the complexity model
   T = a (nnz(X) + nnz(Y)) k + b (n + L) k^2 + c; measured and modelled slopes per axis;
   the figure goes to ``OUT/bench_scale.png``. Sweep fits run 2 outer iterations with
   exactly 5 CG iterations per W-step (inner_tol 1e-12), so the work per fit is fixed, after
   a warm-up fit, with one BLAS thread (``--sweep-threads``), best of three repeats
   interleaved over the cells.

Every problem runs in its own child process (its peak RSS is its own), with BLAS limited to
``--threads`` (default 2). Timings on a shared machine vary with its load; the load average
is printed. ``--quick`` runs small versions of everything (about 3 minutes);
``--only eurlex,nus-wide,wiki,scaling`` selects parts. Measured on the 2-core machine:
eurlex 27-29 s of fit (0.5 GB peak RSS), nus-wide 26 s of fit after 34 s of generation
(4.4 GB: X is multiplied as a dense array, no larger than its CSR form), wiki at 0.25 15 min
of fit with the other core busy (7.3 GB), scaling 4 min -- use ``--wiki-scale 0.05`` for a
short run::

    .venv/bin/python benchmarks/bench_scale.py -o results/bench-scale
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

GB = 1024**3

CHILD = r"""
import json, resource, sys, time
import numpy as np
from mlx.data.xmc_synth import generate, synth_spec
from mlx.methods.leml import LEML
from mlx.metrics import evaluate

job = json.loads(sys.argv[1])

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

def data(d):
    t0 = time.perf_counter()
    split = generate(synth_spec(d["like"], d["scale"], d.get("seed", 0), **d.get("spec", {})))
    return split, time.perf_counter() - t0

def leml(k, **kw):
    params = dict(rank=k, loss="squared", l2_reg=0.1, max_iter=5, tol=0, init="random",
                  w_solver="cg", inner_max_iter=5, random_state=0)
    params.update(kw)
    return LEML(**params)

if job["kind"] == "fit":
    split, gen = data(job)
    tr, te = split.train, split.test
    out = {"n": tr.X.shape[0], "n_test": te.X.shape[0], "d": tr.X.shape[1],
           "L": tr.Y.shape[1], "nnz_x": int(tr.X.nnz), "nnz_y": int(tr.Y.nnz), "gen_s": gen,
           "rss_data": rss()}
    t0 = time.perf_counter()
    model = leml(job["k"], **job.get("params", {})).fit(tr.X, tr.Y)
    out["fit_s"] = time.perf_counter() - t0
    out["rss_fit"] = rss()
    out["solver"] = model.w_solver_
    out["inner"] = model.n_inner_iter_
    t0 = time.perf_counter()
    res = evaluate(model, te.X, te.Y, ["p@1", "p@3", "auc"])
    out["eval_s"] = time.perf_counter() - t0
    out["metrics"] = {m: v[0] for m, v in res.items()}
    freq = np.asarray(tr.Y.sum(axis=0)).ravel()
    top = np.argsort(-freq, kind="stable")[:3]
    hits = np.asarray(te.Y[:, top].sum(axis=0)).ravel() / te.X.shape[0]
    out["baseline"] = {"p@1": float(hits[0]), "p@3": float(hits.sum() / 3)}
else:
    # A sweep: fixed work per fit (2 outer iterations, exactly 5 CG iterations per W-step);
    # repeats interleaved over the cells, so that a change of machine load hits every cell.
    trains = [data(d)[0].train for d in job["datasets"]]
    leml(8, max_iter=1).fit(trains[0].X[:256], trains[0].Y[:256])   # warm up
    times = [[] for _ in job["cells"]]
    for _ in range(job["repeats"]):
        for c, cell in enumerate(job["cells"]):
            tr = trains[cell.get("data", 0)]
            n = cell.get("n", tr.X.shape[0])
            X, Y = tr.X[:n], tr.Y[:n]
            model = leml(cell["k"], max_iter=2, inner_tol=1e-12)
            t0 = time.perf_counter()
            model.fit(X, Y)
            times[c].append(time.perf_counter() - t0)
    out = {"cells": []}
    for cell, t in zip(job["cells"], times):
        tr = trains[cell.get("data", 0)]
        n = cell.get("n", tr.X.shape[0])
        out["cells"].append({"n": n, "d": tr.X.shape[1], "L": tr.Y.shape[1], "k": cell["k"],
                             "nnz_x": int(tr.X[:n].nnz), "nnz_y": int(tr.Y[:n].nnz),
                             "fit_s": min(t)})
out["rss_peak"] = rss()
print(json.dumps(out))
"""


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="2", help="BLAS threads (default 2)")
    parser.add_argument("--sweep-threads", default="1",
                        help="BLAS threads for the scaling sweeps (default 1: on a shared "
                             "machine, threaded BLAS adds a load-dependent overhead to the "
                             "many small k x k operations)")
    parser.add_argument("--quick", action="store_true", help="small versions of every part")
    parser.add_argument("--only", default="eurlex,nus-wide,wiki,scaling",
                        help="comma-separated parts to run (default: all)")
    parser.add_argument("--wiki-scale", type=float, default=None,
                        help="rows of the wiki-shaped problem as a fraction of 881,805 "
                             "(default 0.25; 0.01 with --quick)")
    parser.add_argument("--nus-solver", default="cg", choices=["cg", "auto"],
                        help="W-step solver for nus-wide (auto = eigendecomposition)")
    parser.add_argument("--from-json", default=None, metavar="PATH",
                        help="scaling: refit and replot the sweeps of an earlier run's "
                             "bench_scale.json instead of measuring")
    parser.add_argument("-o", "--out", default="results/bench-scale",
                        help="directory for the figure and the raw figures (JSON)")
    return parser.parse_args(argv)


def _child(job: dict, threads: str) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        env[var] = threads
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(job)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({job}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "unknown"


def _report_fit(title, r, target_s, budget):
    m, b = r["metrics"], r["baseline"]
    print(f"\n{title}: n={r['n']} (test {r['n_test']}) d={r['d']} L={r['L']} "
          f"nnz(X)={r['nnz_x']} nnz(Y)={r['nnz_y']}")
    print(f"  generation {r['gen_s']:.1f}s; fit ({r['solver']}, inner {r['inner']}) "
          f"{r['fit_s']:.1f}s" + (f" [target < {target_s:.0f}s: "
                                  f"{_verdict(r['fit_s'] < target_s)}]" if target_s else ""))
    print(f"  test P@1 {100 * m['p@1']:.2f}  P@3 {100 * m['p@3']:.2f}  AUC {m['auc']:.4f}  "
          f"(most frequent labels: P@1 {100 * b['p@1']:.2f}  P@3 {100 * b['p@3']:.2f}); "
          f"evaluation {r['eval_s']:.1f}s")
    print(f"  peak RSS {r['rss_peak'] / GB:.2f} GB (data generated: {r['rss_data'] / GB:.2f} GB)"
          f" [budget {budget / GB:.0f} GB]")
    assert r["rss_peak"] < budget, f"{title}: peak RSS {r['rss_peak']} exceeds {budget}"


# ----------------------------------------------------------------------------- scaling
def _fit_model(cells):
    """Least squares (non-negative, on relative errors) of T = a (nnz(X) + nnz(Y)) k +
    b (n + L) k^2 + c: coefficients and predictions."""
    import numpy as np
    from scipy.optimize import nnls

    A = np.array([[(c["nnz_x"] + c["nnz_y"]) * c["k"], (c["n"] + c["L"]) * c["k"] ** 2, 1.0]
                  for c in cells])
    t = np.array([c["fit_s"] for c in cells])
    w = 1.0 / t
    coef, _ = nnls(A * w[:, None], t * w)
    return coef, A @ coef


def _slope(x, y):
    import numpy as np

    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _scaling(args, quick):
    import numpy as np

    def wiki(n, d, L):
        return {"like": "wiki", "scale": 1.0,
                "spec": {"n_train": n, "n_test": 10, "n_features": d, "n_labels": L}}

    if quick:
        Ls = (6250, 12500, 25000)
        sweeps = {
            "n": {"datasets": [{"like": "eurlex", "scale": 0.25}],
                  "cells": [{"n": n, "k": 64} for n in (1088, 2177, 4353)]},
            "L": {"datasets": [wiki(5000, 20000, L) for L in Ls],
                  "cells": [{"data": i, "k": 32} for i in range(len(Ls))]},
            "k": {"datasets": [{"like": "eurlex", "scale": 0.125}],
                  "cells": [{"k": k} for k in (16, 32, 64, 128)]},
        }
    else:
        Ls = (12500, 25000, 50000, 100000, 200000)
        sweeps = {
            "n": {"datasets": [{"like": "eurlex", "scale": 1.0}],
                  "cells": [{"n": n, "k": 128} for n in (2177, 4353, 8706, 17413)]},
            "L": {"datasets": [wiki(20000, 50000, L) for L in Ls],
                  "cells": [{"data": i, "k": 64} for i in range(len(Ls))]},
            "k": {"datasets": [{"like": "eurlex", "scale": 0.5}],
                  "cells": [{"k": k} for k in (32, 64, 128, 256, 512)]},
        }
    if args.from_json:
        with open(args.from_json) as fh:
            results = json.load(fh)["scaling"]["cells"]
    else:
        results = {}
        for axis, job in sweeps.items():
            job = {"kind": "sweep", **job, "repeats": 1 if quick else 3}
            results[axis] = _child(job, args.sweep_threads)["cells"]
    for axis, cells in results.items():
        print(f"  {axis}: " + ", ".join(f"{c[axis]}: {c['fit_s']:.2f}s" for c in cells))
    # One fit per shape: the constants differ between shapes (with d = 50,000 the rows of W
    # a sparse product visits no longer stay in cache), the exponents should not.
    groups = {"eurlex-shaped (n and k sweeps)": ("n", "k"), "wiki-shaped (L sweep)": ("L",)}
    fits, pred_of = {}, {}
    for name, axes in groups.items():
        keys = [(a, i) for a in axes for i in range(len(results[a]))]
        coef, pred = _fit_model([results[a][i] for a, i in keys])
        pred_of.update(zip(keys, pred))
        print(f"  {name}: T = {coef[0]:.3g} (nnz(X)+nnz(Y)) k + {coef[1]:.3g} (n+L) k^2 + "
              f"{coef[2]:.3g}s")
        fits[name] = {"a": float(coef[0]), "b": float(coef[1]), "c": float(coef[2])}
    slopes = {}
    for axis, cells in results.items():
        x = [c[axis] for c in cells]
        t = [c["fit_s"] for c in cells]
        p = [pred_of[(axis, i)] for i in range(len(cells))]
        err = max(abs(a / b - 1) for a, b in zip(t, p))
        slopes[axis] = {"measured": _slope(x, t), "model": _slope(x, p), "max_rel_err": err}
        print(f"    time vs {axis}: measured slope {slopes[axis]['measured']:.2f}, model slope "
              f"{slopes[axis]['model']:.2f}, largest |measured/model - 1| {err:.0%}")
    _plot(args.out, results, pred_of)
    return {"cells": results, "fits": fits, "slopes": slopes}, np


def _plot(out_dir, results, pred_of):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    fixed = {"n": "eurlex-shaped, k fixed", "L": "wiki-shaped, n, d, k fixed",
             "k": "eurlex-shaped, n fixed"}
    for ax, (axis, cells) in zip(axes, results.items()):
        x = [c[axis] for c in cells]
        t = [c["fit_s"] for c in cells]
        p = [pred_of[(axis, i)] for i in range(len(cells))]
        ax.loglog(x, t, "o-", color="k", label=f"measured (slope {_slope(x, t):.2f})")
        ax.loglog(x, p, "s--", mfc="none", label=f"model (slope {_slope(x, p):.2f})")
        from matplotlib.ticker import NullFormatter

        lo, hi = min(t + p), max(t + p)
        mid, half = (lo * hi) ** 0.5, max((hi / lo) ** 0.5 * 1.3, 10 ** 0.5)
        ax.set_ylim(mid / half, mid * half)     # at least a decade: flat looks flat
        for axis_obj in (ax.xaxis, ax.yaxis):
            axis_obj.set_minor_formatter(NullFormatter())
        ax.set_xlabel({"n": "training rows n", "L": "labels L", "k": "rank k"}[axis])
        ax.set_ylabel("fit seconds (2 outer iterations)")
        ax.set_title(fixed[axis], fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("LEML-SQ fit time (CG W-steps, 5 CG iterations) against the model "
                 "T = a (nnz(X)+nnz(Y)) k + b (n+L) k^2 + c (fitted per shape)", fontsize=10)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "bench_scale.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    print(f"  figure: {path}")


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    args = _parse_args(argv)
    parts = set(args.only.split(","))
    quick = args.quick
    wiki_scale = args.wiki_scale or (0.01 if quick else 0.25)
    print(f"bench_scale: BLAS threads {args.threads}; {os.cpu_count()} CPUs; load average "
          f"{_load()}{'; --quick' if quick else ''}")
    record = {}
    if "eurlex" in parts:
        scale = 0.25 if quick else 1.0
        r = _child({"kind": "fit", "like": "eurlex", "scale": scale, "k": 250}, args.threads)
        _report_fit(f"eurlex-shaped (scale {scale:g}), LEML-SQ k=250, 5 iterations", r,
                    60 if not quick else None, 4 * GB)
        record["eurlex"] = r
    if "nus-wide" in parts:
        scale = 0.05 if quick else 1.0
        params = {} if args.nus_solver == "cg" else {"w_solver": "auto"}
        r = _child({"kind": "fit", "like": "nus-wide", "scale": scale, "k": 50,
                    "params": params}, args.threads)
        _report_fit(f"nus-wide-shaped (scale {scale:g}), LEML-SQ k=50, 5 iterations", r,
                    60 if not quick else None, 8 * GB)
        record["nus-wide"] = r
    if "wiki" in parts:
        r = _child({"kind": "fit", "like": "wiki", "scale": wiki_scale, "k": 250},
                   args.threads)
        _report_fit(f"wiki-shaped (scale {wiki_scale:g}), LEML-SQ k=250 (CG), 5 iterations",
                    r, None, 16 * GB)
        print(f"  for comparison, one dense float64 n x L: {8 * r['n'] * r['L'] / GB:.0f} GB; "
              f"d x d: {8 * r['d'] ** 2 / GB:.0f} GB")
        assert r["solver"] == "cg"
        record["wiki"] = r
    if "scaling" in parts:
        print(f"\nscaling (2 outer iterations, 5 CG iterations per W-step; BLAS threads "
              f"{args.sweep_threads}; best of {1 if quick else 3}):")
        record["scaling"], _ = _scaling(args, quick)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_scale.json"), "w") as fh:
        json.dump(record, fh, indent=1)
    print(f"\nload average at the end: {_load()}")
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    status = main()
    print(f"bench_scale: {time.perf_counter() - t0:.0f}s")
    sys.exit(status)
