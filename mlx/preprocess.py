"""Explicit feature preprocessing: fitted on the training features, applied identically to test.

A config lists the steps in order under ``preprocess``; each is a name or a
one-key mapping ``{name: {param: value}}``::

    preprocess: [tfidf, l2_normalize, {bias: {value: 1.0}}]

Steps
-----
``impute_mean``
    Replace each missing feature value (NaN, stored explicitly in the CSR matrix, as the
    readers' ``missing: nan`` option gives them) by the mean of that feature's observed values
    on the training rows; implicit zeros are observed zeros. A feature with no observed
    training value is filled with 0. List it first: the other steps and the methods do not
    accept NaN.
``l2_normalize``
    Divide each row by its Euclidean norm; all-zero rows stay zero. Stateless.
``bias``
    Append a constant column whose value is ``value`` (default 1.0, must be
    positive) to every row, as liblinear's ``-B``.
``minmax``
    Per-feature ``(x - min) / (max - min)`` with min and max over the training
    rows, implicit zeros included. Sparsity is kept for features whose
    training minimum is 0 (the usual case for non-negative sparse features:
    the map is then a pure scaling); a feature with a non-zero training
    minimum maps its implicit zeros to ``-min / (max - min)``, so that column
    becomes dense in the output. A feature constant on the training rows gets
    range 1 (it maps to ``x - min``). Test values are not clipped to [0, 1]
    (as scikit-learn's ``MinMaxScaler`` with ``clip=False``).
``tfidf``
    Multiply feature j by ``idf_j = ln((1 + n) / (1 + df_j)) + 1``, where n is
    the number of training rows and ``df_j`` the number of training rows in
    which feature j is non-zero (scikit-learn's ``smooth_idf=True`` default).
    The feature values are used as term frequencies. Rows are *not*
    normalised; list ``l2_normalize`` after ``tfidf`` for that.
``remove_constant``
    Drop the features that are constant over the training rows (implicit
    zeros included; all-zero features are constant).

Steps run in the listed order, each fitted on the training output of the steps
before it; order matters (``l2_normalize`` then ``bias`` differs from ``bias``
then ``l2_normalize``). All steps work on CSR matrices without densifying
(except the ``minmax`` columns described above).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from mlx import errors
from mlx.data.dataset import canonical_csr
from mlx.errors import ConfigError, UnknownNameError, suggest
from mlx.lazy import lazy_module
from mlx.registry import Registry

np = lazy_module("numpy")
sp = lazy_module("scipy.sparse")

__all__ = [
    "STEPS",
    "Step",
    "ImputeMean",
    "L2Normalize",
    "Bias",
    "MinMax",
    "TfIdf",
    "RemoveConstant",
    "Preprocessor",
    "parse_steps",
]


def _as_csr(X) -> sp.csr_matrix:
    """A canonical float64 CSR copy (the caller's matrix is never modified)."""
    return canonical_csr(X.copy() if sp.issparse(X) else np.asarray(X))


def _with_data(X: sp.csr_matrix, data: np.ndarray) -> sp.csr_matrix:
    out = sp.csr_matrix((data, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    out.eliminate_zeros()
    return out


def _column_min_max(X: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Per-column min and max, implicit zeros included."""
    lo = np.asarray(X.min(axis=0).toarray()).ravel().astype(np.float64)
    hi = np.asarray(X.max(axis=0).toarray()).ravel().astype(np.float64)
    return lo, hi


def _positive_number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a positive finite number. Got {value!r} instead.")
    return float(value)


# --------------------------------------------------------------------------- steps


class Step:
    """One preprocessing step.

    Subclasses set ``name`` (the config spelling) and ``param_checks``
    (parameter name -> (default, check)), where ``check(value)`` returns the
    canonical value or raises ``ValueError`` with a message such as
    ``"must be a positive finite number. Got -1 instead."``; and implement
    ``_fit`` and ``_transform`` on canonical float64 CSR matrices.
    """

    name: ClassVar[str] = ""
    param_checks: ClassVar[dict[str, tuple[Any, Callable[[Any], Any]]]] = {}

    def __init__(self, **params):
        unknown = sorted(set(params) - set(self.param_checks))
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown parameter(s) {', '.join(unknown)}")
        self.params = {key: check(params.get(key, default))
                       for key, (default, check) in self.param_checks.items()}
        self.n_features_in_: int | None = None

    def fit(self, X: sp.csr_matrix) -> Step:
        """Learn the step's statistics from training features ``X`` (canonical CSR)."""
        if X.shape[0] == 0:
            raise ValueError(f"preprocessing step {self.name!r}: cannot fit on zero rows")
        self.n_features_in_ = X.shape[1]
        self._fit(X)
        return self

    def transform(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """Apply the fitted step; returns a new canonical CSR matrix."""
        if self.n_features_in_ is None:
            raise errors.NotFittedError(f"This {self.name} step is not fitted yet. "
                                        "Call 'fit' first.")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"preprocessing step {self.name!r}: X has {X.shape[1]} features "
                             f"but the step was fitted on {self.n_features_in_}")
        out = self._transform(X)
        out.sort_indices()
        return out

    def describe(self) -> dict:
        """``{name: {param: value}}``, JSON-able."""
        return {self.name: dict(self.params)}

    def _fit(self, X: sp.csr_matrix) -> None:
        pass

    def _transform(self, X: sp.csr_matrix) -> sp.csr_matrix:  # pragma: no cover - abstract
        raise NotImplementedError


STEPS: Registry[type[Step]] = Registry("preprocessing step")


@STEPS.register("impute_mean")
class ImputeMean(Step):
    """Replace NaN feature values by the feature's mean over the observed training values."""

    name = "impute_mean"

    def _fit(self, X):
        n, d = X.shape
        nan = np.isnan(X.data)
        sums = np.bincount(X.indices[~nan], weights=X.data[~nan], minlength=d)
        observed = n - np.bincount(X.indices[nan], minlength=d)
        self.mean_ = np.divide(sums, observed, out=np.zeros(d), where=observed > 0)

    def _transform(self, X):
        data = X.data.copy()
        nan = np.isnan(data)
        data[nan] = self.mean_[X.indices[nan]]
        return _with_data(X, data)


@STEPS.register("l2_normalize")
class L2Normalize(Step):
    """Row-wise ``x / ||x||_2``; zero rows stay zero."""

    name = "l2_normalize"

    def _transform(self, X):
        # Norms computed on rows divided by their largest |value| first, so that values
        # near the float64 limit (1e308) neither overflow when squared nor underflow to a
        # zero norm: ||x|| = m ||x / m|| with m = max |x_j|.
        n = X.shape[0]
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        peak = np.zeros(n)
        np.maximum.at(peak, rows, np.abs(X.data))
        safe = np.where(peak > 0, peak, 1.0)
        scaled = X.data / safe[rows]
        norms = np.sqrt(np.bincount(rows, weights=scaled * scaled, minlength=n))
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return _with_data(X, scaled * inv[rows])


@STEPS.register("bias")
class Bias(Step):
    """Append a constant column equal to ``value`` (liblinear's bias feature)."""

    name = "bias"
    param_checks = {"value": (1.0, _positive_number)}

    def _transform(self, X):
        column = sp.csr_matrix(np.full((X.shape[0], 1), self.params["value"]))
        return sp.hstack([X, column], format="csr")


@STEPS.register("minmax")
class MinMax(Step):
    """Per-feature min-max scaling to [0, 1] on the training rows (see module docstring)."""

    name = "minmax"

    def _fit(self, X):
        lo, hi = _column_min_max(X)
        span = hi - lo
        span[span == 0] = 1.0
        self.min_ = lo
        self.scale_ = span

    def _transform(self, X):
        lo, span = self.min_, self.scale_
        data = (X.data - lo[X.indices]) / span[X.indices]
        shifted = np.flatnonzero(lo != 0)
        if shifted.size == 0:
            return _with_data(X, data)
        # Columns with a non-zero training minimum: implicit zeros map to -min / span, so
        # these columns are built densely and the others keep their stored entries.
        n = X.shape[0]
        keep = ~np.isin(X.indices, shifted)
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        block = X[:, shifted].toarray()
        block = (block - lo[shifted]) / span[shifted]
        all_rows = np.repeat(np.arange(n), shifted.size)
        all_cols = np.tile(shifted, n)
        out = sp.csr_matrix(
            (np.concatenate([data[keep], block.ravel()]),
             (np.concatenate([rows[keep], all_rows]), np.concatenate([X.indices[keep], all_cols]))),
            shape=X.shape)
        out.eliminate_zeros()
        return out


@STEPS.register("tfidf")
class TfIdf(Step):
    """Scale feature j by the smooth idf ``ln((1 + n) / (1 + df_j)) + 1`` of the training rows."""

    name = "tfidf"

    def _fit(self, X):
        n = X.shape[0]
        df = np.bincount(X.indices, minlength=X.shape[1])
        self.idf_ = np.log((1.0 + n) / (1.0 + df)) + 1.0

    def _transform(self, X):
        return _with_data(X, X.data * self.idf_[X.indices])


@STEPS.register("remove_constant")
class RemoveConstant(Step):
    """Drop features constant over the training rows (implicit zeros included)."""

    name = "remove_constant"

    def _fit(self, X):
        lo, hi = _column_min_max(X)
        self.kept_ = np.flatnonzero(lo != hi)

    def _transform(self, X):
        return sp.csr_matrix(X[:, self.kept_])


# --------------------------------------------------------------------------- parsing


def parse_steps(node, *, source: str | None = None, key_path: str = "preprocess") -> list[Step]:
    """Validate a ``preprocess`` config node and build unfitted steps.

    Parameters
    ----------
    node : list or None
        Items are step names (``"l2_normalize"``) or one-key mappings
        (``{"bias": {"value": 1.0}}``); None means no preprocessing.
    source : str, optional
        Config file name for error messages.
    key_path : str
        Dotted path of ``node`` in the config, for error messages.

    Raises
    ------
    mlx.errors.UnknownNameError
        An unknown step name, with the closest valid name.
    mlx.errors.ConfigError
        A malformed item, an unknown parameter or a bad parameter value; the
        key path names it, e.g. ``preprocess[1].bias.value``.
    """
    if node is None:
        return []
    if isinstance(node, (str, dict)) or not isinstance(node, Sequence):
        raise ConfigError(source, key_path, "must be a list of steps, e.g. "
                          f"[l2_normalize, {{bias: {{value: 1.0}}}}]. Got {node!r} instead.")
    steps = []
    for i, item in enumerate(node):
        where = f"{key_path}[{i}]"
        if isinstance(item, str):
            name, params = item, {}
        elif isinstance(item, dict) and len(item) == 1:
            (name, params), = item.items()
            if params is None:
                params = {}
        else:
            raise ConfigError(source, where, "a step is a name such as 'l2_normalize' or a "
                              "one-key mapping such as {bias: {value: 1.0}}. "
                              f"Got {item!r} instead.")
        if not isinstance(name, str) or name not in STEPS:
            raise UnknownNameError("preprocessing step", str(name), STEPS.names(),
                                   source=source, key_path=where)
        cls = STEPS.get(name)
        if not isinstance(params, dict):
            raise ConfigError(source, f"{where}.{name}", "parameters must be a mapping such as "
                              f"{{value: 1.0}}. Got {params!r} instead.")
        valid = sorted(cls.param_checks)
        for key in params:
            if key not in cls.param_checks:
                msg = f"unknown parameter {key!r}."
                hint = suggest(str(key), valid)
                if hint:
                    msg += f" Did you mean {hint!r}?"
                msg += (f" Valid parameters: {', '.join(valid)}" if valid
                        else f" Step {name!r} takes no parameters.")
                raise ConfigError(source, f"{where}.{name}", msg)
        checked = {}
        for key, value in params.items():
            try:
                checked[key] = cls.param_checks[key][1](value)
            except ValueError as exc:
                raise ConfigError(source, f"{where}.{name}.{key}", str(exc)) from None
        steps.append(cls(**checked))
    return steps


class Preprocessor:
    """A list of steps fitted on training features and applied to any features.

    Parameters
    ----------
    steps : list
        Step names, ``{name: {params}}`` mappings (see :func:`parse_steps`) or
        :class:`Step` instances (copied unfitted).

    Attributes
    ----------
    n_features_in_, n_features_out_ : int
        Widths before and after preprocessing, set by :meth:`fit`.
    """

    def __init__(self, steps=None, *, source: str | None = None, key_path: str = "preprocess"):
        steps = list(steps or [])
        if all(isinstance(s, Step) for s in steps):
            self.steps = [type(s)(**s.params) for s in steps]
        else:
            self.steps = parse_steps(steps, source=source, key_path=key_path)
        self.n_features_in_: int | None = None
        self.n_features_out_: int | None = None

    def fit(self, X) -> Preprocessor:
        """Fit every step, in order, on training features of shape (n_samples, n_features)."""
        self.fit_transform(X)
        return self

    def transform(self, X) -> sp.csr_matrix:
        """Apply the fitted steps; returns a new canonical float64 CSR matrix."""
        if self.n_features_in_ is None:
            raise errors.NotFittedError(
                "This Preprocessor instance is not fitted yet. Call 'fit' first.")
        X = _as_csr(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"Preprocessor.transform: X has {X.shape[1]} features but the "
                             f"preprocessor was fitted on {self.n_features_in_}")
        for step in self.steps:
            X = step.transform(X)
        return X

    def fit_transform(self, X) -> sp.csr_matrix:
        """``fit(X)`` and return the transformed training features (one pass)."""
        X = _as_csr(X)
        self.n_features_in_ = None
        n_in = X.shape[1]
        for step in self.steps:
            X = step.fit(X).transform(X)
        self.n_features_in_, self.n_features_out_ = n_in, X.shape[1]
        return X

    def describe(self) -> list[dict]:
        """Canonical JSON-able form, e.g. ``[{"l2_normalize": {}}, {"bias": {"value": 1.0}}]``."""
        return [step.describe() for step in self.steps]
