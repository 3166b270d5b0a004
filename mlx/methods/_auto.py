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

__all__ = ["AUTO", "EDGE_NOTE", "HOLDOUT_FRACTION", "AutoChoice", "fit_holdout", "is_auto",
           "log_grid", "validation_score"]

AUTO = "auto"
EDGE_NOTE = "at the end of its auto path"
HOLDOUT_FRACTION = 0.2


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
        if self.procedure.startswith("unvalidated"):
            return f"{self.param}=auto: {self.value:g}, {self.procedure}"
        if not self.edge:
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


def fit_holdout(method, param: str, grid, X, Y, *, observed=None, task="multilabel",
                **fit_kwargs):
    """Fit ``method`` with ``param`` chosen from ``grid`` on a hold-out split of the rows.

    Called from a method's ``_fit`` with the arrays it was given; candidates are fitted and
    scored through ``_fit`` and ``_decision_function`` (the runner's contract).

    A candidate is a copy of ``method`` with ``param`` set, fitted on 80% of the rows and
    scored on the other 20% (:func:`validation_score`). The search starts at the middle of
    ``grid``, scores both neighbours, and walks towards the better one while the score keeps
    improving (ties stay put). A copy at the best value is then fitted on all rows and its
    fitted attributes (names ending in ``_``) are copied to ``method``, which is returned
    with ``auto_[param]`` set (unscored values have score ``nan``). A candidate that
    diverges scores ``nan``, below every other; if all scored ones do,
    :class:`~mlx.errors.DivergenceError` is raised.
    """
    grid = sorted(float(v) for v in grid)
    n = X.shape[0]
    n_val = int(round(HOLDOUT_FRACTION * n))
    if n_val < 1 or n - n_val < 1:
        raise ValueError(f"{type(method).__name__}: {param}='auto' needs at least 2 training "
                         f"rows for its hold-out split (n_samples = {n}); set {param}")
    seed = getattr(method, "random_state", None)
    perm = np.random.default_rng(0 if seed is None else seed).permutation(n)
    val, fit = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    params = method.get_params()
    scores = [float("nan")] * len(grid)

    def score(i: int) -> float:
        if np.isnan(scores[i]):
            cand = type(method)(**{**params, param: grid[i]})
            try:
                cand._fit(X[fit], Y[fit], observed=_rows(observed, fit), **fit_kwargs)
                scores[i] = validation_score(cand, X[val], Y[val], task)
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
    return method
