"""Paired significance tests between two methods of one results.csv.

``mlx table RESULTS --paired A,B`` (and ``mlx compare ... --paired A,B``) compares the
methods labelled A and B setting by setting: for every value of every setting axis of
:mod:`mlx.axes` (dataset, parameters, k/L or k, observed and labelled ratio) and metric
where both have test results, their values are paired by ``repetition`` (a repetition
index fixes the split and the label mask, whatever the method), and the
table reports the number of pairs, both means over the paired repetitions, the mean
difference A - B, the two-sided paired t-test p-value (:func:`scipy.stats.ttest_rel`)
and the Wilcoxon signed-rank p-value (:func:`scipy.stats.wilcoxon`).

Only ``split == "test"`` rows with status ``ok`` are read; ``validation`` rows (selection
candidates) never are. A method without a rank (k/L empty, e.g. binary relevance) is
paired with every k/L of the other, as in the paper tables. A parameter that both methods
sweep (a ``grid`` key with several values in each, such as LSVV's ``space``) is a shared
setting: A's rows are paired with B's rows of the same value only, never across values;
parameters only one side varies are shown beside each row. Repetitions that only one
method has are left out, and the note says how many each had.

Pairs must be independent draws. Repetitions whose split, label mask (and labelled rows)
and validation rows are the same for both methods -- the ``split_fingerprint``,
``mask_fingerprint`` and ``validation_fingerprint`` columns of results.csv, e.g. every
repetition of an official train/test split with all labels -- differ at most by the
methods' seeds: they count as one observation (their mean). With fewer than two
observations (or pairs) the p-values are n/a and the note says why; when every difference
is zero both p-values are 1 (scipy's tests are undefined there) and the note says so; when
every difference is the same non-zero value (to 1e-8 of the values), the t-test is n/a (no spread:
its statistic is infinite) and only the Wilcoxon p-value is given, with a note.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mlx.axes import AXES, SWEEP_AXES, axis, setting_columns
from mlx.errors import ConfigError, UnknownNameError

__all__ = ["PairedRow", "PairedComparison", "parse_pair", "paired_pvalues", "draw_pvalues",
           "draw_of",
           "paired_comparison", "render_paired_markdown", "render_paired_csv", "write_paired"]

CSV_COLUMNS = ["dataset", *(a.column for a in SWEEP_AXES), "metric", "label_a", "label_b",
               "params_a", "params_b", "repetitions_a", "repetitions_b", "pairs", "draws",
               "mean_a", "mean_b", "mean_diff", "t_pvalue", "wilcoxon_pvalue", "note"]
# What a repetition drew, besides the method's own seed (results.csv columns).
DRAW_COLUMNS = ("split_fingerprint", "mask_fingerprint", "validation_fingerprint")
NA = "n/a"
ALL_ZERO = "all differences zero: p = 1"


@dataclass
class PairedRow:
    """One setting: A and B paired over their common repetitions."""

    dataset: str
    metric: str
    axes: dict                # results.csv column -> value of each numeric setting axis
    params_a: str
    params_b: str
    repetitions_a: int
    repetitions_b: int
    pairs: int
    draws: int                # distinct (split, label mask, validation rows) among the pairs
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    t_pvalue: float | None
    wilcoxon_pvalue: float | None
    note: str

    @property
    def rank_ratio(self) -> float | None:
        return self.axes.get("rank_ratio")

    @property
    def observed_ratio(self) -> float | None:
        return self.axes.get("observed_ratio")


@dataclass
class PairedComparison:
    a: str
    b: str
    source: str
    rows: list = field(default_factory=list)


def parse_pair(text: str) -> tuple[str, str]:
    """``"LSVV,SRM-VV"`` -> ``("LSVV", "SRM-VV")``; anything else is a one-line ConfigError."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ConfigError(None, "--paired", f"needs two different method labels separated by "
                                            f"a comma, e.g. --paired LSVV,SRM-VV. Got "
                                            f"{text!r} instead.")
    return parts[0], parts[1]


def paired_pvalues(a, b) -> tuple[float | None, float | None, str]:
    """(t-test p, Wilcoxon p, note) for paired samples ``a`` and ``b`` (equal length)."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2:
        return None, None, f"{NA}: fewer than 2 pairs"
    d = a - b
    if np.all(d == 0):
        return 1.0, 1.0, ALL_ZERO
    with warnings.catch_warnings():   # small samples and ties: scipy warns, still answers
        warnings.simplefilter("ignore")
        w = float(stats.wilcoxon(a, b).pvalue)
        if _equal_differences(d, np.concatenate([a, b])):
            return None, (None if math.isnan(w) else w), _equal_note(d)
        t = float(stats.ttest_rel(a, b).pvalue)
    return (None if math.isnan(t) else t), (None if math.isnan(w) else w), ""


def _equal_differences(d: np.ndarray, values: np.ndarray) -> bool:
    """Every difference the same to the precision the values carry (1e-8 of their largest
    magnitude: results.csv keeps 10 significant digits, and a metric such as a Hamming loss
    comes in steps of one test entry, so one step on every split gives equal differences).

    The t statistic divides by the differences' spread: with none, it is infinite or
    rounding noise, and its p-value (``0``, or ``1e-6`` from 2 pairs) would claim a certainty
    that the pairs cannot give.
    """
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(values))):
        return False
    return bool(np.ptp(d) <= 1e-8 * np.max(np.abs(values)))


def _equal_note(d: np.ndarray) -> str:
    return (f"t-test {NA}: every difference is {d[0]:+.4g} (no spread, the t statistic is "
            f"undefined); Wilcoxon only")


def _keys() -> list[str]:
    """The columns that tell settings apart, besides the label (from :mod:`mlx.axes`)."""
    return [c for c in setting_columns() if c != "label"]


def draw_of(row) -> tuple | None:
    """What a repetition drew: its split, label mask/labelled rows and validation rows.

    None when the results.csv does not record them (each repetition then counts as its own
    draw)."""
    fps = [row.get(c) for c in DRAW_COLUMNS]
    if all(_missing(v) for v in fps):
        return None
    return tuple("" if _missing(v) else str(v) for v in fps)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _settings(ok: pd.DataFrame, label: str) -> dict:
    """Setting key -> {repetition: (mean value, draw)} of one label."""
    out: dict = {}
    rows = ok[ok["label"] == label]
    for key, group in rows.groupby(["metric", *_keys()], sort=False, dropna=False):
        reps = {}
        for rep, g in group.groupby("repetition"):
            reps[rep] = (float(g["value"].mean()), draw_of(g.iloc[0]))
        out[key] = reps
    return out


def _match(x, y) -> bool:
    """Two values of one axis match when equal, or when one side has none (a method
    without a rank pairs with every k/L and k of the other, as in the paper tables)."""
    if isinstance(x, float) and isinstance(y, float):
        return math.isnan(x) or math.isnan(y) or x == y
    return x == y


def _swept(ok: pd.DataFrame, label: str) -> dict:
    """Parameter name -> its values, for the parameters taking several values in ``label``'s
    rows (its grid)."""
    values: dict = {}
    for text in ok.loc[ok["label"] == label, "params"].unique():
        for k, v in _decoded(text).items():
            values.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return {k: v for k, v in values.items() if len(v) > 1}


def _decoded(text: str) -> dict:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _same_shared(pa: str, pb: str, shared: set) -> bool:
    """A's and B's parameters agree on every parameter both sweep."""
    da, db = _decoded(pa), _decoded(pb)
    return all(json.dumps(da.get(k), sort_keys=True) == json.dumps(db.get(k), sort_keys=True)
               for k in shared)


def paired_comparison(frame: pd.DataFrame, a: str, b: str, *,
                      source: str = "results") -> PairedComparison:
    """Pair methods labelled ``a`` and ``b`` of ``frame`` (rows of a results.csv)."""
    f = frame.copy()
    keys = _keys()
    for ax in AXES:
        if ax.column not in f:
            f[ax.column] = ax.default
    for col in ("label", "params", "dataset", "metric", "split", "status"):
        f[col] = f[col].fillna("").astype(str)
    labels = [label for label in dict.fromkeys(f["label"]) if label]
    for name in (a, b):
        if name not in labels:
            raise UnknownNameError("method label", name, labels, source=source,
                                   key_path="--paired")
    numeric = [ax.column for ax in AXES if ax.numeric]
    for col in ("value", *numeric):
        f[col] = pd.to_numeric(f[col], errors="coerce").astype(float)
    for col in DRAW_COLUMNS:
        if col not in f:
            f[col] = None
    ok = f[(f["status"] == "ok") & (f["split"] == "test") & (f["metric"] != "")
           & f["value"].notna() & f["repetition"].notna()]
    ok = ok.assign(**{c: ok[c].round(9) for c in numeric if c != "repetition"})
    sa, sb = _settings(ok, a), _settings(ok, b)
    shared = set(_swept(ok, a)) & set(_swept(ok, b))
    rows = []
    at = keys.index("params") + 1          # A's and B's parameters differ: shown, not matched
    for ka, reps_a in sa.items():
        for kb, reps_b in sb.items():
            if not all(_match(x, y) for i, (x, y) in enumerate(zip(ka, kb)) if i != at):
                continue
            if not _same_shared(ka[at], kb[at], shared):     # never across a shared grid
                continue
            setting = {c: (y if isinstance(x, float) and math.isnan(x) else x)
                       for c, x, y in zip(["metric", *keys], ka, kb)}
            rows.append(_row(setting, ka[at], kb[at], reps_a, reps_b, a, b))
    datasets = {d: i for i, d in enumerate(dict.fromkeys(ok["dataset"]))}
    metrics = {m: i for i, m in enumerate(dict.fromkeys(ok["metric"]))}
    shown = [c for c in numeric if c != "repetition"]

    def order(r: PairedRow):
        nums = [(r.axes.get(c) is None, r.axes.get(c) or 0.0)
                for c in ("observed_ratio", "labelled_ratio", "rank_ratio", "rank")
                if c in shown]
        return (datasets[r.dataset], metrics[r.metric], *nums, r.params_a, r.params_b)

    return PairedComparison(a, b, source, sorted(rows, key=order))


def _row(setting: dict, pa, pb, reps_a: dict, reps_b: dict, a: str, b: str) -> PairedRow:
    common = sorted(set(reps_a) & set(reps_b))
    xa = [reps_a[r][0] for r in common]
    xb = [reps_b[r][0] for r in common]
    notes = []
    if len(common) < max(len(reps_a), len(reps_b)):
        what = "no common repetitions" if not common else \
            f"paired on the {len(common)} common repetitions"
        notes.append(f"{what} ({a}: {len(reps_a)}, {b}: {len(reps_b)})")
    t = w = None
    mean_a = mean_b = diff = None
    draws = len(common)
    if common:
        mean_a, mean_b = float(np.mean(xa)), float(np.mean(xb))
        diff = float(np.mean(np.subtract(xa, xb)))
        t, w, draws, more = draw_pvalues(xa, xb, [(reps_a[r][1], reps_b[r][1]) for r in common])
        notes += more
    return PairedRow(setting["dataset"], setting["metric"],
                     {c: _none(setting[c]) for c in setting if c not in
                      ("dataset", "metric", "params")},
                     pa, pb, len(reps_a), len(reps_b), len(common), draws, mean_a, mean_b,
                     diff, t, w, "; ".join(notes))


def draw_pvalues(xa, xb, draws) -> tuple[float | None, float | None, int, list]:
    """(t-test p, Wilcoxon p, number of distinct draws, notes) of paired samples, counting
    pairs of one draw once.

    ``draws[i]`` is what pair ``i`` drew -- ``(draw of A, draw of B)`` as :func:`draw_of`
    gives them, None where unknown (the pair counts as its own draw). Repetitions that drew
    the same split, label mask and validation rows for both methods are one observation
    (their mean), not several: they differ at most by the methods' seeds, which says
    nothing about the data. With fewer than 2 observations both p-values are None.
    """
    observations: dict = {}
    for i, (x, y, d) in enumerate(zip(xa, xb, draws)):
        key = ("pair", i) if d is None or None in d else d
        observations.setdefault(key, []).append((x, y))
    n = len(observations)
    notes = []
    if n == len(xa):
        t, w, note = paired_pvalues(xa, xb)
        return t, w, n, [note] if note else []
    ya = [float(np.mean([x for x, _ in v])) for v in observations.values()]
    yb = [float(np.mean([y for _, y in v])) for v in observations.values()]
    if n < 2:
        return None, None, n, [f"{NA}: the {len(xa)} repetitions are one draw (same split, "
                               f"label mask and validation rows): one observation, no test"]
    notes.append(f"the {len(xa)} repetitions are {n} distinct draws (same split, label mask "
                 f"and validation rows): tested on {n}")
    t, w, note = paired_pvalues(ya, yb)
    return t, w, n, notes + ([note] if note else [])


def _none(v):
    return None if isinstance(v, float) and math.isnan(v) else v


# ----------------------------------------------------------------------------- output
def _fmt(v: float | None, spec: str) -> str:
    if v is None:
        return NA
    text = format(v, spec)
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def _axis_text(r: PairedRow, column: str) -> str:
    v = r.axes.get(column)
    if v is None or (column == "rank" and r.axes.get("rank_ratio") is not None):
        return ""          # k is shown for absolute ranks only (else it follows from k/L)
    return axis(column).fmt(v)


def _default_text(ax) -> str:
    return "" if ax.default is None else ax.fmt(ax.default)


def _params(text: str) -> str:
    import json

    try:
        params = json.loads(text)
    except (TypeError, ValueError):
        return text
    if not isinstance(params, dict):
        return text
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def render_paired_markdown(cmp: PairedComparison, *, heading_level: int = 2) -> str:
    """The comparison as a Markdown section (heading, table, legend)."""
    a, b = cmp.a, cmp.b
    lines = [f"{'#' * heading_level} Paired comparison: {a} vs {b} (test split)", ""]
    if not cmp.rows:
        axes = ", ".join(ax.title for ax in AXES if ax.role == "setting" and ax.name != "label")
        lines += [f"No setting ({axes}, metric) has test results of both "
                  f"{a} and {b} in {cmp.source}.", ""]
        return "\n".join(lines)
    shown = [ax for ax in SWEEP_AXES
             if any(_axis_text(r, ax.column) not in ("", _default_text(ax)) for r in cmp.rows)]
    show_pa = len({r.params_a for r in cmp.rows}) > 1
    show_pb = len({r.params_b for r in cmp.rows}) > 1
    heads = (["dataset"] + [ax.title for ax in shown]
             + ["metric"] + ([f"{a} params"] if show_pa else [])
             + ([f"{b} params"] if show_pb else [])
             + ["pairs", a, b, f"mean diff ({a} − {b})", "t-test p", "Wilcoxon p", "note"])
    left = 1 + len(shown) + 1 + show_pa + show_pb
    lines.append("| " + " | ".join(heads) + " |")
    lines.append("|" + "|".join(["---"] * left + ["---:"] * 6 + ["---"]) + "|")
    for r in cmp.rows:
        cells = ([r.dataset] + [_axis_text(r, ax.column) for ax in shown] + [r.metric]
                 + ([_params(r.params_a)] if show_pa else [])
                 + ([_params(r.params_b)] if show_pb else [])
                 + [str(r.pairs), _fmt(r.mean_a, ".4f"), _fmt(r.mean_b, ".4f"),
                    _fmt(r.mean_diff, "+.4f"), _fmt(r.t_pvalue, ".3g"),
                    _fmt(r.wilcoxon_pvalue, ".3g"), r.note])
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Pairs: repetitions (same split and label mask) where both {a} and {b} have "
                  f"a test result; means over those repetitions, on the results.csv scale. "
                  f"Repetitions that drew the same split, label mask and validation rows "
                  f"(results.csv fingerprints) are one observation: with fewer than 2 distinct "
                  f"draws there is no test. "
                  f"p-values: two-sided paired t-test (scipy.stats.ttest_rel) and Wilcoxon "
                  f"signed-rank test (scipy.stats.wilcoxon); {NA} with fewer than 2 pairs, 1 "
                  f"when every difference is zero.", ""]
    return "\n".join(lines)


def render_paired_csv(cmp: PairedComparison) -> str:
    rows = [{"dataset": r.dataset, **{ax.column: r.axes.get(ax.column) for ax in SWEEP_AXES},
             "metric": r.metric, "label_a": cmp.a, "label_b": cmp.b, "params_a": r.params_a,
             "params_b": r.params_b, "repetitions_a": r.repetitions_a,
             "repetitions_b": r.repetitions_b, "pairs": r.pairs, "draws": r.draws,
             "mean_a": r.mean_a,
             "mean_b": r.mean_b, "mean_diff": r.mean_diff, "t_pvalue": r.t_pvalue,
             "wilcoxon_pvalue": r.wilcoxon_pvalue, "note": r.note} for r in cmp.rows]
    return pd.DataFrame(rows, columns=CSV_COLUMNS).to_csv(index=False, float_format="%.10g",
                                                          lineterminator="\n")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text)


def write_paired(cmp: PairedComparison, out_dir) -> dict:
    """Write ``paired-A-vs-B.md`` and ``.csv`` to ``out_dir``; returns the Markdown and paths."""
    from mlx.io import atomic_write_text

    stem = f"paired-{_slug(cmp.a)}-vs-{_slug(cmp.b)}"
    paths = {"md": Path(out_dir) / f"{stem}.md", "csv": Path(out_dir) / f"{stem}.csv"}
    md = render_paired_markdown(cmp)
    atomic_write_text(paths["md"], md)
    atomic_write_text(paths["csv"], render_paired_csv(cmp))
    return {"markdown": md, "paths": paths}
