"""CPLST and WSABIE on bibtex: WARP epoch speed, fit times, and test accuracy vs the paper.

Prints:

* the numba compile time of the WARP kernel (a fresh cache directory, so it really
  compiles), then the time per WSABIE epoch over all (instance, positive label) pairs at
  rank 64, compile excluded (min / median / max over the epochs of one fit);
* fit times of CPLST at k/L = 20% and, when :mod:`mlx.methods.leml` is available, of
  LEML-SQ (``max_iter=10``) in the same run, with their ratio; the WSABIE fit time;
* test top-1/3/5 accuracy and AUC of CPLST and WSABIE at k/L = 20% next to the LEML
  paper's values (shared/reference/leml-full-labels.csv when found).

``--tune`` first reruns the small validation grids used to pick the defaults (80/20 split
of the training set, seed 0; the test set is not touched). Exits 1 when bibtex is not on
the data path. Run with
``MLX_DATA_PATH=... .venv/bin/python benchmarks/bench_baselines.py [--tune] [--epochs-rank 64]``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")                  # one core, as the targets are stated
os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="mlx-bench-numba-"))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from mlx.errors import DataNotFoundError  # noqa: E402
from mlx.metrics import instance_auc, precision_at_k  # noqa: E402

REFERENCE_NAME = "leml-full-labels.csv"


def scores_summary(Y: sp.csr_matrix, scores: np.ndarray) -> dict[str, float]:
    out = {f"top{k}": float(precision_at_k(Y, scores, k=k).mean()) for k in (1, 3, 5)}
    out["auc"] = float(np.nanmean(instance_auc(Y, scores)))
    return out


def fmt(m: dict[str, float]) -> str:
    return " ".join(f"{k} {v:.4f}" for k, v in m.items())


def paper_values(method: str, loss: str, k_over_l: int) -> dict[str, float] | None:
    here = Path(__file__).resolve()
    for base in (here.parents[1], *here.parents[1].parents):
        path = base / "shared" / "reference" / REFERENCE_NAME
        if path.exists():
            break
    else:
        return None
    out = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if (row["dataset"] == "bibtex" and row["method"] == method and row["loss"] == loss
                    and int(row["k_over_L"]) == k_over_l and int(row["observed"]) == 100):
                value = float(row["value"])
                out[row["metric"]] = value / 100 if row["metric"].startswith("top") else value
    return {k: out[k] for k in ("top1", "top3", "top5", "auc") if k in out} or None


def validation_split(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    perm = np.random.default_rng(seed).permutation(n)
    n_val = n // 5
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def tune(train, rank: int) -> None:
    from mlx.methods.cplst import CPLST
    from mlx.methods.wsabie import WSABIE

    tr, va = validation_split(train.X.shape[0])
    Xtr, Ytr, Xva, Yva = train.X[tr], train.Y[tr], train.X[va], train.Y[va]
    print(f"validation grid: {tr.size} train / {va.size} validation rows, rank {rank}")
    for lam in (0.0, 0.01, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0):
        model = CPLST(rank=rank, l2_reg=lam).fit(Xtr, Ytr)
        print(f"  cplst l2_reg={lam:<6g} {fmt(scores_summary(Yva, model.decision_function(Xva)))}")
    grid = [(1e-4, 1.0, 1.0), (3e-4, 2.0, 1.0), (1e-3, 2.0, 1.0), (3e-3, 4.0, 1.0),
            (3e-4, 6.0, 3.0), (1e-3, 6.0, 3.0), (3e-4, 10.0, 10.0), (1e-3, 10.0, 10.0),
            (3e-4, 20.0, 20.0), (1e-3, 20.0, 20.0), (1e-3, 10.0, 30.0)]
    for (lr, max_norm, margin), epochs in itertools.product(grid, (5, 10, 20, 40)):
        model = WSABIE(rank=rank, learning_rate=lr, max_norm=max_norm, margin=margin,
                       epochs=epochs, random_state=0).fit(Xtr, Ytr)
        print(f"  wsabie lr={lr:<6g} max_norm={max_norm:<4g} margin={margin:<4g} "
              f"epochs={epochs:<3d} {fmt(scores_summary(Yva, model.decision_function(Xva)))}",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true", help="run the validation grids first")
    parser.add_argument("--epochs-rank", type=int, default=64,
                        help="rank for the per-epoch WARP timing (default 64)")
    parser.add_argument("--cplst-l2-reg", type=float, nargs="*", default=[0.1, 10.0],
                        help="CPLST l2_reg values to report (default: 0.1 (default) and 10 "
                             "(validated))")
    parser.add_argument("--all-ratios", action="store_true",
                        help="also compare CPLST and WSABIE with the paper at k/L = 40..100%%")
    args = parser.parse_args()

    from mlx.data.catalog import load_split, resolve_dataset
    try:
        split = load_split(resolve_dataset("bibtex", source=None))
    except DataNotFoundError as exc:
        print(f"bibtex not available: {exc}", file=sys.stderr)
        return 1
    train, test = split.train, split.test
    L = train.Y.shape[1]
    rank = max(1, round(0.2 * L))
    print(f"bibtex: train {train.X.shape}, test {test.X.shape}, {L} labels, "
          f"{train.Y.nnz} (instance, positive) pairs; k/L=20% -> rank {rank}")

    # -- WARP kernel: compile time, then time per epoch -----------------------------------
    from mlx.methods.wsabie import WSABIE
    from mlx.numerics.warp import _warp_epoch, warp_epoch

    tiny_x = sp.csr_matrix(np.ones((2, 3)))
    tiny_y = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    tic = time.perf_counter()
    warp_epoch(np.zeros((2, 4)), np.zeros((3, 4)), tiny_x.indptr.astype(np.int64),
               tiny_x.indices.astype(np.int64), tiny_x.data, tiny_y.indptr.astype(np.int64),
               tiny_y.indices.astype(np.int64), rng=np.random.default_rng(0),
               learning_rate=0.1, margin=1.0, max_norm=1.0)
    compiled = "compiled" if _warp_epoch.stats.cache_misses else "loaded from numba's cache"
    print(f"warp kernel first call: {time.perf_counter() - tic:.2f}s ({compiled}; excluded below)")

    if args.tune:
        tune(train, rank)

    k = args.epochs_rank
    model = WSABIE(rank=k, random_state=0).fit(train.X, train.Y)
    ep = np.array(model.epoch_seconds_)
    print(f"wsabie rank {k}: {train.Y.nnz} pairs per epoch, epoch seconds min {ep.min():.3f} "
          f"median {np.median(ep):.3f} max {ep.max():.3f} over {ep.size} epochs "
          f"(target <= 0.1 s)")

    # -- fit times at k/L = 20% ------------------------------------------------------------
    from mlx.methods.cplst import CPLST
    results = {}
    cplst_times = {}
    for lam in args.cplst_l2_reg:
        tic = time.perf_counter()
        cplst = CPLST(rank=rank, l2_reg=lam).fit(train.X, train.Y)
        cplst_times[lam] = time.perf_counter() - tic
        results[f"CPLST l2_reg={lam:g}"] = scores_summary(test.Y, cplst.decision_function(test.X))
        print(f"cplst rank {rank} l2_reg={lam:g}: fit {cplst_times[lam]:.3f}s")
    from mlx.methods.bcs import BCS
    from mlx.methods.leml import LEML, clear_gram_cache

    clear_gram_cache()  # LEML starts cold: its eigendecomposition of X'X is part of the fit
    tic = time.perf_counter()
    leml = LEML(rank=rank, l2_reg=0.1, loss="squared", max_iter=10).fit(train.X, train.Y)
    leml_time = time.perf_counter() - tic
    results["LEML-SQ l2_reg=0.1"] = scores_summary(test.Y, leml.decision_function(test.X))
    print(f"leml-sq rank {rank} max_iter=10: fit {leml_time:.3f}s")

    tic = time.perf_counter()
    wsabie = WSABIE(rank=rank, random_state=0).fit(train.X, train.Y)
    wsabie_time = time.perf_counter() - tic
    print(f"wsabie rank {rank} ({wsabie.epochs} epochs, learning_rate={wsabie.learning_rate:g}, "
          f"margin={wsabie.margin:g}, max_norm={wsabie.max_norm:g}): fit {wsabie_time:.3f}s")
    results["WSABIE (defaults)"] = scores_summary(test.Y, wsabie.decision_function(test.X))

    tic = time.perf_counter()
    bcs = BCS(rank=rank, random_state=0).fit(train.X, train.Y)
    bcs_time = time.perf_counter() - tic
    print(f"bcs rank {rank} (defaults): fit {bcs_time:.3f}s")
    results["BCS (defaults)"] = scores_summary(test.Y, bcs.decision_function(test.X))

    print(f"fit time at k/L=20% as a ratio to LEML-SQ's ({leml_time:.3f}s) in this run:")
    for name, t in [(f"CPLST l2_reg={lam:g}", t) for lam, t in cplst_times.items()] + [
            ("WSABIE", wsabie_time), ("BCS", bcs_time)]:
        print(f"  {name:<18} {t:.3f}s  {t / leml_time:.2f}x")

    # -- accuracy vs the paper ------------------------------------------------------------
    print("test accuracy at k/L=20% (ours, then the LEML paper's Tables 6-8 and 10):")
    for name, m in results.items():
        print(f"  {name:<22} {fmt(m)}")
    for method, loss in (("CPLST", "SQ"), ("WSABIE", "WAR"), ("BCS", "SQ"), ("LEML", "SQ")):
        ref = paper_values(method, loss, 20)
        if ref:
            print(f"  paper {method + '-' + loss:<16} {fmt(ref)}")
    if args.all_ratios:
        print("test accuracy at other k/L (ours | paper):")
        for pct in (40, 60, 80, 100):
            r = max(1, round(pct / 100 * L))
            models = {f"CPLST l2_reg={lam:g}": CPLST(rank=r, l2_reg=lam)
                      for lam in args.cplst_l2_reg}
            models["WSABIE (defaults)"] = WSABIE(rank=r, random_state=0)
            for name, model in models.items():
                ours = scores_summary(test.Y, model.fit(train.X, train.Y).decision_function(test.X))
                ref = paper_values(*(("WSABIE", "WAR") if name.startswith("WSABIE")
                                     else ("CPLST", "SQ")), pct) or {}
                print(f"  {pct:>3}% {name:<22} {fmt(ours)} | {fmt(ref)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
