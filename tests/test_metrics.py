"""Metrics: vectorised implementations against slow obvious ones, pinned edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.errors import ConfigError, UnknownNameError
from mlx.metrics import (
    METRICS,
    TASK_NAMES,
    Evaluator,
    MetricFamily,
    default_batch_size,
    default_metrics,
    evaluate,
    f1,
    hamming_loss,
    instance_auc,
    mean_absolute_error,
    mean_squared_error,
    metric_names,
    ndcg_at_k,
    parse_metric,
    precision_at_k,
    top_k_indices,
    zero_one_error,
)

# --------------------------------------------------------------------------- slow references


def label_sets(Y):
    Y = sp.csr_matrix(Y)
    return [set(Y.indices[Y.indptr[i]:Y.indptr[i + 1]][Y.data[Y.indptr[i]:Y.indptr[i + 1]] != 0])
            for i in range(Y.shape[0])]


def ref_top_k(row, k):
    return sorted(range(len(row)), key=lambda j: (-row[j], j))[:k]


def ref_precision(Y, S, k):
    return np.array([len(set(ref_top_k(S[i], k)) & labels) / k
                     for i, labels in enumerate(label_sets(Y))])


def ref_ndcg(Y, S, k):
    out = []
    for i, labels in enumerate(label_sets(Y)):
        if not labels:
            out.append(math.nan)
            continue
        dcg = sum(1 / math.log2(r + 2) for r, j in enumerate(ref_top_k(S[i], k)) if j in labels)
        idcg = sum(1 / math.log2(r + 2) for r in range(min(k, len(labels))))
        out.append(dcg / idcg)
    return np.array(out)


def ref_hamming(Y, S, threshold):
    L = S.shape[1]
    return np.array([sum((S[i, j] > threshold) != (j in labels) for j in range(L)) / L
                     for i, labels in enumerate(label_sets(Y))])


def ref_auc(Y, S, degenerate="skip"):
    out = []
    for i, labels in enumerate(label_sets(Y)):
        pos = [S[i, j] for j in range(S.shape[1]) if j in labels]
        neg = [S[i, j] for j in range(S.shape[1]) if j not in labels]
        if not pos or not neg:
            out.append(math.nan if degenerate == "skip" else 0.0)
            continue
        wins = 0.0
        for p in pos:
            for q in neg:
                wins += 1.0 if p > q else 0.5 if p == q else 0.0
        out.append(wins / (len(pos) * len(neg)))
    return np.array(out)


def ref_f1(Y, S, threshold):
    out = []
    for i, labels in enumerate(label_sets(Y)):
        pred = {j for j in range(S.shape[1]) if S[i, j] > threshold}
        denom = len(pred) + len(labels)
        out.append(1.0 if denom == 0 else 2 * len(pred & labels) / denom)
    return np.array(out)


def ref_micro_macro(Y, S, threshold):
    L = S.shape[1]
    tp, fp, fn = [0] * L, [0] * L, [0] * L
    for i, labels in enumerate(label_sets(Y)):
        for j in range(L):
            p, t = S[i, j] > threshold, j in labels
            tp[j] += p and t
            fp[j] += p and not t
            fn[j] += t and not p
    def f(a, b, c):
        return 0.0 if 2 * a + b + c == 0 else 2 * a / (2 * a + b + c)
    return f(sum(tp), sum(fp), sum(fn)), sum(f(*c) for c in zip(tp, fp, fn)) / L


def ref_error(Y, S):
    return np.array([0.0 if int(np.argmax(S[i])) in labels else 1.0
                     for i, labels in enumerate(label_sets(Y))])


# --------------------------------------------------------------------------- data


def random_problem(seed, n=40, L=9, ties=False, density=0.3):
    rng = np.random.default_rng(seed)
    dense = rng.random((n, L)) < density
    dense[0] = False          # a row with no labels
    dense[1] = True           # a row with every label
    Y = sp.csr_matrix(dense.astype(np.float64))
    S = rng.integers(0, 3, size=(n, L)).astype(np.float64) if ties else rng.normal(size=(n, L))
    return Y, S


PROBLEMS = [(seed, ties) for seed in range(3) for ties in (False, True)]


@pytest.mark.parametrize("seed,ties", PROBLEMS)
@pytest.mark.parametrize("k", [1, 2, 3, 8, 9, 12])
def test_top_k_order_matches_stable_sort(seed, ties, k):
    _, S = random_problem(seed, ties=ties)
    expected = np.array([ref_top_k(row, k) for row in S])
    np.testing.assert_array_equal(top_k_indices(S, k), expected)


@pytest.mark.parametrize("seed,ties", PROBLEMS)
@pytest.mark.parametrize("k", [1, 3, 5, 9, 12])
def test_ranking_metrics_match_reference(seed, ties, k):
    Y, S = random_problem(seed, ties=ties)
    np.testing.assert_allclose(precision_at_k(Y, S, k=k), ref_precision(Y, S, k), rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(ndcg_at_k(Y, S, k=k), ref_ndcg(Y, S, k), rtol=1e-12)


@pytest.mark.parametrize("seed,ties", PROBLEMS)
@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
def test_threshold_metrics_match_reference(seed, ties, threshold):
    Y, S = random_problem(seed, ties=ties)
    np.testing.assert_allclose(hamming_loss(Y, S, threshold=threshold),
                               ref_hamming(Y, S, threshold), rtol=1e-15)
    np.testing.assert_allclose(f1(Y, S, threshold=threshold), ref_f1(Y, S, threshold),
                               rtol=1e-15)


@pytest.mark.parametrize("seed,ties", PROBLEMS)
@pytest.mark.parametrize("degenerate", ["skip", "zero"])
def test_auc_matches_pair_counting(seed, ties, degenerate):
    Y, S = random_problem(seed, ties=ties)
    np.testing.assert_allclose(instance_auc(Y, S, degenerate=degenerate),
                               ref_auc(Y, S, degenerate), rtol=1e-12)


@pytest.mark.parametrize("seed,ties", PROBLEMS)
def test_error_matches_reference(seed, ties):
    Y, S = random_problem(seed, ties=ties)
    np.testing.assert_array_equal(zero_one_error(Y, S), ref_error(Y, S))


@pytest.mark.parametrize("seed,ties", PROBLEMS)
@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_micro_macro_f1_match_reference(seed, ties, threshold):
    Y, S = random_problem(seed, ties=ties)
    ev = Evaluator(["micro_f1", "macro_f1"], threshold=threshold)
    ev.update(Y, S)
    micro, macro = ref_micro_macro(Y, S, threshold)
    res = ev.result()
    assert res["micro_f1"][0] == pytest.approx(micro, rel=1e-14)
    assert res["macro_f1"][0] == pytest.approx(macro, rel=1e-14)
    assert res["micro_f1"][1] == res["macro_f1"][1] == Y.shape[0]


def test_shared_topk_gives_same_values():
    Y, S = random_problem(0, ties=True)
    topk = top_k_indices(S, 5)
    for k in (1, 3, 5):
        np.testing.assert_array_equal(precision_at_k(Y, S, k=k, topk=topk),
                                      precision_at_k(Y, S, k=k))
        np.testing.assert_array_equal(ndcg_at_k(Y, S, k=k, topk=topk), ndcg_at_k(Y, S, k=k))
    with pytest.raises(ValueError, match="topk must have shape"):
        precision_at_k(Y, S, k=5, topk=topk[:, :3])


def test_regression_metrics():
    rng = np.random.default_rng(0)
    T = rng.normal(size=(20, 4))
    T[T < 0] = 0.0
    S = rng.normal(size=(20, 4))
    Ts = sp.csr_matrix(T)
    np.testing.assert_allclose(mean_squared_error(Ts, S), ((S - T) ** 2).mean(axis=1))
    np.testing.assert_allclose(mean_absolute_error(Ts, S), np.abs(S - T).mean(axis=1))
    ev = Evaluator(["mse", "rmse", "mae"])
    ev.update(Ts, S)
    res = ev.result()
    assert res["mse"] == (pytest.approx(((S - T) ** 2).mean()), 20)
    assert res["rmse"] == (pytest.approx(math.sqrt(((S - T) ** 2).mean())), 20)
    assert res["mae"] == (pytest.approx(np.abs(S - T).mean()), 20)


# --------------------------------------------------------------------------- pinned edge cases


def csr(rows, L):
    dense = np.zeros((len(rows), L))
    for i, labels in enumerate(rows):
        dense[i, list(labels)] = 1
    return sp.csr_matrix(dense)


def test_all_ties_break_towards_lower_label_index():
    Y = csr([{0}, {3, 4}], 5)
    S = np.zeros((2, 5))
    np.testing.assert_array_equal(top_k_indices(S, 3), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=1), [1.0, 0.0])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=4), [0.25, 0.25])
    np.testing.assert_array_equal(instance_auc(Y, S), [0.5, 0.5])


def test_tie_straddling_kth_place():
    # Labels 1, 2, 3 tie for places 2-4; with k = 2 the lowest index (1) wins.
    S = np.array([[5.0, 1.0, 1.0, 1.0, 0.0]])
    np.testing.assert_array_equal(top_k_indices(S, 2), [[0, 1]])
    np.testing.assert_array_equal(precision_at_k(csr([{3}], 5), S, k=2), [0.0])
    np.testing.assert_array_equal(precision_at_k(csr([{1}], 5), S, k=2), [0.5])


def test_rows_without_labels():
    Y = csr([set(), set()], 4)
    S = np.array([[1.0, -1.0, 2.0, -3.0], [-1.0, -1.0, -1.0, -1.0]])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=2), [0.0, 0.0])
    assert np.isnan(ndcg_at_k(Y, S, k=2)).all()
    assert np.isnan(instance_auc(Y, S)).all()
    np.testing.assert_array_equal(instance_auc(Y, S, degenerate="zero"), [0.0, 0.0])
    np.testing.assert_array_equal(hamming_loss(Y, S, threshold=0.0), [0.5, 0.0])
    np.testing.assert_array_equal(f1(Y, S, threshold=0.0), [0.0, 1.0])
    np.testing.assert_array_equal(zero_one_error(Y, S), [1.0, 1.0])
    ev = Evaluator(["p@1", "ndcg@1", "auc"])
    ev.update(Y, S)
    res = ev.result()
    assert res["p@1"] == (0.0, 2)
    assert res["ndcg@1"][1] == 0 and math.isnan(res["ndcg@1"][0])
    assert res["auc"][1] == 0 and math.isnan(res["auc"][0])


def test_rows_with_all_labels():
    Y = csr([{0, 1, 2}], 3)
    S = np.array([[0.3, -2.0, 0.1]])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=2), [1.0])
    np.testing.assert_array_equal(ndcg_at_k(Y, S, k=3), [1.0])
    assert np.isnan(instance_auc(Y, S))[0]
    np.testing.assert_array_equal(instance_auc(Y, S, degenerate="zero"), [0.0])
    np.testing.assert_allclose(hamming_loss(Y, S, threshold=0.0), [1 / 3])


def test_k_larger_than_n_labels_keeps_denominator_k():
    Y = csr([{0, 1}, {2}], 3)
    S = np.array([[0.0, 1.0, 2.0], [3.0, 2.0, 1.0]])
    np.testing.assert_array_equal(top_k_indices(S, 5), [[2, 1, 0], [0, 1, 2]])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=5), [2 / 5, 1 / 5])
    # ideal DCG uses min(k, |labels|) labels: a perfect ranking is not needed here
    np.testing.assert_allclose(ndcg_at_k(Y, S, k=5),
                               [(1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3)),
                                1 / math.log2(4)])


def test_single_label():
    Y = csr([{0}, set()], 1)
    S = np.array([[0.2], [0.7]])
    np.testing.assert_array_equal(precision_at_k(Y, S, k=1), [1.0, 0.0])
    assert np.isnan(instance_auc(Y, S)).all()
    np.testing.assert_array_equal(hamming_loss(Y, S, threshold=0.5), [1.0, 1.0])
    np.testing.assert_array_equal(zero_one_error(Y, S), [0.0, 1.0])


def test_auc_ties_count_half():
    Y = csr([{0}, {0, 1}], 4)
    S = np.array([[1.0, 1.0, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0]])
    # row 0: positive 1.0 vs negatives {1.0, 0.0, 2.0} -> (½ + 1 + 0) / 3
    # row 1: positives {3, 0} vs negatives {0, 0} -> (1 + 1 + ½ + ½) / 4
    np.testing.assert_allclose(instance_auc(Y, S), [0.5, 0.75])


def test_hamming_threshold_is_strict():
    # the paper rounds f to 0/1: a score of exactly 0.5 rounds to 0 (numpy's round-half-even)
    Y = csr([{0, 1}], 3)
    S = np.array([[0.5, 0.51, 0.5]])
    np.testing.assert_allclose(hamming_loss(Y, S, threshold=0.5), [1 / 3])
    np.testing.assert_array_equal(np.round(S) != Y.toarray(), [[True, False, False]])


def test_explicit_zeros_and_duplicates_in_y_true():
    Y = sp.csr_matrix((np.array([1.0, 0.0, 0.5, 0.5]), np.array([0, 1, 2, 2]),
                       np.array([0, 4])), shape=(1, 3))
    S = np.array([[1.0, 3.0, 2.0]])
    before = Y.data.copy()
    np.testing.assert_array_equal(precision_at_k(Y, S, k=2), [0.5])   # labels {0, 2}
    np.testing.assert_array_equal(Y.data, before)


def test_input_errors():
    Y, S = random_problem(0)
    with pytest.raises(ValueError, match="y_true has shape"):
        precision_at_k(Y[:3], S, k=1)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        precision_at_k(Y, S, k=0)
    bad = S.copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match="scores contain NaN"):
        instance_auc(Y, bad)
    with pytest.raises(ConfigError, match="auc_degenerate must be one of 'skip', 'zero'"):
        instance_auc(Y, S, degenerate="ignore")


# --------------------------------------------------------------------------- evaluator


ALL_METRICS = ["p@1", "P@3", "p@5", "p@20", "ndcg@3", "hamming", "auc", "f1", "micro_f1",
               "macro_f1", "error"]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("batch", [1, 7, 13])
def test_evaluator_batches_give_exactly_the_one_batch_result(ties, batch):
    Y, S = random_problem(3, n=50, L=11, ties=ties)
    whole = Evaluator(ALL_METRICS, threshold=0.5)
    whole.update(Y, S)
    parts = Evaluator(ALL_METRICS, threshold=0.5)
    for start in range(0, Y.shape[0], batch):
        parts.update(Y[start:start + batch], S[start:start + batch])
    assert parts.result() == whole.result()
    assert list(whole.result()) == ["p@1", "p@3", "p@5", "p@20", "ndcg@3", "hamming", "auc",
                                    "f1", "micro_f1", "macro_f1", "error"]


def test_evaluator_matches_reference_means():
    Y, S = random_problem(1, ties=True)
    ev = Evaluator(["p@3", "auc", "hamming", "ndcg@2"], threshold=1.0)
    ev.update(Y, S)
    res = ev.result()
    assert res["p@3"] == (pytest.approx(ref_precision(Y, S, 3).mean()), Y.shape[0])
    ref = ref_auc(Y, S)
    assert res["auc"] == (pytest.approx(np.nanmean(ref)), int(np.sum(~np.isnan(ref))))
    assert res["hamming"][0] == pytest.approx(ref_hamming(Y, S, 1.0).mean())
    np.testing.assert_allclose(ev.values("auc"), ref, rtol=1e-12)


def test_evaluator_auc_zero_counts_degenerate_rows():
    Y, S = random_problem(2)
    ev = Evaluator(["auc"], auc_degenerate="zero")
    ev.update(Y, S)
    value, n_eval = ev.result()["auc"]
    assert n_eval == Y.shape[0]
    assert value == pytest.approx(ref_auc(Y, S, "zero").mean())


def test_evaluator_rejects_changing_width_and_bad_options():
    ev = Evaluator(["p@1"])
    ev.update(*random_problem(0, L=5))
    with pytest.raises(ValueError, match="earlier batches had 5"):
        ev.update(*random_problem(0, L=6))
    with pytest.raises(ConfigError, match="threshold must be a finite number"):
        Evaluator(["hamming"], threshold=float("nan"))
    with pytest.raises(ConfigError, match="auc_degenerate"):
        Evaluator(["auc"], auc_degenerate="drop")


def test_evaluator_with_no_rows():
    res = Evaluator(["p@1", "micro_f1"]).result()
    assert all(n == 0 and math.isnan(v) for v, n in res.values())


class _Linear:
    """A stand-in method: scores = X @ W, recording the batch sizes it was called with."""

    def __init__(self, W):
        self.W = W
        self.calls = []

    def decision_function(self, X):
        self.calls.append(X.shape[0])
        return np.asarray(X @ self.W)


def test_evaluate_scores_in_batches():
    rng = np.random.default_rng(0)
    X = sp.random(30, 6, density=0.5, format="csr", random_state=np.random.default_rng(1))
    W = rng.normal(size=(6, 8))
    Y, _ = random_problem(4, n=30, L=8)
    method = _Linear(W)
    res = evaluate(method, X, Y, ["p@1", "auc", "macro_f1"], batch_size=7)
    assert method.calls == [7, 7, 7, 7, 2]
    ev = Evaluator(["p@1", "auc", "macro_f1"])
    ev.update(Y, np.asarray(X @ W))
    assert res == ev.result()
    assert evaluate(lambda Xb: np.asarray(Xb @ W), X, Y, ["p@1"]) == {"p@1": res["p@1"]}


def test_evaluate_checks_score_shape():
    Y, _ = random_problem(0, n=5, L=3)
    with pytest.raises(ValueError, match=r"returned shape \(5, 2\) for rows 0:5"):
        evaluate(lambda Xb: np.zeros((Xb.shape[0], 2)), sp.csr_matrix((5, 4)), Y, ["p@1"])


def test_default_batch_size_bounds_dense_scores():
    assert default_batch_size(1000) == 8000
    assert default_batch_size(10**9) == 1
    assert default_batch_size(1000) * 1000 * 8 <= 64e6


# --------------------------------------------------------------------------- names


def test_parse_metric_canonical_names():
    assert parse_metric("P@3").name == "p@3"
    assert parse_metric(" p@03 ").k == 3
    assert parse_metric("NDCG@5").name == "ndcg@5"
    assert parse_metric("Hamming").name == "hamming"
    assert parse_metric("micro_f1").family is METRICS.get("micro_f1")


def test_metric_names_lists_forms():
    assert metric_names() == ["auc", "error", "f1", "hamming", "macro_f1", "mae", "micro_f1",
                              "mse", "ndcg@<k>", "p@<k>", "rmse"]


def test_unknown_metric_message():
    with pytest.raises(UnknownNameError) as info:
        parse_metric("hamm")
    assert str(info.value) == (
        "unknown metric 'hamm'. Did you mean 'hamming'? Available metrics: auc, error, f1, "
        "hamming, macro_f1, mae, micro_f1, mse, ndcg@<k>, p@<k>, rmse")
    with pytest.raises(UnknownNameError, match="unknown metric 'recall@3'"):
        parse_metric("recall@3")
    with pytest.raises(UnknownNameError):
        parse_metric("p@<k>".replace("p", "q"))


@pytest.mark.parametrize("name,got", [("p@0", "'0'"), ("p@x", "'x'"), ("ndcg@", "''"),
                                      ("p@1.5", "'1.5'"), ("p@-2", "'-2'")])
def test_bad_k_message(name, got):
    with pytest.raises(ConfigError) as info:
        parse_metric(name)
    assert not isinstance(info.value, UnknownNameError)
    stem = name.split("@")[0]
    assert str(info.value) == (f"invalid metric {name!r}: k in '{stem}@<k>' must be an integer "
                               f">= 1, as in '{stem}@3'; got {got}")


def test_non_string_metric_name():
    with pytest.raises(ConfigError, match="a metric name must be a string"):
        parse_metric(3)


def test_direction_of_metrics():
    lower = {"hamming", "error", "mse", "rmse", "mae"}
    for form in metric_names():
        name = form.replace("<k>", "3")
        assert parse_metric(name).higher_is_better == (form not in lower)


# --------------------------------------------------------------------------- tasks


@pytest.mark.parametrize("form,tasks", [
    ("p@<k>", {"multilabel"}), ("ndcg@<k>", {"multilabel"}), ("hamming", {"multilabel"}),
    ("auc", {"multilabel"}), ("f1", {"multilabel"}), ("micro_f1", {"multilabel"}),
    ("macro_f1", {"multilabel"}), ("error", {"multiclass"}),
    ("mse", {"regression", "ordinal"}), ("rmse", {"regression", "ordinal"}),
    ("mae", {"regression", "ordinal"}),
])
def test_tasks_of_each_metric(form, tasks):
    assert METRICS.get(form).tasks == frozenset(tasks)


def test_every_metric_has_tasks_and_every_task_has_metrics():
    assert TASK_NAMES == ("multilabel", "multiclass", "regression", "ordinal")
    covered = set()
    for form in metric_names():
        tasks = METRICS.get(form).tasks
        assert isinstance(tasks, frozenset) and tasks and tasks <= set(TASK_NAMES)
        covered |= tasks
    assert covered == set(TASK_NAMES)


def test_value_metrics_are_exactly_those_for_regression():
    for form in metric_names():
        fam = METRICS.get(form)
        assert (fam.targets == "values") == ("regression" in fam.tasks)


def test_metric_family_checks_its_tasks():
    args = ("x", "d", "instance", "mean", None)
    assert MetricFamily(*args, tasks={"multiclass"}).tasks == frozenset({"multiclass"})
    with pytest.raises(TypeError):
        MetricFamily(*args)  # tasks is required
    for bad in (set(), {"multilabel", "ranking"}):
        with pytest.raises(ValueError, match="tasks must be a non-empty subset"):
            MetricFamily(*args, tasks=bad)


@pytest.mark.parametrize("task,expected", [
    ("multilabel", ["p@1", "p@3", "p@5", "hamming", "auc"]),
    ("multiclass", ["error"]),
    ("regression", ["mse"]),
    ("ordinal", ["mae"]),
])
def test_default_metrics(task, expected):
    got = default_metrics(task)
    assert got == expected
    for name in got:
        assert task in parse_metric(name).family.tasks
    got.append("f1")  # a fresh list: changing it changes no later result
    assert default_metrics(task) == expected


def test_default_metrics_of_an_unknown_task():
    with pytest.raises(UnknownNameError) as info:
        default_metrics("multi-label")
    assert str(info.value) == ("unknown task 'multi-label'. Did you mean 'multilabel'? "
                               "Available tasks: multiclass, multilabel, ordinal, regression")



def test_metric_compute_takes_its_arguments_by_name():
    from mlx.metrics.names import COMPUTE_ARGUMENTS

    args = ("x", "d", "instance", "mean")
    ok = (lambda *, labels, scores, **_: labels, lambda **_: 0,
          lambda *, labels, targets, scores, top_k, k, threshold, auc_degenerate: 0)
    for compute in ok:
        assert MetricFamily(*args, compute, tasks={"multilabel"}).compute is compute
    bad = {"positional": lambda Y, T, s, topk, k, t, d: 0,
           "one positional": lambda labels, *, scores, **_: 0,
           "unknown name": lambda *, labels, degenerate, **_: 0,
           "names missing, no **_": lambda *, labels, scores: 0,
           "*args": lambda *a, **_: 0}
    for why, compute in bad.items():
        with pytest.raises(TypeError, match=r"compute must take keyword-only arguments among "
                                            + ", ".join(COMPUTE_ARGUMENTS)):
            MetricFamily(*args, compute, tasks={"multilabel"})
    for form in metric_names():
        fam = METRICS.get(form)
        assert (fam.compute is None) == (fam.kind == "counts")


def test_every_metric_reads_its_arguments_by_name_and_ignores_the_others():
    Y = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 0]]))
    scores = np.array([[0.9, 0.2, 0.4], [0.1, 0.3, 0.8]])
    named = {"labels": Y, "targets": Y.toarray().astype(float), "scores": scores,
             "top_k": top_k_indices(scores, 2), "k": 2, "threshold": 0.35,
             "auc_degenerate": "zero"}
    expected = {"p@<k>": precision_at_k(Y, scores, k=2), "ndcg@<k>": ndcg_at_k(Y, scores, k=2),
                "hamming": hamming_loss(Y, scores, threshold=0.35),
                "auc": instance_auc(Y, scores, degenerate="zero"),
                "f1": f1(Y, scores, threshold=0.35), "error": zero_one_error(Y, scores),
                "mse": mean_squared_error(Y, scores), "rmse": mean_squared_error(Y, scores),
                "mae": mean_absolute_error(Y, scores)}
    for form, values in expected.items():
        np.testing.assert_array_equal(METRICS.get(form).compute(**named), values)
    assert {f for f in metric_names() if METRICS.get(f).compute is not None} == set(expected)
