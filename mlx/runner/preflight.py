"""Checks that run before the first cell, shared by ``mlx validate`` and ``mlx run``.

Whatever would make every cell (or a whole run) fail is found here, with the same one-line
message in both commands: targets that do not fit the dataset's task, a random split that
cannot be stratified, selection folds that cannot be drawn, method settings that conflict
with the sweep (e.g. an exact eigendecomposition W-step with missing labels). ``mlx
validate`` runs the data checks when the data files are present and says when they are not.
"""

from __future__ import annotations

import json
import logging

from mlx.errors import ConfigError

__all__ = ["MIN_SPLIT_ROWS", "preflight", "skipped_entries"]

log = logging.getLogger(__name__)

MIN_SPLIT_ROWS = 20
"""The fewest rows a part of a random split should have. A mean over m test rows of a score
in [0, 1] has a standard error up to 0.5 / sqrt(m), 0.11 at m = 20: coarser than most
differences between methods; and fewer training rows than that leave most methods (and
selection's own hold-out) fitting noise."""


def _check_split_sizes(config, sizes: dict) -> None:
    """Warn when a random split leaves a part below :data:`MIN_SPLIT_ROWS` rows."""
    if config.split is None or not sizes:
        return
    n_train = min(tr for tr, _ in sizes.values())
    n_test = min(te for _, te in sizes.values())
    fraction = config.split.test_fraction
    for what, n, fix in (("training", n_train, "lower"), ("test", n_test, "raise")):
        if n < MIN_SPLIT_ROWS:
            log.warning("%s: split.test_fraction: %s leaves %d %s rows of '%s' in a split, "
                        "fewer than %d: figures from so few rows are mostly noise; %s "
                        "test_fraction", config.source, fraction, n, what, config.dataset.name,
                        MIN_SPLIT_ROWS, fix)


def _where(spec, role: str) -> str:
    path = spec.file(role)
    return path if path else f"dataset '{spec.name}' ({role} part)"


def _check_targets(config, task) -> None:
    from mlx.runner.protocol import load_data

    spec = config.dataset
    if config.split is None:
        split = load_data(spec, whole=False)
        for role, part in (("train", split.train), ("test", split.test)):
            task.check_targets(part.Y, where=_where(spec, role))
        return split.train.n_labels
    full = load_data(spec, whole=True)
    role = "data" if "data" in spec.roles else "train"
    task.check_targets(full.Y, where=_where(spec, role))
    return full.n_labels


def _step_names(steps) -> set:
    names = set()
    for step in steps:          # a step is a name or {name: {parameters}}
        names.update(step if isinstance(step, dict) else [step])
    return names


def _check_missing_features(config, cells) -> None:
    """Missing feature values (NaN) need ``impute_mean`` in every preprocessing chain."""
    import numpy as np

    from mlx.runner.protocol import load_data

    loaded = load_data(config.dataset, whole=config.split is not None)
    parts = [loaded] if config.split is not None else [loaded.train, loaded.test]
    n_missing = sum(int(np.isnan(p.X.data).sum()) for p in parts)
    if not n_missing:
        return
    for cell in cells:
        chains = [cell.steps()]
        chains += cell.select.thaw().get("preprocess", [])
        if any(not chain or "impute_mean" not in _step_names(chain[:1]) for chain in chains):
            raise ConfigError(config.source, f"methods[{cell.method_index}].preprocess"
                              if cell.preprocess != _default_chain(config) else "preprocess",
                              f"'{config.dataset.name}' has {n_missing} missing feature values; "
                              f"make impute_mean (fills each with the training mean of its "
                              f"feature) the first preprocessing step")


def _check_count_features(config, cells, data: dict) -> None:
    """A method that reads word counts (``needs_counts``, e.g. MoM without ``binarize``)
    refuses features that are not non-negative integers after its preprocessing: a config
    error naming the dataset and the fix, instead of an error in every cell."""
    from mlx.methods.table import method_table
    from mlx.runner.cells import _preprocess

    seen = set()
    for cell in cells:
        table = method_table(cell.method)
        fixed, select = cell.params.thaw(), cell.select.thaw()
        chains = [cell.steps()]
        chains += select.get("preprocess", [])
        for cand in [dict(zip(select, v)) for v in _product(select)] or [{}]:
            params = {**fixed, **{k: v for k, v in cand.items()
                                  if k not in ("preprocess", "rank_ratio")}}
            if not getattr(table(**params), "needs_counts", False):
                continue
            from mlx.methods.mom import non_count_value
            key = (cell.repetition, cell.labelled_ratio, cell.observed_ratio)
            for chain in ([cand["preprocess"]] if "preprocess" in cand else chains):
                if (cell.method_index, json.dumps(chain), key) in seen:
                    continue
                seen.add((cell.method_index, json.dumps(chain), key))
                d = data[key]
                _, (X,) = _preprocess(chain, d.train.X)
                bad = non_count_value(X[d.X_fit_rows])
                if bad is not None:
                    steps = ", ".join(next(iter(st)) if isinstance(st, dict) else str(st)
                                      for st in chain)
                    raise ConfigError(
                        config.source, f"methods[{cell.method_index}]",
                        f"{cell.method} reads word counts (non-negative integers), but the "
                        f"features of '{config.dataset.name}' after preprocessing [{steps}] "
                        f"hold other values (e.g. {bad:g}); give it count features (no "
                        f"scaling or normalising step), or set methods[{cell.method_index}]"
                        f".params.binarize: true to read the occurrence pattern x != 0")


def _default_chain(config) -> tuple:
    from mlx.runner.sweep import _canonical_steps

    return _canonical_steps(config.preprocess)


def _check_metric_sizes(config, n_labels: int) -> None:
    """A top-k metric needs k <= the number of labels (p@5 of 3 labels means nothing)."""
    from mlx.metrics import parse_metric

    named = []
    if "metrics" in config.raw:    # the task's defaults are kept whatever the label count
        named += [(f"metrics[{i}]", m) for i, m in enumerate(config.evaluation.metrics)]
    if "metric" in (config.raw.get("selection") or {}):
        named.append(("selection.metric", config.selection.metric))
    for path, name in named:
        k = parse_metric(name).k
        if k is not None and k > n_labels:
            raise ConfigError(config.source, path,
                              f"{name} ranks the top {k} of {n_labels} labels of "
                              f"'{config.dataset.name}'; use k <= {n_labels}")


def _check_method_settings(cells, sizes: dict) -> None:
    """Conflicts between a method's parameters and the sweep, per distinct setting.

    ``sizes`` maps (repetition, labelled_ratio, observed_ratio) to (n_samples, n_features,
    n_labels) of the data a cell fits on; sizes are 0 (unknown) without loaded data.
    """
    from mlx.methods.constraints import FitContext, InvalidParameterError
    from mlx.methods.table import method_table
    from mlx.metrics import parse_metric
    from mlx.tasks import get_task

    seen = set()
    for cell in cells:
        cls = method_table(cell.method)
        fixed, select = cell.params.thaw(), cell.select.thaw()
        n, d, L = sizes.get((cell.repetition, cell.labelled_ratio, cell.observed_ratio),
                            (0, 0, 0))
        candidates = [dict(zip(select, values)) for values in _product(select)] or [{}]
        for cand in candidates:
            cand = {k: v for k, v in cand.items() if k != "preprocess"}
            params = {**fixed, **cand}
            ratio = params.pop("rank_ratio", None)
            if cls.uses_rank:
                params["rank"] = cell.rank_for(L, ratio) if L else (cell.rank or 1)
            key = (cell.method, json.dumps(params, sort_keys=True), cell.task,
                   cell.observed_ratio, cell.labelled_ratio, n, d, L)
            if key in seen:
                continue
            seen.add(key)
            if "task" in cls.param_names():
                params["task"] = get_task(cell.task)
            method = cls(**params)
            if select and cell.threshold is None and method.threshold is None and \
                    parse_metric(cell.selection.metric).family.uses_threshold:
                raise ConfigError(cell.dataset.source, "selection.metric",
                                  f"{cell.selection.metric} needs a decision threshold, which "
                                  f"{cell.method} does not have (its scores only rank labels); "
                                  f"select on a ranking metric such as auc or p@1, or set "
                                  f"methods[{cell.method_index}].threshold")
            try:
                method.check_context(FitContext(task=cell.task, n_samples=n, n_features=d,
                                                n_labels=L, observed_ratio=cell.observed_ratio,
                                                labelled_ratio=cell.labelled_ratio))
            except InvalidParameterError as exc:
                section = "params" if exc.param in fixed or exc.param == "rank" else "select"
                where = f"methods[{cell.method_index}].{section}.{exc.param}"
                if exc.param == "rank" and ratio is not None:
                    where = f"methods[{cell.method_index}].select.rank_ratio"
                elif exc.param == "rank":
                    where = "sweep.rank" if cell.rank is not None else "sweep.rank_ratio"
                elif exc.param == "name":  # the method cannot run at all (a missing package)
                    where = f"methods[{cell.method_index}].name"
                raise ConfigError(cell.dataset.source, where, str(exc)) from None


def skipped_entries(cells) -> list[tuple[str, str]]:
    """``(label, reason)`` for every method entry whose cells the method will decline
    (:meth:`~mlx.methods.base.BaseMethod.skip` on the task and label setting), once per
    label and reason, so that ``mlx validate`` says so before anything runs."""
    from mlx.methods.constraints import FitContext
    from mlx.methods.table import method_table
    from mlx.tasks import get_task

    out = []
    for cell in cells:
        cls = method_table(cell.method)
        params = cell.params.thaw()
        if "task" in cls.param_names():
            params["task"] = get_task(cell.task)
        try:
            method = cls(**params)
        except TypeError:
            continue
        reason = method.skip(FitContext(task=cell.task, observed_ratio=cell.observed_ratio,
                                        labelled_ratio=cell.labelled_ratio))
        if reason and (cell.label, reason) not in out:
            out.append((cell.label, reason))
    return out


def _product(select: dict):
    import itertools

    keys = list(select)
    return itertools.product(*(select[k] for k in keys)) if keys else []


def preflight(config, cells, *, load: bool = True) -> None:
    """Raise the error the run would hit before (or in every one of) its cells.

    ``load=False`` checks only what needs no data (method settings against the sweep, with
    unknown sizes).
    """
    if not load or not cells:
        _check_method_settings(cells, {})
        return
    from mlx.runner.protocol import cell_data, selection_folds
    from mlx.tasks import get_task

    task = get_task(config.task)
    n_labels = _check_targets(config, task)
    _check_metric_sizes(config, n_labels)
    _check_missing_features(config, cells)
    # Random splits and selection folds, once per (repetition, labelled ratio, observed
    # ratio): they do not depend on the method.
    sizes, data, folds_checked, parts = {}, {}, set(), {}
    for cell in cells:
        key = (cell.repetition, cell.labelled_ratio, cell.observed_ratio)
        if key not in data:
            data[key] = cell_data(cell)
            d = data[key]
            sizes[key] = (d.Y_fit.shape[0], d.train.n_features, d.train.n_labels)
            parts[key] = (d.train.n_samples, d.test.n_samples)
        if cell.select and key not in folds_checked:
            selection_folds(cell, data[key].Y_fit, task)
            folds_checked.add(key)
    _check_split_sizes(config, parts)
    _check_count_features(config, cells, data)
    _check_method_settings(cells, sizes)
