"""benchmarks/benchmark_multilabel.py: the benchmark page from results.csv files."""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import yaml

from mlx.ranks import average_ranks, critical_difference

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "benchmark_multilabel.py"

COLUMNS = ["run_id", "cell_id", "dataset", "method", "label", "candidate", "metric", "value",
           "status", "message", "fit_seconds"]


def _module():
    spec = importlib.util.spec_from_file_location("benchmark_multilabel", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, dataset: str, p1: dict, labels=("A", "B", "C", "D")):
    d = root / dataset
    d.mkdir(parents=True)
    with open(d / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for label, values in p1.items():
            for rep, v in enumerate(values):
                cell = f"{label}-{rep}"
                for metric, value in (("p@1", v), ("auc", 0.5)):
                    w.writerow({"run_id": "r", "cell_id": cell, "dataset": dataset,
                                "method": label.lower(), "label": label, "candidate": "",
                                "metric": metric, "value": value, "status": "ok",
                                "message": "", "fit_seconds": 2.0})
                # a selection candidate's row is not a test result
                w.writerow({"run_id": "r", "cell_id": cell, "dataset": dataset,
                            "method": label.lower(), "label": label, "candidate": "1",
                            "metric": "p@1", "value": 0.0, "status": "ok", "message": "",
                            "fit_seconds": 1.0})
    config = {"dataset": dataset, "methods": [{"name": lab.lower(), "label": lab}
                                              for lab in labels]}
    (d / "config.resolved.yaml").write_text(yaml.safe_dump(config))


def test_page_ranks_complete_methods_and_lists_the_missing(tmp_path):
    res = tmp_path / "results"
    _write(res, "s1", {"A": [0.5, 0.7], "B": [0.4], "C": [0.1]})
    _write(res, "s2", {"A": [0.3], "B": [0.35], "C": [0.2]})
    _write(res, "s3", {"A": [0.9], "B": [0.2], "C": [0.3]})
    out = tmp_path / "docs" / "BENCHMARK.md"
    out.parent.mkdir()
    text = _module().render(res, out, tmp_path / "docs" / "figures")
    assert out.read_text() == text
    scores = np.array([[0.6, 0.4, 0.1], [0.3, 0.35, 0.2], [0.9, 0.2, 0.3]])
    ranks = average_ranks(scores)
    assert "Ranked: A, B, C on 3 data sets; not ranked (no P@1 on every set): D." in text
    assert f"| A | {ranks[0]:.2f} | {scores[:, 0].mean():.4f} | 8.0 |" in text
    assert f"CD = {critical_difference(3, 3):.2f} (k = 3, N = 3)" in text
    assert "| A | 2 | 0.6000 | — | — | — | 0.5000 | — | 2.0 |" in text
    assert "* D: no result: not run yet, or every cell failed (see the run's output)" in text
    assert "![CD diagram](figures/benchmark-cd-p1.svg)" in text
    assert (tmp_path / "docs" / "figures" / "benchmark-time-p1.svg").is_file()
