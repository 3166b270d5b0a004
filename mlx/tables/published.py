"""The published numbers of the reproduced papers, and the papers' display names.

The numbers are package data: ``mlx/reference/published.csv`` (see the README there
for provenance, units and transcription notes). The reference table stores each value
as printed with its ``scale``: ``value / scale`` is on the results.csv scale (e.g.
58.33 % / 100 = 0.5833).
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

__all__ = ["published", "papers", "paper_name", "PAPER_NAMES"]

PAPER_NAMES = {"leml": "LEML", "mom": "MoM", "lsvv": "LSVV", "similarity": "Similarity"}


@lru_cache(maxsize=1)
def published() -> pd.DataFrame:
    """The published numbers of every paper, one row per value (``mlx/reference``)."""
    from importlib.resources import files

    with (files("mlx.reference") / "published.csv").open("r", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, dtype={"table": str, "loss": str, "variant": str, "note": str},
                            keep_default_na=False, na_values={c: [""] for c in
                                                              ("k_over_L", "k", "observed",
                                                               "value", "std", "scale")})
    for col in ("k_over_L", "k", "observed", "value", "std", "scale"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def papers() -> list[str]:
    return sorted(published()["paper"].unique())


def paper_name(paper: str) -> str:
    """How a paper key is printed in titles (``leml`` -> ``LEML``)."""
    return PAPER_NAMES.get(paper, paper)
