"""Paired significance tests between two methods of one results.csv.

``mlx table RESULTS --paired A,B`` (and ``mlx compare ... --paired A,B``) compares the
methods labelled A and B setting by setting: for every (dataset, metric, k/L, observed
ratio) where both have test results, their values are paired by ``repetition`` (a
repetition index fixes the split and the label mask, whatever the method), and the
table reports the number of pairs, both means over the paired repetitions, the mean
difference A - B, the two-sided paired t-test p-value (:func:`scipy.stats.ttest_rel`)
and the Wilcoxon signed-rank p-value (:func:`scipy.stats.wilcoxon`).

Only ``split == "test"`` rows with status ``ok`` are read; ``validation`` rows (selection
candidates) never are. A method without a rank (k/L empty, e.g. binary relevance) is
paired with every k/L of the other, as in the paper tables. Repetitions that only one
method has are left out, and the note says how many each had. With fewer than two pairs
the p-values are n/a; when every difference is zero both p-values are 1 (scipy's tests
are undefined there) and the note says so.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mlx.errors import ConfigError, UnknownNameError

__all__ = ["PairedRow", "PairedComparison", "parse_pair", "paired_pvalues",
           "paired_comparison", "render_paired_markdown", "render_paired_csv", "write_paired"]

CSV_COLUMNS = ["dataset", "rank_ratio", "observed_ratio", "metric", "label_a", "label_b",
               "params_a", "params_b", "repetitions_a", "repetitions_b", "pairs", "mean_a",
               "mean_b", "mean_diff", "t_pvalue", "wilcoxon_pvalue", "note"]
NA = "n/a"
ALL_ZERO = "all differences zero: p = 1"


@dataclass
class PairedRow:
    """One setting: A and B paired over their common repetitions."""

    dataset: str
    metric: str
    rank_ratio: float | None
    observed_ratio: float | None
    params_a: str
    params_b: str
    repetitions_a: int
    repetitions_b: int
    pairs: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    t_pvalue: float | None
    wilcoxon_pvalue: float | None
    note: str


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
    if np.all(a - b == 0):
        return 1.0, 1.0, ALL_ZERO
    with warnings.catch_warnings():   # small samples and ties: scipy warns, still answers
        warnings.simplefilter("ignore")
        t = float(stats.ttest_rel(a, b).pvalue)
        w = float(stats.wilcoxon(a, b).pvalue)
    return (None if math.isnan(t) else t), (None if math.isnan(w) else w), ""


def _settings(ok: pd.DataFrame, label: str) -> dict:
    """(dataset, metric, observed, k/L, params) -> {repetition: mean value} of one label."""
    out: dict = {}
    rows = ok[ok["label"] == label]
    for key, group in rows.groupby(["dataset", "metric", "_obs", "_rr", "params"],
                                   sort=False, dropna=False):
        out[key] = group.groupby("repetition")["value"].mean().to_dict()
    return out


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


def paired_comparison(frame: pd.DataFrame, a: str, b: str, *,
                      source: str = "results") -> PairedComparison:
    """Pair methods labelled ``a`` and ``b`` of ``frame`` (rows of a results.csv)."""
    f = frame.copy()
    for col in ("label", "params", "dataset", "metric", "split", "status"):
        f[col] = f[col].fillna("").astype(str)
    labels = [label for label in dict.fromkeys(f["label"]) if label]
    for name in (a, b):
        if name not in labels:
            raise UnknownNameError("method label", name, labels, source=source,
                                   key_path="--paired")
    for col in ("rank_ratio", "observed_ratio", "value", "repetition"):
        f[col] = pd.to_numeric(f[col], errors="coerce")
    ok = f[(f["status"] == "ok") & (f["split"] == "test") & (f["metric"] != "")
           & f["value"].notna() & f["repetition"].notna()]
    ok = ok.assign(_rr=ok["rank_ratio"].round(9), _obs=ok["observed_ratio"].round(9))
    sa, sb = _settings(ok, a), _settings(ok, b)
    rows = []
    for (dataset, metric, obs, rr, pa), reps_a in sa.items():
        for (d2, m2, obs2, rr2, pb), reps_b in sb.items():
            if (d2, m2) != (dataset, metric) or not _same(obs, obs2):
                continue
            if not (math.isnan(rr) or math.isnan(rr2) or rr == rr2):
                continue   # a method without a rank pairs with every k/L of the other
            rows.append(_row(dataset, metric, rr2 if math.isnan(rr) else rr, obs, pa, pb,
                             reps_a, reps_b, a, b))
    datasets = {d: i for i, d in enumerate(dict.fromkeys(ok["dataset"]))}
    metrics = {m: i for i, m in enumerate(dict.fromkeys(ok["metric"]))}

    def order(r: PairedRow):
        nums = [(v is None, v or 0.0) for v in (r.observed_ratio, r.rank_ratio)]
        return (datasets[r.dataset], metrics[r.metric], *nums, r.params_a, r.params_b)

    return PairedComparison(a, b, source, sorted(rows, key=order))


def _row(dataset, metric, rr, obs, pa, pb, reps_a: dict, reps_b: dict, a: str, b: str
         ) -> PairedRow:
    common = sorted(set(reps_a) & set(reps_b))
    xa = [reps_a[r] for r in common]
    xb = [reps_b[r] for r in common]
    notes = []
    if len(common) < max(len(reps_a), len(reps_b)):
        what = "no common repetitions" if not common else \
            f"paired on the {len(common)} common repetitions"
        notes.append(f"{what} ({a}: {len(reps_a)}, {b}: {len(reps_b)})")
    t = w = None
    mean_a = mean_b = diff = None
    if common:
        mean_a, mean_b = float(np.mean(xa)), float(np.mean(xb))
        diff = float(np.mean(np.subtract(xa, xb)))
        t, w, note = paired_pvalues(xa, xb)
        if note:
            notes.append(note)
    return PairedRow(dataset, metric, None if math.isnan(rr) else float(rr),
                     None if math.isnan(obs) else float(obs), pa, pb, len(reps_a), len(reps_b),
                     len(common), mean_a, mean_b, diff, t, w, "; ".join(notes))


# ----------------------------------------------------------------------------- output
def _fmt(v: float | None, spec: str) -> str:
    if v is None:
        return NA
    text = format(v, spec)
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def _pct(v: float | None) -> str:
    return "" if v is None else f"{v * 100:g}%"


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
        lines += [f"No setting (dataset, metric, k/L, observed ratio) has test results of both "
                  f"{a} and {b} in {cmp.source}.", ""]
        return "\n".join(lines)
    show_rr = any(r.rank_ratio is not None for r in cmp.rows)
    show_obs = any(r.observed_ratio not in (None, 1.0) for r in cmp.rows)
    show_pa = len({r.params_a for r in cmp.rows}) > 1
    show_pb = len({r.params_b for r in cmp.rows}) > 1
    heads = (["dataset"] + (["k/L"] if show_rr else []) + (["observed"] if show_obs else [])
             + ["metric"] + ([f"{a} params"] if show_pa else [])
             + ([f"{b} params"] if show_pb else [])
             + ["pairs", a, b, f"mean diff ({a} − {b})", "t-test p", "Wilcoxon p", "note"])
    left = 1 + show_rr + show_obs + 1 + show_pa + show_pb
    lines.append("| " + " | ".join(heads) + " |")
    lines.append("|" + "|".join(["---"] * left + ["---:"] * 6 + ["---"]) + "|")
    for r in cmp.rows:
        cells = ([r.dataset] + ([_pct(r.rank_ratio)] if show_rr else [])
                 + ([_pct(r.observed_ratio)] if show_obs else []) + [r.metric]
                 + ([_params(r.params_a)] if show_pa else [])
                 + ([_params(r.params_b)] if show_pb else [])
                 + [str(r.pairs), _fmt(r.mean_a, ".4f"), _fmt(r.mean_b, ".4f"),
                    _fmt(r.mean_diff, "+.4f"), _fmt(r.t_pvalue, ".3g"),
                    _fmt(r.wilcoxon_pvalue, ".3g"), r.note])
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Pairs: repetitions (same split and label mask) where both {a} and {b} have "
                  f"a test result; means over those repetitions, on the results.csv scale. "
                  f"p-values: two-sided paired t-test (scipy.stats.ttest_rel) and Wilcoxon "
                  f"signed-rank test (scipy.stats.wilcoxon); {NA} with fewer than 2 pairs, 1 "
                  f"when every difference is zero.", ""]
    return "\n".join(lines)


def render_paired_csv(cmp: PairedComparison) -> str:
    rows = [{"dataset": r.dataset, "rank_ratio": r.rank_ratio, "observed_ratio": r.observed_ratio,
             "metric": r.metric, "label_a": cmp.a, "label_b": cmp.b, "params_a": r.params_a,
             "params_b": r.params_b, "repetitions_a": r.repetitions_a,
             "repetitions_b": r.repetitions_b, "pairs": r.pairs, "mean_a": r.mean_a,
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
