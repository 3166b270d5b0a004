"""The published numbers and the papers' names: properties the older tests left open (found
by mutation testing)."""

import csv
import math
from importlib.resources import files

import pytest

from mlx.tables.published import PAPER_NAMES, paper_name, papers, published

TEXT = ("paper", "table", "dataset", "method", "loss", "variant", "metric", "unit",
        "paper_metric", "note")
NUMBERS = ("k_over_L", "k", "observed", "value", "std", "scale")


def _raw_rows():
    with (files("mlx.reference") / "published.csv").open("r", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_every_value_is_read_as_written():
    """Text columns stay text (tables "3" and "10", empty loss or variant as ""), numbers are
    numbers, an empty number is missing: compared with a plain csv reader row by row."""
    frame = published()
    rows = _raw_rows()
    assert len(frame) == len(rows) > 2000
    assert list(frame.columns) == list(rows[0])
    for i, raw in enumerate(rows):
        got = frame.iloc[i]
        for col in TEXT:
            assert isinstance(got[col], str) and got[col] == raw[col], (i, col)
        for col in NUMBERS:
            if raw[col] == "":
                assert math.isnan(got[col]), (i, col)
            else:
                assert float(got[col]) == float(raw[col]), (i, col)


def test_a_known_value_and_its_empty_fields():
    frame = published()
    r = frame[(frame["paper"] == "leml") & (frame["table"] == "6")
              & (frame["dataset"] == "bibtex") & (frame["method"] == "BCS")
              & (frame["k_over_L"] == 0.2)].iloc[0]
    assert (r["loss"], r["variant"], r["note"], r["metric"], r["value"], r["scale"]) == (
        "SQ", "", "", "p@1", 41.43, 100)
    assert math.isnan(r["k"]) and math.isnan(r["std"]) and r["observed"] == 1.0
    assert sorted(frame["table"].unique(), key=int)[:3] == ["1", "3", "4"]


def test_the_published_numbers_are_read_once():
    assert published() is published()


def test_papers_and_their_printed_names():
    assert papers() == ["leml", "lsvv", "mom", "similarity"]
    assert PAPER_NAMES == {"leml": "LEML", "mom": "MoM", "lsvv": "LSVV",
                           "similarity": "Similarity"}
    assert [paper_name(p) for p in papers()] == ["LEML", "LSVV", "MoM", "Similarity"]


@pytest.mark.parametrize("paper", ["other", "LEML", ""])
def test_an_unknown_paper_is_printed_as_given(paper):
    assert paper_name(paper) == paper
