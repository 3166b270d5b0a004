"""The bad-input corpus: every file in tests/data/bad gives its one-line error.

``tests/data/bad/cases.tsv`` lists each file, the command to run on it, the exit status and
the exact output (``{file}`` is the file's path, ``{dir}`` the corpus directory; a trailing
``...`` matches any rest of the line). ``validate`` cases also run through ``mlx run``, which
must fail alike and write nothing: whatever fails before the first cell fails at validation.
A data file used by a config case is listed with the command ``-``.
"""

import csv
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlx.cli import cli

BAD = Path(__file__).parent / "data" / "bad"


def _cases():
    with open(BAD / "cases.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                if r and not r[0].startswith("#") and r[1] != "-"]
    return [pytest.param(*r, id=r[0]) for r in rows]


@pytest.mark.parametrize("name, command, code, expected", _cases())
def test_bad_input_gives_its_one_line_error(tmp_path, corpus_outputs, name, command, code,
                                            expected):
    path = BAD / name
    runner = CliRunner()
    t0 = time.monotonic()
    if command == "validate":
        results = [runner.invoke(cli, ["validate", str(path)]),
                   runner.invoke(cli, ["run", "-q", "-o", str(tmp_path / "out"), str(path)])]
    else:
        args = command.replace("{file}", str(path)).replace("{dir}", str(BAD)).split()
        results = [runner.invoke(cli, args)]
    assert time.monotonic() - t0 < 10
    expected = expected.replace("{file}", str(path)).replace("{dir}", str(BAD))
    corpus_outputs[f"bad/{name}"] = "".join(r.output for r in results)
    for r in results:
        assert r.exit_code == int(code), r.output
        assert len(r.output.splitlines()) == 1, r.output
        if expected.endswith("..."):
            assert r.output.startswith(expected[:-3]), r.output
        else:
            assert r.output == expected + "\n"
    assert not (tmp_path / "out").exists()


def test_every_corpus_file_has_a_case():
    with open(BAD / "cases.tsv", encoding="utf-8") as fh:
        listed = {r[0] for r in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                  if r and not r[0].startswith("#")}
    present = {p.name for p in BAD.iterdir() if p.name != "cases.tsv"}
    assert listed == present
