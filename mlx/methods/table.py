"""Every method's parameters, read without importing the method: the parameter tables.

A :class:`MethodTable` holds what config parsing, ``mlx validate`` and the checks before a
run's first cell need of a method (:mod:`mlx.config`, :mod:`mlx.runner.preflight`): its
tasks, whether it takes a rank and missing labels, each ``__init__`` parameter with its
default and constraints, its decision threshold, and the checks of its settings against a
sweep (:meth:`~mlx.methods.base.BaseMethod.skip`,
:meth:`~mlx.methods.base.BaseMethod.check_context`). Importing this module loads neither the
methods, numpy, scipy nor scikit-learn, so a config is checked in a few milliseconds.

The method classes take their ``_parameter_constraints`` from here, and their checks of
settings call the functions below, so both paths give the same messages;
``tests/methods/test_table.py`` holds every table to its class (names, defaults, flags,
thresholds and checks), so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from mlx.methods.constraints import (
    BOOL,
    Interval,
    InvalidParameterError,
    StrOptions,
    TaskOptions,
    check_params,
    skip_reason,
    task_name,
)

if TYPE_CHECKING:
    from mlx.methods.constraints import FitContext

__all__ = ["MethodTable", "Settings", "TABLES", "method_table"]

_POSITIVE = Interval(Real, 0, None, closed="neither")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")
_COUNT = Interval(Integral, 1, None, closed="left")
_SEED = [None, Integral]
_AUTO = StrOptions({"auto"})
_SCALE = StrOptions({"auto", "none"})
_ALL_TASKS = ("multilabel", "multiclass", "regression", "ordinal")

XMC_EXTRA = "pip install 'mlx-multilabel[xmc]'"
"""How to install the packages of the optional methods ``plt`` and ``omikuji``."""


@dataclass(frozen=True)
class MethodTable:
    """One method's parameters and settings checks (see the module docstring).

    ``params`` maps each ``__init__`` parameter, in the order of the class's
    ``_parameter_constraints``, to ``(default, constraints)``; constraints of None leave the
    parameter unchecked. The hooks take the method or a :class:`Settings` (anything with
    the parameters as attributes): ``threshold(m)``; ``skip(m, context)`` for reasons beyond
    the task and missing labels; ``check(m)`` for what ``_validate_params`` checks beyond
    the constraints; ``check_context(m, context)``; ``needs_counts(m)`` (word-count
    features).
    """

    name: str
    class_name: str
    tasks: tuple
    params: dict
    uses_rank: bool = False
    supports_missing_labels: bool = False
    threshold: Callable[[Any], float | None] = lambda m: 0.0
    skip: Callable[[Any, FitContext], str | None] | None = None
    check: Callable[[Any], None] | None = None
    check_context: Callable[[Any, FitContext], None] | None = None
    needs_counts: Callable[[Any], bool] | None = None
    constraints: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "constraints", {
            name: list(options) for name, (_, options) in self.params.items()
            if options is not None})

    def param_names(self) -> list[str]:
        """The parameter names, sorted (as ``BaseMethod._param_names``)."""
        return sorted(self.params)

    def defaults(self) -> dict:
        return {name: default for name, (default, _) in self.params.items()}

    def __call__(self, **params) -> Settings:
        """The method's settings with ``params`` (a TypeError for an unknown name, as the
        class would raise)."""
        return Settings(self, params)


class Settings:
    """A method's parameters as an instance of its class would hold them, defaults filled
    in, with the checks its class makes before a fit (no data, no method module)."""

    def __init__(self, table: MethodTable, params: dict):
        unknown = sorted(set(params) - set(table.params))
        if unknown:
            raise TypeError(f"{table.class_name}.__init__() got an unexpected keyword "
                            f"argument {unknown[0]!r}")
        self._table = table
        self.__dict__.update(table.defaults())
        self.__dict__.update(params)

    @property
    def name(self) -> str:
        return self._table.name

    @property
    def tasks(self) -> tuple:
        return self._table.tasks

    def _task_name(self) -> str:
        return task_name(getattr(self, "task", None), self.tasks)

    def _validate_params(self) -> None:
        table = self._table
        check_params(table.class_name, table.constraints,
                     {name: getattr(self, name) for name in table.constraints})
        if table.check is not None:
            table.check(self)

    @property
    def threshold(self) -> float | None:
        return self._table.threshold(self)

    def skip(self, context: FitContext) -> str | None:
        table = self._table
        reason = skip_reason(table.name, table.tasks, table.supports_missing_labels, context)
        if reason is None and table.skip is not None:
            reason = table.skip(self, context)
        return reason

    def check_context(self, context: FitContext) -> None:
        if self._table.check_context is not None:
            self._table.check_context(self, context)

    @property
    def needs_counts(self) -> bool:
        return self._table.needs_counts is not None and self._table.needs_counts(self)


def _task(m):
    """The task object ``m`` is set up for (its ``task`` parameter, else its first task)."""
    from mlx.tasks import get_task

    return get_task(m._task_name())


# ----------------------------------------------------------------------------- BR
def br_loss(m) -> str:
    """BR's loss: ``loss`` with ``"auto"`` resolved for the task (squared for values,
    logistic for labels)."""
    if m.loss == "auto":
        return "squared" if _task(m).real_valued else "logistic"
    return m.loss


def br_skip(m, context: FitContext) -> str | None:
    """Decline a regression task unless the loss is squared (or ``"auto"``)."""
    if context.task.real_valued and m.loss not in ("squared", "auto"):
        return (f"{m.name} with loss={m.loss!r} does not handle {context.task} tasks "
                f"(loss='squared' does)")
    return None


# ----------------------------------------------------------------------------- LEML
def check_w_solver(w_solver: str, loss: str, squared: bool, full: bool) -> None:
    """Refuse a LEML W-step solver that cannot serve the loss (``squared``: constant
    curvature) and label setting (``full``: every entry observed)."""
    if w_solver == "eig" and not (squared and full):
        raise InvalidParameterError(
            "w_solver", "w_solver='eig' needs loss='squared' and fully observed labels; "
            f"got loss={loss!r} with {'full' if full else 'missing'} labels. "
            "Use 'auto', 'cg' or 'tron'.")
    if w_solver == "cg" and not squared:
        raise InvalidParameterError(
            "w_solver", f"w_solver='cg' needs loss='squared' (got {loss!r}); "
            "use 'tron' or 'auto'.")


def _leml_check_context(m, context: FitContext) -> None:
    check_w_solver(m.w_solver, m.loss, m.loss == "squared", context.observed_ratio >= 1.0)


# ----------------------------------------------------------------------------- Landmark
LANDMARK_OWNER = "Landmark"


def landmark_check_sparsity(m) -> None:
    """RegLand-Sp keeps at most ``n_landmarks`` landmarks: ``sparsity <= n_landmarks``."""
    if (m.model == "regland_sp" and isinstance(m.sparsity, Integral)
            and isinstance(m.n_landmarks, Integral) and m.sparsity > m.n_landmarks):
        raise InvalidParameterError(
            "sparsity",
            f"The 'sparsity' parameter of {LANDMARK_OWNER} must be at most n_landmarks "
            f"({m.n_landmarks}) with model='regland_sp' (it counts landmarks kept). "
            f"Got {m.sparsity!r} instead.")


def landmark_check_n_landmarks(m, n_samples: int) -> None:
    """Landmarks are drawn without replacement: ``n_landmarks <= n_samples`` (0: unknown)."""
    if m.model != "kr" and n_samples > 0 and m.n_landmarks > n_samples:
        raise InvalidParameterError(
            "n_landmarks",
            f"The 'n_landmarks' parameter of {LANDMARK_OWNER} must be in the range "
            f"[1, {n_samples}] here: the landmarks are drawn without replacement from the "
            f"{n_samples} training rows. Got {m.n_landmarks!r} instead.")


def landmark_skip(m, context: FitContext) -> str | None:
    """Decline ORLand on a regression task (it needs ordinal levels)."""
    if m.model == "orland" and not context.task.has_levels:
        return (f"{m.name} with model='orland' needs ordinal targets (levels); "
                f"use model='regland' or 'regland_sp' for regression")
    return None


def landmark_check_context(m, context: FitContext) -> None:
    """``sparsity <= n_landmarks`` (RegLand-Sp) and ``n_landmarks <= n_samples``
    (landmark models; skipped when ``context.n_samples`` is 0, i.e. unknown)."""
    if context.task.name not in m.tasks:
        return                                        # skip() declines it
    landmark_check_sparsity(m)
    if isinstance(m.n_landmarks, Integral):
        landmark_check_n_landmarks(m, context.n_samples)


# ----------------------------------------------------------------------------- LSVV
def lsvv_theta_error(m, K: int, D: int) -> InvalidParameterError | None:
    """``theta <= min(K, D)`` (K outputs, D features of the space), or the error."""
    r = min(K, D)
    if m.theta is None or isinstance(m.theta, float) or m.theta <= r:
        return None
    what = "n_features" if m.space == "linear" else "n_components"
    return InvalidParameterError(
        "theta", f"LSVV: theta={m.theta} exceeds min(K, D) = min({K}, {D}) = {r} (K "
                 f"outputs; D = {what} in the {m.space} space); use theta <= {r}")


def lsvv_neighbors_error(m, n_rows: int, exact: bool) -> InvalidParameterError | None:
    """With ``tau_I > 0``, ``n_neighbors < n_rows`` (rows of the k-NN graph), or the error."""
    if m.tau_I <= 0 or m.n_neighbors < n_rows:
        return None
    rows = f"{n_rows}" if exact else f"at most {n_rows}"
    return InvalidParameterError(
        "n_neighbors", f"LSVV: n_neighbors={m.n_neighbors} needs more than "
                       f"{m.n_neighbors} training rows (labelled and unlabelled) for "
                       f"the k-NN graph; there are {rows}; use n_neighbors <= "
                       f"{n_rows - 1} or tau_I=0")


def lsvv_check_context(m, context: FitContext) -> None:
    """Refuse ``theta > min(K, D)`` and, with ``tau_I > 0``, ``n_neighbors`` not below the
    number of training rows; sizes of 0 (unknown) are not checked."""
    m._validate_params()
    K = context.n_labels
    D = context.n_features if m.space == "linear" else m.n_components
    if K and D:
        err = lsvv_theta_error(m, K, D)
        if err is not None:
            raise err
    n = context.n_samples
    if n and m.tau_I > 0:
        ratio = float(context.labelled_ratio)
        # n labelled rows are round(ratio * N) of N training rows: N <= (n + 0.5) / ratio.
        n_max = n if ratio >= 1.0 else math.floor((n + 0.5) / ratio)
        err = lsvv_neighbors_error(m, n_max, exact=ratio >= 1.0)
        if err is not None:
            raise err


# ----------------------------------------------------------------------------- MoM
def mom_rank_message(rank: int, n: int, d: int) -> str:
    return (f"rank={rank} is larger than the data allow: MoM whitens with {rank} eigenvectors of "
            f"the {d} x {d} word co-occurrence matrix, whose rank is at most "
            f"min(n_samples, n_features) = min({n}, {d}); valid: 1 <= rank <= {min(n, d)}")


def mom_check_context(m, context: FitContext) -> None:
    """``rank`` above ``min(n_samples, n_features)`` is a config error (sizes known)."""
    n, d = context.n_samples, context.n_features
    if n > 0 and d > 0 and isinstance(m.rank, Integral) and m.rank > min(n, d):
        raise InvalidParameterError("rank", mom_rank_message(m.rank, n, d))


# ----------------------------------------------------------------------------- PLT, Omikuji
XMC_PACKAGES = {"plt": "napkinxc", "omikuji": "omikuji"}


def missing_package(method: str, package: str) -> str:
    return (f"{method} needs the optional package {package}, which is not installed; install "
            f"it with {XMC_EXTRA}")


def xmc_check_context(m, context: FitContext) -> None:
    """The method's package must import (a config error naming the extra otherwise)."""
    package = XMC_PACKAGES[m.name]
    try:
        importlib.import_module(package)
    except ImportError:
        raise InvalidParameterError("name", missing_package(m.name, package)) from None


# ----------------------------------------------------------------------------- the tables
def _table(*args, **kwargs) -> MethodTable:
    t = MethodTable(*args, **kwargs)
    TABLES[t.name] = t
    return t


TABLES: dict[str, MethodTable] = {}
"""Method name -> :class:`MethodTable`, for every name of :data:`mlx.methods.METHODS`."""

_table("bcs", "BCS", ("multilabel",), uses_rank=True, supports_missing_labels=True,
       threshold=lambda m: 0.5, params={
           "rank": (10, [_COUNT]),
           "sigma": (0.3, [_POSITIVE]),
           "chi": (0.3, [_POSITIVE]),
           "weight_precision": ("auto", [_POSITIVE, _AUTO]),
           "gamma_shape": (1e-6, [_POSITIVE]),
           "gamma_rate": (1e-6, [_POSITIVE]),
           "max_iter": (20, [_COUNT]),
           "tol": (1e-5, [_NON_NEGATIVE]),
           "predict_iter": (5, [_COUNT]),
           "random_state": (None, _SEED),
       })

_table("br", "BR", _ALL_TASKS, supports_missing_labels=True,
       threshold=lambda m: 0.5 if br_loss(m) == "squared" else 0.0, skip=br_skip, params={
           "task": ("multilabel", [TaskOptions(_ALL_TASKS)]),
           "loss": ("auto", [StrOptions({"auto", "squared", "logistic", "squared_hinge"})]),
           "C": ("auto", [_POSITIVE, _AUTO]),
           "l2_reg": ("auto", [_NON_NEGATIVE, _AUTO]),
           "bias": (-1.0, [Interval(Real, None, None)]),
           "eps": (0.01, [_POSITIVE]),
           "n_jobs": (1, [_COUNT]),
           "random_state": (None, _SEED),
       })

_table("constant", "Constant", _ALL_TASKS, supports_missing_labels=True,
       threshold=lambda m: 1.0, params={
           "task": ("multilabel", [TaskOptions(_ALL_TASKS)]),
       })

_table("cplst", "CPLST", ("multilabel",), uses_rank=True, threshold=lambda m: 0.5, params={
    "rank": (10, [_COUNT]),
    "l2_reg": ("auto", [_NON_NEGATIVE, _AUTO]),
    "random_state": (None, _SEED),
})

_table("landmark", "Landmark", ("regression", "ordinal"), threshold=lambda m: None,
       skip=landmark_skip, check=landmark_check_sparsity,
       check_context=landmark_check_context, params={
           "model": ("regland", [StrOptions({"regland", "regland_sp", "orland", "kr"})]),
           "similarity": ("manhattan", [StrOptions({"sigmoid", "manhattan", "euclidean",
                                                    "sqeuclidean", "gaussian"})]),
           "n_landmarks": (50, [_COUNT]),
           "sparsity": (None, [None, _COUNT]),
           "C": ("auto", [_POSITIVE, _AUTO]),
           "epsilon": (0.0, [_NON_NEGATIVE]),
           "loss": ("squared_epsilon_insensitive",
                    [StrOptions({"squared_epsilon_insensitive", "epsilon_insensitive"})]),
           "margin": (0.25, [Interval(Real, 0, 0.5, closed="right")]),
           # bandwidth^2 must stay a normal float: 1e-300 squared is 0 (a division by zero)
           "bandwidth": (None, [None, Interval(Real, 1e-150, 1e150, closed="both")]),
           "fit_intercept": (True, [BOOL]),
           "max_iter": (500, [_COUNT]),
           "tol": (None, [None, _POSITIVE]),
           "random_state": (None, _SEED),
           "task": ("regression", [TaskOptions(("regression", "ordinal"))]),
       })

_table("leml", "LEML", ("multilabel", "multiclass"), uses_rank=True,
       supports_missing_labels=True, threshold=lambda m: 0.5 if m.loss == "squared" else 0.0,
       check_context=_leml_check_context, params={
           "rank": (10, [_COUNT]),
           "l2_reg": ("auto", [_NON_NEGATIVE, _AUTO]),
           "loss": ("squared", [StrOptions({"squared", "logistic", "squared_hinge"})]),
           "max_iter": (10, [_COUNT]),
           "tol": (1e-4, [_NON_NEGATIVE]),
           "inner_max_iter": (25, [_COUNT]),
           "inner_tol": (1e-3, [_POSITIVE]),
           "init": ("svd", [StrOptions({"svd", "random"})]),
           "w_solver": ("auto", [StrOptions({"auto", "eig", "cg", "tron"})]),
           "random_state": (None, _SEED),
       })

_table("lsvv", "LSVV", ("multilabel", "multiclass", "regression"),
       supports_missing_labels=True,
       threshold=lambda m: 0.5 if _task(m).needs_threshold else 0.0,
       check_context=lsvv_check_context, params={
           "task": ("multilabel", [TaskOptions(("multilabel", "multiclass", "regression"))]),
           "space": ("linear", [StrOptions({"linear", "rff"})]),
           "n_components": (100, [_COUNT]),
           "bandwidth": ("median", [Interval(Real, 1e-150, 1e150, closed="both"),
                                    StrOptions({"median"})]),
           "tau_A": ("auto", [_NON_NEGATIVE, _AUTO]),
           "scale_features": ("auto", [_SCALE]),
           "tau_I": (0.0, [_NON_NEGATIVE]),
           "tau_S": (0.0, [_NON_NEGATIVE]),
           "theta": (None, [Interval(Integral, 0, None, closed="left"),
                            Interval(Real, 0, 1, closed="neither"), None]),
           "shrink": ("tail", [StrOptions({"tail", "head"})]),
           "n_neighbors": (10, [_COUNT]),
           "graph": ("union", [StrOptions({"union", "mutual"})]),
           "batch_size": (32, [_COUNT]),
           "epochs": (10, [_COUNT]),
           "min_steps": (1000, [Interval(Integral, 0, None, closed="left")]),
           "safeguard": (True, [BOOL]),
           "rho": (0.5, [Interval(Real, 0, 1, closed="left")]),
           "eps": (1e-2, [_POSITIVE]),
           "prox_every": (1, [_COUNT]),
           "tol": (None, [_NON_NEGATIVE, None]),
           "random_state": (None, _SEED),
       })

_table("mom", "MoM", ("multilabel",), uses_rank=True, threshold=lambda m: 0.5,
       check_context=mom_check_context, needs_counts=lambda m: not m.binarize, params={
           "rank": (10, [_COUNT]),
           "moments": ("paper", [StrOptions({"paper", "unbiased"})]),
           "prediction": ("paper", [StrOptions({"paper", "code"})]),
           "eta": (0.001, [Interval(Real, 0, 1, closed="left")]),
           "smoothing": ("auto", [_NON_NEGATIVE, _AUTO]),
           "n_restarts": (10, [_COUNT]),
           "max_iter": (300, [_COUNT]),
           "tol": (1e-6, [_POSITIVE]),
           "shift": (0.0, [_NON_NEGATIVE]),
           "adaptive_shift": (True, [BOOL]),
           "anderson": (5, [Interval(Integral, 0, None, closed="left")]),
           "selection_precision": ("double", [StrOptions({"double", "single"})]),
           "binarize": (False, [BOOL]),
           "random_state": (None, _SEED),
       })

_table("wsabie", "WSABIE", ("multilabel",), uses_rank=True, supports_missing_labels=True,
       threshold=lambda m: None, params={
           "rank": (10, [_COUNT]),
           "learning_rate": ("auto", [_POSITIVE, _AUTO]),
           "scale_features": ("auto", [_SCALE]),
           "margin": (30.0, [_POSITIVE]),
           "max_norm": (10.0, [None, _POSITIVE]),
           "epochs": (10, [_COUNT]),
           "random_state": (None, _SEED),
       })

_table("plt", "PLT", ("multilabel",), threshold=lambda m: 0.5,
       check_context=xmc_check_context, params={
           "c": ("auto", [_POSITIVE, _AUTO]),
           "arity": (2, [Interval(Integral, 2, None, closed="left")]),
           "max_leaves": (100, [_COUNT]),
           "solver": ("primal", [StrOptions({"primal", "dual"})]),
           "n_threads": (1, [_COUNT]),
           "random_state": (None, [None, Interval(Integral, 0, None, closed="left")]),
       })

_table("omikuji", "Omikuji", ("multilabel",), threshold=lambda m: None,
       check_context=xmc_check_context, params={
           "n_trees": (3, [_COUNT]),
           "max_depth": (20, [_COUNT]),
           "min_branch_size": (100, [Interval(Integral, 2, None, closed="left")]),
           "cluster_k": (2, [Interval(Integral, 2, None, closed="left")]),
           "cluster_balanced": (True, [BOOL]),
           "loss": ("hinge", [StrOptions({"hinge", "log"})]),
           "c": (1.0, [_POSITIVE]),
           "beam_size": (10, [_COUNT]),
           "n_threads": (1, [_COUNT]),
       })


class _ClassTable:
    """The table of a method registered without one (a method of a user's own): read from
    its class, whose instances serve as the settings."""

    def __init__(self, cls):
        self._cls = cls
        self.name, self.class_name, self.tasks = cls.name, cls.__name__, cls.tasks
        self.uses_rank = cls.uses_rank
        self.supports_missing_labels = cls.supports_missing_labels

    def param_names(self) -> list[str]:
        return self._cls._param_names()

    def __call__(self, **params):
        return self._cls(**params)


def method_table(name: str, *, source: str | None = None,
                 key_path: str | None = None) -> MethodTable | _ClassTable:
    """The table of method ``name``; :class:`~mlx.errors.UnknownNameError` (from the
    registry, with its suggestion) for a name that is not a method."""
    if isinstance(name, str) and name in TABLES:
        return TABLES[name]
    from mlx.methods import METHODS

    return _ClassTable(METHODS.get(name, source=source, key_path=key_path))
