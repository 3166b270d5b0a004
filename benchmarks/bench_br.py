"""BR on bibtex: fit time and test P@1 / P@3 / AUC per loss, full and missing labels.

Prints one line per setting; exits non-zero when bibtex is not on the data path.
Run with `.venv/bin/python benchmarks/bench_br.py [--jobs N] [--observed 0.05,0.2,...]`.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp

from mlx.errors import DataNotFoundError
from mlx.methods.br import BR


def p_at_k(Y: sp.csr_matrix, scores: np.ndarray, k: int) -> float:
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return float(np.take_along_axis(Y.toarray() > 0, top, axis=1).sum(axis=1).mean() / k)


def mean_auc(Y: sp.csr_matrix, scores: np.ndarray) -> float:
    """Per-instance Mann-Whitney AUC, ties counting 1/2; rows lacking a positive or a negative
    are skipped."""
    truth = Y.toarray() > 0
    values = []
    for s, t in zip(scores, truth):
        n_pos = int(t.sum())
        if 0 < n_pos < t.size:
            ranks = np.argsort(np.argsort(s, kind="stable"), kind="stable") + 1.0
            for v in np.unique(s):                                # average ranks over ties
                tied = s == v
                ranks[tied] = ranks[tied].mean()
            values.append((ranks[t].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (t.size - n_pos)))
    return float(np.mean(values))


def mask(shape, ratio: float, seed: int = 0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(rng.random(shape) < ratio, dtype=np.float64)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--observed", default="1.0",
                        help="comma-separated observed ratios (1.0 = full labels)")
    parser.add_argument("--losses", default="logistic,squared_hinge,squared")
    args = parser.parse_args()

    from mlx.data.catalog import load_split, resolve_dataset
    try:
        split = load_split(resolve_dataset("bibtex", source=None))
    except DataNotFoundError as exc:
        print(f"bibtex not available: {exc}", file=sys.stderr)
        return 1
    train, test = split.train, split.test
    for ratio in (float(r) for r in args.observed.split(",")):
        observed = None if ratio >= 1 else mask(train.Y.shape, ratio)
        for loss in args.losses.split(","):
            model = BR(loss=loss, n_jobs=args.jobs)
            t0, c0 = time.perf_counter(), time.process_time()
            model.fit(train.X, train.Y, observed=observed)
            fit_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
            scores = model.decision_function(test.X)
            print(f"observed={ratio:<5g} loss={loss:<14s} jobs={args.jobs} "
                  f"fit={fit_s:6.2f}s cpu={cpu_s:6.2f}s "
                  f"p@1={100 * p_at_k(test.Y, scores, 1):.2f} "
                  f"p@3={100 * p_at_k(test.Y, scores, 3):.2f} "
                  f"auc={mean_auc(test.Y, scores):.4f} "
                  f"untrained={model.untrained_labels_.size} converged={model.converged_}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
