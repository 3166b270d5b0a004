"""The delimited-text reader (format ``csv``): separators, headers, targets, line endings,
missing values, tasks and its messages; and the staged UCI files it reads."""

import numpy as np
import pytest

from mlx.data.delimited import read_delimited, read_delimited_files
from mlx.errors import DataFormatError

WINE = ('"fixed acidity";"volatile acidity";"quality";"alcohol"\n'
        "7.4;0.7;5;9.4\n"
        "7.8;0;6;9.8\n")


def dense(M):
    return M.toarray()


def test_quoted_header_separator_and_target_by_name(write):
    ds = read_delimited(write("w.csv", WINE), sep=";", target="quality", name="wine")
    np.testing.assert_array_equal(dense(ds.X), [[7.4, 0.7, 9.4], [7.8, 0, 9.8]])
    np.testing.assert_array_equal(dense(ds.Y), [[5], [6]])
    assert (ds.name, ds.task, ds.label_names) == ("wine", "regression", ("quality",))
    assert ds.X.has_sorted_indices and not (ds.X.data == 0).any()


def test_default_target_is_the_last_column_and_numbers_count_from_one(write):
    path = write("w.csv", WINE)
    last = read_delimited(path, sep=";")
    assert last.label_names == ("alcohol",)
    np.testing.assert_array_equal(dense(last.Y), [[9.4], [9.8]])
    third = read_delimited(path, sep=";", target=3)
    np.testing.assert_array_equal(dense(third.Y), [[5], [6]])


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("gz", [False, True])
def test_line_endings_blank_lines_and_gzip(write, newline, gz):
    text = newline.join(["density,bodyfat,age", "1.0708,12.3,23", "", "1.0853,6.1,22", ""])
    ds = read_delimited(write("b.csv", text, gz=gz), target="bodyfat")
    np.testing.assert_array_equal(dense(ds.X), [[1.0708, 23], [1.0853, 22]])
    np.testing.assert_array_equal(dense(ds.Y), [[12.3], [6.1]])


def test_no_header_blank_runs_and_multiclass_classes_shared_by_files(write):
    train = write("s.trn", "0 21  77 2\n55 0 92\t4\n")
    test = write("s.tst", "  37 0 103 1\n")
    tr, te = read_delimited_files([train, test], task="multiclass", sep=" ", header=False)
    np.testing.assert_array_equal(dense(tr.X), [[0, 21, 77], [55, 0, 92]])
    assert tr.label_names == te.label_names == ("1", "2", "4")
    np.testing.assert_array_equal(dense(tr.Y), [[0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(dense(te.Y), [[1, 0, 0]])
    assert tr.task == "multiclass"


def test_ordinal_levels(write):
    ds = read_delimited(write("w.csv", WINE), sep=";", target="quality", task="ordinal")
    assert ds.task == "ordinal" and ds.Y.shape == (2, 1)
    path = write("o.csv", "x,level\n1,2\n2,2.5\n")
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, task="ordinal")
    assert str(exc.value) == (f"{path}:3: target column 'level' 2.5 is not an integer level (an "
                              "ordinal task needs integer levels; use task regression)")


def test_missing_target_column_lists_the_columns(write):
    path = write("w.csv", WINE)
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, sep=";", target="qualty")
    assert str(exc.value) == (f"{path}:1: no column named 'qualty' in the header (did you mean "
                              "'quality'?); columns: 'fixed acidity', 'volatile acidity', "
                              "'quality', 'alcohol'")
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, sep=";", target=5)
    assert str(exc.value) == (f"{path}:1: target column 5 out of range (the file has 4 columns, "
                              "numbered from 1)")


MISSING = "a,b,y\n1,?,3\n,5,6\n7,NA,nan\n"


def test_missing_cells_are_errors_by_default(write):
    path = write("m.csv", MISSING)
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, target="b")
    assert str(exc.value) == (f"{path}:2: missing target value '?' in column 'b' (every row "
                              "needs its target; remove the rows that have none)")
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, target="a")
    assert str(exc.value) == (f"{path}:3: missing target value '' in column 'a' (every row "
                              "needs its target; remove the rows that have none)")
    path = write("m2.csv", "a,b,y\n1,2,3\n4,?,6\n")
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path)
    assert str(exc.value) == (f"{path}:3: missing value '?' in column 'b' (missing values are "
                              "not read by default; set missing: nan to read a missing feature "
                              "value as NaN and add the impute_mean preprocessing step, or "
                              "remove the rows that have them)")


def test_missing_features_read_as_stored_nan(write):
    path = write("m.csv", MISSING.replace("7,NA,nan", "7,NA,9"))
    ds = read_delimited(path, missing="nan")
    X = dense(ds.X)
    np.testing.assert_array_equal(np.isnan(X), [[0, 1], [1, 0], [0, 1]])
    assert np.isnan(ds.X.data).sum() == 3            # stored explicitly, not implicit zeros
    np.testing.assert_array_equal(dense(ds.Y), [[3], [6], [9]])
    with pytest.raises(DataFormatError, match=r":4: missing target value 'nan' in column 'y'"):
        read_delimited(write("n.csv", MISSING), missing="nan")


@pytest.mark.parametrize("text, options, line, message", [
    ("a,b\r1,2\r\r3,x\r", {}, 4,  # CR-only line endings: the true line number
     "malformed value 'x' in column 'b' (expected a number, or an empty field, ?, NA or nan for "
     "a missing value)"),
    ("\n\n", {}, None, "empty file (expected a header line naming the columns, then the rows)"),
    ("a,b\n1,2\n3\n", {}, 3,
     "row has 1 values but the header names 2 columns (one ','-separated value per column)"),
    ("1 2 3\n4 5\n", {"sep": " ", "header": False}, 2,
     "row has 2 values but the first row has 3 columns (one blank-separated value per column)"),
    ("a,b\n1,inf\n", {}, 2, "non-finite value 'inf' in column 'b' (values must be finite "
                            "numbers)"),
    ("1;2;3\n", {"header": False}, 1, "found 1 column with separator ','; a csv file needs at "
                                      "least one feature column and a target column (is the "
                                      "separator right?)"),
    ("a;b\n", {"sep": ";"}, 1, "no data rows after the header"),
    ("1,1e,3\n", {"header": False}, 1, "malformed value '1e' in column 2 (expected a number, or "
                                       "an empty field, ?, NA or nan for a missing value)"),
])
def test_malformed_files(write, text, options, line, message):
    path = write("bad.csv", text)
    with pytest.raises(DataFormatError) as exc:
        read_delimited(path, **options)
    where = f"{path}:{line}" if line else str(path)
    assert str(exc.value) == f"{where}: {message}"


def test_files_read_together_need_the_same_columns(write):
    a = write("a.csv", "x,y\n1,2\n")
    b = write("b.csv", "x,z\n1,2\n")
    with pytest.raises(DataFormatError) as exc:
        read_delimited_files([a, b])
    assert str(exc.value) == (f"{b}:1: names the columns 'x', 'z' but {a} names 'x', 'y'; files "
                              "read together must have the same columns")
    c, d = write("c.txt", "1 2 3\n"), write("d.txt", "\n1 2\n")
    with pytest.raises(DataFormatError) as exc:
        read_delimited_files([c, d], sep=" ", header=False)
    assert str(exc.value) == (f"{d}:2: has 2 columns but {c} has 3; files read together must "
                              "have the same columns")


# ----------------------------------------------------------------------------- real data
@pytest.mark.data
def test_shuttle_classes(staged):
    train, test = staged("shuttle/shuttle.trn.gz"), staged("shuttle/shuttle.tst.gz")
    tr, te = read_delimited_files([train, test], task="multiclass", sep=" ", header=False)
    assert tr.X.shape == (43500, 9) and te.X.shape == (14500, 9)
    assert tr.label_names == tuple(str(k) for k in range(1, 8))
    np.testing.assert_array_equal(np.asarray(tr.Y.sum(axis=0)).ravel(),
                                  [34108, 37, 132, 6748, 2458, 6, 11])
    np.testing.assert_array_equal(np.asarray(te.Y.sum(axis=0)).ravel(),
                                  [11478, 13, 39, 2155, 809, 4, 2])


@pytest.mark.data
@pytest.mark.parametrize("colour, n, levels", [("red", 1599, (3, 8)), ("white", 4898, (3, 9))])
def test_wine_quality_levels(staged, colour, n, levels):
    path = staged(f"wine-quality/winequality-{colour}.csv.gz")
    ds = read_delimited(path, sep=";", target="quality", task="ordinal")
    y = dense(ds.Y).ravel()
    assert ds.X.shape == (n, 11) and (y.min(), y.max()) == levels
    assert np.array_equal(y, np.round(y))


@pytest.mark.data
def test_bodyfat_cr_line_endings(staged):
    ds = read_delimited(staged("bodyfat/bodyfat.csv"), target="bodyfat")
    assert ds.X.shape == (252, 14) and ds.label_names == ("bodyfat",)
    np.testing.assert_allclose(dense(ds.X[0]), [[1.0708, 23, 154.25, 67.75, 36.2, 93.1, 85.2,
                                                 94.5, 59, 37.3, 21.9, 32, 27.4, 17.1]])
    assert dense(ds.Y)[0, 0] == 12.3
