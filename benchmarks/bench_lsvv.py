"""LSVV on corel5k: fit time against BR, and the Gram proximal step against a full SVD.

One core (BLAS pinned to one thread). Prints, for the Table 6 models in the linear space
(and LSVV in random-Fourier-feature space), the fit seconds, their ratio to BR's fit on the
same data in the same run, the final objective (11) and the test Hamming loss (%). Then the
proximal-step comparison at equal epochs: the naive route (a full SVD of the D x K weights
after every mini-batch, as the authors' code does) against ``partial_svt`` (eigendecomposition
of the K x K Gram matrix) every batch and every few batches, with objective values and
seconds. The authors report 52 s (SRM) to 172 s (LSVV) per fit on corel5k. First, the cost
of one proximal step at corel5k's shape (D features x K labels): ``partial_svt`` (Gram
eigendecomposition) against a full SVD, milliseconds per step (median of ``--step-repeats``);
``--steps-only`` stops there.

Run with `.venv/bin/python benchmarks/bench_lsvv.py [--epochs 10] [--compare-epochs 2]
[--observed 1.0] [--steps-only]`; exits non-zero when corel5k is not on the data path.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import mlx.methods.lsvv as lsvv_module
from mlx.errors import DataNotFoundError
from mlx.methods.br import BR
from mlx.methods.lsvv import LSVV
from mlx.numerics.svt import partial_svt, partial_svt_svd

# The authors' code defaults (lsvv_multi_train.m) for the regularisers of LRC-VV / SS-VV / LSVV.
TAU_I, TAU_S = 1e-8, 1e-6


def naive_svt(Q, tau, theta, *, shrink):
    """The authors' step: a full SVD (U of size D x D) after every mini-batch."""
    return partial_svt_svd(Q, tau, theta, shrink=shrink, full_matrices=True)


def hamming(Y: sp.csr_matrix, scores: np.ndarray, threshold: float) -> float:
    return float(100 * np.mean((scores > threshold) != (Y.toarray() > 0)))


def fit(method, X, Y, observed, svt=partial_svt):
    lsvv_module.partial_svt = svt
    try:
        t0 = time.perf_counter()
        method.fit(X, Y, observed=observed)
        return time.perf_counter() - t0
    finally:
        lsvv_module.partial_svt = partial_svt


def step_costs(D: int, K: int, repeats: int) -> None:
    """Milliseconds per proximal step on a random D x K weight matrix (LSVV's default theta)."""
    W = np.random.default_rng(0).standard_normal((D, K))
    theta = -(-min(D, K) // 2)
    for label, svt in (("Gram eig (partial_svt)", partial_svt), ("full SVD", naive_svt),
                       ("thin SVD", partial_svt_svd)):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            svt(W, 0.01, theta, shrink="tail")
            times.append(time.perf_counter() - t0)
        print(f"one proximal step, D={D} K={K}, {label:<22s} {1e3 * np.median(times):7.1f} ms",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--compare-epochs", type=int, default=2,
                        help="epochs of the naive-vs-Gram proximal step comparison")
    parser.add_argument("--observed", type=float, default=1.0,
                        help="observed label ratio (the paper's Table 7 uses 0.5)")
    parser.add_argument("--prox-every", default="4,8",
                        help="comma-separated prox_every values for the fast LSVV rows")
    parser.add_argument("--step-repeats", type=int, default=20,
                        help="repeats of the one-step timing (median)")
    parser.add_argument("--steps-only", action="store_true",
                        help="only the cost of one proximal step")
    args = parser.parse_args()

    from mlx.data.catalog import load_split, resolve_dataset
    try:
        split = load_split(resolve_dataset("corel5k", source=None))
    except DataNotFoundError as exc:
        print(f"corel5k not available: {exc}", file=sys.stderr)
        return 1
    train, test = split.train, split.test
    observed = None
    Y = train.Y
    if args.observed < 1:
        rng = np.random.default_rng(0)
        observed = sp.csr_matrix(rng.random(Y.shape) < args.observed, dtype=np.float64)
        Y = sp.csr_matrix(Y.multiply(observed))
    print(f"corel5k: train {train.X.shape}, {train.n_labels} labels, test {test.X.shape[0]} "
          f"rows; observed={args.observed:g}; all-zero Hamming "
          f"{100 * test.Y.nnz / np.prod(test.Y.shape):.3f}%", flush=True)

    with threadpool_limits(limits=1):
        step_costs(train.X.shape[1], train.n_labels, args.step_repeats)
        if args.steps_only:
            return 0
        br = BR()
        br_s = fit(br, train.X, Y, observed)
        print(f"BR (logistic, liblinear)   fit={br_s:6.2f}s  hamming="
              f"{hamming(test.Y, br.decision_function(test.X), br.threshold):.3f}%", flush=True)

        def row(label, svt=partial_svt, **params):
            m = LSVV(epochs=args.epochs, random_state=0, **params)
            s = fit(m, train.X, Y, observed, svt)
            print(f"{label:<26s} fit={s:6.2f}s  x BR={s / br_s:6.2f}  "
                  f"objective={m.objective_[-1]:.6f}  prox steps={m.n_prox_:5d}  hamming="
                  f"{hamming(test.Y, m.decision_function(test.X), m.threshold):.3f}%",
                  flush=True)
            return m, s

        print(f"-- Table 6 models, {args.epochs} epochs, batch 32 (authors' settings)")
        row("SRM-VV linear")
        row("LRC-VV linear", tau_S=TAU_S)
        row("SS-VV linear", tau_I=TAU_I)
        row("LSVV linear", tau_I=TAU_I, tau_S=TAU_S)
        for p in (int(v) for v in args.prox_every.split(",") if v):
            row(f"LSVV linear prox_every={p}", tau_I=TAU_I, tau_S=TAU_S, prox_every=p)
        row("SRM-VV rff (D=100)", space="rff")
        row("LSVV rff (D=100)", space="rff", tau_I=TAU_I, tau_S=TAU_S)

        e = args.compare_epochs
        print(f"-- proximal step at equal epochs ({e}), LSVV linear, theta=ceil(min(K,D)/2)")
        for tau_S in (TAU_S, 1e-2):
            results = []
            for label, svt, p in (("full SVD every batch", naive_svt, 1),
                                  ("Gram eig every batch", partial_svt, 1),
                                  ("Gram eig every 4", partial_svt, 4)):
                m = LSVV(epochs=e, random_state=0, tau_I=TAU_I, tau_S=tau_S, prox_every=p)
                s = fit(m, train.X, Y, observed, svt)
                results.append((label, s, m))
            base_s, base_m = results[0][1], results[0][2]
            for label, s, m in results:
                print(f"tau_S={tau_S:<6g} {label:<22s} fit={s:6.2f}s  speed-up="
                      f"{base_s / s:5.2f}  objective={m.objective_[-1]:.8f}  "
                      f"|W - W_naive|/|W_naive|="
                      f"{np.linalg.norm(m.W_ - base_m.W_) / np.linalg.norm(base_m.W_):.1e}  "
                      f"hamming={hamming(test.Y, m.decision_function(test.X), 0.5):.3f}%",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
