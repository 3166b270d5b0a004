"""Landmarking (Kar and Jain 2012) benchmark: per-fit seconds of RegLand-Sp, ORLand and KR
(and RegLand, not in Table 1) at 50 landmarks on the largest Table-1 sets, their errors beside
the paper's, and an estimate of the time of all of Table 1.

Data as a Table-1 config would prepare it: one random 80/20 split (seed 0), features min-max
scaled on the training rows, regression targets min-max scaled to [0, 1] (``target: minmax``),
the Delve ordinal sets cut into 10 equal-frequency levels. A "fit" is ``fit`` on the training
part plus ``decision_function`` on the test part, the unit of work of one runner cell; BLAS
runs on one thread, as in the runner.

Table-1 estimate: the paper's 12 datasets (sizes from its Table 1) x {sigmoid, Manhattan} x 5
splits x the series of ``configs/tables/similarity-table1.yaml``, KR, RegLand-Sp and ORLand
(ORLand cells of regression sets are skipped: no cost). KR costs ``n_train x n_test``
similarity evaluations; the per-pair rate is taken from the measured set with the nearest
number of features (at least as many when possible). A landmark model costs about ``n_train``
rows of work; its per-row rate is the largest measured. RegLand is timed for information
only. ``--all`` times every Table-1 dataset on the data path instead (one split, times 5).
``--regland-c`` instead times RegLand's liblinear ``-s 11`` fit on cadata (Manhattan, 50
landmarks) at C = 1, 100 and 1e4: the primal Newton solver slows down as C grows.

Run with ``.venv/bin/python benchmarks/bench_landmark.py`` (``MLX_DATA_PATH`` must hold the
datasets; exits with status 2 when one is missing).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

# Registry name, task, paper name, paper N, paper d.
LARGEST = [("cadata", "regression"), ("house-16h", "ordinal"), ("bank-32nh", "ordinal"),
           ("pumadyn-32nh", "regression")]
TABLE1 = [  # (registry name or None when not registered, task, paper name, N, d)
    ("abalone", "regression", "abalone", 4177, 8),
    ("bodyfat", "regression", "bodyfat", 252, 14),
    ("cadata", "regression", "cahousing", 20640, 8),
    ("cpusmall", "regression", "cpudata", 8192, 12),
    ("pumadyn-8nh", "regression", "pumadyn-8", 8192, 8),
    ("pumadyn-32nh", "regression", "pumadyn-32", 8192, 32),
    ("wine-quality-red", "ordinal", "wine-red", 1599, 11),
    ("wine-quality-white", "ordinal", "wine-white", 4898, 11),
    ("bank-8fm", "ordinal", "bank-8", 8192, 8),
    ("bank-32nh", "ordinal", "bank-32", 8192, 32),
    ("house-8l", "ordinal", "house-8", 22784, 8),
    ("house-16h", "ordinal", "house-16", 22784, 16),
]
PAPER_NAME = {row[0]: row[2] for row in TABLE1}
SIMILARITIES = ("sigmoid", "manhattan")
TEST_FRACTION = 0.2
SPLITS = 5


SERIES = ("KR", "RegLand-Sp", "ORLand")


def _models(task: str) -> list[tuple[str, dict]]:
    """The Table-1 series that run on ``task``, then RegLand (regression only, not in it)."""
    models = [("KR", {"model": "kr"}), ("RegLand-Sp", {"model": "regland_sp"})]
    if task == "ordinal":
        return models + [("ORLand", {"model": "orland"})]
    return models + [("RegLand", {"model": "regland"})]


def load(name: str, task: str, seed: int = 0):
    """Train/test parts of a registered dataset, scaled as described in the module docstring."""
    from mlx.data.catalog import load_full
    from mlx.data.spec import resolve_dataset
    from mlx.preprocess import Preprocessor

    node = name
    if task == "ordinal" and not name.startswith("wine"):
        node = {"name": name, "task": "ordinal", "bins": 10}
    ds = load_full(resolve_dataset(node, source=None))
    n = ds.X.shape[0]
    perm = np.random.default_rng(seed).permutation(n)
    n_test = round(TEST_FRACTION * n)
    test, train = perm[:n_test], perm[n_test:]
    pre = Preprocessor(["minmax"])
    pre.fit(ds.X[train])
    X_tr, X_te = pre.transform(ds.X[train]), pre.transform(ds.X[test])
    Y_tr, Y_te = ds.Y[train].toarray(), ds.Y[test].toarray()
    if task == "regression":
        lo, hi = Y_tr.min(axis=0), Y_tr.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        Y_tr, Y_te = (Y_tr - lo) / span, (Y_te - lo) / span
    return X_tr, Y_tr, X_te, Y_te


def _error(task: str, pred: np.ndarray, Y_tr: np.ndarray, Y_te: np.ndarray) -> float:
    if task == "regression":
        return float(np.mean((pred - Y_te) ** 2))
    levels = np.unique(Y_tr)                                # the runner's rounding rule
    pos = np.clip(np.searchsorted(levels, pred, side="left"), 1, levels.size - 1)
    lo, hi = levels[pos - 1], levels[pos]
    return float(np.mean(np.abs(np.where(pred - lo <= hi - pred, lo, hi) - Y_te)))


def _paper() -> dict:
    """(paper dataset, kernel) -> (KR, landmark method) published means."""
    path = (Path(__file__).resolve().parents[1] / "mlx" / "reference" / "transcribed"
            / "similarity-landmarking-table1.csv")
    out = {}
    if path.exists():
        with open(path) as fh:
            for row in csv.DictReader(fh):
                out[(row["dataset"], row["kernel"])] = (float(row["KR_mean"]),
                                                        float(row["Landmark_mean"]))
    return out


def time_dataset(name: str, task: str, paper: dict) -> list[dict]:
    from mlx.methods.landmark import Landmark

    X_tr, Y_tr, X_te, Y_te = load(name, task)
    n_tr, n_te, p = X_tr.shape[0], X_te.shape[0], X_tr.shape[1]
    rows = []
    for sim in SIMILARITIES:
        ref = paper.get((PAPER_NAME[name], sim))
        for label, params in _models(task):
            method = Landmark(similarity=sim, n_landmarks=50, task=task, random_state=0,
                              **params)
            t0 = time.perf_counter()
            method.fit(X_tr, Y_tr)
            pred = method.decision_function(X_te)
            seconds = time.perf_counter() - t0
            err = _error(task, pred, Y_tr, Y_te)
            published = ""
            if ref is not None:
                value = ref[0] if label == "KR" else ref[1]
                if label == "KR" or label == ("ORLand" if task == "ordinal" else "RegLand-Sp"):
                    published = f" (paper {value:.2g})"
            rows.append({"dataset": name, "task": task, "sim": sim, "method": label,
                         "seconds": seconds, "n_train": n_tr, "n_test": n_te, "p": p,
                         "error": err})
            metric = "mse" if task == "regression" else "mae"
            print(f"{name:14s} {sim:9s} {label:10s} n={n_tr:5d}+{n_te:<5d} p={p:<3d} "
                  f"fit+predict {seconds:6.3f}s  {metric}={err:.3g}{published}", flush=True)
    return rows


def _rate_for(rates: dict, p: int) -> float:
    """The per-unit rate measured at the nearest feature count (prefer >= p)."""
    above = [q for q in rates if q >= p]
    q = min(above) if above else max(rates)
    return rates[q]


def estimate(rows: list[dict]) -> float:
    """Seconds of Table 1 (one core) from the measured rows, by the cost model above."""
    kr_rate = {sim: {} for sim in SIMILARITIES}              # seconds per (train, test) pair
    land_rate = {}                                           # seconds per training row
    for r in rows:
        if r["method"] == "KR":
            kr_rate[r["sim"]][r["p"]] = max(kr_rate[r["sim"]].get(r["p"], 0.0),
                                            r["seconds"] / (r["n_train"] * r["n_test"]))
        elif r["method"] in SERIES:
            land_rate[r["method"]] = max(land_rate.get(r["method"], 0.0),
                                         r["seconds"] / r["n_train"])
    total = 0.0
    for _, task, _, N, d in TABLE1:
        n_te = round(TEST_FRACTION * N)
        n_tr = N - n_te
        for sim in SIMILARITIES:
            for label, _ in _models(task):
                if label not in SERIES:
                    continue
                if label == "KR":
                    total += _rate_for(kr_rate[sim], d) * n_tr * n_te
                else:
                    total += land_rate.get(label, max(land_rate.values())) * n_tr
    return SPLITS * total


def regland_c(values=(1.0, 100.0, 1e4), repeats: int = 3) -> None:
    """Seconds of RegLand's fit (liblinear -s 11) on cadata, Manhattan, against C."""
    from mlx.methods.landmark import Landmark

    X_tr, Y_tr, X_te, Y_te = load("cadata", "regression")
    for C in values:
        times, model = [], None
        for _ in range(repeats):
            model = Landmark(model="regland", similarity="manhattan", n_landmarks=50, C=C,
                             task="regression", random_state=0)
            t0 = time.perf_counter()
            model.fit(X_tr, Y_tr)
            times.append(time.perf_counter() - t0)
        err = _error("regression", model.decision_function(X_te), Y_tr, Y_te)
        print(f"cadata manhattan RegLand C={C:<8g} fit {np.median(times):6.3f}s (median of "
              f"{repeats})  liblinear Newton steps {int(model.n_iter_[0])}  mse={err:.3g}",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true",
                        help="time every Table-1 dataset on the data path (one split each)")
    parser.add_argument("--regland-c", action="store_true",
                        help="only RegLand's fit time on cadata against C")
    args = parser.parse_args()

    from threadpoolctl import threadpool_limits

    from mlx.errors import DataNotFoundError
    from mlx.methods.landmark import Landmark

    paper = _paper()
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1):
        Landmark(model="regland", n_landmarks=5).fit(rng.random((20, 3)), rng.random((20, 1)))
        if args.regland_c:
            try:
                regland_c()
            except DataNotFoundError as exc:
                print(f"cadata not available: {exc}", file=sys.stderr)
                return 2
            return 0
        sets = [(r[0], r[1]) for r in TABLE1] if args.all else LARGEST
        rows = []
        for name, task in sets:
            try:
                rows += time_dataset(name, task, paper)
            except DataNotFoundError as exc:
                if not args.all:
                    print(f"{name} not available: {exc}", file=sys.stderr)
                    return 2
                print(f"{name}: skipped (not on the data path)", flush=True)

    print()
    kr = {(r["dataset"], r["sim"]): r["seconds"] for r in rows if r["method"] == "KR"}
    for r in rows:
        if r["method"] != "KR":
            print(f"{r['dataset']:14s} {r['sim']:9s} {r['method']:10s} {r['seconds']:6.3f}s "
                  f"per fit vs KR {kr[(r['dataset'], r['sim'])]:6.3f}s")
    if args.all:
        measured = SPLITS * sum(r["seconds"] for r in rows if r["method"] in SERIES)
        print(f"\nTable 1, measured on the sets present: {measured:.0f}s on one core "
              f"({SPLITS} splits); {measured / 2:.0f}s on 2 cores")
    est = estimate(rows)
    print(f"Table 1 estimate (12 sets x 2 similarities x {SPLITS} splits x {'/'.join(SERIES)}, "
          f"paper sizes): {est:.0f}s on one core, {est / 2:.0f}s on 2 cores (budget 300s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
