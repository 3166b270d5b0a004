"""Regression: one or more real-valued targets per row."""

from __future__ import annotations

from mlx.tasks.base import ValueTask, register_task

__all__ = ["Regression"]


@register_task
class Regression(ValueTask):
    """Real targets; predictions are the scores, and ``target: minmax`` may scale them."""

    name = "regression"
    description = "one or more real-valued targets per row"
    scaled_targets = True
    default_metric_names = ("mse",)
