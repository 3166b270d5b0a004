"""Threads inside one fit: LEML-SQ on the eurlex-shaped stand-in, 1 and 2 threads, beside PLT.

Prints, in one run and on the same files (``mlx datasets synth NAME --like eurlex``, written
to ``--data-dir`` first if missing; ``--scale`` multiplies the rows):

1. LEML squared loss, full labels, rank 250, 5 outer iterations (``tol=0``), lambda 1, with
   the default W-step (``w_solver="auto"``: the exact path, from X'X's tridiagonal form, up to 5000
   features) and with the CG W-step, each on 1 and on 2 threads (:func:`mlx.numerics.spmm.threads`,
   as the runner gives a cell alone on the machine). Every fit starts cold (the cached
   factorisation of X'X cleared). Test P@1, and whether the 2-thread factors equal the
   1-thread ones bit for bit.
2. napkinXC's PLT (its defaults, 2 threads) training time on the same rows, when the
   ``xmc`` extra is installed (``pip install 'mlx-multilabel[xmc]'``); otherwise says so and
   prints mlx's figures alone.
3. Ratios: each LEML fit over PLT's training time (target <= 1), and 1-thread over 2-thread
   time.

First, BR-SQ's block-CG ridge route (``--br``: registered datasets found on the data path,
half the label entries observed) on 1 and 2 threads, with whether W is identical.

BLAS runs on one thread throughout (as in a cell); the threads are mlx's own kernels. The
load average is printed first: on a busy machine wall times grow, and the second thread
helps only when a core is free. Run with ``.venv/bin/python benchmarks/bench_threads.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="rows of the stand-in (x eurlex)")
    parser.add_argument("--data-dir", default=str(REPO / "datasets" / "synth"),
                        help="where the stand-in's files are (written if missing)")
    parser.add_argument("--rank", type=int, default=250)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--solvers", default="auto,cg", help="LEML W-step solvers to time")
    parser.add_argument("--br", default="bibtex,delicious", metavar="DATASETS",
                        help="registered datasets for BR-SQ's block-CG ridge (observed ratio "
                             "0.5), timed first when on the data path; '' for none")
    parser.add_argument("--br-only", action="store_true", help="skip LEML and PLT")
    return parser.parse_args(argv)


def _br_block_cg(names: list[str]) -> None:
    """BR squared loss, lambda 1, half the label entries observed (a fixed draw): labels with
    more observed rows than features take the block-CG route, whose X P and X' (X P) run on
    the kernel threads. Fit seconds on 1 and 2 threads, and whether W is the same."""
    import numpy as np
    import scipy.sparse as sp

    from mlx.data.catalog import find_files, load_split, resolve_dataset
    from mlx.methods.br import BR
    from mlx.numerics.spmm import threads

    for name in names:
        spec = resolve_dataset(name, source=None)
        if find_files(spec):
            print(f"  BR-SQ block CG: {name} is not on the data path, not timed")
            continue
        train = load_split(spec).train
        X, Y = train.X, train.Y
        rng = np.random.default_rng(0)
        observed = sp.csr_matrix((rng.random(Y.shape) < 0.5).astype(np.float64))
        fits = {}
        for n in (1, 2):
            with threads(n):
                t0 = time.perf_counter()
                model = BR(loss="squared", l2_reg=1.0).fit(X, Y, observed=observed)
                fits[n] = (time.perf_counter() - t0, model)
            print(f"  BR-SQ block CG on {name} (n={X.shape[0]} d={X.shape[1]} L={Y.shape[1]} "
                  f"nnz(X)={X.nnz}), {n} thread(s): fit {fits[n][0]:.2f}s, CG iterations "
                  f"max {int(model.n_iter_.max())}")
        (t1, m1), (t2, m2) = fits[1], fits[2]
        print(f"    1 thread / 2 threads: {t1 / t2:.2f}x; W identical: "
              f"{np.array_equal(m1.W_, m2.W_)}")


def _stand_in(data_dir: Path, scale: float):
    name = "eurlex-synth" if scale == 1.0 else f"eurlex-synth-{scale:g}"
    train, test = data_dir / f"{name}-train.txt", data_dir / f"{name}-test.txt"
    if not (train.exists() and test.exists()):
        subprocess.run([sys.executable, "-m", "mlx", "datasets", "synth", name, "--like",
                        "eurlex", "--scale", str(scale), "-o", str(data_dir)], check=True)
    return {"name": name, "format": "xc", "train": str(train), "test": str(test)}


def main(argv=None) -> int:
    args = _parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = "1"
    import numpy as np

    from mlx.data.catalog import load_split, resolve_dataset
    from mlx.methods.leml import LEML, clear_gram_cache
    from mlx.metrics import precision_at_k
    from mlx.numerics.spmm import available_cores, threads

    print(f"load average {os.getloadavg()[0]:.2f} on {available_cores()} cores; BLAS 1 thread")
    _br_block_cg([n for n in args.br.split(",") if n])
    if args.br_only:
        return 0
    split = load_split(resolve_dataset(_stand_in(Path(args.data_dir), args.scale), source=None))
    X, Y, Xt, Yt = split.train.X, split.train.Y, split.test.X, split.test.Y
    print(f"{split.name}: n={X.shape[0]} d={X.shape[1]} L={Y.shape[1]} nnz(X)={X.nnz}, "
          f"test rows {Xt.shape[0]}")

    def p_at_1(scores):
        return 100.0 * float(np.mean(precision_at_k(Yt, scores, k=1)))

    plt_train = None
    try:
        from napkinxc.models import PLT
    except ImportError:
        print("napkinXC is not installed (pip install 'mlx-multilabel[xmc]'): mlx alone below")
    else:
        labels = [[int(j) for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]]]
                  for i in range(Y.shape[0])]
        with tempfile.TemporaryDirectory(prefix="bench-threads-plt-") as tmp:
            model = PLT(tmp, threads=2, seed=0, verbose=0)
            t0 = time.perf_counter()
            model.fit(X, labels)
            plt_train = time.perf_counter() - t0
            top = model.predict(Xt, top_k=1)
        hits = [1.0 if row and Yt[i, row[0]] != 0 else 0.0 for i, row in enumerate(top)]
        print(f"  napkinXC PLT (defaults, 2 threads): train {plt_train:.2f}s, "
              f"P@1 {100.0 * float(np.mean(hits)):.2f}")

    for solver in args.solvers.split(","):
        fits = {}
        for n in (1, 2):
            clear_gram_cache()
            model = LEML(rank=args.rank, loss="squared", l2_reg=1.0, max_iter=args.iterations,
                         tol=0.0, w_solver=solver, random_state=0)
            with threads(n):
                t0 = time.perf_counter()
                model.fit(X, Y)
                seconds = time.perf_counter() - t0
            fits[n] = (seconds, model)
            vs_plt = f", {seconds / plt_train:.2f}x PLT's train" if plt_train else ""
            print(f"  LEML-SQ k={args.rank} w_solver={solver} ({model.w_solver_}), "
                  f"{model.n_iter_} iterations, {n} thread(s): fit {seconds:.2f}s{vs_plt}, "
                  f"P@1 {p_at_1(model.decision_function(Xt)):.2f}")
        (t1, m1), (t2, m2) = fits[1], fits[2]
        same = np.array_equal(m1.W_, m2.W_) and np.array_equal(m1.H_, m2.H_)
        print(f"    1 thread / 2 threads: {t1 / t2:.2f}x; factors identical: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
