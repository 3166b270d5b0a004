"""Config -> cells: the cartesian product of the sweep axes, with canonical ids.

A :class:`Cell` holds everything needed to run it (it is plain, picklable data),
so cells can run in local worker processes today and on a cluster scheduler
(e.g. Dask's ``client.map(run_cell, cells)``) without change. Its values are typed and
frozen: parameters and preprocessing steps as :class:`FrozenMap`, the protocols as the
config's own :class:`~mlx.config.SplitSpec`, :class:`~mlx.config.EvaluationSpec` and
:class:`~mlx.config.SelectionSpec`; JSON text is made only for the cell's key (its id, the
cache file's name) and for results.csv.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlx.axes import SWEEP_AXES
from mlx.config import Config, EvaluationSpec, SelectionSpec, SplitSpec
from mlx.errors import ConfigError
from mlx.methods.table import method_table

__all__ = ["Cell", "FrozenMap", "expand", "canonical_json"]

CELL_SCHEMA = 1


def canonical_json(obj) -> str:
    """Sorted-key, compact JSON; floats as repr (the same value gives the same text)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _freeze(value):
    if isinstance(value, Mapping):
        return FrozenMap.of(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value):
    if isinstance(value, FrozenMap):
        return value.thaw()
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class FrozenMap:
    """A mapping as an immutable, hashable value: ``(key, value)`` pairs sorted by key, lists
    inside as tuples and mappings inside as FrozenMaps (a cell's parameters, its ``select``
    candidates, a preprocessing step).

    :meth:`thaw` gives the plain data back (fresh dicts and lists, as the config gave them)
    and :meth:`json` its canonical JSON text, the form cell keys, cache files and results.csv
    hold. Equality is Python's (``1 == 1.0 == True``); what identifies a cell is the JSON
    text of its key (:meth:`Cell.key`), where those differ.
    """

    pairs: tuple = ()

    @classmethod
    def of(cls, mapping: Mapping) -> FrozenMap:
        return cls(tuple(sorted(((k, _freeze(v)) for k, v in mapping.items()),
                                key=lambda kv: str(kv[0]))))

    def thaw(self) -> dict:
        return {k: _thaw(v) for k, v in self.pairs}

    def json(self) -> str:
        return canonical_json(self.thaw())

    def keys(self) -> list:
        return [k for k, _ in self.pairs]

    def get(self, key, default=None):
        return next((v for k, v in self.pairs if k == key), default)

    def __contains__(self, key) -> bool:
        return any(k == key for k, _ in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


@dataclass(frozen=True)
class Cell:
    """One unit of work: one method setting on one sweep point (plain, picklable values).

    The sweep axes (:data:`mlx.axes.AXES`) are fields of their own; :meth:`key` is what
    identifies the cell's stored scores and :meth:`cell_id` its short hash.
    """

    experiment: str
    seed: int
    dataset: Any                  # DatasetSpec (frozen dataclass)
    preprocess: tuple             # canonical steps (FrozenMaps) applied to X
    method: str
    label: str
    params: FrozenMap             # the fixed + grid parameters
    grid_point: FrozenMap         # the grid parameters alone (for display)
    select: FrozenMap             # {param: candidates} chosen on validation rows
    threshold: float | None       # Hamming/F1 threshold override
    rank_ratio: float | None      # None when the method takes no rank
    observed_ratio: float
    repetition: int
    evaluation: EvaluationSpec    # metrics and evaluation (metrics not part of the id)
    selection: SelectionSpec      # how select's candidates are compared
    order: int = 0                # position in the config's expansion (not part of the id)
    task: str = "multilabel"
    split: SplitSpec | None = None   # the random split protocol, if any
    target: str = "none"          # target scaling (regression)
    rank: int | None = None       # absolute rank (sweep.rank); rank_ratio is then None
    labelled_ratio: float = 1.0
    method_index: int = 0         # the method's position in the config (for messages)
    rank_floor: int = 0           # rank >= min(n_labels, rank_floor) (the default sweep)
    save_model: bool = False      # keep the fitted model (mlx run --save-models; not in the id)
    budget: float | None = None   # wall-clock seconds before the cell is stopped (not in the id)

    def rank_for(self, n_labels: int, rank_ratio: float | None = None) -> int:
        """The rank this cell fits with ``n_labels`` labels (methods with a rank only);
        ``rank_ratio`` (a ``select`` candidate) replaces the cell's rank or k/L."""
        if self.rank is not None and rank_ratio is None:
            return self.rank
        rank = max(1, int(round((rank_ratio or self.rank_ratio) * n_labels)))
        return max(rank, min(n_labels, self.rank_floor))

    def steps(self) -> list:
        """The preprocessing steps as plain data (for :class:`mlx.preprocess.Preprocessor`)."""
        return [step.thaw() for step in self.preprocess]

    def model_key(self) -> str:
        """What determines the fitted model: the data by content (:meth:`DatasetSpec.key`),
        the protocol and the method's settings. (The method's seed depends on fewer names, so
        that the settings of one method share their draws: :func:`mlx.seeding.method_seed`.)

        Settings at their defaults are left out, so adding a protocol option never changes
        the ids of cells that do not use it.
        """
        selecting = bool(self.select)
        sel = self.selection
        key = {
            "schema": CELL_SCHEMA, "seed": self.seed, "dataset": self.dataset.key(),
            "preprocess": [step.json() for step in self.preprocess], "method": self.method,
            "params": self.params.json(), "select": self.select.json(),
            "rank_ratio": self.rank_ratio,
            "observed_ratio": self.observed_ratio, "repetition": self.repetition,
            "selection_metric": sel.metric if selecting else None,
            "validation_fraction": sel.validation_fraction if selecting and not sel.cv
            else None,
        }
        optional = {"split": None if self.split is None else self.split.key(),
                    "target": self.target, "rank": self.rank,
                    "rank_floor": self.rank_floor if self.rank_ratio is not None else 0,
                    "labelled_ratio": self.labelled_ratio,
                    "cv": sel.cv if selecting else None,
                    "selection_stratify": sel.stratify if selecting else False}
        defaults = {"split": None, "target": "none", "rank": None, "rank_floor": 0,
                    "labelled_ratio": 1.0,
                    "cv": None, "selection_stratify": False}
        key.update({k: v for k, v in optional.items() if v != defaults[k]})
        return canonical_json(key)

    def key(self) -> str:
        """Everything that determines the cell's stored scores; the metrics computed from
        them and the display label are not part of it, so a config that changes only
        those reuses every cell (:mod:`mlx.metrics.stored`)."""
        return canonical_json({
            "model": self.model_key(), "threshold": self.threshold,
            "auc_degenerate": self.evaluation.auc_degenerate,
            "eval_splits": list(self.evaluation.splits),
        })

    def cell_id(self) -> str:
        return hashlib.sha256(self.key().encode()).hexdigest()[:12]

    def describe(self) -> str:
        parts = []
        for ax in SWEEP_AXES:          # the swept values, where they differ from the default
            value = getattr(self, ax.name)
            if value is not None and value != ax.default:
                parts.append(f"{ax.short}={value:g}")
        parts += [f"{k}={v}" for k, v in self.grid_point.thaw().items()]
        parts.append(f"rep={self.repetition}")
        return f"{self.label}[{','.join(parts)}]"


def _canonical_steps(steps) -> tuple:
    """Preprocessing steps in one canonical form ('bias' == {bias: {value: 1.0}})."""
    from mlx.preprocess import Preprocessor

    return tuple(FrozenMap.of(d) for d in Preprocessor(list(steps)).describe())


#: The most cells one config may expand to (each is at least a fit and a file).
MAX_CELLS = 1_000_000


def _check_count(config: Config) -> None:
    """Refuse, before building any, a sweep of more than :data:`MAX_CELLS` cells."""
    n = 0
    for spec in config.methods:
        ranks = (len(config.rank) if config.rank is not None else len(config.rank_ratio)) \
            if method_table(spec.name).uses_rank else 1
        points = math.prod(len(v) for v in spec.grid.values())
        n += (points * ranks * len(config.observed_ratio) * len(config.labelled_ratio)
              * config.repetitions)
    if n > MAX_CELLS:
        raise ConfigError(config.source, "sweep", f"the config expands to {n} cells (methods x "
                                                  f"grid points x ranks x observed and "
                                                  f"labelled ratios x repetitions), more than "
                                                  f"the {MAX_CELLS} one run may hold; split "
                                                  f"it into several configs")


def expand(config: Config) -> list[Cell]:
    """All cells of a config, in a stable order (methods, grid, rank, observed ratio,
    labelled ratio, repetition)."""
    _check_count(config)
    preprocess_default = _canonical_steps(config.preprocess)
    cells = []
    for spec in config.methods:
        cls = method_table(spec.name)
        if not cls.uses_rank:
            ranks = [(None, None)]
        elif config.rank is not None:
            ranks = [(None, k) for k in config.rank]
        else:
            ranks = [(r, None) for r in config.rank_ratio]
        grid_keys = sorted(spec.grid)
        grid_points = list(itertools.product(*(spec.grid[k] for k in grid_keys))) or [()]
        prep = (_canonical_steps(spec.preprocess)
                if spec.preprocess is not None else preprocess_default)
        select = FrozenMap.of(spec.select)
        for point in grid_points:
            grid_point = dict(zip(grid_keys, point))
            params = FrozenMap.of({**spec.params, **grid_point})
            for (rank_ratio, rank), obs, labelled, rep in itertools.product(
                    ranks, config.observed_ratio, config.labelled_ratio,
                    range(config.repetitions)):
                cells.append(Cell(
                    experiment=config.name, seed=config.seed, dataset=config.dataset,
                    preprocess=prep, method=spec.name, label=spec.label, params=params,
                    grid_point=FrozenMap.of(grid_point), select=select,
                    threshold=spec.threshold, rank_ratio=rank_ratio,
                    observed_ratio=obs, repetition=rep, evaluation=config.evaluation,
                    selection=config.selection, order=len(cells), task=config.task,
                    split=config.split, target=config.target, rank=rank,
                    labelled_ratio=labelled, method_index=spec.index,
                    rank_floor=config.rank_floor, budget=spec.budget))
    return cells
