"""The sweep axes, defined once.

A *sweep axis* is a coordinate of a result row: the dataset, the method's label, its
parameters (the grid point), the rank (as a ratio k/L or an absolute k), the observed and
the labelled ratio, and the repetition. Every consumer reads this module: the sweep
expansion (:class:`mlx.runner.sweep.Cell` has one field per axis), results.csv (one column
per axis), the run's own table, paper tables and ``mlx compare`` (a spec axis per numeric
setting), the paired tests and the figures. An axis added here is an axis all of them
know; ``tests/test_axes.py`` checks each consumer against this list.

Each :class:`Axis` says whether it distinguishes *settings* (rows that must never be
pooled or paired across its values) or *repetitions* (draws of one setting, over which
means, standard deviations and paired tests run).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Axis", "AXES", "SETTING", "REPETITION", "SETTING_AXES", "SWEEP_AXES",
           "SPEC_AXES", "axis", "by_spec", "setting_columns", "fmt_value"]

SETTING = "setting"
REPETITION = "repetition"


@dataclass(frozen=True)
class Axis:
    """One sweep axis.

    ``name`` is the :class:`~mlx.runner.sweep.Cell` field and ``column`` the results.csv
    column; ``title`` heads table columns; ``short`` is its name in a cell's description
    (``LEML[k/L=0.2,obs=0.5,rep=0]``); ``spec`` its name in table specs and the published
    values (None: not a numeric axis of paper tables); ``percent`` prints 0.2 as ``20%``;
    ``default`` is its value when the config does not sweep it (left out of descriptions).
    """

    name: str
    column: str
    title: str
    role: str
    short: str = ""
    spec: str | None = None
    numeric: bool = False
    percent: bool = False
    integer: bool = False
    default: object = None

    def fmt(self, value) -> str:
        """A value as tables print it: 0.2 -> '20%' for a ratio, 5.0 -> '5' for k."""
        if self.percent:
            return f"{float(value) * 100:g}%"
        if self.integer:
            return f"{int(value)}"
        return str(value)


AXES = (
    Axis("dataset", "dataset", "dataset", SETTING),
    Axis("label", "label", "method", SETTING),
    Axis("params", "params", "params", SETTING),
    Axis("rank_ratio", "rank_ratio", "k/L", SETTING, short="k/L", spec="k_over_L",
         numeric=True, percent=True),
    Axis("observed_ratio", "observed_ratio", "observed", SETTING, short="obs",
         spec="observed", numeric=True, percent=True, default=1.0),
    Axis("labelled_ratio", "labelled_ratio", "labelled", SETTING, short="labelled",
         spec="labelled", numeric=True, percent=True, default=1.0),
    Axis("rank", "rank", "k", SETTING, short="k", spec="k", numeric=True, integer=True),
    Axis("repetition", "repetition", "repetition", REPETITION, short="rep", numeric=True,
         integer=True),
)
SETTING_AXES = tuple(a for a in AXES if a.role == SETTING)
SWEEP_AXES = tuple(a for a in AXES if a.numeric and a.role == SETTING)   # swept by config
SPEC_AXES = tuple(a for a in AXES if a.spec)


def axis(name: str) -> Axis:
    """The axis called ``name`` (its Cell field or results.csv column)."""
    return next(a for a in AXES if name in (a.name, a.column))


def by_spec(spec_name: str) -> Axis:
    """The axis of a table spec's axis name (``k_over_L``, ``observed``, ...)."""
    return next(a for a in SPEC_AXES if a.spec == spec_name)


def setting_columns() -> list[str]:
    """The results.csv columns that tell one setting from another."""
    return [a.column for a in SETTING_AXES]


def fmt_value(spec_name: str, value) -> str:
    """A value of spec axis ``spec_name`` as printed; other axes print as text."""
    for a in SPEC_AXES:
        if a.spec == spec_name:
            return a.fmt(value)
    return str(value)
