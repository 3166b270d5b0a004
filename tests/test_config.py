"""Config validation: every error names the file and key path, says what is valid."""

import textwrap

import pytest

from mlx.config import EvaluationSpec, SelectionSpec, load_config
from mlx.errors import ConfigError

BASE = """
name: t
dataset:
  synthetic: {n_samples: 60, n_features: 10, n_labels: 5, rank: 2, seed: 0}
methods:
  - name: br
    params: {loss: logistic}
"""


def write(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def error_of(tmp_path, text):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    return str(exc.value).replace(str(p), "C")


def test_minimal_config_defaults(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    assert cfg.name == "t"
    assert cfg.evaluation == EvaluationSpec(metrics=("p@1", "p@3", "p@5", "hamming", "auc"),
                                            auc_degenerate="skip", batch_size=None,
                                            splits=("test",), store_top_k=20)
    assert cfg.selection == SelectionSpec(metric="p@1", validation_fraction=0.2, cv=None,
                                          stratify=False)
    assert cfg.observed_ratio == (1.0,)
    assert cfg.repetitions == 1
    assert cfg.output.endswith("t")
    assert cfg.methods[0].label == "br"


def test_unknown_top_key_suggests(tmp_path):
    msg = error_of(tmp_path, BASE + "metric: [p@1]\n")
    assert msg.startswith("C: unknown key 'metric'. Did you mean 'metrics'? "
                          "Valid keys at the top level: ")


def test_unknown_sweep_key_suggests(tmp_path):
    msg = error_of(tmp_path, BASE + "sweep: {rank_ratios: [0.2]}\n")
    assert msg == ("C: unknown key 'sweep.rank_ratios'. Did you mean 'sweep.rank_ratio'? "
                   "Valid keys under 'sweep': labelled_ratio, observed_ratio, rank, rank_ratio, "
                   "repetitions")


def test_ratio_out_of_range(tmp_path):
    msg = error_of(tmp_path, BASE + "sweep: {rank_ratio: [0.2, 0.4, 0.6, 1.5]}\n")
    assert msg == "C: sweep.rank_ratio[3]: must be a float in the range (0, 1]. Got 1.5 instead."


def test_unknown_method_suggests(tmp_path):
    msg = error_of(tmp_path, BASE.replace("name: br", "name: bR"))
    assert msg.startswith("C: methods[0].name: unknown method 'bR'. Did you mean 'br'? "
                          "Available methods: ")


def test_bad_method_param_value(tmp_path):
    msg = error_of(tmp_path, BASE.replace("loss: logistic", "loss: hinge"))
    assert msg == ("C: methods[0].params.loss: The 'loss' parameter of BR must be a str among "
                   "{'auto', 'logistic', 'squared', 'squared_hinge'}. Got 'hinge' instead.")


def test_unknown_method_param_suggests(tmp_path):
    msg = error_of(tmp_path, BASE.replace("loss: logistic", "los: logistic"))
    assert msg.startswith("C: methods[0].params.los: unknown parameter 'los' for method 'br'. "
                          "Did you mean 'loss'? Valid parameters: ")


def test_bad_select_candidate(tmp_path):
    msg = error_of(tmp_path, BASE + "    select: {C: [1.0, -2.0]}\n")
    assert msg.startswith("C: methods[0].select.C[1]: The 'C' parameter of BR must be ")


def test_unknown_metric(tmp_path):
    msg = error_of(tmp_path, BASE + "metrics: [p@1, aucc]\n")
    assert msg.startswith("C: metrics[1]: unknown metric 'aucc'. Did you mean 'auc'?")


def test_invalid_yaml_has_position(tmp_path):
    msg = error_of(tmp_path, "name: t\nmethods: [br\n  x: : y\n")
    assert msg.startswith("C: invalid YAML at line ")


def test_missing_required_key(tmp_path):
    assert error_of(tmp_path, "name: t\ndataset: bibtex\n") == "C: missing required key 'methods'"


def test_empty_file(tmp_path):
    assert "the file is empty" in error_of(tmp_path, "")


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_dataset_suggests(tmp_path):
    msg = error_of(tmp_path, BASE.replace(
        "dataset:\n  synthetic: {n_samples: 60, n_features: 10, n_labels: 5, rank: 2, seed: 0}",
        "dataset: bibtx"))
    assert "unknown dataset 'bibtx'. Did you mean 'bibtex'?" in msg
    assert msg.startswith("C: dataset")


def test_rank_is_set_by_the_runner(tmp_path):
    text = BASE.replace("name: br\n    params: {loss: logistic}",
                        "name: br\n    params: {loss: logistic, random_state: 3}")
    assert "is set by the runner" in error_of(tmp_path, text)


def test_duplicate_labels_get_parameter_suffixes(tmp_path):
    text = BASE + "  - name: br\n    params: {loss: squared}\n"
    cfg = load_config(write(tmp_path, text))
    assert [m.label for m in cfg.methods] == ["br(loss=logistic)", "br(loss=squared)"]


def test_grid_and_select_conflict(tmp_path):
    text = BASE + "    grid: {C: [1.0]}\n    select: {C: [2.0]}\n"
    assert "a parameter is either swept or selected" in error_of(tmp_path, text)


def test_every_shipped_config_validates():
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml")):
        load_config(path)


@pytest.mark.parametrize("text, value", [("1e3", 1000.0), ("1.0e6", 1e6), ("2.5E-4", 2.5e-4),
                                         ("-1e-2", -0.01), (".5e1", 5.0), ("1.0e+6", 1e6),
                                         ("1_000.5", 1000.5), ("0.25", 0.25)])
def test_scientific_notation_is_a_float_as_in_yaml_1_2(text, value):
    import yaml

    from mlx.validation import _Loader

    loaded = yaml.load(f"a: {text}", Loader=_Loader)["a"]   # noqa: S506 - a SafeLoader
    assert type(loaded) is float and loaded == value


@pytest.mark.parametrize("text", ["1e", "e3", "1e3.5", "1e3x", "0x1e3"])
def test_what_is_not_a_number_stays_a_string(text):
    import yaml

    from mlx.validation import _Loader

    assert not isinstance(yaml.load(f"a: {text}", Loader=_Loader)["a"], float)  # noqa: S506


def test_a_float_written_in_scientific_notation_reaches_the_method(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent("""
        name: sci
        dataset: {synthetic: {n_samples: 40, n_features: 6, n_labels: 3, rank: 2}}
        methods: [{name: br, params: {loss: squared, l2_reg: 1e-3}}]
    """))
    config = load_config(path)
    assert config.methods[0].params["l2_reg"] == 1e-3


def test_every_field_of_config_and_its_sections_has_a_docstring():
    import ast
    import dataclasses
    import inspect

    import mlx.config as module

    tree = ast.parse(inspect.getsource(module))
    for cls in (module.Config, module.EvaluationSpec, module.SelectionSpec):
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef)
                    and n.name == cls.__name__).body
        documented = {a.target.id for a, b in zip(body, body[1:])
                      if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)
                      and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)}
        assert documented == {f.name for f in dataclasses.fields(cls)}, cls.__name__
