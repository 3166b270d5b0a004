"""``mlx compare``: properties the older tests left open (found by mutation testing)."""

import json

import pandas as pd
import pytest

from mlx.errors import ConfigError
from mlx.runner.results import COLUMNS
from mlx.tables.compare import auto_series, compare_spec


def row(label, method, loss, rank_ratio, metric, value, *, observed=1.0, rep=0,
        dataset="bibtex", labelled=None, rank=None):
    return dict(run_id="r1", cell_id=f"{label}-{rank_ratio}-{observed}-{rep}", experiment="t",
                dataset=dataset, method=method, label=label,
                params=json.dumps({"loss": loss} if loss else {}), rank_ratio=rank_ratio,
                observed_ratio=observed, labelled_ratio=labelled, rank=rank, repetition=rep,
                split="test", metric=metric, value=value, status="ok", message="",
                fit_seconds=2.0)


def test_rows_without_a_label_do_not_stop_the_matching():
    frame = pd.DataFrame([row("", "leml", "squared", 0.2, "p@1", 0.5),
                          row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6)], columns=COLUMNS)
    series, unmatched = auto_series(frame, "leml")
    assert [(s.name, s.paper) for s in series] == [("LEML-SQ", {"method": "LEML", "loss": "SQ"})]
    assert unmatched == []


def test_a_label_the_paper_does_not_name_is_matched_by_method_and_published_loss_only():
    frame = pd.DataFrame([
        row("run-a", "wsabie", None, 0.2, "p@1", 0.5),          # WSABIE: one loss, none given
        row("run-b", "wsabie", "squared", 0.2, "p@1", 0.5),     # a loss WSABIE is not shown with
        row("run-c", "leml", "logistic", 0.2, "p@1", 0.5),
        row("run-d", "leml", None, 0.2, "p@1", 0.5),            # LEML has three losses
    ], columns=COLUMNS)
    series, unmatched = auto_series(frame, "leml")
    assert [(s.name, s.paper) for s in series] == [
        ("run-a", {"method": "WSABIE"}), ("run-c", {"method": "LEML", "loss": "LR"})]
    assert unmatched == ["run-b", "run-d"]


def test_a_dataset_missing_from_two_chosen_tables_names_both():
    frame = pd.DataFrame([row("LEML-SQ", "leml", "squared", 0.2, "p@1", 0.6,
                              dataset="delicious")], columns=COLUMNS)
    with pytest.raises(ConfigError) as exc:
        compare_spec(frame, "leml", tables=["5", "11"], source="res")
    assert str(exc.value) == ("res: the leml paper has no rows for dataset 'delicious' "
                              "in tables 5, 11 (it reports: bibtex, autofood, compphys); "
                              "nothing to compare")
