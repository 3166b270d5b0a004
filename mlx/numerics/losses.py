"""Pointwise losses ``l(y, s)`` of a target ``y`` and a score ``s``.

Every loss is a small stateless class with the value and the first and second
derivatives with respect to the score, evaluated elementwise on arrays. These
are the entries of Table 1 of Yu et al. (2014) and what the LEML gradients and
Hessian-vector products (their Algorithms 1 and 2) consume.

==================  =====================  ====================  ===========================
loss                ``l(y, s)``            ``dl/ds``             ``d2l/ds2``
==================  =====================  ====================  ===========================
``squared``         ``(y - s)**2 / 2``     ``s - y``             ``1``
``logistic``        ``log(1 + e^(-ys))``   ``-y sigma(-ys)``     ``y**2 sigma(ys) sigma(-ys)``
``squared_hinge``   ``max(0, 1 - ys)**2``  ``-2y max(0, 1-ys)``  ``2 y**2 [ys < 1]``
==================  =====================  ====================  ===========================

``sigma`` is the logistic function. Squared loss takes {0, 1} targets; logistic
and squared hinge take {-1, +1} targets (:meth:`Loss.encode` maps a {0, 1}
label to the loss's target). The squared hinge loss is not twice
differentiable at ``ys = 1``; its generalised second derivative above is what
trust-region Newton uses (Yu et al. 2014, footnote 1). Table 1 of the arXiv
version prints the logistic second derivative with a minus sign; the correct
sign (positive, so the loss is convex) is used here.

References
----------
H.-F. Yu, P. Jain, P. Kar, I. S. Dhillon. Large-scale Multi-label Learning with
Missing Labels. ICML 2014, Table 1.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

__all__ = ["LOSSES", "LogisticLoss", "Loss", "SquaredHingeLoss", "SquaredLoss", "get_loss"]


def expit(x):
    """``scipy.special.expit``, imported on first use (scipy.special costs 30 ms to import,
    and only the logistic loss needs it)."""
    from scipy.special import expit as _expit

    return _expit(x)


class Loss:
    """A convex pointwise loss ``l(y, s)`` and its derivatives in ``s``.

    Class attributes
    ----------------
    name : str
        Key in :data:`LOSSES`.
    target : str
        ``"zero_one"`` (targets in {0, 1}) or ``"plus_minus_one"`` (targets in {-1, +1}).
    threshold : float
        Score above which a label is predicted: the midpoint of the two targets.
    constant_curvature : float or None
        ``d2l/ds2`` when it does not depend on ``(y, s)`` (the loss is quadratic), else None.
    """

    name: ClassVar[str] = ""
    target: ClassVar[str] = "zero_one"
    threshold: ClassVar[float] = 0.5
    constant_curvature: ClassVar[float | None] = None

    def encode(self, labels: np.ndarray) -> np.ndarray:
        """Map {0, 1} labels (any array) to this loss's float64 targets."""
        labels = np.asarray(labels, dtype=np.float64)
        if self.target == "plus_minus_one":
            return 2.0 * labels - 1.0
        return labels

    def value(self, y: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``l(y, s)`` elementwise."""
        raise NotImplementedError

    def derivative(self, y: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``dl/ds`` elementwise."""
        raise NotImplementedError

    def second_derivative(self, y: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``d2l/ds2`` elementwise (generalised for the squared hinge)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredLoss(Loss):
    """``l(y, s) = (y - s)**2 / 2`` with targets in {0, 1}."""

    name = "squared"
    target = "zero_one"
    threshold = 0.5
    constant_curvature = 1.0

    def value(self, y, s):
        r = np.subtract(s, y)
        return 0.5 * r * r

    def derivative(self, y, s):
        return np.subtract(s, y)

    def second_derivative(self, y, s):
        return np.ones(np.broadcast(y, s).shape)


class LogisticLoss(Loss):
    """``l(y, s) = log(1 + exp(-y s))`` with targets in {-1, +1}."""

    name = "logistic"
    target = "plus_minus_one"
    threshold = 0.0

    def value(self, y, s):
        # log(1 + e^{-m}) without overflow for large |m|
        return np.logaddexp(0.0, -np.multiply(y, s))

    def derivative(self, y, s):
        # -y sigma(-y s)
        return -np.asarray(y) * expit(-np.multiply(y, s))

    def second_derivative(self, y, s):
        # y^2 sigma(y s) sigma(-y s)
        m = np.multiply(y, s)
        return np.square(y) * expit(m) * expit(-m)


class SquaredHingeLoss(Loss):
    """``l(y, s) = max(0, 1 - y s)**2`` with targets in {-1, +1}."""

    name = "squared_hinge"
    target = "plus_minus_one"
    threshold = 0.0

    def value(self, y, s):
        m = np.maximum(0.0, 1.0 - np.multiply(y, s))
        return m * m

    def derivative(self, y, s):
        return -2.0 * np.asarray(y) * np.maximum(0.0, 1.0 - np.multiply(y, s))

    def second_derivative(self, y, s):
        # generalised Hessian: 2 y^2 on the active set {y s < 1}
        return 2.0 * np.square(y) * (np.multiply(y, s) < 1.0)


LOSSES: dict[str, type[Loss]] = {
    cls.name: cls for cls in (SquaredLoss, LogisticLoss, SquaredHingeLoss)
}


def get_loss(name: str) -> Loss:
    """Return an instance of the loss called ``name`` (a key of :data:`LOSSES`)."""
    try:
        return LOSSES[name]()
    except KeyError:
        raise ValueError(
            f"get_loss: unknown loss {name!r}; valid: {', '.join(sorted(LOSSES))}") from None
