"""The hostile-input corpus: inputs and conditions meant to break a run, each with the one line
it must give.

Every case builds its files in a temporary directory (small generated files: links, gzip
bombs, binary garbage, absurd sizes), runs one command and checks the exit status and the
exact output (``{t}`` is the case's directory; a pattern is matched with ``re.fullmatch``).
Input and usage errors exit 2, data files that cannot be read and runs that fail exit 1; no
input or condition may end in ``internal error``, which is kept for bugs:
:func:`test_no_corpus_output_is_an_internal_error` greps every output of this corpus and of
``tests/data/bad`` for it. Further cases of the same corpus that need other machinery: the
signals and the killed main process in ``tests/runner/test_signals.py``, scheduler addresses
that are refused, unreachable or not a Dask scheduler in ``tests/runner/test_dask.py``.
"""

from __future__ import annotations

import errno
import gzip
import os
import random
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlx.cli import cli

TINY = "0,1 1:0.5 2:1\n1 2:0.3 3:1\n0 1:1 3:0.2\n2 1:0.1 2:0.4\n0,2 2:1 3:1\n1 1:0.7\n"
LINK = ("is a symbolic link; mlx writes only files it creates itself and never follows or "
        "replaces links: remove it or choose another output directory")
MEMORY_HINT = ("free memory, read a smaller file or, if the estimate is too cautious, raise "
               "the limit with mlx --max-read-memory SIZE (or MLX_MAX_READ_MEMORY)")
LINE_HINT = ("if the file is right, raise the limit with mlx --max-line-bytes SIZE (or "
             "MLX_MAX_LINE_BYTES)")
MAGNITUDE = ("values must be at most 1e100 in magnitude, beyond which squares and sums of "
             "squares can overflow; rescale the column")
CUT = ("without a newline: the file was cut short; get a complete copy (compare its size or "
       "checksum with the source)")
SCHEDULER = ("is not a Dask scheduler address; expected tcp://HOST:PORT (or tls, ws, wss, "
             "ucx), e.g. tcp://10.0.0.5:8786 (the scheduler listens on port 8786 unless told "
             "otherwise)")

@dataclass
class Case:
    """``args`` of ``mlx`` on files that ``setup(t)`` writes in the case directory ``t``."""

    id: str
    setup: object
    args: list
    code: int
    expected: str                   # exact line; "re:..." a pattern of the whole line
    env: dict = field(default_factory=dict)
    check: object = None            # check(t) after the run: nothing outside was touched


def _config(t: Path, name: str, dataset: str, methods: str = "[constant]", extra: str = ""):
    (t / name).write_text(f"name: h\nseed: 0\ndataset: {dataset}\nmethods: {methods}\n{extra}")


def _tiny(t: Path, extra: str = "", methods: str = "[constant]"):
    (t / "tiny.svm").write_text(TINY)
    _config(t, "c.yaml", "{format: libsvm-multilabel, train: tiny.svm, test: tiny.svm}",
            methods, extra)


def _victim(t: Path):
    (t / "victim.txt").write_text("precious\n")


def _victim_intact(t: Path):
    assert (t / "victim.txt").read_text() == "precious\n"


# ----------------------------------------------------------------------------- R3: links
def _planted(plant):
    """Setup: a config, a victim file, an output directory in which ``plant(t, out)`` put
    something the run must not write through."""
    def setup(t):
        _tiny(t)
        _victim(t)
        (t / "elsewhere").mkdir()
        (t / "out").mkdir()
        plant(t, t / "out")
    return setup


_lock_symlink = _planted(lambda t, out: (out / ".mlx.lock").symlink_to(t / "victim.txt"))
_lock_hardlink = _planted(lambda t, out: os.link(t / "victim.txt", out / ".mlx.lock"))
_lock_fifo = _planted(lambda t, out: os.mkfifo(out / ".mlx.lock"))
_cells_symlink = _planted(lambda t, out: (out / "cells").symlink_to(t / "elsewhere"))
_results_symlink = _planted(lambda t, out: (out / "results.csv").symlink_to(t / "victim.txt"))


def _nothing_elsewhere(t):
    _victim_intact(t)
    assert not list((t / "elsewhere").iterdir())


RUN = ["run", "-q", "-j", "1", "-o", "{t}/out", "{t}/c.yaml"]
VALIDATE = ["validate", "{t}/c.yaml"]

CASES = [
    Case("lock-symlink", _lock_symlink, RUN, 2, f"Error: {{t}}/out/.mlx.lock: {LINK}",
         check=_victim_intact),
    Case("lock-hardlink", _lock_hardlink, RUN, 2,
         "Error: {t}/out/.mlx.lock: is a hard link to another file; mlx writes only files it "
         "creates itself and never follows or replaces links: remove it or choose another "
         "output directory", check=_victim_intact),
    Case("lock-fifo", _lock_fifo, RUN, 2,
         "Error: {t}/out/.mlx.lock: is not a regular file; mlx writes only files it creates "
         "itself and never follows or replaces links: remove it or choose another output "
         "directory", check=_victim_intact),
    Case("cells-symlink", _cells_symlink, RUN, 2, f"Error: {{t}}/out/cells: {LINK}",
         check=_nothing_elsewhere),
    Case("results-symlink", _results_symlink, RUN, 2, f"Error: {{t}}/out/results.csv: {LINK}",
         check=_victim_intact),
]


# ----------------------------------------------------------------------------- R8: sizes
def _gzip_bomb(t):
    # 12 MB of one-feature rows in about 25 kB (3 GiB in 5 MB is the same file, longer)
    with gzip.open(t / "bomb.svm.gz", "wb", compresslevel=9) as fh:
        block = b"1 1:1\n" * 100_000
        for _ in range(20):
            fh.write(block)
    _config(t, "c.yaml", "{format: libsvm-multilabel, train: bomb.svm.gz, test: bomb.svm.gz}")


def _long_line(t):
    with gzip.open(t / "line.svm.gz", "wb", compresslevel=9) as fh:
        fh.write(b"1 1:1\n1")
        for _ in range(40):
            fh.write(b" 1:1" * 10_000)
        fh.write(b"\n")


def _xc_header(t):
    (t / "h.txt").write_text("1000000000000 1000000000000 1000000000000\n0 0:1\n")
    _config(t, "c.yaml", "{format: xc, train: h.txt, test: h.txt}")


CASES += [
    Case("gzip-bomb", _gzip_bomb, VALIDATE, 1,
         r"re:Error: {t}/bomb\.svm\.gz:\d+: reading this file would take more than 8 MiB of "
         r"memory \(MLX_MAX_READ_MEMORY; [\d.]+ [KM]iB of text read so far\); "
         + re.escape(MEMORY_HINT), env={"MLX_MAX_READ_MEMORY": "8M"}),
    Case("gzip-bomb-info", _gzip_bomb,
         ["--max-read-memory", "8M", "datasets", "info", "--format", "libsvm-multilabel",
          "{t}/bomb.svm.gz"], 1,
         r"re:Error: {t}/bomb\.svm\.gz:\d+: reading this file would take more than 8 MiB of "
         r"memory \(MLX_MAX_READ_MEMORY; [\d.]+ [KM]iB of text read so far\); "
         + re.escape(MEMORY_HINT)),
    Case("gzip-one-long-line", _long_line,
         ["--max-line-bytes", "64K", "datasets", "info", "--format", "libsvm-multilabel",
          "{t}/line.svm.gz"], 1,
         "Error: {t}/line.svm.gz:2: line longer than 64 KiB, the limit for a line of a data "
         f"file; {LINE_HINT}"),
    Case("long-line-env", _long_line,
         ["datasets", "info", "--format", "libsvm-multilabel", "{t}/line.svm.gz"], 1,
         "Error: {t}/line.svm.gz:2: line longer than 100 KiB, the limit for a line of a data "
         f"file; {LINE_HINT}", env={"MLX_MAX_LINE_BYTES": "100K"}),
    Case("bad-size-option", _long_line,
         ["--max-line-bytes", "lots", "datasets", "info", "{t}/line.svm.gz"], 2,
         "re:Usage: .*Error: Invalid value for --max-line-bytes: 'lots' is not a size; give "
         "bytes with an optional K, M, G or T suffix, e.g. 64M"),
    Case("xc-header-1e12", _xc_header, VALIDATE, 1,
         "Error: {t}/h.txt:1: the header declares n_samples=1000000000000, "
         "n_features=1000000000000, n_labels=1000000000000: even one number per row, feature "
         "and label would take 29.1 TiB, more than the 1 GiB a read may take "
         "(MLX_MAX_READ_MEMORY); check the header", env={"MLX_MAX_READ_MEMORY": "1G"}),
    Case("synthetic-1e12-rows",
         lambda t: _config(t, "c.yaml", "{synthetic: {n_samples: 1000000000000}}"), VALIDATE, 2,
         r"re:Error: {t}/c\.yaml: dataset\.synthetic: 1000000000100 rows would need about "
         r"[\d.]+ PB of memory to generate, more than the [\d.]+ [MGT]B available \(.*\); use "
         r"at most \d+ rows \(n_samples \+ n_test\)"),
    Case("synthetic-1e12-features",
         lambda t: _config(t, "c.yaml", "{synthetic: {n_features: 1000000000000}}"), VALIDATE,
         2, r"re:Error: {t}/c\.yaml: dataset\.synthetic: 300 rows would need about [\d.]+ PB "
            r"of memory to generate, .*; use fewer features and labels \(or classes\)"),
    Case("sweep-1e9-cells", lambda t: _tiny(t, "sweep: {repetitions: 1000000000}\n"), VALIDATE,
         2, "Error: {t}/c.yaml: sweep: the config expands to 1000000000 cells (methods x grid "
            "points x ranks x observed and labelled ratios x repetitions), more than the "
            "1000000 one run may hold; split it into several configs"),
]


# ----------------------------------------------------------------------------- R4, R6, YAML
def _target_1e308(t):
    (t / "d.csv").write_text("a,b,y\n1,2,1e308\n2,1,1\n3,3,-1e308\n1,5,2\n")
    _config(t, "c.yaml", "{format: csv, train: d.csv, test: d.csv, target: y}",
            extra="target: minmax\n")


def _feature_1e200(t):
    (t / "d.svm").write_text("1 1:1\n2 1:1e200\n")
    _config(t, "c.yaml", "{format: libsvm-multiclass, train: d.svm, test: d.svm}")


def _regression(t, params: str):
    rng = random.Random(0)
    rows = "".join(f"{rng.random():.3f},{rng.random():.3f},{rng.random():.3f}\n"
                   for _ in range(30))
    (t / "r.csv").write_text("a,b,y\n" + rows)
    _config(t, "c.yaml", "{format: csv, train: r.csv, test: r.csv, target: y}",
            f"[{{name: landmark, params: {params}}}]")


CASES += [
    Case("target-1e308-minmax", _target_1e308, VALIDATE, 1,
         f"Error: {{t}}/d.csv:2: value too large '1e308' in column 'y' ({MAGNITUDE})"),
    Case("feature-1e200", _feature_1e200, VALIDATE, 1,
         f"Error: {{t}}/d.svm:2: value too large in feature '1:1e200' ({MAGNITUDE})"),
    Case("bandwidth-1e-300",
         lambda t: _regression(t, "{similarity: gaussian, bandwidth: 1.0e-300, "
                                  "n_landmarks: 10}"), VALIDATE, 2,
         "Error: {t}/c.yaml: methods[0].params.bandwidth: The 'bandwidth' parameter of "
         "Landmark must be None or a float in the range [1e-150, 1e+150]. Got 1e-300 instead."),
    Case("yaml-scientific-notation",
         lambda t: _regression(t, "{similarity: gaussian, bandwidth: 1e3, n_landmarks: 1e1}"),
         VALIDATE, 2,
         "Error: {t}/c.yaml: methods[0].params.n_landmarks: The 'n_landmarks' parameter of "
         "Landmark must be an int in the range [1, inf). Got 10.0 instead."),
]


# ----------------------------------------------------------------------------- R9, R10
def _unreadable(t):
    _tiny(t)
    (t / "tiny.svm").chmod(0)


CASES += [
    Case("nul-in-output", lambda t: _tiny(t, 'output: "o\\0x"\n'), ["run", "-q", "{t}/c.yaml"],
         2, "Error: 'o\\x00x': cannot write results: the path contains a NUL byte, which no "
            "file name can hold; choose another output"),
    Case("nul-in-data-name", lambda t: _config(
        t, "c.yaml", '{format: libsvm-multilabel, train: "a\\0b.svm", test: "a\\0b.svm"}'),
         VALIDATE, 1, r"re:Error: a\\x00b\.svm: file not found \(config key dataset\.train in "
                      r"{t}/c\.yaml\); .*"),
    Case("unreadable-data", _unreadable, VALIDATE, 1,
         "Error: {t}/tiny.svm: cannot read the file: Permission denied; make it readable "
         "(chmod +r) or copy it"),
]


# ----------------------------------------------------------------------------- formats
def _garbage(t):
    (t / "g.bin").write_bytes(random.Random(7).randbytes(3000))


def _cut_gzip(t):
    whole = gzip.compress(TINY.encode() * 50)
    (t / "z.gz").write_bytes(whole[:len(whole) // 2])


FORMATS = {"libsvm-multilabel": "svm", "libsvm-multiclass": "svm", "xc": "txt",
           "arff": "arff", "arff-regression": "arff", "csv": "csv"}
for fmt in FORMATS:
    CASES += [
        Case(f"garbage-{fmt}", _garbage,
             ["datasets", "info", "--format", fmt, "--n-labels", "1", "{t}/g.bin"]
             if fmt == "arff" else ["datasets", "info", "--format", fmt, "{t}/g.bin"], 1,
             r"re:Error: {t}/g\.bin:\d+: .*"),
        Case(f"cut-gzip-{fmt}", _cut_gzip,
             ["datasets", "info", "--format", fmt, "--n-labels", "1", "{t}/z.gz"]
             if fmt == "arff" else ["datasets", "info", "--format", fmt, "{t}/z.gz"], 1,
             r"re:Error: {t}/z\.gz(:\d+)?: .*"),
    ]
CASES += [
    Case("svm-truncated-mid-token", lambda t: (t / "d.svm").write_text("1 1:0.5\n0 1:1 2:0."),
         ["datasets", "info", "--format", "libsvm-multiclass", "{t}/d.svm"], 1,
         f"Error: {{t}}/d.svm:2: the last line ends inside a value ('2:0.') {CUT}"),
    Case("directory-as-data", lambda t: ((t / "d").mkdir(), _config(
        t, "c.yaml", "{format: libsvm-multilabel, train: d, test: d}")), VALIDATE, 1,
         r"re:Error: d: file not found \(config key dataset\.train in {t}/c\.yaml\); .*"),
    Case("fifo-as-data", lambda t: (os.mkfifo(t / "p.svm"), _config(
        t, "c.yaml", "{format: libsvm-multilabel, train: p.svm, test: p.svm}")), VALIDATE, 1,
         r"re:Error: p\.svm: file not found \(config key dataset\.train in {t}/c\.yaml\); .*"),
    Case("fifo-as-config", lambda t: os.mkfifo(t / "c.yaml"), VALIDATE, 2,
         "Error: {t}/c.yaml: is not a regular file (a FIFO, a device or a socket); give a YAML "
         "file"),
    Case("scheduler-not-an-address", _tiny,
         ["run", "-q", "--backend", "dask", "--scheduler", "not a url", "-o", "{t}/out",
          "{t}/c.yaml"], 2, f"Error: --scheduler: 'not a url' {SCHEDULER}"),
    Case("control-characters-in-data",
         lambda t: (t / "d.svm").write_bytes(b"1 1:1\n1 \x1b[2J\rok\x00:1\n"),
         ["datasets", "info", "--format", "libsvm-multiclass", "{t}/d.svm"], 1,
         "Error: {t}/d.svm:2: malformed feature '\\x1b[2J' (expected "
         "<index>:<value> with an integer index >= 1)"),
]


def _run_case(case: Case, tmp_path: Path, monkeypatch, outputs: dict) -> str:
    t = tmp_path / case.id
    t.mkdir()
    case.setup(t)
    for var, value in case.env.items():
        monkeypatch.setenv(var, value)
    args = [a.replace("{t}", str(t)) for a in case.args]
    if case.id == "unreadable-data" and os.geteuid() == 0:
        # root reads anything: refuse the open as the kernel would for anyone else
        import mlx.data.lineparse as lineparse

        def no_access(path, *a, **k):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))

        monkeypatch.setattr(lineparse, "open", no_access, raising=False)
    result = CliRunner().invoke(cli, args)
    outputs[case.id] = result.output
    for var in case.env:
        monkeypatch.delenv(var)
    expected = case.expected.replace("{t}", str(t))
    output = result.output
    assert "Traceback" not in output
    if expected.startswith("re:"):
        assert re.fullmatch(expected[3:], output.replace("\n", " ").strip(), flags=re.S), output
    else:
        assert output == expected + "\n"
        assert result.exit_code == case.code, output
    assert result.exit_code == case.code, output
    if not expected.startswith("re:Usage"):
        assert len(output.splitlines()) == 1, output
    if case.check:
        case.check(t)
    return output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_gives_its_one_line_error(tmp_path, monkeypatch, corpus_outputs, case):
    _run_case(case, tmp_path, monkeypatch, corpus_outputs)


# ----------------------------------------------------------------------------- full disk
SWEEP = """
    name: fill
    seed: 0
    dataset: {synthetic: {n_samples: 60, n_features: 8, n_labels: 4, rank: 2, n_test: 20}}
    methods: [constant]
    sweep: {repetitions: 4}
    metrics: [p@1]
"""


def test_a_full_disk_keeps_the_finished_cells_and_says_so(tmp_path, monkeypatch,
                                                          corpus_outputs):
    import mlx.io

    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(SWEEP))
    replace, calls = os.replace, {"cells": 0}

    def fill_up(src, dst):
        if Path(dst).parent.name == "cells" and Path(dst).suffix == ".json":
            calls["cells"] += 1
            if calls["cells"] > 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return replace(src, dst)

    monkeypatch.setattr(mlx.io.os, "replace", fill_up)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "-q", "-j", "1", "-o", str(out), str(cfg)])
    monkeypatch.undo()
    corpus_outputs["full-disk"] = result.output
    assert result.exit_code == 1, result.output
    assert re.fullmatch(
        re.escape(f"Error: {out}/cells/") + r"[^/ ]+\.json" + re.escape(
            ": cannot write: No space left on device; free space on that file system or choose "
            f"another output directory; 2 cell(s) finished in this run are kept in {out}/cells: "
            "run the same command again to resume") + "\n", result.output), result.output
    assert len(list((out / "cells").glob("*.json"))) == 2
    assert not list((out / "cells").glob(".*"))            # no temporary file left behind
    again = CliRunner().invoke(cli, ["run", "-q", "-j", "1", "-o", str(out), str(cfg)])
    assert again.exit_code == 0, again.output               # the disk has room again: resume
    assert len(list((out / "cells").glob("*.json"))) == 4


def test_a_file_size_limit_mid_run_is_a_one_line_error(tmp_path, corpus_outputs):
    # The real thing: RLIMIT_FSIZE (ulimit -f) in a child process; writing past it fails with
    # EFBIG (Python ignores SIGXFSZ). The cells' files fit, results.csv does not.
    import resource

    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(SWEEP).replace("[p@1]", "[p@1, p@3, auc, hamming, ndcg@3]"))
    out = tmp_path / "out"
    limit = 4000    # bytes: a cell writes about 660 (json) and 2700 (scores), results.csv 4900

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([sys.executable, "-m", "mlx", "run", "-q", "-j", "1", "-o", str(out),
                           str(cfg)], capture_output=True, text=True, preexec_fn=small_files,
                          timeout=120)
    corpus_outputs["file-size-limit"] = proc.stdout + proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"Error: {out}/results.csv: cannot write: File too large; the file-size limit "
        f"(ulimit -f) is too small for it; raise it; 4 cell(s) finished in this run are kept in "
        f"{out}/cells: run the same command again to resume\n")
    assert not [p for p in out.rglob("*") if p.name.startswith(".") and p.name != ".mlx.lock"]


# ----------------------------------------------------------------------------- the rule
def test_no_corpus_output_is_an_internal_error(tmp_path, monkeypatch, corpus_outputs):
    """``internal error`` is for bugs only: no output of the corpus may say it."""
    for case in CASES:
        if case.id not in corpus_outputs:          # run on its own: run what is missing
            try:
                _run_case(case, tmp_path, monkeypatch, corpus_outputs)
            except AssertionError:
                pass                               # its own test reports it
    assert len(corpus_outputs) >= len(CASES)
    internal = {k: v for k, v in corpus_outputs.items() if "internal error" in v.lower()}
    assert not internal
