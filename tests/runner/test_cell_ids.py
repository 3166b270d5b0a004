"""Cell ids are what a results directory's cache is keyed by: they must not change when the
code that builds cells does (a user's finished cells would all be recomputed). The ids below
were computed by an earlier version of the sweep expansion and are pinned as literals."""

import pytest
import yaml

from mlx.config import parse_config
from mlx.runner.sweep import expand

PIN_MULTILABEL = """
name: pin-ml
seed: 3
dataset:
  synthetic: {n_samples: 60, n_features: 8, n_labels: 6, rank: 2, seed: 2, n_test: 20}
preprocess: [l2_normalize, bias]
methods:
  - name: leml
    params: {loss: squared, max_iter: 3}
    grid: {l2_reg: [0.1, 1.0]}
  - name: br
    label: BR
    params: {loss: squared}
    select: {l2_reg: [0.1, 1.0], preprocess: [[bias], [minmax, bias]]}
    threshold: 0.25
  - name: wsabie
    params: {epochs: 2}
    preprocess: []
sweep: {rank_ratio: [0.5], observed_ratio: [1.0, 0.5], repetitions: 2}
metrics: [p@1, auc]
evaluation: {auc_degenerate: zero, splits: [test, train]}
selection: {metric: auc, cv: 2}
"""
PIN_MULTICLASS = """
name: pin-mc
dataset:
  synthetic: {task: multiclass, n_samples: 80, n_test: 20, n_features: 5, n_classes: 3, seed: 1}
split: {test_fraction: 0.25, stratify: true, repetitions: 2, pool: true}
methods:
  - constant
  - name: br
    label: BR-SQ
    select: {l2_reg: [0.5, 5.0]}
    params: {loss: squared}
  - {name: leml, params: {max_iter: 2, loss: squared}}
sweep: {rank: [2], labelled_ratio: [1.0, 0.5]}
selection: {validation_fraction: 0.3, stratify: true}
metrics: [error]
"""
PIN_REGRESSION = """
name: pin-reg
seed: 1
dataset: bodyfat
split: {test_fraction: 0.2, repetitions: 1}
target: minmax
preprocess: [minmax]
methods:
  - name: constant
  - name: landmark
    params: {model: regland_sp, n_landmarks: 10}
    grid: {similarity: [sigmoid, manhattan]}
    select: {sparsity: [2, 5]}
selection: {metric: mse}
metrics: [mse, mae]
"""

PINNED = {
    PIN_MULTILABEL: {
        "leml[k/L=0.5,l2_reg=0.1,rep=0]": "94be33591a28",
        "leml[k/L=0.5,l2_reg=0.1,rep=1]": "e48ac0e3215c",
        "leml[k/L=0.5,obs=0.5,l2_reg=0.1,rep=0]": "6c241ff5a91b",
        "leml[k/L=0.5,obs=0.5,l2_reg=0.1,rep=1]": "157844a7c760",
        "leml[k/L=0.5,l2_reg=1.0,rep=0]": "6d26419aa4b2",
        "leml[k/L=0.5,l2_reg=1.0,rep=1]": "3179615af845",
        "leml[k/L=0.5,obs=0.5,l2_reg=1.0,rep=0]": "b3c7042cdbe2",
        "leml[k/L=0.5,obs=0.5,l2_reg=1.0,rep=1]": "183ee6470c6e",
        "BR[rep=0]": "3afef4e0e142",
        "BR[rep=1]": "681f8ed6bb75",
        "BR[obs=0.5,rep=0]": "6d9640a44ab7",
        "BR[obs=0.5,rep=1]": "30be1f7d49f4",
        "wsabie[k/L=0.5,rep=0]": "e6279d2a93fb",
        "wsabie[k/L=0.5,rep=1]": "74a579458fc9",
        "wsabie[k/L=0.5,obs=0.5,rep=0]": "a97e82739471",
        "wsabie[k/L=0.5,obs=0.5,rep=1]": "d7bfb4667203",
    },
    PIN_MULTICLASS: {
        "constant[rep=0]": "5c8d8472734d",
        "constant[rep=1]": "b9eb124b7950",
        "constant[labelled=0.5,rep=0]": "b7fc356ba082",
        "constant[labelled=0.5,rep=1]": "30b07a8e71bc",
        "BR-SQ[rep=0]": "c2d45f407f50",
        "BR-SQ[rep=1]": "9c26e422f947",
        "BR-SQ[labelled=0.5,rep=0]": "976edba299d0",
        "BR-SQ[labelled=0.5,rep=1]": "94c054399103",
        "leml[k=2,rep=0]": "6e6e8d1f2a22",
        "leml[k=2,rep=1]": "30fc59a8b562",
        "leml[labelled=0.5,k=2,rep=0]": "6ca3822eddcd",
        "leml[labelled=0.5,k=2,rep=1]": "99ccb297e73a",
    },
    PIN_REGRESSION: {
        "constant[rep=0]": "6b9f3fa66015",
        "landmark[similarity=sigmoid,rep=0]": "2017769eb00e",
        "landmark[similarity=manhattan,rep=0]": "2c3f9c86bb3f",
    },
}


@pytest.mark.parametrize("text", list(PINNED), ids=["multilabel", "multiclass", "regression"])
def test_cell_ids_and_descriptions_are_pinned(text):
    cells = expand(parse_config(yaml.safe_load(text), source="pin.yaml"))
    assert {c.describe(): c.cell_id() for c in cells} == PINNED[text]
    assert [c.order for c in cells] == list(range(len(cells)))


def test_frozen_map_round_trip_hash_and_canonical_json():
    from mlx.runner.sweep import FrozenMap, canonical_json

    plain = {"b": [1, {"x": [2.5, "s"]}], "a": 0.1, "c": None, "d": {"e": True}}
    frozen = FrozenMap.of(plain)
    assert frozen.thaw() == plain and frozen.json() == canonical_json(plain)
    assert frozen == FrozenMap.of(dict(reversed(list(plain.items()))))
    assert hash(frozen) == hash(FrozenMap.of(dict(reversed(list(plain.items())))))
    assert frozen.keys() == ["a", "b", "c", "d"] and "b" in frozen and "z" not in frozen
    assert frozen.get("d") == FrozenMap.of({"e": True}) and frozen.get("z", 7) == 7
    thawed = frozen.thaw()
    thawed["b"][1]["x"].append(3)             # a thawed copy is the caller's own
    assert frozen.thaw() == plain
    assert not FrozenMap() and len(frozen) == 4


def test_a_cell_is_typed_hashable_and_pickles_with_its_id():
    import pickle

    from mlx.config import EvaluationSpec, SelectionSpec, SplitSpec
    from mlx.runner.sweep import FrozenMap

    for text in PINNED:
        for cell in expand(parse_config(yaml.safe_load(text), source="pin.yaml")):
            assert all(isinstance(v, FrozenMap) for v in (cell.params, cell.grid_point,
                                                           cell.select))
            assert all(isinstance(s, FrozenMap) for s in cell.preprocess)
            assert isinstance(cell.evaluation, EvaluationSpec)
            assert isinstance(cell.selection, SelectionSpec)
            assert cell.split is None or isinstance(cell.split, SplitSpec)
            back = pickle.loads(pickle.dumps(cell))
            assert back == cell and hash(back) == hash(cell)
            assert back.cell_id() == cell.cell_id()
