"""Tree-based extreme multi-label classifiers from optional packages: ``plt`` (napkinXC's
probabilistic label trees) and ``omikuji`` (Parabel- and Bonsai-style partitioned label
trees).

Both need the ``xmc`` extra (``pip install 'mlx-multilabel[xmc]'``, which installs
``napkinxc`` and ``omikuji``); without it, ``mlx validate`` and ``mlx run`` stop with a
one-line message naming the missing package. The packages train on complete label sets, so
cells with missing labels are skipped with the reason.

Scores: :meth:`decision_function` returns every label's score for each row (a dense
``(rows, L)`` array per batch, as every mlx method does): PLT's estimate of P(label | x)
for all labels; Omikuji's beam-search scores, and for the labels outside the beam their
training frequency minus 1 (so that they rank by frequency below the beam's).

Determinism (measured on this machine; see the class docstrings):

* ``plt`` is reproducible: the tree (hierarchical k-means) is seeded by ``random_state``, and
  the node classifiers use liblinear's primal solver by default, which involves no random
  numbers. napkinXC's own default, the dual solver, visits coordinates in an order drawn from
  an unseeded generator: two fits with the same seed then differ by up to about 0.02 in a
  probability. ``solver="dual"`` selects it anyway, and is documented as not reproducible.
* ``omikuji`` is **not** reproducible: the package has no seed and draws its k-means start
  and its solver's coordinate order from the operating system's entropy. Two fits on the same
  data differ (on the benchmark configs, test metrics moved by up to 0.012 between two runs;
  README.md gives the figures), and the method's tests bound it on a learnable problem.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from pathlib import Path

import numpy as np

from mlx.errors import DivergenceError
from mlx.methods._auto import fit_holdout, is_auto, log_grid
from mlx.methods._validation import check_fit_data, check_n_features
from mlx.methods.base import (
    METHODS,
    BaseMethod,
    check_is_fitted,
    ranking_only_failed_checks,
)
from mlx.methods.table import (
    TABLES,
    XMC_EXTRA,
    missing_package,
    xmc_check_context,
)

__all__ = ["PLT", "Omikuji"]

_NO_THRESHOLD = ("Omikuji only ranks labels: it has no decision threshold, so predict (and score "
                 "on a 1-D y), which these checks call, raise ValueError; use decision_function")

_EXTRA = XMC_EXTRA



def _import(method: str, package: str):
    try:
        return importlib.import_module(package)
    except ImportError:
        raise ModuleNotFoundError(missing_package(method, package)) from None


@contextlib.contextmanager
def _quiet():
    """Silence what a compiled package writes to the process's stdout and stderr (progress
    bars, log lines), which would interleave with mlx's own output."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def _read_dir(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _write_dir(files: dict, path: Path) -> None:
    for rel, data in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class _TreeMethod(BaseMethod):
    """What the two wrappers share: the package check, the model kept as the bytes of its
    files (so a fitted method pickles and can be shipped to a worker), scoring into a dense
    array per batch."""

    tasks = ("multilabel",)
    supports_missing_labels = False
    _package = ""

    def check_context(self, context) -> None:
        xmc_check_context(self, context)

    def _fit_data(self, X, Y, observed):
        self._validate_params()
        data = check_fit_data(type(self).__name__, X, Y, observed)
        if data.observed is not None:
            raise ValueError(f"{type(self).__name__} does not support missing labels: observed "
                             "must be None or mark every entry of Y")
        for attr in ("model_files_", "_loaded"):
            self.__dict__.pop(attr, None)
        return data

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_loaded", None)  # the package's model object and its directory
        return state

    def _model(self):
        """The package's model, restored from ``model_files_`` once per process."""
        loaded = self.__dict__.get("_loaded")
        if loaded is None:
            tmp = tempfile.TemporaryDirectory(prefix=f"mlx-{self.name}-")
            _write_dir(self.model_files_, Path(tmp.name))
            loaded = self._loaded = (self._load(Path(tmp.name)), tmp)
        return loaded[0]

    def _no_positives(self, data, n_positives: int) -> bool:
        """With no positive label at all, the packages abort the process; every label then
        scores 0 (the fitted model is empty)."""
        if n_positives:
            return False
        self.model_files_ = {}
        self.n_features_in_ = data.n_features
        self.n_labels_ = data.n_labels
        self.message_ = (f"{self.name}: no positive label in the training data; every label "
                         "scores 0")
        return True

    def _decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "model_files_")
        X = check_n_features(type(self).__name__, X, self.n_features_in_)
        scores = np.zeros((X.shape[0], self.n_labels_), dtype=np.float64)
        if X.shape[0] and self.model_files_:
            self._score(self._model(), X, scores)
        return scores


@METHODS.register("plt")
class PLT(_TreeMethod):
    """Probabilistic label trees (Jasinska-Kobus et al., 2020), from napkinXC.

    A tree over the labels is built by hierarchical balanced k-means on label centroids;
    each node has a logistic-regression classifier (liblinear) estimating the probability
    that a positive label lies below it, and a label's score is the product of the
    probabilities on its path, an estimate of P(label | x). Scores are probabilities, so
    the decision threshold is 0.5.

    Parameters
    ----------
    c : float > 0 or "auto", default="auto"
        Inverse regularisation strength of the node classifiers. ``"auto"``: the best of
        ``1e-3 .. 1e5`` (a decade apart, walking from napkinXC's default 10) on a 20%
        hold-out split of the training rows (the mean of P@1 and AUC there), then a fit on
        every row (:mod:`mlx.methods._auto`, which also lets the model fall back towards
        the constant predictor where it does worse on the held-out rows); ``c: 10`` is
        napkinXC's own setting.
    arity : int, default=2
        Children per tree node.
    max_leaves : int, default=100
        Labels per leaf of the k-means tree.
    solver : {"primal", "dual"}, default="primal"
        liblinear's trust-region Newton solver (L2R_LR, reproducible) or its dual
        coordinate descent (L2R_LR_DUAL, napkinXC's default: faster, but its coordinate order
        comes from an unseeded generator, so fits are not reproducible).
    n_threads : int, default=1
        Training threads. With the primal solver, one and two threads gave identical scores.
    random_state : None or int, default=None
        Seed of the tree building: napkinXC's ``seed`` is ``random_state mod (2^31 - 1)``;
        None draws one from numpy's global generator.

    Notes
    -----
    napkinXC rejects numpy integers as labels ("Unsupported row data type"); the label
    lists are handed over as Python ints.
    """

    _package = "napkinxc"
    _parameter_constraints = TABLES["plt"].constraints

    def __init__(self, *, c: float | str = "auto", arity: int = 2, max_leaves: int = 100,
                 solver: str = "primal", n_threads: int = 1, random_state: int | None = None):
        self.c = c
        self.arity = arity
        self.max_leaves = max_leaves
        self.solver = solver
        self.n_threads = n_threads
        self.random_state = random_state

    @property
    def threshold(self) -> float:
        return 0.5

    def _options(self, seed: int) -> dict:
        return dict(liblinear_c=self.c_, arity=int(self.arity),
                    max_leaves=int(self.max_leaves),
                    liblinear_solver="L2R_LR" if self.solver == "primal" else "L2R_LR_DUAL",
                    threads=int(self.n_threads), seed=seed, verbose=0)

    def _fit(self, X, Y, *, observed=None):
        """Build the tree and train its node classifiers on ``X`` and the label sets of
        ``Y``."""
        data = self._fit_data(X, Y, observed)
        _import(self.name, "napkinxc")
        self.auto_ = {}
        if is_auto(self.c):
            fit_holdout(self, "c", log_grid(10.0), data.X, data.positives)
            if self.model_files_:
                self._model()  # loaded now, as below
            return self
        self.c_ = float(self.c)
        from napkinxc.models import PLT as _PLT

        seed = self.random_state
        if seed is None:
            seed = int(np.random.randint(0, 2 ** 31 - 1))
        seed = int(seed) % (2 ** 31 - 1)  # napkinXC's seed is a C int
        P = data.positives
        self.message_ = None
        self.seed_ = seed
        if self._no_positives(data, P.nnz):
            return self
        labels = [[int(j) for j in P.indices[P.indptr[i]:P.indptr[i + 1]]]
                  for i in range(P.shape[0])]
        with tempfile.TemporaryDirectory(prefix="mlx-plt-") as tmp:
            model = _PLT(tmp, **self._options(seed))
            with _quiet():
                model.fit(data.X, labels)
            self.model_files_ = _read_dir(Path(tmp))
        self.n_features_in_ = data.n_features
        self.n_labels_ = data.n_labels
        try:
            self._model()  # loaded now, so scoring leaves the fitted state unchanged
        except ValueError as exc:
            # napkinXC 0.7 writes some models it cannot read back (seen with strong
            # regularisation on tiny data: "Unknown loss function type"); a selection (or
            # auto) then scores this value as diverged instead of stopping
            del self.model_files_
            raise DivergenceError(f"PLT: napkinXC could not read back the model it trained "
                                  f"with c={self.c_:g} ({exc}); set c to another value") \
                from None
        return self

    def _load(self, path: Path):
        from napkinxc.models import PLT as _PLT

        model = _PLT(str(path), **self._options(self.seed_))
        with _quiet():
            model.load()
        return model

    def _score(self, model, X, out) -> None:
        with _quiet():
            rows = model.predict_proba(X, top_k=self.n_labels_, threshold=0.0)
        for i, pairs in enumerate(rows):
            for label, p in pairs:
                if label < self.n_labels_:
                    out[i, label] = p


@METHODS.register("omikuji")
class Omikuji(_TreeMethod):
    """Partitioned label trees from Omikuji: Parabel by default, Bonsai by its parameters.

    Bonsai: ``cluster_k=100, cluster_balanced=False, max_depth=3``.

    Each tree splits the labels recursively by (balanced) k-means on label centroids and
    trains a linear classifier (hinge or logistic loss) per node; prediction is a beam search
    over ``n_trees`` trees whose scores are averaged. Labels the beam does not reach score
    their training frequency minus 1 (at most 0, below every label it reaches): they rank
    among themselves as the ``constant`` ranks them, not as ties. The scores rank labels but
    have no natural decision threshold.

    Parameters
    ----------
    n_trees : int, default=3
    max_depth : int, default=20
    min_branch_size : int, default=100
        A node with fewer labels becomes a leaf.
    cluster_k : int, default=2
        Children per node.
    cluster_balanced : bool, default=True
        Balanced k-means (Parabel) or plain k-means (Bonsai).
    loss : {"hinge", "log"}, default="hinge"
    c : float, default=1.0
        Inverse regularisation strength of the node classifiers.
    beam_size : int, default=10
        Beam width of the prediction search.
    n_threads : int, default=1
        Threads for loading, training and prediction.

    Notes
    -----
    **Not reproducible**: Omikuji has no seed; its k-means starts and its solver's coordinate
    order come from the operating system's entropy, so two fits on the same data differ (the
    method has no ``random_state``). Omikuji trains only from a file in the Extreme
    Classification Repository format, written to a temporary directory; its loader rejects a
    row that has labels but no features, so such rows are left out of the training file and
    the fit's ``message_`` says how many.
    """

    _package = "omikuji"
    reproducible = False
    # scikit-learn's checks that call predict (see expected_failed_checks)
    _expected_failed_checks = ranking_only_failed_checks(_NO_THRESHOLD)
    _parameter_constraints = TABLES["omikuji"].constraints

    def __init__(self, *, n_trees: int = 3, max_depth: int = 20, min_branch_size: int = 100,
                 cluster_k: int = 2, cluster_balanced: bool = True, loss: str = "hinge",
                 c: float = 1.0, beam_size: int = 10, n_threads: int = 1):
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.min_branch_size = min_branch_size
        self.cluster_k = cluster_k
        self.cluster_balanced = cluster_balanced
        self.loss = loss
        self.c = c
        self.beam_size = beam_size
        self.n_threads = n_threads

    @property
    def threshold(self) -> None:
        return None

    def _fit(self, X, Y, *, observed=None):
        """Write the training file and train the forest on it."""
        data = self._fit_data(X, Y, observed)
        omikuji = _import(self.name, "omikuji")
        Xc = data.X.copy()
        Xc.eliminate_zeros()
        P = data.positives
        keep = np.flatnonzero(np.diff(Xc.indptr) > 0)
        dropped = data.n_samples - keep.size
        self.message_ = None
        if self._no_positives(data, P[keep].nnz):
            return self
        hp = omikuji.Model.default_hyper_param()
        hp.n_trees = int(self.n_trees)
        hp.max_depth = int(self.max_depth)
        hp.min_branch_size = int(self.min_branch_size)
        hp.cluster_k = int(self.cluster_k)
        hp.cluster_balanced = bool(self.cluster_balanced)
        hp.linear_loss_type = (omikuji.LossType.HINGE if self.loss == "hinge"
                               else omikuji.LossType.LOG).value
        hp.linear_c = float(self.c)
        with tempfile.TemporaryDirectory(prefix="mlx-omikuji-") as tmp:
            from mlx.data.convert import write_xc
            from mlx.data.dataset import Dataset

            path = write_xc(Dataset(X=Xc[keep], Y=P[keep]), Path(tmp) / "train.txt")
            with _quiet():
                model = omikuji.Model.train_on_data(str(path), hp, n_threads=int(self.n_threads))
            (Path(tmp) / "model").mkdir()
            with _quiet():
                model.save(str(Path(tmp) / "model"))
            self.model_files_ = _read_dir(Path(tmp) / "model")
        self.n_features_in_ = data.n_features
        self.n_labels_ = data.n_labels
        self.label_frequency_ = np.asarray(P.sum(axis=0), dtype=np.float64).ravel() / max(
            1, data.n_samples)
        if dropped:
            self.message_ = (f"omikuji: {dropped} training row(s) without features left out "
                             "(the package cannot load rows with labels but no features)")
        self._model()  # loaded now, so scoring leaves the fitted state unchanged
        return self

    def _load(self, path: Path):
        omikuji = _import(self.name, "omikuji")
        with _quiet():
            model = omikuji.Model.load(str(path))
        model.init_prediction_thread_pool(int(self.n_threads))
        return model

    def _score(self, model, X, out) -> None:
        X = X.copy()
        X.eliminate_zeros()
        top_k = self.n_labels_
        out[:] = self.label_frequency_ - 1.0          # outside the beam: by frequency, below 0
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            pairs = list(zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist()))
            for label, score in model.predict(pairs, beam_size=int(self.beam_size),
                                              top_k=top_k):
                out[i, label] = score
