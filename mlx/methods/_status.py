"""What a fixed-budget solver can truthfully say about convergence."""

from __future__ import annotations

import math

__all__ = ["SETTLED_RTOL", "settled"]

SETTLED_RTOL = 1e-3
"""A fixed-budget fit (no stopping test) counts as converged when its last pass changed the
objective by at most this fraction of the previous pass's value."""


def settled(history, rtol: float = SETTLED_RTOL) -> bool:
    """Whether the last entry of a per-pass objective ``history`` is within ``rtol`` of the one
    before (relative to it). False with fewer than two passes or a non-finite value: one
    pass cannot show that the objective stopped moving."""
    if len(history) < 2:
        return False
    prev, last = float(history[-2]), float(history[-1])
    if not (math.isfinite(prev) and math.isfinite(last)):
        return False
    return abs(last - prev) <= rtol * abs(prev)
