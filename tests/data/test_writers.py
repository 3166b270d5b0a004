"""The one writer of the sparse-line formats (mlx.data.convert): its bytes against a slow
line-by-line reference, for float values (XC and LIBSVM) and for exact fixed-point values
(the files of `mlx datasets synth`)."""

from decimal import Decimal

import numpy as np
import pytest
import scipy.sparse as sp

from mlx.data.convert import fixed_text, float_text, sparse_lines, write_libsvm, write_xc
from mlx.data.dataset import Dataset, canonical_csr
from mlx.data.xc_repo import read_xc


def reference_lines(X, Y, index_base, empty_row, value_text=repr):
    """Line by line in plain Python: labels, then index:value pairs."""
    out = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + index_base}:{value_text(v)}"
                         for j, v in zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist()))
        labels = ",".join(map(str, Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()))
        if not feats and not labels:
            out.append(empty_row)
        elif not labels:
            out.append(" " + feats + "\n")
        else:
            out.append(f"{labels} {feats}\n" if feats else labels + "\n")
    return "".join(out)


def random_dataset(seed):
    rng = np.random.default_rng(seed)
    n, d, L = (int(v) for v in rng.integers(1, 50, 3))
    X = sp.random(n, d, density=rng.random() * 0.5, random_state=seed, format="csr")
    X.data = (X.data - 0.5) * 10.0 ** rng.integers(-12, 12)   # exponents, negatives
    X.data[::4] = rng.integers(-3, 4, X.data[::4].size)       # whole numbers, zeros dropped
    X.data[1::7] = rng.choice([np.nan, np.inf, -np.inf, 1 / 3], X.data[1::7].size)
    Y = sp.random(n, L, density=rng.random() * 0.3, random_state=seed + 1, format="csr")
    Y.data[:] = 1
    return Dataset(X=canonical_csr(X), Y=canonical_csr(Y))


@pytest.mark.parametrize("seed", range(12))
def test_float_files_match_the_reference(tmp_path, seed):
    ds = random_dataset(seed)
    n, d = ds.X.shape
    write_xc(ds, tmp_path / "a.txt")
    assert (tmp_path / "a.txt").read_text() == (
        f"{n} {d} {ds.n_labels}\n" + reference_lines(ds.X, ds.Y, 0, "\n"))
    write_libsvm(ds, tmp_path / "a.svm")
    assert (tmp_path / "a.svm").read_text() == reference_lines(ds.X, ds.Y, 1, " 1:0.0\n")


def test_rows_beyond_one_block_are_all_written(tmp_path, monkeypatch):
    from mlx.data import convert

    monkeypatch.setattr(convert, "_BLOCK_ROWS", 7)
    ds = random_dataset(3)
    ds.X.data[~np.isfinite(ds.X.data)] = 0.5       # the reader refuses non-finite values
    write_xc(ds, tmp_path / "a.txt.gz")
    back = read_xc(tmp_path / "a.txt.gz")
    assert ds.n_samples > 3 * 7
    assert back.X.shape == ds.X.shape and (back.X != ds.X).nnz == 0
    assert (back.Y != ds.Y).nnz == 0


def test_fixed_point_values_are_exact():
    rng = np.random.default_rng(0)
    q = np.concatenate([[0, 1, 10, 99999, 100000, 100001, 250000, 12340],
                        rng.integers(0, 10**9, 200)])
    text, offsets = fixed_text(q, 5)
    got = [text[a:b].tobytes().decode() for a, b in zip(offsets[:-1], offsets[1:])]
    for v, s in zip(q.tolist(), got):
        want = format(Decimal(v).scaleb(-5).normalize(), "f")
        assert s == (want if "." in want else want + ".0"), v
    assert got[:8] == ["0.0", "0.00001", "0.0001", "0.99999", "1.0", "1.00001", "2.5",
                       "0.1234"]


def test_fixed_point_lines_match_the_reference():
    rng = np.random.default_rng(1)
    X = sp.random(40, 30, density=0.2, random_state=2, format="csr")
    X.data = rng.integers(1, 10**6, X.nnz).astype(float)
    Y = canonical_csr(sp.random(40, 9, density=0.15, random_state=3, format="csr") != 0)
    got = sparse_lines(X.indptr, X.indices, fixed_text(X.data.astype(np.int64), 5), Y.indptr,
                       Y.indices, index_base=0, empty_row=b"\n")
    ref = reference_lines(X, Y, 0, "\n", lambda v: str(Decimal(int(v)).scaleb(-5)))
    # the reference writes Decimal text (0.10000); the writer drops trailing zeros
    assert got.decode().split() == [
        t if ":" not in t else t.split(":")[0] + ":" + _short(t.split(":")[1])
        for t in ref.split()]
    assert got.count(b"\n") == 40


def _short(text):
    s = format(Decimal(text).normalize(), "f")
    return s if "." in s else s + ".0"


def test_float_text_is_repr():
    values = np.array([0.1, -1 / 3, 1e-5, 1e22, 5.0, np.nan])
    text, offsets = float_text(values)
    assert text.tobytes().decode() == "".join(map(repr, values.tolist()))
    assert offsets.tolist() == [0, 3, 22, 27, 32, 35, 38]
