"""End-to-end CLI behaviour: exit codes and the exact one-line errors users see."""

import re
import textwrap

import pytest
from click.testing import CliRunner

from mlx.cli import cli
from tests.conftest import write_dense_multilabel

CONFIG = """
name: clitest
dataset:
  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}
methods:
  - name: br
    params: {loss: squared_hinge}
metrics: [p@1, auc]
"""


def invoke(*args):
    return CliRunner().invoke(cli, list(args), obj={})


def write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_validate_ok_counts_cells(tmp_path):
    p = write(tmp_path, CONFIG)
    r = invoke("validate", str(p))
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{p}: ok, 1 cells"


def test_validate_names_the_entries_that_will_be_skipped_and_why(tmp_path):
    p = write(tmp_path, CONFIG.replace("  - name: br\n", "  - name: cplst\n  - name: br\n")
              + "sweep: {observed_ratio: [1.0, 0.5]}\n")
    r = invoke("validate", str(p))
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"{p}: ok, 4 cells",
        f"{p}: cplst will be skipped: cplst does not support missing labels"]


def test_config_error_is_one_line_exit_2(tmp_path):
    p = write(tmp_path, CONFIG.replace("squared_hinge", "hinge"))
    r = invoke("validate", str(p))
    assert r.exit_code == 2
    assert r.output == (f"Error: {p}: methods[0].params.loss: The 'loss' parameter of BR must be a "
                        "str among {'auto', 'logistic', 'squared', 'squared_hinge'}. "
                        "Got 'hinge' instead.\n")
    assert "Traceback" not in r.output


def test_debug_shows_traceback(tmp_path):
    p = write(tmp_path, CONFIG.replace("squared_hinge", "hinge"))
    r = invoke("--debug", "validate", str(p))
    assert r.exit_code != 0
    assert r.exception is not None and type(r.exception).__name__ == "ConfigError"


def test_run_writes_results_and_prints_table(tmp_path):
    p = write(tmp_path, CONFIG)
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 0, r.output
    assert "| method |" in r.output and "p@1" in r.output
    assert (out / "results.csv").exists()
    r2 = invoke("table", str(out))
    assert r2.exit_code == 0 and "| method |" in r2.output


def test_run_missing_config_exits_2(tmp_path):
    r = invoke("run", str(tmp_path / "nope.yaml"))
    assert r.exit_code == 2
    assert r.output == f"Error: {tmp_path / 'nope.yaml'}: file not found\n"


def test_missing_dataset_is_one_line_exit_1_nothing_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    p = write(tmp_path, CONFIG.replace(
        "dataset:\n  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}",
        "dataset: scene"))
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("Error: dataset 'scene': file ")
    assert "mlx datasets fetch scene" in lines[-1]
    assert not out.exists()


def test_malformed_data_line_is_one_line_exit_1(tmp_path):
    train = tmp_path / "train.svm"
    train.write_text("0,1 1:1.0 3:2.0\n1 2:abc\n")
    test = tmp_path / "test.svm"
    test.write_text("0 1:1.0\n")
    p = write(tmp_path, CONFIG.replace(
        "dataset:\n  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}",
        f"dataset: {{format: libsvm-multilabel, train: {train}, test: {test}}}"))
    out = tmp_path / "out"
    r = invoke("run", "-q", "-j", "1", "-o", str(out), str(p))
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {train}:2: ")
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()


def test_table_on_missing_results(tmp_path):
    r = invoke("table", str(tmp_path))
    assert r.exit_code == 1
    assert r.output == (f"Error: {tmp_path / 'results.csv'}: file not found; "
                        "run 'mlx run CONFIG' first\n")


def test_bad_option_is_usage_error():
    r = invoke("run", "--jobs", "0", "x.yaml")
    assert r.exit_code == 2


@pytest.mark.parametrize("cmd", [[], ["run"], ["validate"], ["table"], ["datasets"],
                                 ["datasets", "fetch"], ["datasets", "info"],
                                 ["datasets", "convert"],
                                 ["methods"], ["metrics"]])
def test_every_command_has_help(cmd):
    r = invoke(*cmd, "--help")
    assert r.exit_code == 0 and "Usage:" in r.output
    assert len(r.output.splitlines()) > 3


def test_methods_and_metrics_listings():
    r = invoke("methods")
    assert r.exit_code == 0 and "br" in r.output
    r = invoke("metrics")
    assert r.exit_code == 0 and "auc" in r.output


# ----------------------------------------------------------------------------- methods NAME
def test_methods_name_describes_parameters():
    r = invoke("methods", "leml")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[:5] == [
        "leml: Low-rank empirical risk minimisation for multi-label learning (LEML).",
        "tasks: multilabel, multiclass",
        "uses_rank: yes",
        "supports_missing_labels: yes",
        "parameters:"]
    text = r.output
    assert ("  rank: set by the runner (from sweep.rank_ratio or sweep.rank); an int in the range "
            "[1, inf)\n      Latent dimension k.\n") in text
    assert ("  l2_reg: default 'auto'; a float in the range [0, inf) or a str among {'auto'}\n"
            "      lambda above; \"auto\" chooses it on a hold-out split of the training rows, "
            "from 1e-4 to 1e4.\n") in text
    # no description in the docstring: no meaning line
    assert ("  loss: default 'squared'; a str among {'logistic', 'squared', 'squared_hinge'}\n"
            "  max_iter: default 10;") in text
    assert "  random_state: set by the runner (from the config's seed); None or an int\n" in text


def test_methods_name_runner_parameters_and_tasks():
    r = invoke("methods", "br")
    assert r.exit_code == 0, r.output
    assert "uses_rank: no\n" in r.output
    assert ("  task: set by the runner (from the dataset's task); a str among {'multiclass', "
            "'multilabel', 'ordinal', 'regression'}\n      Set by the runner from the dataset.\n"
            ) in r.output
    assert ("  C: default 'auto'; a float in the range (0, inf) or a str among {'auto'}\n"
            "      liblinear's cost -c for the logistic and squared-hinge losses; \"auto\" "
            "chooses it on a hold-out split of the training rows, from 1e-4 to 1e4.\n") in r.output


def test_methods_name_says_how_auto_falls_back_to_the_constant():
    note = ("auto and the constant: with multi-label data, a fit whose scale is chosen by "
            "'auto' adds w * sd * log(label frequency) to the model's scores, w the smallest "
            "of 0, 1/64 .. 4 (factors of 2) and inf (the frequencies alone: the constant "
            "predictor) whose P@k on a 20% hold-out split of the training rows are no lower "
            "than the constant's and whose AUC there is higher by a one-sided 5% test on the "
            "rows; unless the labels it predicts there are right more "
            "often than wrong (a one-sided 5% test; the Hamming loss), it lowers every score "
            "to the cut of fewest errors on half of those rows, or below every score when that "
            "cut fails the test on the other half; results.csv's selected column records "
            "prior_weight ('constant': the "
            "frequencies alone) and decision_shift. After a GCV path (cplst, bcs, br's squared "
            "loss) the held-out scores are the leave-one-out predictions of the training rows, "
            "from the same eigendecomposition (bcs decodes at most 256 of them).\n")
    for name in ("leml", "cplst", "bcs", "br", "wsabie", "lsvv", "mom", "plt"):
        r = invoke("methods", name)
        assert r.exit_code == 0 and r.output.endswith(note), name
    for name in ("constant", "omikuji", "landmark"):  # no auto scale, or no labels
        assert "auto and the constant" not in invoke("methods", name).output, name


def test_methods_unknown_name_suggests():
    r = invoke("methods", "lem")
    assert r.exit_code == 2
    assert r.output == ("Error: unknown method 'lem'. Did you mean 'leml'? Available methods: "
                        "bcs, br, constant, cplst, landmark, leml, lsvv, mom, omikuji, plt, "
                        "wsabie\n")


def test_parameter_meanings_parse_numpydoc():
    from mlx.docstrings import first_sentence, parameter_meanings

    doc = """Summary line.

    Parameters
    ----------
    a, b : float > 0, default=1.0
        Shared meaning, e.g. both ``a`` and :func:`b`. Second sentence.
    c : {"x", "y"}
    d : int
        Ends without a period (see f. Not this)

        Second paragraph.

    A closing paragraph at the parameters' indentation is not a parameter.

    Returns
    -------
    e : int
        Not a parameter.
    """
    assert parameter_meanings(doc) == {
        "a": "Shared meaning, e.g. both a and b.", "b": "Shared meaning, e.g. both a and b.",
        "c": "", "d": "Ends without a period (see f. Not this)"}
    assert parameter_meanings("No sections.") == {}
    assert first_sentence("One. Two.") == "One."


# ----------------------------------------------------------------------------- datasets on files
MEKA_ARFF = """@relation 'toy: -C 2'
@attribute lab0 {0,1}
@attribute lab1 {0,1}
@attribute f0 numeric
@attribute f1 numeric
@data
1,0,1.5,0
0,1,0,2
1,1,0,0
"""


def _files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "toy-train.arff").write_text(MEKA_ARFF)
    (tmp_path / "d" / "toy-test.arff").write_text(MEKA_ARFF)


INFO_TABLE = ("split         n        d      L  avg feats avg labels\n"
              "train         3        2      2       0.67      1.333\n"
              "test          3        2      2       0.67      1.333\n")


def test_datasets_info_on_files(tmp_path, monkeypatch):
    _files(tmp_path, monkeypatch)
    r = invoke("datasets", "info", "--format", "arff", "d/toy-train.arff", "--test",
               "d/toy-test.arff")
    assert r.exit_code == 0, r.output
    assert r.output == ("toy: arff files (multilabel): train d/toy-train.arff, test "
                        "d/toy-test.arff\n" + INFO_TABLE)
    r = invoke("datasets", "info", "--format", "arff", "--n-labels", "2", "d/toy-train.arff")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == "all           3        2      2       0.67      1.333"


def test_datasets_info_and_convert_from_a_config(tmp_path, monkeypatch):
    _files(tmp_path, monkeypatch)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.yaml").write_text(
        "name: x\ndataset: {format: arff, train: ../d/toy-train.arff, test: ../d/toy-test.arff, "
        "name: mine}\nmethods: [{name: br}]\n")
    r = invoke("datasets", "info", "--config", "c/x.yaml")
    assert r.exit_code == 0, r.output
    assert r.output == ("mine: arff files (multilabel): train ../d/toy-train.arff, test "
                        "../d/toy-test.arff\n" + INFO_TABLE)
    r = invoke("datasets", "convert", "--config", "c/x.yaml", "--to", "libsvm", "-o", "out")
    assert r.exit_code == 0, r.output
    assert r.output == "out/mine-train.svm\nout/mine-test.svm\n"
    assert (tmp_path / "out" / "mine-test.svm").read_text() == "0 1:1.5\n1 2:2.0\n0,1\n"


def test_datasets_convert_on_files(tmp_path, monkeypatch):
    _files(tmp_path, monkeypatch)
    r = invoke("datasets", "convert", "--format", "arff", "d/toy-train.arff", "--to", "xc",
               "-o", "out")
    assert r.exit_code == 0, r.output
    assert r.output == "out/toy-all.txt\n"
    assert (tmp_path / "out" / "toy-all.txt").read_text() == "3 2 2\n0 0:1.5\n1 1:2.0\n0,1\n"


@pytest.mark.parametrize("args, code, message", [
    (["--n-labels", "2", "scene"], 2, "Error: --n-labels describes a data file: give its --format "
                                      "too"),
    ([], 2, "Error: give a registered dataset NAME, a data file PATH with --format, or --config "
            "CONFIG"),
    (["--config", "c.yaml", "scene"], 2, "Error: --config takes the dataset from the config; give "
                                         "no NAME, PATH or file options with it"),
    (["d/toy-train.arff"], 2, "Error: d/toy-train.arff is a file, not a registered dataset; give "
                              "its --format (and e.g. --n-labels), as in 'mlx datasets info "
                              "--format arff --n-labels L d/toy-train.arff'"),
    (["--format", "arff", "--n-labels", "0", "d/toy-train.arff"], 2,
     "Error: --n-labels: must be an int >= 1. Got 0 instead."),
    (["--format", "arf", "d/toy-train.arff"], 2,
     "Error: --format: must be one of 'arff', 'arff-regression', 'libsvm-multilabel', "
     "'libsvm-multiclass', 'xc', 'csv', 'mldr'. Got 'arf' instead. Did you mean 'arff'?"),
    (["--format", "arff", "--task", "regression", "d/toy-train.arff"], 2,
     "Error: --task: must be 'multilabel' for format 'arff' (the only task it can be read as). "
     "Got 'regression' instead."),
    (["--format", "libsvm-multiclass", "--xml", "x.xml", "d/toy-train.arff"], 2,
     "Error: --xml: is not used with format 'libsvm-multiclass' (a Mulan XML label list is only "
     "set for 'arff')"),
    (["--format", "arff", "--n-labels", "3", "d/toy-train.arff"], 1,
     "Error: {tmp}/d/toy-train.arff:1: n_labels=3 disagrees with the MEKA option -C 2 in the "
     "relation name (the first 2 attributes are the labels); set n_labels to 2 or leave it out"),
    (["--format", "arff", "--n-labels", "2", "d/nope.arff"], 1,
     "Error: d/nope.arff: file not found (the train file); looked in {tmp} (the current "
     "directory) and on the data path ({search})"),
    (["--config", "nope.yaml"], 2, "Error: nope.yaml: file not found"),
])
def test_datasets_info_errors(tmp_path, monkeypatch, args, code, message):
    from mlx.data.paths import describe_search_path

    _files(tmp_path, monkeypatch)
    (tmp_path / "c.yaml").write_text("name: x\ndataset: scene\nmethods: [{name: br}]\n")
    r = invoke("datasets", "info", *args)
    assert r.exit_code == code, r.output
    last = r.output.strip().splitlines()[-1]
    assert last == message.format(tmp=tmp_path, search=describe_search_path())


def _staged(rel):
    import os
    from pathlib import Path

    for d in os.environ.get("MLX_DATA_PATH", "").split(os.pathsep):
        if d and (Path(d) / rel).is_file():
            return (Path(d) / rel).resolve()
    pytest.skip(f"{rel} not on MLX_DATA_PATH")


@pytest.mark.data
def test_datasets_info_on_a_mulan_file_checks_the_xml_beside():
    train, xml = _staged("scene/scene-train.arff.gz"), _staged("scene/scene.xml")
    r = invoke("datasets", "info", "--format", "arff", "--n-labels", "7", str(train))
    assert r.exit_code == 1
    assert r.output == (f"Error: {train}: n_labels=7 does not match the label list {xml} (found "
                        "beside the data file), which names 6 labels: attribute 'Att294' (294 of "
                        "300) is among the last 7 attributes but not in that list\n")
    r = invoke("datasets", "info", "--format", "arff", str(train))
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == "all        1211      294      6     290.51      1.062"


@pytest.mark.data
def test_datasets_info_registered_name_unchanged():
    _staged("scene/scene-train.arff.gz")
    r = invoke("datasets", "info", "scene")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[1:3] == [
        "split         n        d      L  avg feats avg labels",
        "train      1211      294      6     290.51      1.062"]


# ----------------------------------------------------------------------------- validate
def test_validate_missing_user_file_has_no_fetch_advice(tmp_path, monkeypatch):
    """A user's own file cannot be fetched: the message names it once, without fetch advice."""
    from mlx.data.paths import describe_search_path

    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path / "empty"))
    p = write(tmp_path, CONFIG.replace(
        "dataset:\n  synthetic: {n_samples: 120, n_features: 12, n_labels: 6, rank: 2, seed: 0}",
        "dataset: {format: arff, train: no/such-train.arff, test: no/such-test.arff, "
        "n_labels: 3}"))
    r = invoke("validate", str(p))
    assert r.exit_code == 1
    assert r.output == (f"Error: no/such-train.arff: file not found (config key dataset.train in "
                        f"{p}); looked in {tmp_path} (paths are relative to the config file) and "
                        f"on the data path ({describe_search_path()})\n")


def test_datasets_list_has_a_header_and_aligned_columns(monkeypatch, tmp_path):
    monkeypatch.setenv("MLX_DATA_PATH", str(tmp_path))      # nothing present
    monkeypatch.setenv("MLX_HOME", str(tmp_path / "home"))
    result = invoke("datasets", "list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["name", "task", "format", "files"]
    longest = max((ln.split()[0] for ln in lines[1:]), key=len)
    assert len(longest) > 14             # a long name (wine-quality-white) no longer overflows
    starts = {tuple(m.start() for m in re.finditer(r"\S+", ln))[1:3] for ln in lines}
    assert len(starts) == 1              # task and format start in the same column on every line
    assert lines[1].endswith("not present (mlx datasets fetch " + lines[1].split()[0] + ")")


# ----------------------------------------------------------------------------- split rules
POOLED = """
name: pooled
dataset:
  synthetic: {task: multiclass, n_samples: 60, n_test: 40, n_features: 4, n_classes: 3, seed: 1}
split: {test_fraction: 0.3}
methods: [{name: constant}]
metrics: [error]
"""


@pytest.mark.parametrize("cmd", ["validate", "run"])
def test_a_split_of_data_with_a_test_file_needs_pool_true(tmp_path, cmd):
    p = write(tmp_path, POOLED)
    args = ["-q", "-j", "1", "-o", str(tmp_path / "o")] if cmd == "run" else []
    r = invoke(cmd, *args, str(p))
    assert r.exit_code == 2
    assert r.output == (f"Error: {p}: split: 'synthetic-multiclass' has its own test file, "
                        f"and a random split would pool it with the training file and split the "
                        f"rows afresh; say so with split.pool: true, or remove split to train "
                        f"and test on the files as given\n")
    assert not (tmp_path / "o").exists()
    p = write(tmp_path, POOLED.replace("test_fraction: 0.3", "test_fraction: 0.3, pool: false"))
    assert invoke(cmd, *args, str(p)).exit_code == 2
    p = write(tmp_path, POOLED.replace("test_fraction: 0.3", "test_fraction: 0.3, pool: true"))
    r = invoke(cmd, *args, str(p))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("cmd", ["validate", "run"])
@pytest.mark.parametrize("fraction, warned", [
    (0.999, "leaves 1 training rows of 'synthetic-multiclass' in a split, fewer than 20: figures "
            "from so few rows are mostly noise; lower test_fraction"),
    (0.01, "leaves 1 test rows of 'synthetic-multiclass' in a split, fewer than 20: figures "
           "from so few rows are mostly noise; raise test_fraction"),
    (0.3, None),
])
def test_a_split_with_a_tiny_part_is_warned_about_by_validate_and_run(tmp_path, caplog, cmd,
                                                                      fraction, warned):
    p = write(tmp_path, POOLED.replace("test_fraction: 0.3",
                                       f"test_fraction: {fraction}, pool: true, stratify: false"))
    args = ["-q", "-j", "1", "-o", str(tmp_path / "o")] if cmd == "run" else []
    with caplog.at_level("WARNING", logger="mlx.runner.preflight"):
        r = invoke(cmd, *args, str(p))
    assert r.exit_code == 0, r.output
    got = [m.getMessage() for m in caplog.records if m.name == "mlx.runner.preflight"]
    assert got == ([] if warned is None else [f"{p}: split.test_fraction: {fraction} {warned}"])


# ----------------------------------------------------------------------------- count features
def _dense_multilabel(tmp_path):
    train, test = write_dense_multilabel(tmp_path)
    return f"dataset: {{format: libsvm-multilabel, train: {train}, test: {test}, name: dense}}"


@pytest.mark.parametrize("cmd", ["validate", "run"])
def test_mom_on_non_count_features_is_refused_before_any_cell(tmp_path, cmd):
    p = write(tmp_path, f"name: m\n{_dense_multilabel(tmp_path)}\n"
                        f"methods: [{{name: br}}, {{name: mom}}]\nmetrics: [auc]\n")
    args = ["-q", "-j", "1", "-o", str(tmp_path / "o")] if cmd == "run" else []
    r = invoke(cmd, *args, str(p))
    assert r.exit_code == 2
    assert r.output.startswith(
        f"Error: {p}: methods[1]: mom reads word counts (non-negative integers), but the features "
        f"of 'dense' after preprocessing [bias] hold other values (e.g. 0.")
    assert r.output.endswith("); give it count features (no scaling or normalising step), or "
                             "set methods[1].params.binarize: true to read the occurrence "
                             "pattern x != 0\n")
    assert not (tmp_path / "o").exists()
