"""Input checks shared by every method: properties the older tests left open (found by
mutation testing)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.methods._validation import as_float_csr, check_fit_data, check_n_features, pattern


def _noncanonical():
    """3 x 3 COO-built CSR with a duplicate (0, 2) and unsorted column indices in row 0."""
    M = sp.csr_matrix((np.array([2, 5, 1, 3], dtype=np.int64), np.array([2, 0, 2, 1]),
                       np.array([0, 3, 3, 4])), shape=(3, 3))
    assert not M.has_canonical_format
    return M


def test_a_canonical_float_csr_is_taken_without_a_copy():
    M = sp.csr_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))
    out = as_float_csr(M, "X", "LEML")
    assert out.dtype == np.float64 and np.shares_memory(out.data, M.data)


def test_other_inputs_become_canonical_float_csr_and_the_input_is_untouched():
    M = _noncanonical()
    before = (M.data.copy(), M.indices.copy())
    out = as_float_csr(M, "X", "LEML")
    assert sp.isspmatrix_csr(out) and out.dtype == np.float64 and out.has_canonical_format
    assert out.toarray().tolist() == [[5.0, 0.0, 3.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]]
    assert np.array_equal(M.data, before[0]) and np.array_equal(M.indices, before[1])
    dense = as_float_csr([[0, 1], [2, 0]], "X", "LEML")
    assert sp.isspmatrix_csr(dense) and dense.dtype == np.float64 and dense.nnz == 2
    assert as_float_csr(sp.coo_matrix(np.eye(2, dtype=np.int32)), "X", "L").format == "csr"


@pytest.mark.parametrize("M", [np.array([[1 + 2j, 0]]), sp.csr_matrix(np.array([[1j, 0]]))])
def test_complex_values_are_refused(M):
    with pytest.raises(ValueError) as exc:
        as_float_csr(M, "Y", "BR")
    assert str(exc.value) == ("BR: Y holds complex numbers (Complex data not supported); give "
                              "real values")


@pytest.mark.parametrize("M, shape", [(np.ones(3), "(3,)"), (np.ones((2, 2, 2)), "(2, 2, 2)"),
                                      (np.float64(1.0), "()")])
def test_a_matrix_must_be_two_dimensional(M, shape):
    with pytest.raises(ValueError) as exc:
        as_float_csr(M, "X", "LEML")
    assert str(exc.value) == (f"LEML: X must be a 2-D matrix; got shape {shape} (Reshape your "
                              "data: X.reshape(1, -1) for a single row)")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused_dense_or_sparse(bad):
    for M in (np.array([[1.0, bad]]), sp.csr_matrix(np.array([[1.0, bad]]))):
        with pytest.raises(ValueError) as exc:
            as_float_csr(M, "X", "CPLST")
        assert str(exc.value) == ("CPLST: X contains NaN or infinity; remove or impute those "
                                  "entries before fitting")


def test_pattern_is_a_fresh_canonical_matrix_of_ones():
    M = _noncanonical()
    M.data = M.data.astype(np.float64)
    M.data[0] = -2.0                   # (0, 2): -2 + 1 = -1, still non-zero
    P = pattern(M)
    assert P.dtype == np.float64 and P.has_canonical_format
    assert P.toarray().tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert P.nnz == 3 and set(P.data) == {1.0}
    P.data[:] = 7.0
    assert M.data.tolist() == [-2.0, 5.0, 1.0, 3.0]     # the input is not shared
    cancel = sp.csr_matrix((np.array([1.0, -1.0, 0.0]), np.array([0, 0, 1]),
                            np.array([0, 2, 3])), shape=(2, 2))
    P = pattern(cancel)                # duplicates summing to 0 and a stored zero: no entry
    assert P.nnz == 0 and P.shape == (2, 2)
    assert pattern(np.array([[0.5, 0], [0, -3]])).toarray().tolist() == [[1, 0], [0, 1]]


def _xy(n=3, d=2, L=2):
    return np.arange(1, n * d + 1, dtype=float).reshape(n, d), np.eye(n, L)


@pytest.mark.parametrize("Y, message", [
    (np.ones(3), "LEML: X has 3 rows but Y has shape (3,); Y must be (n_samples, n_labels)"),
    (np.ones((2, 2)), "LEML: X has 3 rows but Y has shape (2, 2); Y must be (n_samples, "
                      "n_labels)"),
    (np.ones((3, 0)), "LEML: empty input (X (3, 2), Y (3, 0))"),
    (np.array([[1, np.nan]] * 3), "LEML: Y contains NaN or infinity"),
    (sp.csr_matrix(np.array([[1, np.inf]] * 3)), "LEML: Y contains NaN or infinity"),
    (np.array([[1, 0], [0, 0.5], [2, 0]]),
     "LEML: Y holds values other than 0 and 1 (e.g. 0.5); labels must be 0/1 (real-valued "
     "targets are a regression task)"),
    (np.array([[1, 0], [0, -1], [0, 0]]),
     "LEML: Y holds values other than 0 and 1 (e.g. -1); labels must be 0/1 (real-valued "
     "targets are a regression task)"),
])
def test_bad_labels_are_refused_with_what_is_valid(Y, message):
    X, _ = _xy()
    with pytest.raises(ValueError) as exc:
        check_fit_data("LEML", X, Y)
    assert str(exc.value) == message


def test_empty_inputs_are_refused():
    with pytest.raises(ValueError) as exc:
        check_fit_data("BR", np.ones((3, 0)), np.eye(3))
    assert str(exc.value) == ("BR: X has 0 feature(s) (shape=(3, 0)) while a minimum of 1 is "
                              "required.")
    with pytest.raises(ValueError) as exc:
        check_fit_data("BR", np.ones((0, 2)), np.ones((0, 2)))
    assert str(exc.value) == "BR: empty input (X (0, 2), Y (0, 2))"


def test_labels_as_bools_ints_or_sparse_give_the_same_positives():
    X, Y = _xy()
    ref = check_fit_data("LEML", X, Y)
    assert ref.observed is None
    assert (ref.n_samples, ref.n_features, ref.n_labels) == (3, 2, 2)
    assert ref.positives.toarray().tolist() == Y.tolist()
    assert ref.X.dtype == np.float64 and ref.X.toarray().tolist() == X.tolist()
    for other in (Y.astype(bool), Y.astype(np.int8), sp.csr_matrix(Y), sp.coo_matrix(Y).T.T,
                  Y.tolist()):
        got = check_fit_data("LEML", X, other)
        assert got.positives.toarray().tolist() == Y.tolist()
        assert got.positives.dtype == np.float64 and got.positives.has_canonical_format


def test_observed_entries_mask_the_positives():
    X, _ = _xy()
    Y = np.array([[1, 1], [0, 1], [1, 0]])
    obs = sp.csr_matrix((np.array([1.0, 0.0, 2.0, 1.0]), np.array([0, 0, 1, 1]),
                         np.array([0, 1, 3, 4])), shape=(3, 2))     # (1, 0) stored as 0
    data = check_fit_data("LEML", X, Y, obs)
    assert data.observed.toarray().tolist() == [[1, 0], [1, 1], [0, 1]]
    assert data.observed.dtype == np.float64 and data.observed.has_canonical_format
    assert data.positives.toarray().tolist() == [[1, 0], [0, 1], [0, 0]]
    assert obs.data.tolist() == [1.0, 0.0, 2.0, 1.0]                   # not modified
    every = sp.csr_matrix(np.ones((3, 2)))
    every.data[0] = 0.0                                                # stored: observed
    full = check_fit_data("LEML", X, Y, every)
    assert full.observed is None and full.positives.toarray().tolist() == Y.tolist()
    with pytest.raises(ValueError) as exc:
        check_fit_data("LEML", X, Y, sp.csr_matrix(np.ones((3, 3))))
    assert str(exc.value) == "LEML: observed has shape (3, 3) but Y has shape (3, 2)"


def test_scoring_input_must_have_the_fitted_number_of_features():
    X = check_n_features("WSABIE", [[1, 2, 3]], 3)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    with pytest.raises(ValueError) as exc:
        check_n_features("WSABIE", np.ones((2, 4)), 3)
    assert str(exc.value) == ("WSABIE: X has 4 features, but WSABIE is expecting 3 features as "
                              "input (it was fitted with 3)")
    with pytest.raises(ValueError, match="WSABIE: X contains NaN"):
        check_n_features("WSABIE", np.array([[np.nan, 1, 1]]), 3)


def test_the_messages_about_x_name_x_and_the_method():
    _, Y = _xy()
    with pytest.raises(ValueError) as exc:
        check_fit_data("BCS", np.array([[1.0, np.nan]] * 3), Y)
    assert str(exc.value) == ("BCS: X contains NaN or infinity; remove or impute those entries "
                              "before fitting")


@pytest.mark.parametrize("shape, message", [
    ((0, 0), "BR: empty input (X (0, 0), Y (0, 2))"),
    ((1, 0), "BR: X has 0 feature(s) (shape=(1, 0)) while a minimum of 1 is required."),
])
def test_which_empty_input_is_named(shape, message):
    with pytest.raises(ValueError) as exc:
        check_fit_data("BR", np.ones(shape), np.ones((shape[0], 2)))
    assert str(exc.value) == message


def test_one_feature_and_stored_zero_labels_are_fine():
    data = check_fit_data("BR", np.ones((3, 1)), np.eye(3, 2))
    assert data.n_features == 1
    Y = sp.csr_matrix((np.array([1.0, 0.0, 1.0]), np.array([0, 1, 1]), np.array([0, 2, 2, 3])),
                      shape=(3, 2))                      # (0, 1) stored as an explicit 0
    data = check_fit_data("BR", np.ones((3, 1)), Y)
    assert data.positives.toarray().tolist() == [[1, 0], [0, 0], [0, 1]]


def test_an_integer_or_boolean_mask_gives_a_float_mask():
    X, _ = _xy()
    Y = np.array([[1, 1], [0, 1], [1, 0]])
    for mask in (sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 1]], dtype=np.int64)),
                 sp.csr_matrix(np.array([[True, False], [True, True], [False, True]]))):
        data = check_fit_data("LEML", X, Y, mask)
        assert data.observed.dtype == np.float64
        assert data.observed.toarray().tolist() == [[1, 0], [1, 1], [0, 1]]
