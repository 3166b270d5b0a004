"""Contract checks shared by every registered method (after scikit-learn's ``check_estimator``).

Every name in ``METHODS`` gets the whole battery (a method that is not ``reproducible``
skips the comparisons of two separate fits); a new method needs no entry here; it is
checked with its default parameters (plus ``rank=2`` when it ``uses_rank`` and a fixed
``random_state`` when it has one). ``VARIANTS`` lists, per method, parameter sets that take
materially different code paths (losses, solvers, bias, no regularisation), kept small so the
module runs in seconds.

Method-specific behaviour (numerics against references, recovery, objectives, documented
per-method rules and messages) stays in the per-method test modules.
"""

from __future__ import annotations

import inspect
import math
import pickle
from numbers import Integral, Real

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import NotFittedError
from mlx.methods import METHODS
from mlx.methods.base import (
    BaseMethod,
    FitContext,
    Interval,
    InvalidParameterError,
    StrOptions,
    _TypeConstraint,
)

# Per method: variant id -> parameters (on top of rank=2 / random_state=0). Small and fast.
VARIANTS: dict[str, dict[str, dict]] = {
    "bcs": {
        "default": dict(max_iter=3, predict_iter=3),
    },
    "br": {
        "squared": dict(loss="squared"),                                   # one Cholesky solve
        "squared-unregularised-bias": dict(loss="squared", l2_reg=0.0, bias=1.0),  # min-norm
        "logistic": dict(loss="logistic"),                                 # liblinear -s 0
        "squared_hinge-bias": dict(loss="squared_hinge", bias=0.5),        # liblinear -s 2 -B
        "regression": dict(loss="squared", task="regression"),             # ridge on values
        "ordinal": dict(loss="squared", task="ordinal"),
    },
    "constant": {
        "multilabel": {},
        "multiclass": dict(task="multiclass"),
        "regression": dict(task="regression"),                             # the mean
        "ordinal": dict(task="ordinal"),                                   # the median level
    },
    "cplst": {
        "default": {},
        "unregularised": dict(l2_reg=0.0),                                 # pseudo-inverse
    },
    "landmark": {   # n_landmarks <= 5: the smallest problem here has 5 rows
        "regland-manhattan": dict(model="regland", n_landmarks=5),         # liblinear -s 11
        "regland-l1-sigmoid": dict(model="regland", loss="epsilon_insensitive", epsilon=0.05,
                                   similarity="sigmoid", n_landmarks=5),    # -s 13, seeded rand
        "regland_sp-euclidean-no-intercept": dict(model="regland_sp", similarity="euclidean",
                                                  n_landmarks=5, sparsity=3,
                                                  fit_intercept=False),     # FGS
        "kr-gaussian": dict(model="kr", similarity="gaussian", n_landmarks=5),  # whole train set
        "orland-ordinal": dict(model="orland", similarity="sqeuclidean", n_landmarks=5,
                               task="ordinal"),                              # EXC, levels
    },
    "leml": {
        "squared": dict(loss="squared", max_iter=3),                       # eig / cg W-steps
        "squared-tron-random": dict(loss="squared", w_solver="tron", init="random", max_iter=3,
                                    inner_max_iter=5),
        "logistic": dict(loss="logistic", max_iter=3, inner_max_iter=5),
        "squared_hinge-random": dict(loss="squared_hinge", init="random", max_iter=3,
                                     inner_max_iter=5),
    },
    "lsvv": {   # theta=None (ceil(min(K, D) / 2)): one tiny problem has a single label
        "srm-linear": dict(epochs=2, min_steps=0),                         # no graph, no prox
        "multiclass-lsvv-rff": dict(task="multiclass", epochs=2, min_steps=0, space="rff",
                                    n_components=8, tau_I=1e-2, tau_S=0.1,
                                    n_neighbors=3),                        # eq. 19 hinge
        "regression-lrc-linear": dict(task="regression", epochs=2, min_steps=0,
                                      tau_S=0.1),                          # eq. 20
        "lsvv-linear-tail": dict(epochs=2, min_steps=0, tau_I=1e-2, tau_S=0.1, n_neighbors=3,
                                 batch_size=8, prox_every=2),              # graph, K x K prox
        "lrc-rff-head": dict(epochs=2, min_steps=0, space="rff", n_components=4, tau_S=0.1,
                             shrink="head", bandwidth=2.0),                # D x D prox, head
        "ss-rff-mutual": dict(epochs=2, min_steps=0, space="rff", n_components=12, tau_I=1e-2,
                              n_neighbors=3, graph="mutual", tol=1e-9),    # median bandwidth
    },
    "mom": {
        "default": dict(binarize=True),                                    # X here is real-valued
        "unbiased-code-rule": dict(binarize=True, moments="unbiased", prediction="code"),
    },
    "wsabie": {
        "default": dict(epochs=2),
        "unconstrained": dict(epochs=2, max_norm=None),                    # no projection
    },
}

N_SAMPLES, N_FEATURES, N_LABELS = 36, 10, 6
RANK = 2
SEED = 0


def _variants(name: str) -> dict[str, dict]:
    return VARIANTS.get(name, {"default": {}})


def _params(name: str, variant: str | None = None) -> dict:
    cls = METHODS.get(name)
    params = {}
    if cls.uses_rank:
        params["rank"] = RANK
    if "random_state" in cls._param_names():
        params["random_state"] = SEED
    variants = _variants(name)
    params.update(variants[variant if variant is not None else next(iter(variants))])
    return params


def _make(name: str, variant: str | None = None) -> BaseMethod:
    return METHODS.get(name)(**_params(name, variant))


def _task(name: str, variant: str | None = None) -> str:
    """The task a variant is fitted for: its ``task`` parameter, else the method's first."""
    params = _params(name, variant)
    return params.get("task", METHODS.get(name).tasks[0])


NAMES = METHODS.names()
CASES = [pytest.param(name, variant, id=f"{name}-{variant}")
         for name in NAMES for variant in _variants(name)]
MISSING_CASES = [case for case in CASES if METHODS.get(case.values[0]).supports_missing_labels
                 and _task(*case.values) == "multilabel"]
FULL_ONLY_NAMES = [name for name in NAMES if not METHODS.get(name).supports_missing_labels]


# ----------------------------------------------------------------------------- data
LABEL_TASKS = ("multilabel", "multiclass")


def _targets(rng, n, n_labels, task):
    """Targets of ``task``: 0/1 label sets (about 35% positives) for multilabel, one class
    per row for multiclass, real values for regression, levels 1..4 in one column for
    ordinal; all CSR."""
    if task == "multiclass":
        classes = rng.integers(0, n_labels, size=n)
        classes[:n_labels] = np.arange(min(n, n_labels))   # every class present
        return sp.csr_matrix((np.ones(n), (np.arange(n), classes)), shape=(n, n_labels))
    if task == "regression":
        return sp.csr_matrix(rng.normal(size=(n, n_labels)))
    if task == "ordinal":
        levels = rng.integers(1, 5, size=n).astype(np.float64)
        levels[:2] = (1.0, 4.0)                               # at least two levels
        return sp.csr_matrix(levels[:, None])
    return sp.csr_matrix((rng.random((n, n_labels)) < 0.35).astype(np.float64))


def _data(seed=SEED, n=N_SAMPLES, d=N_FEATURES, n_labels=N_LABELS, task="multilabel"):
    """Sparse X (normal values), targets of ``task`` and a 50% observed mask, all CSR."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.4, format="csr", random_state=rng,
                  data_rvs=lambda m: rng.normal(size=m))
    Y = _targets(rng, n, n_labels, task)
    observed = sp.csr_matrix((rng.random((n, Y.shape[1])) < 0.5).astype(np.float64))
    return X, Y, observed


def _inside(Y, observed):
    """Y with its positives outside the observed entries dropped (the documented input)."""
    return sp.csr_matrix(Y.multiply(observed))


def _new_rows(seed=SEED + 1, n=23):
    """Rows never seen in fit, the first one without features."""
    X, _, _ = _data(seed, n=n)
    X = X.tolil()
    X[0, :] = 0
    return sp.csr_matrix(X)


def _degenerate(seed=SEED + 2, task="multilabel"):
    """Full labels: a row without features (0), a row without labels (1), a label never
    positive (2) and a label positive on every other row (3). Multi-class: a row without
    features and a class never seen; regression: a row without features and a constant
    target; ordinal: a row without features and two levels only."""
    X, Y, observed = _data(seed, task=task)
    X = X.tolil()
    X[0, :] = 0
    X = sp.csr_matrix(X)
    assert X[0].nnz == 0
    Yd = Y.toarray()
    if task == "multiclass":
        Yd[:, 2] = 0
        Yd[np.flatnonzero(Yd.sum(axis=1) == 0), 3] = 1      # class 2 never seen
    elif task == "regression":
        Yd[:, 2] = 5.0
    elif task == "ordinal":
        Yd[:, 0] = np.where(np.arange(Yd.shape[0]) % 2 == 0, 1.0, 2.0)
    else:
        Yd[1, :] = 0
        Yd[:, 2] = 0
        Yd[:, 3] = 1
        Yd[1, 3] = 0
    return X, sp.csr_matrix(Yd), observed


def _degenerate_masked(seed=SEED + 2):
    """50% observed, plus a label never observed (4), a row with nothing observed (5), a
    label observed only as negatives (2) and explicitly stored zeros in ``observed``."""
    X, Y, observed = _degenerate(seed)
    obs = observed.toarray()
    obs[:, 4] = 0
    obs[5, :] = 0
    rows, cols = np.nonzero(obs)
    data = np.ones(rows.size)
    data[::5] = 0.0                                       # stored zeros are observed entries
    observed = sp.csr_matrix((data, (rows, cols)), shape=obs.shape)
    assert observed.nnz == rows.size
    return X, _inside(Y, obs), observed


def _tiny_problems(task="multilabel"):
    """Small edge cases: fewer rows than features and one label; no positive at all (label
    tasks) or a constant target (value tasks)."""
    X, _, _ = _data(SEED + 3, n=5, d=N_FEATURES, n_labels=1)
    X2, _, _ = _data(SEED + 4, n=8, d=4, n_labels=3)
    if task == "multiclass":
        return {"n<d-two-classes": (X, sp.csr_matrix(np.array(
            [[1.0, 0], [0, 1], [1, 0], [0, 1], [0, 1]])))}
    if task == "regression":
        return {"n<d-one-target": (X, sp.csr_matrix(np.array([[1.0], [-2], [0.5], [3], [0]]))),
                "constant-targets": (X2, sp.csr_matrix(np.full((8, 3), 2.0)))}
    if task == "ordinal":
        return {"n<d-two-levels": (X, sp.csr_matrix(np.array([[1.0], [2], [1], [2], [2]])))}
    Y = sp.csr_matrix(np.array([[1.0], [0.0], [1.0], [0.0], [0.0]]))
    return {"n<d-one-label": (X, Y), "no-positives": (X2, sp.csr_matrix((8, 3)))}


def _two_fits_comparable(name):
    """Tests that compare the scores of two separate fits need a reproducible method; the
    others (omikuji: its package has no seed) have their input handling checked on what they
    hand to the package, in their own test module."""
    if not METHODS.get(name).reproducible:
        pytest.skip(f"{name} is not reproducible (see its docstring); two fits differ")


def _score_in_batches(method, X, sizes):
    parts, start, i = [], 0, 0
    while start < X.shape[0]:
        stop = start + sizes[i % len(sizes)]
        part = method.decision_function(X[start:stop])
        assert part.shape[0] == min(stop, X.shape[0]) - start
        parts.append(part)
        start, i = stop, i + 1
    return np.vstack(parts)


def _assert_scores(scores, n_rows, n_labels):
    assert type(scores) is np.ndarray, f"scores are {type(scores).__name__}, not ndarray"
    assert scores.dtype == np.float64
    assert scores.shape == (n_rows, n_labels)
    assert np.isfinite(scores).all(), "scores contain NaN or infinity"


def _csr_state(M):
    return (M.shape, M.data.copy(), M.indices.copy(), M.indptr.copy())


def _assert_same_csr(M, state):
    shape, data, indices, indptr = state
    assert M.shape == shape
    np.testing.assert_array_equal(M.data, data)
    np.testing.assert_array_equal(M.indices, indices)
    np.testing.assert_array_equal(M.indptr, indptr)


# ----------------------------------------------------------------------------- constraints
# Written independently of mlx.methods.base, so a bug there cannot hide a missing check.
def _known_constraint(c) -> bool:
    return (c is None or c is Integral or c is Real
            or isinstance(c, (Interval, StrOptions, _TypeConstraint)))


def _accepts(c, value) -> bool:
    """Whether ``value`` meets the single constraint ``c``."""
    if c is None:
        return value is None
    if isinstance(c, _TypeConstraint):
        if c.type is bool:
            return isinstance(value, bool)
        return isinstance(value, c.type) and not isinstance(value, bool)
    if c is Integral or c is Real:
        return isinstance(value, c) and not isinstance(value, bool)
    if isinstance(c, StrOptions):
        return isinstance(value, str) and value in c.options
    if isinstance(c, Interval):
        if isinstance(value, bool) or not isinstance(value, c.type):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if c.left is not None:
            if value < c.left or (value == c.left and c.closed not in ("both", "left")):
                return False
        if c.right is not None:
            if value > c.right or (value == c.right and c.closed not in ("both", "right")):
                return False
        return True
    raise AssertionError(f"unknown constraint {c!r}")


def _describe(c) -> str:
    """The documented wording of a constraint in InvalidParameterError messages."""
    if c is None:
        return "None"
    if c is Integral:
        return "an int"
    if c is Real:
        return "a float"
    if isinstance(c, _TypeConstraint):
        return c.label
    if isinstance(c, StrOptions):
        return "a str among {" + ", ".join(repr(o) for o in sorted(c.options)) + "}"
    kind = "an int" if c.type is Integral else "a float"
    lb = "[" if c.left is not None and c.closed in ("both", "left") else "("
    rb = "]" if c.right is not None and c.closed in ("both", "right") else ")"
    lo = "-inf" if c.left is None else c.left
    hi = "inf" if c.right is None else c.right
    return f"{kind} in the range {lb}{lo}, {hi}{rb}"


def _expected_message(cls, param, value) -> str:
    descr = [_describe(c) for c in cls._parameter_constraints[param]]
    expected = descr[0] if len(descr) == 1 else ", ".join(descr[:-1]) + " or " + descr[-1]
    return f"The {param!r} parameter of {cls.__name__} must be {expected}. Got {value!r} instead."


def _candidates(c) -> list:
    """Values that violate ``c`` (some may satisfy another alternative; filtered later)."""
    if c is None:
        return []
    if isinstance(c, StrOptions):
        first = sorted(c.options)[0]
        return [f"not_{first}", first.upper(), first + " ", 1]
    if isinstance(c, _TypeConstraint):
        return [1, "true"] if c.type is bool else ["1", True]
    if c is Integral:
        return ["1", True, 1.5, 2.0]
    if c is Real:
        return ["1", True, math.nan, math.inf]
    assert isinstance(c, Interval)
    values = ["1", True]
    integral = c.type is Integral
    for bound, side, outward in ((c.left, "left", -1), (c.right, "right", 1)):
        if bound is None:
            continue
        if integral:
            values.append(int(bound) + outward)                      # just outside
        else:
            values.append(float(np.nextafter(float(bound), outward * np.inf)))
        if c.closed not in ("both", side):                           # open: the bound itself
            values += [bound, int(bound) if integral else float(bound)]
    if integral:
        inside = (c.left + (c.closed not in ("both", "left")) if c.left is not None
                  else c.right - (c.closed not in ("both", "right")) if c.right is not None
                  else 0)
        values += [float(inside), inside + 0.5]                      # floats are not ints
    else:
        values += [math.nan, math.inf, -math.inf]
    return values


def _invalid_values(cls, param) -> list:
    """Generated values violating every alternative of the parameter's constraints."""
    constraints = cls._parameter_constraints[param]
    out, seen = [], set()
    for value in [v for c in constraints for v in _candidates(c)] + [None]:
        key = (type(value), repr(value))
        if key in seen or any(_accepts(c, value) for c in constraints):
            continue
        seen.add(key)
        out.append(value)
    return out


INVALID_CASES = [pytest.param(name, param, id=f"{name}-{param}")
                 for name in NAMES for param in sorted(METHODS.get(name)._parameter_constraints)]


# ============================================================================= per method
@pytest.mark.parametrize("name", NAMES)
def test_registered_with_consistent_capabilities(name):
    cls = METHODS.get(name)
    assert isinstance(cls, type) and issubclass(cls, BaseMethod)
    assert cls.name == name
    assert isinstance(cls.supports_missing_labels, bool) and isinstance(cls.uses_rank, bool)
    # The runner passes ``rank`` exactly to the methods with uses_rank (README: set it if the
    # method takes ``rank``).
    assert cls.uses_rank == ("rank" in cls._param_names())
    for variant in _variants(name):
        threshold = _make(name, variant).threshold
        assert threshold is None or (isinstance(threshold, float) and math.isfinite(threshold))


@pytest.mark.parametrize("name", NAMES)
def test_parameters_round_trip_through_get_and_set_params(name):
    cls = METHODS.get(name)
    names = cls._param_names()
    signature = inspect.signature(cls.__init__).parameters
    for p in names:
        assert signature[p].kind is inspect.Parameter.KEYWORD_ONLY, f"{p} is not keyword-only"
        assert signature[p].default is not inspect.Parameter.empty, f"{p} has no default"
    default = cls()
    assert default.get_params() == {p: signature[p].default for p in names}
    for p in names:                                       # defaults meet their constraints
        assert any(_accepts(c, getattr(default, p)) for c in cls._parameter_constraints[p]), p

    params = _params(name)
    method = cls(**params)
    got = method.get_params()
    assert sorted(got) == names
    for key, value in params.items():                     # stored unchanged
        assert got[key] is value
    assert method.set_params(**got) is method
    assert method.get_params() == got
    assert cls().set_params(**params).get_params() == got
    for p in names:                                       # __init__ validates nothing
        sentinel = object()
        assert cls(**{p: sentinel}).get_params()[p] is sentinel, p
    with pytest.raises(InvalidParameterError) as info:
        method.set_params(not_a_parameter=1)
    assert info.value.param == "not_a_parameter"
    assert "not_a_parameter" in str(info.value)
    assert method.get_params() == got


@pytest.mark.parametrize("name", NAMES)
def test_parameter_constraints_cover_exactly_the_init_parameters(name):
    cls = METHODS.get(name)
    constraints = cls._parameter_constraints
    assert set(constraints) == set(cls._param_names())
    for param, alternatives in constraints.items():
        assert isinstance(alternatives, list) and alternatives, param
        assert all(_known_constraint(c) for c in alternatives), (param, alternatives)
        assert _invalid_values(cls, param), f"no invalid value can be generated for {param}"


@pytest.mark.parametrize("name,param", INVALID_CASES)
def test_invalid_parameter_values_are_rejected_by_fit(name, param):
    cls = METHODS.get(name)
    X, Y, _ = _data()
    failures = []
    for value in _invalid_values(cls, param):
        method = cls(**{**_params(name), param: value})
        try:
            method.fit(X, Y)
        except InvalidParameterError as exc:
            if exc.param != param or str(exc) != _expected_message(cls, param, value):
                failures.append(f"{value!r}: param={exc.param!r}, message {str(exc)!r}")
        except Exception as exc:  # noqa: BLE001 - report the wrong exception type
            failures.append(f"{value!r}: {type(exc).__name__}: {exc}")
        else:
            failures.append(f"{value!r}: accepted")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", NAMES)
def test_skip_declines_missing_labels_only_without_support(name):
    method = _make(name)
    sizes = dict(n_samples=N_SAMPLES, n_features=N_FEATURES, n_labels=N_LABELS,
                 task=_task(name))
    assert method.skip(FitContext(**sizes, observed_ratio=1.0)) is None
    for ratio in (0.05, 0.5, 0.99):
        reason = method.skip(FitContext(**sizes, observed_ratio=ratio))
        if method.supports_missing_labels:
            assert reason is None
        else:
            assert isinstance(reason, str) and reason.strip()


@pytest.mark.parametrize("name", NAMES)
def test_skip_declines_exactly_the_tasks_not_declared(name):
    from mlx.tasks import task_names

    method = _make(name)
    assert method.tasks and set(method.tasks) <= set(task_names())
    sizes = dict(n_samples=N_SAMPLES, n_features=N_FEATURES, n_labels=N_LABELS)
    for task in task_names():
        reason = method.skip(FitContext(task=task, **sizes))
        if task in method.tasks:
            assert reason is None, (task, reason)
        else:
            assert reason == (f"{name} does not handle {task} tasks (it handles: "
                              f"{', '.join(method.tasks)})")


@pytest.mark.parametrize("name", NAMES)
def test_unfitted_decision_function_raises_not_fitted(name):
    method = _make(name)
    X, _, _ = _data()
    with pytest.raises(NotFittedError) as info:
        method.decision_function(X)
    assert str(info.value) == (f"This {type(method).__name__} instance is not fitted yet. "
                               f"Call 'fit' first.")


@pytest.mark.parametrize("name", FULL_ONLY_NAMES)
def test_partial_mask_rejected_without_missing_label_support(name):
    X, Y, observed = _data(task=_task(name))
    _make(name).fit(X, Y)                                 # the mask is the only problem
    with pytest.raises(ValueError):
        _make(name).fit(X, Y, observed=observed)


# ============================================================================= per variant
@pytest.mark.parametrize("name,variant", CASES)
def test_fit_returns_self_and_scores_any_row_slice(name, variant):
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    problems = {"full": (X, Y, None), "degenerate": _degenerate(task=task)[:2] + (None,)}
    if METHODS.get(name).supports_missing_labels and task == "multilabel":
        problems["masked"] = (X, _inside(Y, observed), observed)
        problems["degenerate-masked"] = _degenerate_masked()
    X_new = _new_rows()
    for key, (Xp, Yp, obs) in problems.items():
        method = _make(name, variant)
        params = method.get_params()
        assert method.fit(Xp, Yp, observed=obs) is method, key
        assert method.get_params() == params, "fit changed a parameter"
        fitted = set(vars(method)) - set(params)
        assert all(a.endswith("_") or a.startswith("_") for a in fitted), sorted(fitted)
        full = method.decision_function(Xp)
        _assert_scores(full, N_SAMPLES, Yp.shape[1])
        new = method.decision_function(X_new)
        _assert_scores(new, X_new.shape[0], Yp.shape[1])
        for rows in (slice(0, 0), slice(0, 1), slice(5, 17), slice(N_SAMPLES - 1, None)):
            part = method.decision_function(Xp[rows])
            _assert_scores(part, Xp[rows].shape[0], Yp.shape[1])
            np.testing.assert_allclose(part, full[rows], rtol=1e-12, atol=1e-12, err_msg=key)
        for sizes in ((3, 4), (1,), (10,)):
            for Xs, whole in ((Xp, full), (X_new, new)):
                np.testing.assert_allclose(_score_in_batches(method, Xs, sizes), whole,
                                           rtol=1e-12, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name,variant", CASES)
def test_same_seed_same_scores_and_refit_starts_afresh(name, variant):
    _two_fits_comparable(name)
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    settings = [(Y, None)]
    if METHODS.get(name).supports_missing_labels and task == "multilabel":
        settings.append((_inside(Y, observed), observed))
    for Yfit, obs in settings:
        a = _make(name, variant).fit(X, Yfit, observed=obs)
        b = _make(name, variant).fit(X, Yfit, observed=obs)
        scores = a.decision_function(X)
        np.testing.assert_array_equal(b.decision_function(X), scores)
        a.fit(X, Yfit, observed=obs)                      # refit on the same data
        np.testing.assert_array_equal(a.decision_function(X), scores)
    # A refit forgets a previous fit on data of other shapes.
    X2, Y2, _ = _data(SEED + 5, n=20, d=N_FEATURES + 3, n_labels=N_LABELS - 2, task=task)
    method = _make(name, variant).fit(X2, Y2)
    method.fit(X, Y)
    np.testing.assert_array_equal(method.decision_function(X),
                                  _make(name, variant).fit(X, Y).decision_function(X))


@pytest.mark.parametrize("name,variant", CASES)
def test_pickle_round_trip_keeps_scores(name, variant):
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    obs = observed if METHODS.get(name).supports_missing_labels and task == "multilabel" \
        else None
    method = _make(name, variant).fit(X, _inside(Y, observed) if obs is not None else Y,
                                      observed=obs)
    clone = pickle.loads(pickle.dumps(method))
    assert type(clone) is type(method) and clone.get_params() == method.get_params()
    X_new = _new_rows()
    np.testing.assert_array_equal(clone.decision_function(X_new),
                                  method.decision_function(X_new))


@pytest.mark.parametrize("name,variant", CASES)
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_degenerate_data_gives_finite_scores(name, variant):
    task = _task(name, variant)
    X, Y, _ = _degenerate(task=task)
    problems = {"degenerate": (X, Y, None)}
    if METHODS.get(name).supports_missing_labels and task == "multilabel":
        problems["degenerate-masked"] = _degenerate_masked()
    for key, (Xt, Yt) in _tiny_problems(task).items():
        problems[key] = (Xt, Yt, None)
    X_new = _new_rows()
    for key, (Xp, Yp, obs) in problems.items():
        method = _make(name, variant).fit(Xp, Yp, observed=obs)
        _assert_scores(method.decision_function(Xp), *Yp.shape)
        if Xp.shape[1] == X_new.shape[1]:
            _assert_scores(method.decision_function(X_new), X_new.shape[0], Yp.shape[1])


@pytest.mark.parametrize("name,variant", CASES)
def test_inputs_are_not_mutated(name, variant):
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    # Non-canonical X (reversed indices in some rows) makes a method canonicalise it; Y with
    # values other than 1; observed with explicitly stored zeros.
    X = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr.copy()), shape=X.shape)
    for i in range(0, N_SAMPLES, 3):
        seg = slice(X.indptr[i], X.indptr[i + 1])
        X.indices[seg] = X.indices[seg][::-1]
        X.data[seg] = X.data[seg][::-1]
    X.has_sorted_indices = False
    assert not X.has_canonical_format
    if task in LABEL_TASKS:
        Y = sp.csr_matrix(Y.astype(bool))
    obs = None
    if METHODS.get(name).supports_missing_labels and task == "multilabel":
        obs = observed.copy()
        obs.data[::4] = 0.0
        Y = sp.csr_matrix(_inside(Y, observed))
    states = [(M, _csr_state(M)) for M in (X, Y, obs) if M is not None]
    method = _make(name, variant).fit(X, Y, observed=obs)
    method.decision_function(X)
    method.decision_function(X[3:9])
    for M, state in states:
        _assert_same_csr(M, state)
    # dense arrays, too
    arrays = [X.toarray(), Y.toarray()] + ([obs.toarray()] if obs is not None else [])
    copies = [a.copy() for a in arrays]
    method = _make(name, variant).fit(arrays[0], arrays[1],
                                      observed=arrays[2] if obs is not None else None)
    method.decision_function(arrays[0])
    for a, c in zip(arrays, copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("name,variant", CASES)
def test_dense_inputs_give_the_same_scores(name, variant):
    _two_fits_comparable(name)
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    settings = [(Y, None)]
    if METHODS.get(name).supports_missing_labels and task == "multilabel":
        settings.append((_inside(Y, observed), observed))
    X_new = _new_rows()
    for Yfit, obs in settings:
        sparse_fit = _make(name, variant).fit(X, Yfit, observed=obs)
        dense_fit = _make(name, variant).fit(X.toarray(), Yfit.toarray(),
                                             observed=None if obs is None else obs.toarray())
        expected = sparse_fit.decision_function(X_new)
        np.testing.assert_array_equal(dense_fit.decision_function(X_new), expected)
        np.testing.assert_array_equal(dense_fit.decision_function(X_new.toarray()), expected)
        np.testing.assert_array_equal(sparse_fit.decision_function(X_new.toarray()), expected)


@pytest.mark.parametrize("name,variant", CASES)
def test_boolean_labels_equal_float_labels_and_other_values_are_refused(name, variant):
    task = _task(name, variant)
    if task not in LABEL_TASKS:
        pytest.skip(f"{task} targets are values, not labels")
    X, Y, _ = _data(task=task)
    if METHODS.get(name).reproducible:
        expected = _make(name, variant).fit(X, Y).decision_function(X)
        np.testing.assert_array_equal(
            _make(name, variant).fit(X, sp.csr_matrix(Y.toarray() != 0)).decision_function(X),
            expected)
    owner = type(_make(name, variant)).__name__
    for other, shown in ((Y * 3.0, "3"), (-Y.toarray(), "-1")):
        with pytest.raises(ValueError, match=f"^{owner}: Y holds values other than 0 and 1 "
                                             f"\\(e.g. {shown}\\); labels must be 0/1"):
            _make(name, variant).fit(X, sp.csr_matrix(other))


@pytest.mark.parametrize("name,variant", CASES)
def test_all_observed_mask_equals_full_labels(name, variant):
    _two_fits_comparable(name)
    task = _task(name, variant)
    if task not in LABEL_TASKS:
        pytest.skip(f"{task} tasks have no label mask")
    X, Y, _ = _data(task=task)
    everything = sp.csr_matrix(np.ones(Y.shape))
    np.testing.assert_array_equal(
        _make(name, variant).fit(X, Y, observed=everything).decision_function(X),
        _make(name, variant).fit(X, Y).decision_function(X))


@pytest.mark.parametrize("name,variant", MISSING_CASES)
def test_missing_label_conventions(name, variant):
    _two_fits_comparable(name)
    X, Y, observed = _data()
    expected = _make(name, variant).fit(X, _inside(Y, observed),
                                        observed=observed).decision_function(X)
    _assert_scores(expected, N_SAMPLES, N_LABELS)
    # Entries of Y outside the observed set are unknown: changing them changes nothing.
    unknown = observed.toarray() == 0
    flipped = sp.csr_matrix(np.where(unknown, 1.0 - Y.toarray(), Y.toarray()))
    np.testing.assert_array_equal(
        _make(name, variant).fit(X, flipped, observed=observed).decision_function(X), expected)
    # Stored zeros in observed mark observed entries, like stored ones.
    explicit = observed.copy()
    explicit.data[::3] = 0.0
    np.testing.assert_array_equal(
        _make(name, variant).fit(X, _inside(Y, observed),
                                 observed=explicit).decision_function(X), expected)


@pytest.mark.parametrize("name,variant", CASES)
def test_input_shape_and_value_errors(name, variant):
    cls = METHODS.get(name)
    task = _task(name, variant)
    X, Y, observed = _data(task=task)
    owner = cls.__name__
    with pytest.raises(ValueError) as info:
        _make(name, variant).fit(X, Y[:-1])
    assert owner in str(info.value) and str(Y[:-1].shape) in str(info.value)
    if task in LABEL_TASKS:
        with pytest.raises(ValueError) as info:
            _make(name, variant).fit(X, Y, observed=observed[:, :-1])
        assert owner in str(info.value) and str(observed[:, :-1].shape) in str(info.value)
    bad = X.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity") as info:
        _make(name, variant).fit(bad, Y)
    assert owner in str(info.value)

    method = _make(name, variant).fit(X, Y)
    for d in (N_FEATURES - 1, N_FEATURES + 1):
        X_other, _, _ = _data(SEED + 6, n=5, d=d)
        for Xs in (X_other, X_other.toarray()):
            with pytest.raises(ValueError) as info:
                method.decision_function(Xs)
            message = str(info.value)
            assert owner in message
            assert f"X has {d} features" in message and f"fitted with {N_FEATURES}" in message
    bad = X[:4].copy()
    bad.data[0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        method.decision_function(bad)
