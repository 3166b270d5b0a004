"""plt and omikuji: properties the older tests left open (found by mutation testing): what
the wrappers hand the packages, the model kept as bytes (pickled and restored), every label
scored, the packages' output silenced, the texts users see."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods.xmc import PLT, Omikuji, _quiet, _read_dir, _write_dir

pytest.importorskip("napkinxc")
pytest.importorskip("omikuji")


def _problem(seed=0, n=60, d=8, L=6):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, d)) * (rng.random((n, d)) < 0.6))
    Y = (X @ rng.standard_normal((d, L)) > 0.3).astype(float)
    Y[np.arange(n), rng.integers(0, L, n)] = 1.0                 # every row has a label
    return X, sp.csr_matrix(Y)


@pytest.fixture(scope="module")
def problem():
    return _problem()


def test_quiet_silences_both_descriptors_and_restores_them(capfd):
    with _quiet():
        os.write(1, b"out inside\n")
        os.write(2, b"err inside\n")
    os.write(1, b"out after\n")
    os.write(2, b"err after\n")
    out, err = capfd.readouterr()
    assert (out, err) == ("out after\n", "err after\n")


def test_model_files_round_trip_through_nested_folders(tmp_path):
    files = {"top.bin": b"\x00\x01", "a/b/c.txt": b"deep", "a/d": b""}
    _write_dir(files, tmp_path / "model")
    assert _read_dir(tmp_path / "model") == files


@pytest.mark.parametrize("cls, kw", [(PLT, dict(random_state=3)), (Omikuji, {})])
def test_a_fitted_model_pickles_and_scores_the_same_restored(problem, cls, kw):
    X, Y = problem
    model = cls(**kw).fit(X, Y)
    state = set(vars(model))
    scores = model.decision_function(X)
    assert set(vars(model)) == state                   # scoring leaves the fitted state alone
    assert "_loaded" in state and model.model_files_
    restored = pickle.loads(pickle.dumps(model))
    assert "_loaded" not in vars(restored)
    np.testing.assert_array_equal(restored.decision_function(X), scores)
    assert restored.model_files_ == model.model_files_
    pickle.dumps(restored)                              # no loaded model to leave out: fine
    pickle.dumps(cls(**kw))                             # nor unfitted


def test_plt_hands_its_parameters_to_napkinxc(monkeypatch, problem):
    from napkinxc.models import PLT as _PLT

    seen = []
    original = _PLT.__init__

    def spy(self, output, **kwargs):
        seen.append(kwargs)
        original(self, output, **kwargs)

    monkeypatch.setattr(_PLT, "__init__", spy)
    X, Y = problem
    for solver, name in (("primal", "L2R_LR"), ("dual", "L2R_LR_DUAL")):
        seen.clear()
        model = PLT(c=2.5, arity=3, max_leaves=4, solver=solver, n_threads=2,
                    random_state=7).fit(X, Y)
        model.__dict__.pop("_loaded")
        model.decision_function(X)                    # loads the model again
        expected = dict(liblinear_c=2.5, arity=3, max_leaves=4, liblinear_solver=name,
                        threads=2, seed=7, verbose=0)
        assert seen == [expected] * 3                 # fit, load after fit, load again
        assert all(type(v) is type(expected[k]) for k, v in seen[0].items())


def test_plt_without_a_seed_draws_one_from_numpys_global_generator(problem):
    X, Y = problem
    np.random.seed(11)
    model = PLT(c=10.0).fit(X, Y)
    assert model.seed_ == np.random.RandomState(11).randint(0, 2 ** 31 - 1)


def test_plt_scores_every_label(problem):
    X, Y = problem
    model = PLT(c=10.0, random_state=0, max_leaves=2).fit(X, Y)
    scores = model.decision_function(X[:10])
    assert scores.shape == (10, Y.shape[1]) and np.all(scores > 0) and np.all(scores <= 1)
    assert model.threshold == 0.5 and model.n_labels_ == Y.shape[1]
    assert model.n_features_in_ == X.shape[1] and model.message_ is None


def test_omikuji_hands_its_parameters_to_the_package(monkeypatch, problem):
    import omikuji

    seen = {}
    train, load = omikuji.Model.train_on_data, omikuji.Model.load

    def spy_train(path, hp, n_threads=None):
        seen["hp"] = {k: getattr(hp, k) for k in ("n_trees", "max_depth", "min_branch_size",
                                                  "cluster_k", "cluster_balanced",
                                                  "linear_loss_type", "linear_c")}
        seen["train_threads"] = n_threads
        return train(path, hp, n_threads=n_threads)

    class Spy:
        def __init__(self, model):
            self.model = model

        def init_prediction_thread_pool(self, n):
            seen["predict_threads"] = n
            self.model.init_prediction_thread_pool(n)

        def predict(self, pairs, beam_size, top_k):
            seen.setdefault("beam", set()).add((beam_size, top_k))
            return self.model.predict(pairs, beam_size=beam_size, top_k=top_k)

    monkeypatch.setattr(omikuji.Model, "train_on_data", spy_train)
    monkeypatch.setattr(omikuji.Model, "load", lambda path: Spy(load(path)))
    X, Y = problem
    model = Omikuji(n_trees=2, max_depth=5, min_branch_size=3, cluster_k=3,
                    cluster_balanced=False, loss="log", c=0.5, beam_size=4,
                    n_threads=2).fit(X, Y)
    model.decision_function(X[:3])
    assert seen == {"hp": dict(n_trees=2, max_depth=5, min_branch_size=3, cluster_k=3,
                               cluster_balanced=False, linear_loss_type=1, linear_c=0.5),
                    "train_threads": 2, "predict_threads": 2, "beam": {(4, Y.shape[1])}}
    assert model.message_ is None
    Omikuji(loss="hinge").fit(X, Y)
    assert seen["hp"]["linear_loss_type"] == omikuji.LossType.HINGE.value == 0
    assert seen["hp"]["cluster_balanced"] is True


def test_a_pickled_omikuji_scored_without_the_package_names_it(monkeypatch, problem):
    import sys

    X, Y = problem
    restored = pickle.loads(pickle.dumps(Omikuji(n_trees=1).fit(X, Y)))
    monkeypatch.setitem(sys.modules, "omikuji", None)
    with pytest.raises(ModuleNotFoundError) as exc:
        restored.decision_function(X)
    assert str(exc.value) == ("omikuji needs the optional package omikuji, which is not "
                              "installed; install it with pip install 'mlx-multilabel[xmc]'")


def test_omikuji_label_frequencies_count_every_training_row(problem):
    X, Y = problem
    X = X.tolil()
    X[0, :] = 0                                                  # left out of the file
    X = sp.csr_matrix(X)
    model = Omikuji().fit(X, Y)
    np.testing.assert_array_equal(model.label_frequency_,
                                  np.asarray(Y.sum(axis=0)).ravel() / Y.shape[0])
    assert model.n_labels_ == Y.shape[1] and model.n_features_in_ == X.shape[1]


def test_omikuji_label_frequencies_of_a_single_training_row(problem):
    X, Y = problem
    model = Omikuji(n_trees=1).fit(X[:1], Y[:1])
    np.testing.assert_array_equal(model.label_frequency_, Y[:1].toarray().ravel())


def test_omikuji_ignores_stored_zeros_when_scoring(problem):
    X, Y = problem
    model = Omikuji(n_trees=1).fit(X, Y)
    rows = X[:5].tocoo()
    zeros = [(i, int(np.flatnonzero(X[i].toarray().ravel() == 0)[0])) for i in range(5)]
    Xz = sp.csr_matrix((np.r_[rows.data, np.zeros(5)],
                        (np.r_[rows.row, [i for i, _ in zeros]],
                         np.r_[rows.col, [j for _, j in zeros]])), shape=(5, X.shape[1]))
    assert Xz.nnz == X[:5].nnz + 5                               # the zeros are stored
    np.testing.assert_array_equal(model.decision_function(Xz), model.decision_function(X[:5]))


@pytest.mark.parametrize("cls", [PLT, Omikuji])
def test_missing_labels_are_refused_with_the_reason(cls, problem):
    X, Y = problem
    observed = np.ones(Y.shape)
    observed[0, 0] = 0
    with pytest.raises(ValueError) as exc:
        cls().fit(X, Y, observed=sp.csr_matrix(observed))
    assert str(exc.value) == (f"{cls.__name__} does not support missing labels: observed must "
                              "be None or mark every entry of Y")
    model = cls().fit(X, Y, observed=sp.csr_matrix(np.ones(Y.shape)))    # all observed: fine
    assert model.model_files_


@pytest.mark.parametrize("cls", [PLT, Omikuji])
def test_a_refit_without_positives_drops_the_old_model(cls, problem):
    X, Y = problem
    model = cls().fit(X, Y)
    model.fit(X, sp.csr_matrix(Y.shape))
    assert model.model_files_ == {} and "_loaded" not in vars(model)
    np.testing.assert_array_equal(model.decision_function(X), np.zeros(Y.shape))
    assert model.n_labels_ == Y.shape[1] and model.n_features_in_ == X.shape[1]


def test_a_failed_refit_leaves_no_stale_model(monkeypatch, problem):
    from napkinxc.models import PLT as _PLT

    X, Y = problem
    model = PLT(c=10.0, random_state=0).fit(X, Y)

    def broken(self, X, Y):
        raise RuntimeError("the package failed")

    monkeypatch.setattr(_PLT, "fit", broken)
    with pytest.raises(RuntimeError):
        model.fit(X, Y)
    assert "model_files_" not in vars(model) and "_loaded" not in vars(model)
