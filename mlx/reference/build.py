"""Rebuild ``published.csv`` and ``datasets.csv`` from the transcriptions in ``transcribed/``.

Run ``python -m mlx.reference.build`` after editing a file in ``transcribed/``; a test
checks that the shipped CSVs equal what this script produces. See ``README.md`` in this
folder for the columns, units and transcription notes.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "transcribed"

PUBLISHED_COLUMNS = ["paper", "table", "dataset", "method", "loss", "variant", "k_over_L", "k",
                     "observed", "metric", "value", "std", "unit", "scale", "paper_metric",
                     "note"]
DATASET_COLUMNS = ["paper", "table", "dataset", "n_train", "n_test", "n", "d", "L",
                   "avg_features_train", "avg_labels_train", "avg_features_test",
                   "avg_labels_test", "note"]

# LEML metric names -> (mlx metric, unit, scale): value / scale is on the results.csv scale.
LEML_METRICS = {"top1": ("p@1", "%", 100), "top3": ("p@3", "%", 100), "top5": ("p@5", "%", 100),
                "hamming": ("hamming", "fraction", 1), "auc": ("auc", "fraction", 1)}
LSVV_METRICS = {"error_pct": ("error", "%", 100), "hamming_pct": ("hamming", "%", 100),
                "rmse_x100": ("rmse", "x100", 100)}


def _read(name: str) -> list[dict]:
    with open(SRC / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _ratio(percent: str) -> str:
    """'20' (percent, as printed) -> '0.2' (a fraction, as in results.csv)."""
    return f"{int(percent) / 100:g}"


def _pm(text: str) -> tuple[str, str]:
    """'29.78±6.21' -> ('29.78', '6.21')."""
    mean, std = text.split("±")
    return mean.strip(), std.strip()


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(days?|h|min|s)")
_SECONDS = {"day": 86400, "days": 86400, "h": 3600, "min": 60, "s": 1}


def duration_seconds(text: str) -> tuple[str, str]:
    """MoM Table 3 times ('3h40min', '160s', '>2 days') -> (seconds, note)."""
    parts = _DURATION.findall(text)
    if not parts:
        raise ValueError(f"cannot read duration {text!r}")
    seconds = sum(float(n) * _SECONDS[u] for n, u in parts)
    note = f"lower bound (printed '{text}')" if text.strip().startswith(">") else ""
    return f"{seconds:g}", note


def _row(**kw) -> dict:
    return {c: kw.get(c, "") for c in PUBLISHED_COLUMNS}


def leml_rows() -> list[dict]:
    rows = []
    for name in ("leml-table3.csv", "leml-table5.csv", "leml-full-labels.csv",
                 "leml-missing-labels.csv"):
        for r in _read(name):
            metric, unit, scale = LEML_METRICS[r["metric"]]
            note = ""
            if r["table"] == "5" and r["method"] == "BCS" and r["metric"] == "auc" \
                    and r["dataset"] == "bibtex":
                note = "Table 15 prints 0.7817 for the same setting"
            if r["table"] == "15" and r["method"] == "BCS" and r["dataset"] == "bibtex" \
                    and r["k_over_L"] == "40" and r["observed"] == "20":
                note = "Table 5 prints 0.7871 for the same setting"
            if r["method"] == "BR" and int(r["table"]) >= 11:
                note = "BR has no rank; the paper repeats its value for every k/L"
            rows.append(_row(paper="leml", table=r["table"], dataset=r["dataset"],
                             method=r["method"], loss=r["loss"], k_over_L=_ratio(r["k_over_L"]),
                             observed=_ratio(r["observed"]), metric=metric, value=r["value"],
                             unit=unit, scale=scale, paper_metric=r["metric"], note=note))
    for r in _read("leml-large-datasets.csv"):
        loss = "SQ" if r["method"] == "LEML" else "WAR"
        note = ("5 alternating iterations" if r["method"] == "LEML"
                else "epoch with the highest AUC in about two days")
        base = dict(paper="leml", table=r["table"], dataset=r["dataset"], method=r["method"],
                    loss=loss, k=r["k"], observed="1")
        rows.append(_row(**base, metric="fit_seconds", value=r["time_s"], unit="s", scale=1,
                         paper_metric="time (s)", note=note + "; 32-core machine"))
        for col in ("top1", "top3", "auc"):
            metric, unit, scale = LEML_METRICS[col]
            rows.append(_row(**base, metric=metric, value=r[col], unit=unit, scale=scale,
                             paper_metric=col, note=note))
    return rows


def mom_rows() -> list[dict]:
    rows = []
    for r in _read("mom-training-time.csv"):
        for method, col in (("LEML", "leml_time"), ("MoM", "mom_time")):
            seconds, note = duration_seconds(r[col])
            if method == "LEML" and r["note"]:
                note = "; ".join(n for n in (note, r["note"]) if n)
            rows.append(_row(paper="mom", table="3", dataset=r["dataset"], method=method,
                             loss="SQ" if method == "LEML" else "", observed="1",
                             metric="fit_seconds", value=seconds, unit="s", scale=1,
                             paper_metric=f"training time (printed '{r[col]}')", note=note))
        rows.append(_row(paper="mom", table="3", dataset=r["dataset"], method="MoM",
                         observed="1", metric="speedup", value=r["speedup"], unit="ratio",
                         scale=1, paper_metric="speed-up (x)",
                         note="LEML time / MoM time, as printed"))
    return rows


def lsvv_rows() -> list[dict]:
    rows = []
    for name, table, note in (
            ("lsvv-multiclass-table5.csv", "5",
             "30 random 70/30 splits, 10% of the training part labelled"),
            ("lsvv-multilabel-table7.csv", "7",
             "30 random 70/30 splits, 50% of the training labels missing")):
        for r in _read(name):
            metric, unit, scale = LSVV_METRICS[r["metric"]]
            for method in ("SRM-VV", "SS-VV", "LRC-VV", "LSVV"):
                mean, std = _pm(r[method])
                extra = "; printed as Linear-VV" if method == "SRM-VV" else ""
                rows.append(_row(paper="lsvv", table=table, dataset=r["dataset"], method=method,
                                 variant=r["space"], metric=metric, value=mean, std=std,
                                 unit=unit, scale=scale, paper_metric=r["metric"],
                                 note=note + extra))
    return rows


def similarity_rows() -> list[dict]:
    rows = []
    for r in _read("similarity-landmarking-table1.csv"):
        note = f"{r['landmarks']} landmarks, 5 random splits"
        for method, mean, std in (("KR", r["KR_mean"], r["KR_std"]),
                                  (r["landmark_method"], r["Landmark_mean"], r["Landmark_std"])):
            rows.append(_row(paper="similarity", table="1", dataset=r["dataset"], method=method,
                             variant=r["kernel"], metric=r["metric"], value=f"{float(mean):g}",
                             std=f"{float(std):g}", unit="as printed", scale=1,
                             paper_metric=r["metric"], note=note))
    return rows


def dataset_rows() -> list[dict]:
    rows = []
    for r in _read("leml-dataset-stats.csv"):
        rows.append({"paper": "leml", "table": "2", "dataset": r["dataset"],
                     "n_train": r["n_train"], "n_test": r["n_test"], "d": r["d"], "L": r["L"],
                     "avg_features_train": r["avg_features_train"],
                     "avg_labels_train": r["avg_labels_train"],
                     "avg_features_test": r["avg_features_test"],
                     "avg_labels_test": r["avg_labels_test"]})
    for r in _read("mom-training-time.csv"):
        rows.append({"paper": "mom", "table": "1", "dataset": r["dataset"],
                     "n_train": r["n_train"], "n_test": r["n_test"], "d": r["d"], "L": r["L"]})
    for r in _read("similarity-landmarking-table1.csv"):
        if r["kernel"] != "sigmoid":  # N and d are printed once per dataset
            continue
        rows.append({"paper": "similarity", "table": "1", "dataset": r["dataset"], "n": r["N"],
                     "d": r["d"], "note": f"source: {r['source']}; task: {r['task']}"})
    return [{c: row.get(c, "") for c in DATASET_COLUMNS} for row in rows]


def _csv(rows: list[dict], columns: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def build() -> dict[str, str]:
    """The text of ``published.csv`` and ``datasets.csv``."""
    published = leml_rows() + mom_rows() + lsvv_rows() + similarity_rows()
    return {"published.csv": _csv(published, PUBLISHED_COLUMNS),
            "datasets.csv": _csv(dataset_rows(), DATASET_COLUMNS)}


def main() -> None:
    for name, text in build().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"{HERE / name}: {text.count(chr(10)) - 1} rows")


if __name__ == "__main__":
    main()
