"""Out-of-the-box configs on every multi-label set: defaults against the constant and a tuned
reference, and the cost of ``auto``.

For each registered multi-label dataset whose files are present (or those of
``--datasets``; a set without an official train/test split gets one random split,
:data:`SPLIT`), one config names the dataset and the methods only -- no ``preprocess``, no
``select``, no parameters -- and runs every registered method that handles multi-label data
(``mom`` and ``lsvv`` included) beside the ``constant`` baseline, on the task's default
metrics. The benchmark prints:

* every method's default metrics beside the constant's, and each loss to it (``loses on``);
  for an ``auto`` fit, the weight of the label frequencies and the decision shift it added
  (``prior``, ``shift``: :func:`mlx.methods._auto.choose_prior_weight`);
* a tuned reference: the same method with ``select`` over a wide grid (half-decade steps) of
  the parameter its ``auto`` chooses, on a validation split of the training rows (20%, P@1),
  and the default's shortfall in P@1 (points) and AUC;
* the cost of ``auto``: the default fit's time over the time of one fit with the parameter
  fixed at the value ``auto`` chose, both after a warm-up fit of every method on a tiny set
  (imports and compiled kernels are loaded once per process, not once per fit);
* the targets: no loss to the constant on any default metric of any set; per method, the
  median shortfall over sets within 1 point of P@1 and 0.01 AUC; cost ratios at most 3
  (squared-loss methods, whose path costs one decomposition) and 6 (the others).

The test split is read only to print this report, never to choose anything.

``--cpu-cost`` measures only the cost of ``auto``, in CPU seconds of this process
(``time.process_time``: on a machine shared with other jobs wall times move with their load,
CPU seconds far less): each method fitted directly on the training rows (with the bias
column, the default rank and ``random_state=0``) with its defaults, then with the
parameter fixed at the value ``auto`` chose, after a warm-up fit; ``--repeat`` (3) fits of
each, interleaved, and the ratio of their medians (a process's first fit at a size pays
first-touch costs the next ones do not; ``first x`` is the ratio of the first two alone);
``br-sq`` is BR with the squared loss (its ``l2_reg`` path). A set without an official split is
measured on a random 70% of its rows.

    nice -n 10 python benchmarks/bench_defaults.py                  # every present set
    python benchmarks/bench_defaults.py --datasets scene,yeast --no-tuned
    python benchmarks/bench_defaults.py --cpu-cost --methods cplst,bcs,br-sq,leml
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


def _halves(lo: int, hi: int) -> list[float]:
    """``10^lo .. 10^hi`` in half-decade steps."""
    return [float(f"{10.0 ** (e / 2):.3g}") for e in range(2 * lo, 2 * hi + 1)]


TUNED = {   # method -> (parameter its auto chooses, the tuned reference's wide grid)
    "leml": ("l2_reg", _halves(-2, 4)),
    "cplst": ("l2_reg", _halves(-2, 4)),
    "br": ("C", _halves(-3, 2)),
    "bcs": ("weight_precision", _halves(-1, 5)),
    "wsabie": ("learning_rate", _halves(-5, 0)),
    "lsvv": ("tau_A", _halves(-7, -1)),
    "mom": ("smoothing", _halves(-7, 1)),
    "plt": ("c", _halves(-3, 5)),
}
SQUARED = {"leml", "cplst", "bcs", "br-sq"}   # squared loss: cost target 3x; others 6x
COST_TARGET = {True: 3.0, False: 6.0}


def multilabel_datasets() -> list[str]:
    """Registered multi-label datasets whose files are all present."""
    from mlx.data.catalog import dataset_info, find_files, list_datasets, resolve_dataset

    return [n for n in list_datasets() if dataset_info(n).get("task") == "multilabel"
            and not find_files(resolve_dataset(n, source=None))]


def multilabel_methods() -> list[str]:
    from mlx.methods import METHODS

    return [n for n in METHODS.names() if n != "constant" and "multilabel" in METHODS.get(n).tasks]


def _run(name: str, lines: list[str], jobs: int, out: Path) -> pd.DataFrame:
    from mlx.config import load_config
    from mlx.runner.experiment import run_experiment

    cfg = out / f"{name}.yaml"
    cfg.write_text("\n".join(lines) + "\n")
    summary = run_experiment(load_config(cfg), jobs=jobs, output=str(out / name), quiet=True,
                             progress=False)
    return pd.read_csv(summary.output / "results.csv")


def _num(v: float) -> str:
    """A YAML float (YAML 1.1 reads ``1e-07`` without a dot as a string)."""
    return f"{float(v):.6e}"


def _entry(method: str, label: str, params: dict | None = None, select: dict | None = None):
    parts = [f"name: {method}", f"label: {label}"]
    if params:
        parts.append("params: {" + ", ".join(f"{k}: {_num(v)}" for k, v in params.items())
                     + "}")
    if select:
        parts.append("select: {" + ", ".join(f"{k}: [{', '.join(_num(v) for v in vs)}]"
                                             for k, vs in select.items()) + "}")
    return "  - {" + ", ".join(parts) + "}"


SPLIT = "split: {test_fraction: 0.3, repetitions: 1}"
"""The protocol of a set without an official train/test split (the mldr sets): one random
split, seeded by the dataset's name like every split of a config."""


def _head(name: str, ds: str) -> list[str]:
    from mlx.data.catalog import dataset_info

    official = "test" in (dataset_info(ds).get("files") or {})
    return [f"name: {name}", f"dataset: {ds}"] + ([] if official else [SPLIT])


def run_dataset(ds: str, methods: list[str], tuned: bool, jobs: int, out: Path):
    """Defaults, constant and tuned references; then the fixed-value fits for the costs."""
    entries = [_entry("constant", "constant")] + [_entry(m, m) for m in methods]
    if tuned:
        entries += [_entry(m, f"{m}-tuned", select={TUNED[m][0]: TUNED[m][1]})
                    for m in methods if m in TUNED]
    frame, refused = _run_accepted(f"{ds}-defaults", _head(f"defaults-{ds}", ds), entries,
                                   jobs, out,
                                   ["selection: {metric: p@1, validation_fraction: 0.2}"])
    # one fit at the value auto chose, for the cost ratio
    chosen = {}
    for m in methods:
        rows = frame[(frame["label"] == m) & (frame["split"] == "test")]
        sel = rows["selected"].dropna()
        if m in TUNED and len(sel):
            value = json.loads(sel.iloc[0]).get(TUNED[m][0])
            if value is not None:
                chosen[m] = value
    if chosen:
        from mlx.methods.leml import clear_gram_cache

        clear_gram_cache()      # the fixed fits pay for their own eigendecompositions
        lines = [*_head(f"fixed-{ds}", ds), "methods:",
                 *[_entry(m, f"{m}-fixed", params={TUNED[m][0]: v}) for m, v in chosen.items()]]
        frame = pd.concat([frame, _run(f"{ds}-fixed", lines, jobs, out)], ignore_index=True)
    return frame, chosen, refused


def warm_up(methods: list[str], jobs: int, out: Path) -> None:
    """Fit every method once with its defaults on a tiny synthetic set, so that one-off
    imports and compilations (numba's kernels take 1-2 s to load) fall on neither side of
    the cost ratio: they are paid once per process, whatever the parameter."""
    _run_accepted("warm-up", ["name: warm-up", "dataset: {synthetic: {n_samples: 60, "
                              "n_features: 8, n_labels: 5, rank: 2, seed: 1, n_test: 20}}"],
                  [_entry("constant", "constant")] + [_entry(m, m) for m in methods], jobs, out,
                  [])


def _run_accepted(name: str, head: list[str], entries: list[str], jobs: int, out: Path,
                  tail: list[str]):
    """:func:`_run` without the method entries the config check refuses for this data (e.g.
    ``mom`` on features that are not counts): ``(frame, {label: the one-line error})``."""
    import re

    from mlx.errors import ConfigError

    refused = {}
    while True:
        try:
            return _run(name, [*head, "methods:", *entries, *tail], jobs, out), refused
        except ConfigError as exc:
            found = re.search(r"methods\[(\d+)\]", str(exc))
            if not found or len(entries) <= 2:
                raise
            entry = entries.pop(int(found.group(1)))
            refused[re.search(r"label: ([^,}]+)", entry).group(1)] = str(exc)


def summarise(ds: str, frame: pd.DataFrame, methods: list[str], chosen: dict,
              refused: dict | None = None) -> list[dict]:
    from mlx.metrics import default_metrics, parse_metric

    metrics = default_metrics("multilabel")
    test = frame[frame["split"] == "test"]
    values = test.pivot_table(index="label", columns="metric", values="value", aggfunc="first")
    secs = frame.drop_duplicates("cell_id").groupby("label")["fit_seconds"].sum()
    status = frame.drop_duplicates("cell_id").groupby("label")["status"].first()
    const = values.loc["constant"]
    rows = []
    for m in methods:
        row = {"dataset": ds, "method": m, "status": status.get(m, "no result")}
        if m in (refused or {}):
            row["status"] = "refused"
            row["note"] = refused[m].split(": ", 2)[-1][:90]
            rows.append(row)
            continue
        if m not in values.index:
            msg = frame.loc[frame["label"] == m, "message"].dropna()
            row["note"] = (msg.iloc[0] if len(msg) else "")[:90]
            rows.append(row)
            continue
        losses = []
        for metric in metrics:
            v, c = values.loc[m].get(metric), const.get(metric)
            row[metric] = v
            if v is None or c is None or pd.isna(v) or pd.isna(c):
                continue
            better = parse_metric(metric).higher_is_better
            if (v < c - 1e-12) if better else (v > c + 1e-12):
                losses.append(metric)
        row["loses on"] = ",".join(losses)
        row["auto"] = chosen.get(m)
        sel = test.loc[test["label"] == m, "selected"].dropna()
        if len(sel):
            picked = json.loads(sel.iloc[0])
            w = picked.get("prior_weight", "-")
            row["prior"] = w
            row["shift"] = picked.get("decision_shift", "-")
        tuned = f"{m}-tuned"
        if tuned in values.index:
            row["tuned p@1"] = values.loc[tuned]["p@1"]
            row["tuned auc"] = values.loc[tuned]["auc"]
            row["p@1 short (pts)"] = 100 * (values.loc[tuned]["p@1"] - values.loc[m]["p@1"])
            row["auc short"] = values.loc[tuned]["auc"] - values.loc[m]["auc"]
        fixed = f"{m}-fixed"
        if fixed in secs.index and secs.get(fixed, 0) > 0:
            row["auto s"] = secs[m]
            row["fixed s"] = secs[fixed]
            row["cost x"] = secs[m] / secs[fixed]
        rows.append(row)
    const_row = {"dataset": ds, "method": "constant", "status": "ok"}
    const_row.update({metric: const.get(metric) for metric in metrics})
    return [const_row] + rows


def cpu_cost(ds: str, methods: list[str], repeat: int = 3) -> list[dict]:
    """CPU seconds of one default fit over one fit at the value ``auto`` chose, per method
    (see the module docstring): the medians of ``repeat`` fits of each, interleaved
    (``first x``: the ratio of the first two alone)."""
    import time

    import scipy.sparse as sp

    from mlx.config import DEFAULT_RANK_FLOOR, DEFAULT_RANK_RATIO
    from mlx.data.catalog import dataset_info, load_full, load_split, resolve_dataset
    from mlx.methods import METHODS
    from mlx.methods.constraints import FitContext
    from mlx.methods.leml import clear_gram_cache

    spec = resolve_dataset(ds, source=None)
    if "test" in (dataset_info(ds).get("files") or {}):
        part = load_split(spec).train
        X, Y = part.X, part.Y
    else:
        full = load_full(spec)
        rows = np.sort(np.random.default_rng(0).permutation(full.X.shape[0])
                       [:int(0.7 * full.X.shape[0])])
        X, Y = full.X[rows], full.Y[rows]
    X = sp.hstack([sp.csr_matrix(X), np.ones((X.shape[0], 1))], format="csr")
    Y = sp.csr_matrix(Y)
    L = Y.shape[1]
    rank = max(max(1, int(round(DEFAULT_RANK_RATIO * L))), min(L, DEFAULT_RANK_FLOOR))
    out = []
    for m in methods:
        name = "br" if m == "br-sq" else m
        if name not in TUNED:
            continue
        cls = METHODS.get(name)
        kw = {"rank": rank} if getattr(cls, "uses_rank", False) else {}
        if m == "br-sq":
            kw["loss"] = "squared"
        param = "l2_reg" if m == "br-sq" else TUNED[m][0]
        reason = cls(**kw).skip(FitContext(n_samples=X.shape[0], n_features=X.shape[1],
                                           n_labels=L))
        if reason:                                # as a run would: e.g. CPLST's dense d x d
            out.append({"dataset": ds, "method": m, "note": f"skipped: {reason}"[:80]})
            continue
        def timed(**params):
            clear_gram_cache()                    # no factorisation carried over between fits
            t = time.process_time()
            model = cls(**kw, random_state=0, **params).fit(X, Y)
            return model, time.process_time() - t

        try:
            warm = max(60, 2 * rank)                  # more rows than a rank-limited model needs
            cls(**kw, random_state=0).fit(X[:warm], Y[:warm])                  # warm-up
            t_auto, t_fixed = [], []
            for _ in range(repeat):                   # interleaved: both see the same machine
                auto, t = timed()
                t_auto.append(t)
                value = auto.auto_[param].value
                t_fixed.append(timed(**{param: value})[1])
        except Exception as exc:                  # e.g. a method that skips these dimensions
            out.append({"dataset": ds, "method": m, "note": str(exc)[:80]})
            continue
        prior = auto.auto_.get("prior_weight")
        t_a, t_f = float(np.median(t_auto)), float(np.median(t_fixed))
        out.append({"dataset": ds, "method": m, "auto": value,
                    "prior": None if prior is None else prior.value,
                    "auto cpu s": t_a, "fixed cpu s": t_f, "cost x": t_a / t_f,
                    "first x": t_auto[0] / t_fixed[0]})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=None,
                    help="comma-separated; default: every registered multi-label set present")
    ap.add_argument("--methods", default=None, help="comma-separated; default: all that apply")
    ap.add_argument("--no-tuned", action="store_true", help="skip the tuned references")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--csv", default=None, help="also write the table to this file")
    ap.add_argument("--cpu-cost", action="store_true",
                    help="only the cost of auto, in CPU seconds (see above)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="--cpu-cost: fits of each kind, interleaved; their medians are compared")
    args = ap.parse_args()
    datasets = args.datasets.split(",") if args.datasets else multilabel_datasets()
    methods = args.methods.split(",") if args.methods else multilabel_methods()
    if args.cpu_cost:
        return report_cpu_cost(datasets, methods, args.csv, max(1, args.repeat))
    unknown = [m for m in methods if m not in multilabel_methods()]
    if unknown:
        print(f"bench_defaults: --methods: {', '.join(unknown)} not a method compared here "
              f"(br-sq is for --cpu-cost only); valid: {', '.join(multilabel_methods())}",
              file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        warm_up(methods, args.jobs, Path(tmp))
        for ds in datasets:
            frame, chosen, refused = run_dataset(ds, methods, not args.no_tuned, args.jobs,
                                                 Path(tmp))
            part = summarise(ds, frame, methods, chosen, refused)
            rows += part
            with pd.option_context("display.width", 250, "display.max_columns", 30):
                print(pd.DataFrame(part).to_string(index=False, float_format=lambda x: f"{x:.4g}"),
                      flush=True)
    table = pd.DataFrame(rows)
    if args.csv:
        table.to_csv(args.csv, index=False)
    print("\n== targets ==")
    body = table[table["method"] != "constant"]
    losing = body[body.get("loses on", pd.Series(dtype=str)).fillna("") != ""]
    n_pairs = int(body["p@1"].notna().sum()) if "p@1" in body else 0
    print(f"losses to the constant: {len(losing)} of {n_pairs} method/dataset pairs "
          f"(target 0)")
    for _, r in losing.iterrows():
        print(f"  {r['dataset']:12s} {r['method']:8s} loses on {r['loses on']}")
    for m in methods:
        mine = body[body["method"] == m]
        parts = [f"{m:8s}"]
        if "p@1 short (pts)" in mine and mine["p@1 short (pts)"].notna().any():
            p1 = float(np.nanmedian(mine["p@1 short (pts)"]))
            auc = float(np.nanmedian(mine["auc short"]))
            ok = p1 <= 1.0 and auc <= 0.01
            parts.append(f"median shortfall to tuned: P@1 {p1:.2f} pts, AUC {auc:.4f} "
                         f"({'ok' if ok else 'MISSED'}; target <= 1 pt, <= 0.01)")
        if "cost x" in mine and mine["cost x"].notna().any():
            target = COST_TARGET[m in SQUARED]
            ratios = mine["cost x"].dropna()
            parts.append(f"cost of auto: median {ratios.median():.2f}x, max {ratios.max():.2f}x "
                         f"({'ok' if ratios.max() <= target else 'MISSED'}; target <= "
                         f"{target:g}x)")
        print("  ".join(parts))
    return 0


def report_cpu_cost(datasets: list[str], methods: list[str], csv: str | None,
                    repeat: int = 3) -> int:
    rows = []
    for ds in datasets:
        part = cpu_cost(ds, methods, repeat)
        rows += part
        with pd.option_context("display.width", 250, "display.max_columns", 30):
            print(pd.DataFrame(part).to_string(index=False, float_format=lambda x: f"{x:.4g}"),
                  flush=True)
    table = pd.DataFrame(rows)
    if csv:
        table.to_csv(csv, index=False)
    print("\n== cost of auto, CPU seconds ==")
    for m in methods:
        ratios = table.loc[table["method"] == m, "cost x"].dropna() if "cost x" in table else []
        if len(ratios):
            target = COST_TARGET[m in SQUARED]
            print(f"{m:8s} median {ratios.median():.2f}x, max {ratios.max():.2f}x over "
                  f"{len(ratios)} sets (target <= {target:g}x: "
                  f"{'ok' if ratios.median() <= target else 'MISSED'} by the median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
