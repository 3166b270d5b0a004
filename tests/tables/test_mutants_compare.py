"""``mlx compare``: properties the older tests left open (found by mutation testing)."""

import json

import pandas as pd

from mlx.runner.results import COLUMNS
from mlx.tables.compare import auto_series


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
