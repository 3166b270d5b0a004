"""``auto`` hyper-parameters: the value that sets a model's scale, chosen inside ``fit`` on the
training rows only.

Two procedures, the cheapest sound one for each method:

* squared-loss models: the whole ridge path from one eigendecomposition, scored by
  generalised cross-validation (:mod:`mlx.numerics.regpath`); about the cost of one fit;
* the others: a hold-out split of the training rows (20%, drawn from the method's
  ``random_state``, 0 when None, so that a deterministic method stays deterministic); fits on the
  other 80% are scored on the held-out rows (multi-label and
  multi-class: the mean of P@1 and AUC; regression and ordinal: the squared error) along a
  log grid a decade apart (:func:`log_grid`), walking from its middle value towards the
  better neighbour for as long as the score improves (the validation score of a
  regularisation parameter is taken as unimodal in its logarithm: typically three fits of
  the nine values); then one fit on every training row at the best value.

Multi-label models chosen this way end at the constant predictor (:func:`choose_prior_weight`):
the model's scores plus ``w * sd * log(label frequency)``, with ``w`` the smallest weight, from
``0`` (the model alone) up to the label frequencies alone (the constant's ranking, nothing
predicted), whose P@k on the same held-out rows are no lower than the constant's and whose AUC
is higher by a one-sided test on the rows (:func:`_no_worse`), and, when the labels predicted
there are not right more often than wrong (Hamming loss), minus the
common shift that makes the fewest held-out errors: a model which does worse than the label
frequencies there falls back towards them. Squared-loss models whose penalty comes from a GCV
path (CPLST, BCS, BR's squared loss) make this choice on leave-one-out scores of the training
rows, which the path's eigendecomposition gives in closed form (:func:`loo_prior_weight`: no
second fit); BCS with missing labels, whose fit iterates, fits one more model at the chosen
value on the 80% fit rows of a hold-out split (:func:`fit_prior_weight`).

The method keeps what was chosen in ``auto_`` (``{param: AutoChoice}``); the runner writes
the values into results.csv's ``selected`` column like a ``select`` choice, and a value at an
end of its path or grid into the cell's message (:data:`EDGE_NOTE`), which the tables flag as
they flag ``select`` choices at the end of their candidate lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlx.errors import DivergenceError
from mlx.methods.base import InvalidParameterError

__all__ = ["AUTO", "CONSTANT", "EDGE_NOTE", "FALLBACK_NOTE", "HOLDOUT_FRACTION", "PRIOR",
           "PRIOR_WEIGHTS", "SHIFT", "AutoChoice", "choose_prior_weight", "fit_holdout",
           "fit_prior_weight", "is_auto", "log_grid", "log_prior", "loo_prior_weight", "loo_rows",
           "validation_score"]

AUTO = "auto"
EDGE_NOTE = "at the end of its auto path"
HOLDOUT_FRACTION = 0.2
PRIOR = "prior_weight"
SHIFT = "decision_shift"
CONSTANT = "constant"
"""The ``prior_weight`` recorded when the label frequencies alone were chosen (``w = inf``)."""
PRIOR_WEIGHTS = (0.0, *(2.0 ** j for j in range(-6, 3)), float("inf"))
"""Weights of the log label frequencies added to a multi-label model's scores, in units of the
standard deviation of its held-out scores: 0 (the model alone), 1/64 .. 4 a factor 2 apart,
and ``inf`` (the label frequencies alone: the constant predictor)."""
HAMMING_Z = 1.645
"""One-sided 5% normal quantile: how sure the held-out split must be that a model's predicted
labels are right more often than wrong before its Hamming loss counts as no worse than the
constant's (:func:`_right_more_often`)."""
SPREAD_ROWS = 256
"""The final model's spread is measured on at most this many held-out rows (an estimate of a
standard deviation needs few; some methods' scoring is costly)."""
PRIOR_CELLS = 1 << 20
"""At most this many held-out scores (8 MB) are kept to choose the weight: the first rows of
the held-out split up to that size (leave-one-out scores: that many at random)."""


FALLBACK_NOTE = (
    "auto and the constant: with multi-label data, a fit whose scale is chosen by 'auto' adds "
    "w * sd * log(label frequency) to the model's scores, w the smallest of 0, 1/64 .. 4 "
    "(factors of 2) and inf (the frequencies alone: the constant predictor) whose P@k on a 20% "
    "hold-out split of the training rows are no lower than the constant's and whose AUC there "
    "is higher by a one-sided 5% test on the rows; unless the "
    "labels it predicts there are right more often than wrong (a one-sided 5% test; the "
    "Hamming loss), it lowers every score to the cut of fewest errors on half of those rows, "
    "or below every score when that cut fails the test on the other half; results.csv's "
    "selected column records prior_weight "
    "('constant': the frequencies alone) and decision_shift. After a GCV path (cplst, bcs, "
    "br's squared loss) the held-out scores are the leave-one-out predictions of the "
    "training rows, from the same eigendecomposition (bcs decodes at most 256 of them).")
"""What ``mlx methods NAME`` prints for a method with an ``auto`` scale parameter."""


def is_auto(value) -> bool:
    """Whether a parameter value asks for the ``auto`` choice."""
    return isinstance(value, str) and value == AUTO


def log_grid(center: float, decades: int = 4) -> list[float]:
    """``center * 10^j`` for ``j = -decades .. decades`` (nine values by default)."""
    return [float(center) * 10.0 ** j for j in range(-decades, decades + 1)]


@dataclass(frozen=True)
class AutoChoice:
    """What ``auto`` chose for one parameter.

    Attributes
    ----------
    param : str
    value : float
    procedure : str
        ``"gcv"`` (regularisation path) or ``"holdout"`` (validation split).
    grid : tuple of float
        The values tried, ascending.
    scores : tuple of float
        Their scores (GCV: lower is better; hold-out: higher is better).
    """

    param: str
    value: float
    procedure: str
    grid: tuple
    scores: tuple

    @property
    def edge(self) -> bool:
        """Whether the value is the smallest or largest of the grid."""
        return bool(self.grid) and self.value in (self.grid[0], self.grid[-1])

    def note(self) -> str:
        """A one-line note for a value at an end of its grid or one not validated ('' for
        the others)."""
        if self.param == SHIFT:
            return ""
        if self.param == PRIOR:
            if self.value != CONSTANT:
                return ""
            return ("auto fell back to the constant predictor (the label frequencies): on the "
                    "held-out training rows the fitted model did worse than them on some "
                    "default metric at every weight of the label frequencies tried")
        if self.procedure.startswith("unvalidated"):
            return f"{self.param}=auto: {self.value:g}, {self.procedure}"
        if not self.edge or self.param in (PRIOR, SHIFT):
            return ""
        end = "smallest" if self.value == self.grid[0] else "largest"
        return (f"{self.param}=auto chose {self.value:g}, the {end} value {EDGE_NOTE} "
                f"({self.procedure}, {self.grid[0]:g}..{self.grid[-1]:g}); set {self.param} "
                f"or select it over a wider list")


def record(method, choice: AutoChoice) -> None:
    """Add ``choice`` to ``method.auto_``."""
    method.auto_ = {**(getattr(method, "auto_", None) or {}), choice.param: choice}


def validation_score(method, X, Y, task) -> float:
    """Score of a fitted ``method`` on held-out rows; higher is better (the task's
    :meth:`~mlx.tasks.Task.validation_score`; ``task`` is a task object or name)."""
    from mlx.tasks import as_task

    return as_task(task).validation_score(method._decision_function, X, Y)


def _rows(A, rows):
    return None if A is None else A[rows]


def holdout_split(method, n: int):
    """``(fit, val)``: sorted row indices of the 80% / 20% hold-out split of ``n`` rows, drawn
    from the method's ``random_state`` (0 when None)."""
    n_val = int(round(HOLDOUT_FRACTION * n))
    seed = getattr(method, "random_state", None)
    perm = np.random.default_rng(0 if seed is None else seed).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def fit_holdout(method, param: str, grid, X, Y, *, observed=None, task="multilabel",
                rescore=None, **fit_kwargs):
    """Fit ``method`` with ``param`` chosen from ``grid`` on a hold-out split of the rows.

    Called from a method's ``_fit`` with the arrays it was given; candidates are fitted and
    scored through ``_fit`` and ``_decision_function`` (the runner's contract).

    A candidate is a copy of ``method`` with ``param`` set, fitted on 80% of the rows and
    scored on the other 20% (:func:`validation_score`; on their first rows up to
    :data:`PRIOR_CELLS` scores, as the fallback to the constant: scoring costs more than a
    fit of a cheap model on many labels). The search starts at the middle of
    ``grid``, scores both neighbours, and walks towards the better one while the score keeps
    improving (ties stay put). A copy at the best value is then fitted on all rows and its
    fitted attributes (names ending in ``_``) are copied to ``method``, which is returned
    with ``auto_[param]`` set (unscored values have score ``nan``). A candidate that
    diverges scores ``nan``, below every other; if all scored ones do,
    :class:`~mlx.errors.DivergenceError` is raised.

    ``rescore(cand, value)``, for a parameter that changes only how a fitted model scores
    (MoM's smoothing), returns a copy of the candidate ``cand`` set to ``value`` without
    fitting again: the fit rows are then fitted once, whatever the number of values scored.
    """
    grid = sorted(float(v) for v in grid)
    n = X.shape[0]
    n_val = int(round(HOLDOUT_FRACTION * n))
    if n_val < 1 or n - n_val < 1:
        raise ValueError(f"{type(method).__name__}: {param}='auto' needs at least 2 training "
                         f"rows for its hold-out split (n_samples = {n}); set {param}")
    fit, val = holdout_split(method, n)
    scored = val[:max(1, PRIOR_CELLS // max(1, Y.shape[1]))]     # at most PRIOR_CELLS scores
    params = method.get_params()
    scores = [float("nan")] * len(grid)
    fitted = {}

    def score(i: int) -> float:
        if np.isnan(scores[i]):
            cand = type(method)(**{**params, param: grid[i]})
            try:
                if rescore is not None and fitted:
                    cand = rescore(next(iter(fitted.values())), grid[i])
                else:
                    cand._fit(X[fit], Y[fit], observed=_rows(observed, fit), **fit_kwargs)
                scores[i] = validation_score(cand, X[scored], Y[scored], task)
                fitted[i] = cand
            except DivergenceError:
                scores[i] = -np.inf
        return -np.inf if np.isnan(scores[i]) else scores[i]

    best = len(grid) // 2
    procedure = "holdout"
    try:
        score(best)
        for step in (-1, 1):
            i = best + step
            while 0 <= i < len(grid) and score(i) > score(best):
                best, i = i, i + step
            if best != len(grid) // 2:
                break
    except InvalidParameterError as exc:
        # the fit rows alone are too few for the method (e.g. fewer rows than landmarks):
        # no validation is possible; the middle of the grid is used and the note says so
        best = len(grid) // 2
        scores = [float("nan")] * len(grid)
        procedure = (f"unvalidated (the middle of {grid[0]:g}..{grid[-1]:g}): the 80% fit "
                     f"rows of a hold-out split are too few ({exc})")
    if procedure == "holdout" and not np.isfinite(score(best)):
        raise DivergenceError(f"{type(method).__name__}: every {param} tried by auto "
                              f"({grid[0]:g}..{grid[-1]:g}) diverged; set {param}")
    scores = [float("nan") if s == -np.inf else s for s in scores]
    final = type(method)(**{**params, param: grid[best]})
    final._fit(X, Y, observed=observed, **fit_kwargs)
    for key, value in vars(final).items():
        if key.endswith("_") and not key.startswith("_"):
            setattr(method, key, value)
    record(method, AutoChoice(param, grid[best], procedure, tuple(grid), tuple(scores)))
    if procedure == "holdout" and best in fitted:
        choose_prior_weight(method, fitted[best], X, Y, observed, task, (fit, val))
    return method


def _stored(observed):
    """A 0/1 CSR matrix of the entries ``observed`` stores (a stored zero marks an observed
    entry too)."""
    import scipy.sparse as sp

    mask = sp.csr_matrix(observed, dtype=np.float64, copy=True)
    mask.sum_duplicates()
    mask.data[:] = 1.0
    return mask


def log_prior(Y, observed=None) -> np.ndarray:
    """``log((n p + 1) / (n + 2))`` per label, with ``p`` the constant predictor's score (the
    label's frequency among its observed entries, 0 for a label never observed) and ``n`` the
    number of rows: the log of a smoothed frequency, negative, in the constant's order (its
    ties included)."""
    import scipy.sparse as sp

    Y = sp.csr_matrix(Y)
    n = float(Y.shape[0])
    pos = np.asarray((Y > 0).sum(axis=0), dtype=np.float64).ravel()
    if observed is None:
        seen = np.full(pos.shape, n)
    else:
        mask = _stored(observed)
        pos = np.asarray((Y.multiply(mask) > 0).sum(axis=0), dtype=np.float64).ravel()
        seen = np.asarray(mask.sum(axis=0), dtype=np.float64).ravel()
    p = np.divide(pos, seen, out=np.zeros_like(pos), where=seen > 0)
    return np.log((n * p + 1.0) / (n + 2.0))


def _is_multilabel(task) -> bool:
    from mlx.tasks import as_task

    return as_task(task).name == "multilabel"


def _right_more_often(scores, Y, threshold: float) -> bool:
    """Whether the labels predicted (``scores > threshold``) are right more often than wrong,
    by a one-sided test at 5%: ``TP - FP >= 1.645 sqrt(TP + FP)`` (True when none is).

    The Hamming loss of a prediction minus the constant's (which predicts nothing) is
    ``(FP - TP) / (n L)``: the model does no worse than the constant when ``TP >= FP``. On a
    small held-out split a few labels decide that, so the sign is tested rather than taken.
    """
    pred = scores > threshold
    n_pred = int(pred.sum())
    if n_pred == 0:
        return True
    rows, cols = Y.nonzero()
    tp = int(pred[rows, cols].sum())
    return tp - (n_pred - tp) >= HAMMING_Z * np.sqrt(n_pred)


def _no_worse(metric: str, diff) -> bool:
    """Whether a model's per-row values of a ranking metric minus the constant's (``diff``;
    NaN: a row the metric skips) show it no worse than the constant on held-out rows.

    P@k: the mean difference is not negative. AUC: the model must be better by a one-sided
    5% test on the paired rows, ``sum(d) >= 1.645 sqrt(sum(d^2))`` (the form of
    :func:`_right_more_often`; True when every row ties). The constant's AUC is high (0.8 and
    more on most label sets: frequent labels are ranked first), so a model is often within
    the noise of a small split of it, and a difference measured as a hair above 0 turned out a
    hair below on new rows; a row's AUC differs on almost every row, so the test has the rows
    it needs, whereas P@k differs on few rows and a test there would hand the ranking to the
    frequencies wherever the model only ties them."""
    d = np.asarray(diff, dtype=np.float64)
    d = d[~np.isnan(d)]
    if not d.size:
        return True
    if metric != "auc":
        return float(d.mean()) >= -1e-12
    return float(d.sum()) >= HAMMING_Z * float(np.sqrt(np.dot(d, d))) - 1e-12


def _decision_shift(scores, Y, threshold: float) -> float:
    """A shift ``s >= 0`` of the decision threshold (labels predicted: ``scores > threshold +
    s``) that makes the held-out decisions no worse than the constant's (nothing predicted).

    0 when the labels predicted pass :func:`_right_more_often`. Otherwise the cut is chosen
    on the even held-out rows and tested on the odd ones: on the even rows the labels above
    the threshold are cut at the count ``k`` of most confident ones that makes the fewest
    errors (the largest ``TP - FP``, the smallest ``k`` among equals), and the score of that
    cut is kept if the labels above it on the odd rows (at least one) pass the test, else
    every label is dropped (the threshold goes above the largest held-out score by the range
    and the spread of the scores: at the largest score itself, new rows still had a few
    labels above it, each wrong more often than not). A cut chosen as the best of
    many on the rows that then test it would pass the test more often than 5% by chance alone
    (two such cuts lost to the constant by a test entry or two on new rows). The cut of
    fewest errors, rather than the largest count that passes, keeps out the labels near the
    cut that are right about half the time. A shift common to every label leaves every row's
    ranking as it is: only the decisions (Hamming loss) move."""
    S = np.asarray(scores, dtype=np.float64)
    above = S > threshold
    if not above.any() or _right_more_often(S, Y, threshold):
        return 0.0
    truth = (Y.toarray() > 0) if hasattr(Y, "toarray") else (np.asarray(Y) > 0)
    pick, check = S[0::2], S[1::2]
    chosen = pick > threshold
    values, right = pick[chosen], truth[0::2][chosen]
    order = np.argsort(-values, kind="stable")
    values, right = values[order], right[order]
    k = np.arange(0, values.size + 1)
    margin = 2 * np.concatenate([[0], np.cumsum(right)]) - k         # TP - FP of the top k
    keep = int(np.argmax(margin))
    # nothing predicted: above the largest held-out score by their range and spread, so that
    # new rows' scores do not reach it either (at the largest score itself, a few did)
    nothing = float(S.max() - threshold + (S.max() - S.min()) + _spread(S))
    if keep == values.size:                     # every label above the threshold is kept
        cut = float(threshold)
    elif keep:
        cut = float(values[keep])
    else:
        return nothing
    if cut > threshold and (check > cut).any() and _right_more_often(check, truth[1::2], cut):
        return cut - float(threshold)
    return nothing


def _spread(scores) -> float:
    """The standard deviation of ``scores`` (1 when it is 0 or not finite)."""
    sd = float(np.std(np.asarray(scores, dtype=np.float64)))
    return sd if np.isfinite(sd) and sd > 0 else 1.0


def choose_prior_weight(method, cand, X, Y, observed, task, split) -> None:
    """Let a multi-label model fall back towards the constant predictor where it does worse.

    ``cand`` is the model at the chosen value fitted on the ``fit`` rows of ``split = (fit,
    val)``. Two choices on its held-out scores ``F``, both for the smallest change:

    * ranking: ``F + w sd(F) log(p)`` for the weights ``w`` of :data:`PRIOR_WEIGHTS` (``p``:
      the smoothed label frequencies of the fit rows, :func:`log_prior`; ``w = inf``:
      ``log(p)`` alone, which ranks and decides as the constant does). The smallest weight
      whose P@k on the held-out rows are none below the constant's and whose AUC is above it
      by a one-sided 5% test on the rows (:func:`_no_worse`) is chosen (``inf`` always
      qualifies: it ties the constant on every row): the frequencies are a fallback, not a
      second hyper-parameter tuned on the held-out rows, which would trade the model's own
      ranking for noise in a small split;
    * decisions (Hamming loss), for a model with a threshold: unless the labels it predicts on
      the held-out rows are right more often than wrong, every score is lowered to the cut of
      fewest held-out errors, or to predicting nothing when that cut is not significantly
      better (:func:`_decision_shift`); a shift common to all labels leaves every row's
      ranking as it is.

    The method then adds ``(w log(p) - shift) sd`` to its scores (``prior_offset_``, applied
    by :meth:`~mlx.methods.base.BaseMethod.decision_function``), with ``p`` from every
    training row and ``sd`` the final model's spread on the first :data:`SPREAD_ROWS`
    held-out rows (it may score on another scale than ``cand``), and ``auto_`` records
    ``prior_weight`` and ``decision_shift`` (in units of ``sd``).
    """
    import scipy.sparse as sp

    if not _is_multilabel(task):
        return
    fit, val = split
    L = Y.shape[1]
    val = val[:max(1, PRIOR_CELLS // max(1, L))]
    Yv = (sp.csr_matrix(Y[val]) > 0).astype(np.float64)
    if observed is not None:               # an entry outside the observed ones is unknown:
        Yv = Yv.multiply(_stored(observed[val])).tocsr()        # scored as a negative
    F = np.asarray(cand._decision_function(X[val]), dtype=np.float64)
    _choose_weight(method, F, Yv, log_prior(Y[fit], _rows(observed, fit)),
                   log_prior(Y, observed), cand.threshold,
                   lambda: _spread(method._decision_function(X[val[:SPREAD_ROWS]])))


def _choose_weight(method, F, Yv, prior, full, threshold, spread) -> None:
    """The choices of :func:`choose_prior_weight` on held-out scores ``F`` of the rows whose
    0/1 labels are ``Yv``: ``prior`` the log label frequencies the constant has for them (one
    row, or one per row), ``full`` those of every training row (the final offset),
    ``threshold`` the model's decision threshold (None: none), ``spread()`` the final model's
    spread."""
    from mlx.metrics import Evaluator, default_metrics, parse_metric

    sd = _spread(F)
    metrics = [m for m in default_metrics("multilabel")      # the ranking metrics
               if not parse_metric(m).family.uses_threshold]

    def per_row(scores: np.ndarray) -> dict:
        ev = Evaluator(metrics, auc_degenerate="skip")
        ev.update(Yv, scores)
        return {m: ev.values(m) for m in metrics}

    const = per_row(np.broadcast_to(prior, F.shape))
    scores, best = [], len(PRIOR_WEIGHTS) - 1          # scores: the mean of P@1 and AUC
    for i, w in enumerate(PRIOR_WEIGHTS):
        res = const if w == float("inf") else per_row(F + w * sd * prior)
        kept = [float(np.nanmean(res[m])) for m in ("p@1", "auc")
                if m in res and not np.isnan(res[m]).all()]
        scores.append(float(np.mean(kept)) if kept else float("nan"))
        if all(_no_worse(m, res[m] - const[m]) for m in metrics):
            best = i
            break
    scores += [float("nan")] * (len(PRIOR_WEIGHTS) - len(scores))       # not scored
    w = PRIOR_WEIGHTS[best]
    if w == float("inf"):
        method.prior_offset_ = (0.0, full)
    else:
        shift = 0.0
        if threshold is not None:
            shift = _decision_shift(F + w * sd * prior, Yv, threshold) / sd
        method.prior_offset_ = (1.0, (w * full - shift) * (spread() if w or shift else 0.0))
        record(method, AutoChoice(SHIFT, shift, "holdout", (), ()))
    record(method, AutoChoice(PRIOR, CONSTANT if w == float("inf") else w, "holdout",
                              PRIOR_WEIGHTS, tuple(scores)))


def fit_prior_weight(method, param: str, value: float, X, Y, *, observed=None,
                     task="multilabel", **fit_kwargs) -> None:
    """:func:`choose_prior_weight` for a method whose ``param`` was chosen without a hold-out
    split (a GCV path): a copy at ``param = value`` is fitted on the 80% fit rows of
    :func:`holdout_split` and scored on the other 20%. Nothing happens for a task other than
    multi-label or fewer than 2 rows."""
    n = X.shape[0]
    if not _is_multilabel(task) or n - int(round(HOLDOUT_FRACTION * n)) < 1 \
            or int(round(HOLDOUT_FRACTION * n)) < 1:
        return
    fit, val = holdout_split(method, n)
    cand = type(method)(**{**method.get_params(), param: value})
    cand._fit(X[fit], Y[fit], observed=_rows(observed, fit), **fit_kwargs)
    choose_prior_weight(method, cand, X, Y, observed, task, (fit, val))


def loo_rows(n: int, n_labels: int, max_rows: int | None = None) -> int:
    """How many rows :func:`loo_prior_weight` scores for ``n`` training rows and
    ``n_labels`` labels (a GCV path can plan its leverages with it)."""
    n_val = max(1, int(round(HOLDOUT_FRACTION * n)))
    return min(n_val, max(1, PRIOR_CELLS // max(1, n_labels)), max_rows or n_val)


def loo_prior_weight(method, X, Y, loo_scores, *, task="multilabel",
                     max_rows: int | None = None) -> None:
    """:func:`choose_prior_weight` for a model fitted by a GCV path with full labels, on its
    leave-one-out scores instead of a second fit.

    A ridge fit's prediction of a training row from the other rows comes in closed form from
    the same eigendecomposition (:func:`mlx.numerics.regpath.leave_one_out`), so the method
    passes ``loo_scores(rows)``: the final model's leave-one-out scores of those rows. The
    rows are as many as :func:`holdout_split` holds out (20%: scoring them costs more than
    the fit of a cheap model), at most :data:`PRIOR_CELLS` scores and ``max_rows`` when
    given, drawn at random from the method's ``random_state`` (the hold-out split's own rows
    when no bound applies). The constant's score of a row is its leave-one-out label frequency
    ``log((n_l - y_il + 1) / (n + 1))`` (:func:`log_prior` of the other rows), and the final
    model's spread is that of the leave-one-out scores. Nothing happens for a task other than
    multi-label or fewer than 2 rows."""
    import scipy.sparse as sp

    n, L = Y.shape
    if not _is_multilabel(task) or n < 2:
        return
    m = loo_rows(n, L, max_rows)
    seed = getattr(method, "random_state", None)
    rows = np.sort(np.random.default_rng(0 if seed is None else seed).permutation(n)[:m])
    Y = (sp.csr_matrix(Y) > 0).astype(np.float64)
    Yv = Y[rows]
    pos = np.asarray(Y.sum(axis=0), dtype=np.float64).ravel()
    prior = np.log((pos[None, :] - Yv.toarray() + 1.0) / (n + 1.0))
    F = np.asarray(loo_scores(rows), dtype=np.float64)
    _choose_weight(method, F, Yv, prior, log_prior(Y), method.threshold, lambda: _spread(F))
