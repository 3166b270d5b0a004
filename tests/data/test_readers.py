import time

import numpy as np
import pytest

from mlx.data.arff import (
    read_arff_header,
    read_arff_regression,
    read_mulan_arff,
    read_mulan_files,
    read_mulan_xml,
)
from mlx.data.convert import write_libsvm, write_xc
from mlx.data.dataset import Dataset, canonical_csr
from mlx.data.libsvm import read_libsvm_files, read_libsvm_multiclass, read_libsvm_multilabel
from mlx.data.synthetic import make_low_rank_multilabel
from mlx.data.xc_repo import read_xc, read_xc_files, read_xc_header
from mlx.errors import DataFormatError


def dense(M):
    return M.toarray()


def assert_canonical(M):
    assert M.dtype == np.float64
    assert M.has_sorted_indices
    assert np.all(M.data != 0)


# ----------------------------------------------------------------------------- LIBSVM
LIBSVM_ML = "0,2 1:0.5 3:2\n 2:1.5\n1\n"


def test_libsvm_multilabel_hand_computed(write):
    ds = read_libsvm_multilabel(write("a.svm", LIBSVM_ML), name="toy")
    np.testing.assert_array_equal(dense(ds.X), [[0.5, 0, 2], [0, 1.5, 0], [0, 0, 0]])
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    assert (ds.name, ds.task) == ("toy", "multilabel")
    assert_canonical(ds.X)
    assert_canonical(ds.Y)


def test_libsvm_gzip_by_magic_crlf_comments_blank_lines(write):
    text = "# a comment\r\n0,2 1:0.5 3:2\r\n\r\n 2:1.5\r\n1\r\n"
    plain = read_libsvm_multilabel(write("a.svm", LIBSVM_ML))
    for path in (write("b.svm", text, gz=True), write("c.svm.gz", text, gz=True)):
        ds = read_libsvm_multilabel(path)
        np.testing.assert_array_equal(dense(ds.X), dense(plain.X))
        np.testing.assert_array_equal(dense(ds.Y), dense(plain.Y))


def test_libsvm_tabs_and_repeated_blanks_take_the_slow_path(write):
    ds = read_libsvm_multilabel(write("a.svm", "0,2\t1:0.5   3:2\n"))
    np.testing.assert_array_equal(dense(ds.X), [[0.5, 0, 2]])


def test_libsvm_explicit_widths_and_duplicate_labels(write):
    ds = read_libsvm_multilabel(write("a.svm", "1,1 2:3\n"), n_features=4, n_labels=5)
    assert ds.X.shape == (1, 4) and ds.Y.shape == (1, 5)
    np.testing.assert_array_equal(dense(ds.Y), [[0, 1, 0, 0, 0]])


def test_libsvm_train_and_test_get_the_same_width(write):
    tr, te = read_libsvm_files([write("tr", "0 1:1\n"), write("te", "4 7:1\n")])
    assert tr.X.shape == (1, 7) and te.X.shape == (1, 7)
    assert tr.Y.shape == (1, 5) and te.Y.shape == (1, 5)


def test_libsvm_multiclass_mapping_is_shared_by_train_and_test(write):
    tr, te = read_libsvm_files([write("tr", "7 1:1\n2 2:1\n7 1:2\n"),
                                write("te", "9 1:1\n2 2:1\n")], task="multiclass")
    assert tr.label_names == te.label_names == ("2", "7", "9")
    np.testing.assert_array_equal(dense(tr.Y), [[0, 1, 0], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(dense(te.Y), [[0, 0, 1], [1, 0, 0]])
    assert tr.task == "multiclass"
    ds = read_libsvm_multiclass(write("pm", "+1 1:1\n-1 1:2\n"))
    assert ds.label_names == ("-1", "1")
    np.testing.assert_array_equal(dense(ds.Y), [[0, 1], [1, 0]])


@pytest.mark.parametrize("line, message", [
    ("1 abc:1.0", "malformed feature 'abc:1.0' (expected <index>:<value> with an integer "
                  "index >= 1)"),
    ("0 23:1 17:1", "feature index 17 follows 23; indices must be strictly increasing "
                    "within a line"),
    ("0 4:1 4:2", "feature index 4 follows 4; indices must be strictly increasing within a "
                  "line"),
    ("0 0:1", "malformed feature '0:1' (expected <index>:<value> with an integer index >= 1)"),
    ("0 3:x", "malformed feature '3:x' (expected <index>:<value> with a numeric value)"),
    ("0 3:nan", "non-finite value in feature '3:nan' (values must be finite numbers)"),
    ("0 3:inf", "non-finite value in feature '3:inf' (values must be finite numbers)"),
    ("0 5 1:2:3", "malformed feature '5' (expected <index>:<value> with an integer index >= 1)"),
    ("0 :5 1:2", "malformed feature ':5' (expected <index>:<value> with an integer index >= 1)"),
    ("a,1 3:1", "malformed label field 'a,1' (expected comma-separated integer label indices "
                ">= 0)"),
    ("1,,2 3:1", "malformed label field '1,,2' (expected comma-separated integer label "
                 "indices >= 0)"),
    ("-1 3:1", "malformed label field '-1' (expected comma-separated integer label indices "
               ">= 0)"),
])
def test_libsvm_malformed_lines_name_file_and_line(write, line, message):
    path = write("bad.svm", f"0 1:1\n\n{line}\n1 1:1\n")
    with pytest.raises(DataFormatError) as exc:
        read_libsvm_multilabel(path)
    assert str(exc.value) == f"{path}:3: {message}"
    assert exc.value.line_no == 3


def test_libsvm_index_out_of_given_range(write):
    path = write("bad.svm", "0 1:1\n2 3:1\n")
    with pytest.raises(DataFormatError, match=r":2: feature index 3 out of range for "
                                              r"n_features=2 \(indices are 1-based\)$"):
        read_libsvm_multilabel(path, n_features=2)
    with pytest.raises(DataFormatError) as exc:
        read_libsvm_multilabel(path, n_labels=2)
    assert str(exc.value) == f"{path}:2: label index 2 out of range for n_labels=2 " \
                             "(labels are 0-based)"


def test_libsvm_multiclass_errors(write):
    path = write("bad.svm", "1 1:1\nx 1:1\n")
    with pytest.raises(DataFormatError) as exc:
        read_libsvm_multiclass(path)
    assert str(exc.value) == f"{path}:2: malformed class label 'x' (expected a number)"
    path = write("bad2.svm", "1 1:1\n1:2 3:4\n")
    with pytest.raises(DataFormatError) as exc:
        read_libsvm_multiclass(path)
    assert str(exc.value) == f"{path}:2: missing class label before '1:2' (expected <label> " \
                             "<index>:<value> ...)"


def test_corrupt_gzip_is_a_data_format_error(write, tmp_path):
    good = write("a.svm", LIBSVM_ML * 50, gz=True)
    truncated = tmp_path / "t.svm.gz"
    truncated.write_bytes(good.read_bytes()[:40])
    with pytest.raises(DataFormatError, match="corrupt or truncated gzip data"):
        read_libsvm_multilabel(truncated)


# ----------------------------------------------------------------------------- XC repository
XC = "3 4 3\n0,2 0:0.5 3:2\n 1:1.5\n\n"


def test_xc_hand_computed(write):
    path = write("x.txt", XC)
    ds = read_xc(path)
    assert read_xc_header(path) == (3, 4, 3)
    np.testing.assert_array_equal(dense(ds.X), [[0.5, 0, 0, 2], [0, 1.5, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0, 1], [0, 0, 0], [0, 0, 0]])


@pytest.mark.parametrize("text, line, message", [
    ("3 4\n", 1, "malformed header '3 4' (expected '<n_samples> <n_features> <n_labels>' as "
                 "three non-negative integers)"),
    ("3 4 x\n", 1, "malformed header '3 4 x' (expected '<n_samples> <n_features> <n_labels>' "
                   "as three non-negative integers)"),
    ("2 4 3\n0 0:1\n3 1:1\n", 3, "label index 3 out of range for header 'n_labels=3' "
                                "(labels are 0-based)"),
    ("2 4 3\n0 4:1\n1 1:1\n", 2, "feature index 4 out of range for header 'n_features=4' "
                                "(features are 0-based)"),
    ("2 4 3\n0 2:1 1:1\n1 1:1\n", 2, "feature index 1 follows 2; indices must be strictly "
                                    "increasing within a line"),
])
def test_xc_errors(write, text, line, message):
    path = write("x.txt", text)
    with pytest.raises(DataFormatError) as exc:
        read_xc(path)
    assert str(exc.value) == f"{path}:{line}: {message}"


def test_xc_row_count_must_match_header(write):
    path = write("x.txt", "3 4 3\n0 1:1\n")
    with pytest.raises(DataFormatError) as exc:
        read_xc(path)
    assert str(exc.value) == f"{path}: the header declares n_samples=3 but the file has 1 " \
                             "instance lines; the header must match the number of lines after it"


def test_xc_train_and_test_headers_must_agree(write):
    with pytest.raises(DataFormatError, match="train and test must agree"):
        read_xc_files([write("a", "1 4 3\n0 1:1\n"), write("b", "1 5 3\n0 1:1\n")])


# ----------------------------------------------------------------------------- ARFF
ARFF_HEAD = """% a comment
@RELATION 'toy data'

@attribute f0 numeric
@Attribute 'feature one' REAL
@attribute "f2" {0,1}
@attribute lab0 {0,1}
@attribute lab1 { 0, 1 }
@DATA
"""
ARFF_SPARSE = ARFF_HEAD + "{0 1.5,3 1}\n{1 2, 2 1,3 1,4 1}\n% between rows\n{}\n"
ARFF_DENSE = ARFF_HEAD + "1.5,0,0,1,0\n0,2,1,1,1\n\n0,0,0,0,0\n"
X_TOY = [[1.5, 0, 0], [0, 2, 1], [0, 0, 0]]
Y_TOY = [[1, 0], [1, 1], [0, 0]]


@pytest.mark.parametrize("text", [ARFF_SPARSE, ARFF_DENSE], ids=["sparse", "dense"])
def test_mulan_arff_hand_computed(write, text):
    ds = read_mulan_arff(write("t.arff", text, gz=True), n_labels=2, name="toy")
    np.testing.assert_array_equal(dense(ds.X), X_TOY)
    np.testing.assert_array_equal(dense(ds.Y), Y_TOY)
    assert ds.label_names == ("lab0", "lab1")
    assert (ds.name, ds.task) == ("toy", "multilabel")
    assert_canonical(ds.X)
    assert_canonical(ds.Y)


def test_arff_header_names_quotes_and_nominal_values(write):
    header = read_arff_header(write("t.arff", ARFF_SPARSE))
    assert header.relation == "toy data"
    assert [a.name for a in header.attributes] == ["f0", "feature one", "f2", "lab0", "lab1"]
    assert header.attributes[4].values == ("0", "1")
    assert header.attributes[1].kind == "numeric"


def test_mulan_labels_from_xml_in_another_order(write):
    xml = write("t.xml", '<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/'
                         'labels"><label name="lab1"></label><label name="lab0"></label>'
                         '</labels>')
    assert read_mulan_xml(xml) == ["lab1", "lab0"]
    ds = read_mulan_arff(write("t.arff", ARFF_SPARSE), xml=xml)
    assert ds.label_names == ("lab0", "lab1")  # ARFF order, not XML order
    np.testing.assert_array_equal(dense(ds.Y), Y_TOY)


def test_mulan_xml_naming_a_feature_is_an_error(write):
    xml = write("t.xml", '<labels><label name="f2"/><label name="lab0"/></labels>')
    with pytest.raises(DataFormatError) as exc:
        read_mulan_arff(write("t.arff", ARFF_SPARSE), xml=xml)
    assert str(exc.value).endswith("names 2 labels but not the last 2 attributes (Mulan "
                                   "labels are the last attributes): attribute 'f2' (3 of 5) is "
                                   "in that list but not among the last 2 attributes")


@pytest.mark.parametrize("rows, line, message", [
    ("1.5,?,0,1,0\n", 10, "missing value '?' for attribute 'feature one' (missing values are "
                          "not supported; remove or impute the rows that have them)"),
    ("{1 ?}\n", 10, "missing value '?' for attribute 'feature one' (missing values are not "
                    "supported; remove or impute the rows that have them)"),
    ("1,2,0,1,0\n1,x,0,1,0\n", 11, "malformed value 'x' for attribute 'feature one' "
                                   "(expected a number)"),
    ("1,2,0,1\n", 10, "row has 4 values but the header declares 5 attributes (one "
                      "comma-separated value per attribute)"),
    ("{0 1,3 2}\n", 10, "label attribute 'lab0' has value 2 (expected 0 or 1)"),
    ("{3 1,1 1}\n", 10, "attribute index 1 follows 3; indices must be strictly increasing "
                        "within a sparse row"),
    ("{5 1}\n", 10, "attribute index 5 out of range (the header declares 5 attributes, "
                    "indexed from 0)"),
    ("{0 1 2,3 1}\n", 10, "malformed sparse entry '0 1 2' (expected '<index> <value>' with a "
                          "0-based attribute index)"),
    ("{0,3 1 1}\n", 10, "malformed sparse entry '0' (expected '<index> <value>' with a "
                        "0-based attribute index)"),
    ("{0 1\n", 10, "malformed sparse row (expected '{<index> <value>, ...}' ending with '}')"),
    ("{0 1}\n1,2,0,1,0\n", 11, "dense row after sparse rows (every row of a file must use the "
                               "same style)"),
    ("1,inf,0,1,0\n", 10, "non-finite value 'inf' for attribute 'feature one' (values must be "
                          "finite numbers)"),
])
def test_arff_malformed_rows(write, rows, line, message):
    path = write("bad.arff", ARFF_HEAD + rows)
    with pytest.raises(DataFormatError) as exc:
        read_mulan_arff(path, n_labels=2)
    assert str(exc.value) == f"{path}:{line}: {message}"


@pytest.mark.parametrize("text, line, message", [
    ("@relation r\n@attribute a numeric\n", None,
     "no @data line (an ARFF file needs @attribute declarations followed by @data and the "
     "rows)"),
    ("@relation r\n@attribute a blob\n@data\n", 2,
     "unknown type 'blob' of attribute 'a' (expected numeric, real, integer, string, date or "
     "{v1,v2,...})"),
    ("@relation r\n@attribute 'a numeric\n@data\n", 2,
     "unterminated ' quote in 'a numeric (a quoted name or value must end with the same "
     "quote)"),
    ("@relation r\nhello\n", 2,
     "unexpected line 'hello' in the header (expected @relation, @attribute, @data or a % "
     "comment)"),
])
def test_arff_header_errors(write, text, line, message):
    path = write("bad.arff", text)
    with pytest.raises(DataFormatError) as exc:
        read_mulan_arff(path, n_labels=1)
    where = f"{path}:{line}" if line else str(path)
    assert str(exc.value) == f"{where}: {message}"


def test_arff_n_labels_must_fit_and_headers_must_agree(write):
    path = write("t.arff", ARFF_SPARSE)
    with pytest.raises(DataFormatError, match="n_labels=5 does not fit the 5 declared"):
        read_mulan_arff(path, n_labels=5)
    other = write("u.arff", ARFF_SPARSE.replace("lab1", "labX"))
    with pytest.raises(DataFormatError) as exc:
        read_mulan_files([path, other], n_labels=2)
    assert str(exc.value) == (f"{other}: attribute 4 is 'labX' {{0, 1}} but in {path} it is "
                              "'lab1' {0, 1}; train and test files must declare the same "
                              "attributes")


REGRESSION = """@relation 'r'
@attribute 'Sex' { M, F, I}
@attribute x real
@attribute y numeric
@data
M,0.5,1.5
I, 0, 2,
'F',1,0
"""


def test_regression_arff_codes_and_onehot(write):
    path = write("r.arff", REGRESSION)
    ds = read_arff_regression(path)
    np.testing.assert_array_equal(dense(ds.X), [[1, 0.5], [3, 0], [2, 1]])
    np.testing.assert_array_equal(dense(ds.Y), [[1.5], [2], [0]])
    assert ds.task == "regression" and ds.label_names == ("y",)
    ds = read_arff_regression(path, nominal="onehot")
    np.testing.assert_array_equal(dense(ds.X), [[1, 0, 0, 0.5], [0, 0, 1, 0], [0, 1, 0, 1]])


def test_regression_arff_errors(write):
    path = write("r.arff", REGRESSION + "Q,1,1\n")
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path)
    assert str(exc.value) == f"{path}:9: value 'Q' of attribute 'Sex' is not one of its " \
                             "declared values {M, F, I}"
    path = write("r2.arff", REGRESSION + "M,?,1\n")
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path)
    assert str(exc.value) == f"{path}:9: missing value '?' for attribute 'x' (missing values " \
                             "are not read by default; set missing: nan to read a missing " \
                             "feature value as NaN and add the impute_mean preprocessing step, " \
                             "or remove the rows that have them)"
    path = write("r3.arff", REGRESSION.replace("y numeric", "y {a,b}"))
    with pytest.raises(DataFormatError, match="is not numeric; a regression target must be"):
        read_arff_regression(path)


MULTI_TARGET = """@relation mtr
@attribute a numeric
@attribute s {M,F}
@attribute t1 numeric
@attribute t2 numeric
@data
1,M,10,0
?,?,11,2
 3,F,0,4
"""


def test_regression_arff_several_targets_and_missing_features_as_nan(write):
    path = write("m.arff", MULTI_TARGET)
    ds = read_arff_regression(path, n_targets=2, missing="nan")
    X = dense(ds.X)
    np.testing.assert_array_equal(X[[0, 2]], [[1, 1], [3, 2]])
    assert np.isnan(X[1]).all() and np.isnan(ds.X.data).sum() == 2  # stored, not zeros
    np.testing.assert_array_equal(dense(ds.Y), [[10, 0], [11, 2], [0, 4]])
    assert ds.label_names == ("t1", "t2") and ds.task == "regression"
    onehot = read_arff_regression(path, n_targets=2, missing="nan", nominal="onehot")
    assert np.isnan(dense(onehot.X)[1]).all() and onehot.X.shape == (3, 3)
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path, n_targets=2)
    assert str(exc.value).startswith(f"{path}:8: missing value '?' for attribute 'a' (missing "
                                     "values are not read by default; set missing: nan")
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path, n_targets=4)
    assert str(exc.value) == (f"{path}: n_targets=4 does not fit the 4 declared attributes (the "
                              "targets are the last n_targets attributes; need 1 <= n_targets "
                              "< 4)")
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path, n_targets=3)
    assert str(exc.value) == (f"{path}: the target (one of the last 3 attributes) 's' {{M, F}} "
                              "is not numeric; a regression target must be numeric")


def test_regression_arff_missing_target_is_an_error(write):
    path = write("m.arff", MULTI_TARGET.replace("1,M,10,0", "1,M,?,0"))
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path, n_targets=2, missing="nan")
    assert str(exc.value) == (f"{path}:7: missing value '?' for attribute 't1' (every row needs "
                              "its targets; remove the rows that have none)")
    path = write("n.arff", MULTI_TARGET.replace("?,?,11", "nan,?,11"))
    with pytest.raises(DataFormatError) as exc:
        read_arff_regression(path, n_targets=2, missing="nan")
    assert str(exc.value) == (f"{path}:8: non-finite value 'nan' for attribute 'a' (values must "
                              "be finite)")


# ----------------------------------------------------------------------------- round trips
def _edge_case_dataset():
    split = make_low_rank_multilabel(30, 12, 7, 3, n_test=1, seed=3)
    X = split.train.X.tolil()
    Y = split.train.Y.tolil()
    X[0, :] = 0  # labels, no features
    Y[1, :] = 0  # features, no labels
    X[2, :] = 0  # neither
    Y[2, :] = 0
    X[3, 5] = -1.0 / 3.0  # a value whose shortest repr has 16 digits
    return Dataset(X=canonical_csr(X), Y=canonical_csr(Y), name="edge")


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_xc_round_trip(tmp_path, suffix):
    ds = _edge_case_dataset()
    path = write_xc(ds, tmp_path / "out" / f"out.txt{suffix}")
    back = read_xc(path)
    assert back.X.shape == ds.X.shape and back.Y.shape == ds.Y.shape
    assert (back.X != ds.X).nnz == 0 and (back.Y != ds.Y).nnz == 0
    assert list(path.parent.iterdir()) == [path]  # no temporary files left


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_libsvm_round_trip(tmp_path, suffix):
    ds = _edge_case_dataset()
    path = write_libsvm(ds, tmp_path / f"out.svm{suffix}")
    back = read_libsvm_multilabel(path, n_features=ds.n_features, n_labels=ds.n_labels)
    assert (back.X != ds.X).nnz == 0 and (back.Y != ds.Y).nnz == 0
    assert back.n_samples == ds.n_samples


def test_xc_writer_text(tmp_path):
    ds = Dataset(X=canonical_csr(np.array([[0.5, 0, 2.0], [0, 0, 0]])),
                 Y=canonical_csr(np.array([[0, 1], [1, 1]])))
    write_xc(ds, tmp_path / "a.txt")
    assert (tmp_path / "a.txt").read_text() == "2 3 2\n1 0:0.5 2:2.0\n0,1\n"
    write_libsvm(ds, tmp_path / "a.svm")
    assert (tmp_path / "a.svm").read_text() == "1 1:0.5 3:2.0\n0,1\n"


def test_libsvm_multiclass_read_as_ordinal_levels(write):
    path = write("o.svm", "3 1:1\n1 2:1\n3 1:2\n")
    ds = read_libsvm_files([path], task="ordinal")[0]
    assert ds.task == "ordinal" and ds.label_names is None
    np.testing.assert_array_equal(dense(ds.Y), [[3], [1], [3]])
    np.testing.assert_array_equal(dense(ds.X), [[1, 0], [0, 1], [2, 0]])
    bad = write("p.svm", "3 1:1\n1.5 2:1\n")
    with pytest.raises(DataFormatError) as exc:
        read_libsvm_files([bad], task="ordinal")
    assert str(exc.value) == (f"{bad}:2: class label 1.5 is not an integer level (an ordinal "
                              "task needs integer levels; read the file as multiclass)")


# ----------------------------------------------------------------------------- real data
@pytest.mark.data
def test_bibtex_train_parses_fast(staged):
    path = staged("bibtex/bibtex-train.arff.gz")
    t0 = time.perf_counter()
    ds = read_mulan_arff(path, n_labels=159)
    elapsed = time.perf_counter() - t0
    assert ds.X.shape == (4880, 1836) and ds.Y.shape == (4880, 159)
    assert elapsed < 1.0, f"parsing took {elapsed:.2f} s"


@pytest.mark.data
def test_rf1_missing_values_are_features_only(staged):
    path = staged("rf1-substitute/rf1.arff.gz")
    ds = read_arff_regression(path, n_targets=8, missing="nan")
    assert ds.X.shape == (9125, 64) and ds.Y.shape == (9125, 8)
    assert ds.label_names[0] == "CHSI2_48H__0" and ds.label_names[-1] == "DLDI4_48H__0"
    nan = np.isnan(dense(ds.X))
    assert nan.sum() == 3264 and nan.any(axis=1).sum() == 120
    assert not nan[:, :8].any()        # the current readings are complete; lagged ones are not
    assert np.isfinite(ds.Y.data).all()
    with pytest.raises(DataFormatError, match=r"rf1.arff.gz:78: missing value '\?' for "
                                              r"attribute 'CHSI2___6'"):
        read_arff_regression(path, n_targets=8)
