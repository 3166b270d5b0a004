"""One unit convention for the metrics that lie in [0, 1], chosen with ``--percent`` or
``--fraction`` and applied alike by ``mlx table``, ``compare``, ``plot`` and ``report``.

Without either option, the run's config key ``units: percent`` (or ``fraction``), recorded
in its ``config.resolved.yaml``, decides for every command that reads the run; without that
either, each command keeps its own default: a run's own table prints
fractions (``0.2809 ± 0.0040``), ``compare`` and ``plot`` the unit of the paper
(top-k accuracy, nDCG and error in percent, AUC as a fraction). ``--percent`` shows every
[0, 1] metric (top-k accuracy, nDCG, AUC, Hamming loss, F1, error) in percent and
``--fraction`` every one as a fraction; the other metrics (MSE, seconds) never change.
A tolerance keeps its meaning: it is converted with the value (1 point = 0.01).
"""

from __future__ import annotations

import dataclasses

import click

__all__ = ["PERCENT_FAMILIES", "unit_factor", "in_unit", "units_option", "run_units"]

PERCENT_FAMILIES = ("p@<k>", "ndcg@<k>", "auc", "hamming", "error", "f1", "micro_f1",
                    "macro_f1")


def _family(name: str) -> str | None:
    from mlx.errors import MlxError
    from mlx.metrics import parse_metric

    try:
        return parse_metric(name).family.form
    except MlxError:
        return None


def unit_factor(metric: str, percent: bool | None) -> float | None:
    """100 or 1 for a [0, 1] metric under the choice ``percent``; None: no choice applies."""
    if percent is None or _family(metric) not in PERCENT_FAMILIES:
        return None
    return 100.0 if percent else 1.0


def in_unit(style, percent: bool | None):
    """``style`` (a MetricStyle) in percent or as a fraction; unchanged when ``percent`` is
    None or the metric is not a [0, 1] metric."""
    from mlx.tables.spec import DEFAULT_FORMATS

    factor = unit_factor(style.name, percent)
    if factor is None:
        return style
    unit = "%" if percent else "fraction"
    tol = style.tolerance
    if tol is not None:
        tol = tol * factor / style.factor
    fmt = style.fmt if style.unit == unit else DEFAULT_FORMATS[unit]
    return dataclasses.replace(style, unit=unit, fmt=fmt, tolerance=tol)


def units_option(fn):
    """The ``--percent/--fraction`` option shared by table, compare, plot and report."""
    return click.option("--percent/--fraction", "percent", default=None,
                        help="Every [0, 1] metric (top-k accuracy, nDCG, AUC, Hamming loss, "
                             "F1, error) in percent, or as a fraction; the same choice for "
                             "table, compare, plot and report (default: each command's own, "
                             "see the README).")(fn)


def run_units(run_dir, percent: bool | None = None) -> bool | None:
    """``percent`` when given, else the ``units`` of the run's config.resolved.yaml (True for
    percent, False for fraction), else None."""
    if percent is not None:
        return percent
    from pathlib import Path

    import yaml

    try:
        text = (Path(run_dir) / "config.resolved.yaml").read_text(encoding="utf-8")
        units = (yaml.safe_load(text) or {}).get("units")
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    return {"percent": True, "fraction": False}.get(units)
