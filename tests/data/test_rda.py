"""The mldr .rda reader: synthetic R serialisations written here byte by byte, error
messages on damaged or unexpected input, and entry-for-entry agreement with the ``rdata``
package on every staged mldr file."""

from __future__ import annotations

import lzma
import struct

import numpy as np
import pytest

from mlx.data.catalog import load_full, resolve_dataset
from mlx.data.rda import read_mldr, read_rds_object
from mlx.errors import DataFormatError

# ----------------------------------------------------------------------------- XDR writer
# The R serialisation (src/main/serialize.c), version 2, XDR: every item starts with a
# 32-bit flags word: type | is_object << 8 | has_attributes << 9 | has_tag << 10 | levels << 12.
NIL = struct.pack(">i", 254)
ASCII, UTF8 = 64, 8


def _flags(kind, *, obj=False, attr=False, tag=False, levels=0):
    return struct.pack(">i", kind | obj << 8 | attr << 9 | tag << 10 | levels << 12)


def charsxp(s, levels=ASCII):
    if s is None:
        return _flags(9) + struct.pack(">i", -1)
    raw = s if isinstance(s, bytes) else s.encode("ascii")
    return _flags(9, levels=levels) + struct.pack(">i", len(raw)) + raw


def sym(name):
    return _flags(1) + charsxp(name)


def pairlist(pairs):
    """Attribute pairlist: ``[(name, item bytes), ...]`` (symbols written in full)."""
    out = b""
    for name, value in pairs:
        out += _flags(2, tag=True) + sym(name) + value
    return out + NIL


def vector(kind, body, n, attributes=None, obj=False):
    head = _flags(kind, obj=obj, attr=attributes is not None) + struct.pack(">i", n)
    return head + body + (pairlist(attributes) if attributes is not None else b"")


def real(values, **kw):
    v = np.asarray(values, dtype=">f8")
    return vector(14, v.tobytes(), v.size, **kw)


def integer(values, **kw):
    v = np.asarray(values, dtype=">i4")
    return vector(13, v.tobytes(), v.size, **kw)


def strings(values, levels=ASCII, **kw):
    return vector(16, b"".join(charsxp(s, levels) for s in values), len(values), **kw)


def rlist(items, names=None, cls=None, extra=()):
    attributes = []
    if names is not None:
        attributes.append(("names", strings(names)))
    attributes.extend(extra)
    if cls is not None:
        attributes.append(("class", strings(cls)))
    return vector(19, b"".join(items), len(items), attributes or None, obj=cls is not None)


def data_frame(columns: dict, n: int, row_names=None):
    rn = strings(row_names) if row_names is not None else integer([-(2 ** 31), -n])
    return rlist(list(columns.values()), names=list(columns), cls=["data.frame"],
                 extra=[("row.names", rn)])


def rda(obj_name, obj, *, version=2):
    head = b"RDX2\nX\n" + struct.pack(">iii", version, 0x040302, 0x020300)
    return head + _flags(2, tag=True) + sym(obj_name) + obj + NIL


def mldr_object(frame, features, label_index, label_names, *, cls=("mldr",)):
    labels = data_frame({"index": integer(label_index),
                         "count": real([1.0] * len(label_index))}, len(label_index),
                        row_names=label_names)
    return rlist([strings(["toy"]), frame, integer(features), labels],
                 names=["name", "dataset", "attributesIndexes", "labels"], cls=list(cls))


def write(tmp_path, name, payload, *, xz=True):
    path = tmp_path / name
    path.write_bytes(lzma.compress(payload) if xz else payload)
    return path


# A toy set: 4 rows; labels FIRST (as in ohsumed), then a double, an integer and a
# character feature, then .labelcount and .SCUMBLE; row 3 has no label; a latin-1 name.
Y_TOY = np.array([[1, 0], [1, 1], [0, 0], [0, 1]], dtype=float)
X_TOY = np.array([[-0.5, 0, 1], [0, 3, 0], [0, 0, 0], [2.25, 1, 1]], dtype=float)


def toy_frame(*, char_values=("1", "0", "0", "1"), labelcount=None, lab1=(0, 1, 0, 1)):
    labelcount = Y_TOY.sum(1) if labelcount is None else labelcount
    cols = {
        "lab0": real(Y_TOY[:, 0]),
        "lab1": real(lab1),
        "caf\xe9": real(X_TOY[:, 0]),
        "count": integer(X_TOY[:, 1].astype(int)),
        "flag": strings(list(char_values)),
        ".labelcount": real(labelcount),
        ".SCUMBLE": real([0.0, 0.1, 0.0, 0.0]),
    }
    names = [k.encode("latin-1") for k in cols]
    items = list(cols.values())
    return vector(19, b"".join(items), len(items), obj=True, attributes=[
        ("names", vector(16, b"".join(charsxp(s, 0) for s in names), len(names))),
        ("row.names", integer([-(2 ** 31), -4])),
        ("class", strings(["data.frame"])),
    ])


def toy_rda(**kw):
    return rda("toy", mldr_object(toy_frame(**kw), [3, 4, 5], [1, 2], ["lab0", "lab1"]))


# ----------------------------------------------------------------------------- synthetic
@pytest.mark.parametrize("xz", [True, False])
def test_reads_a_synthetic_mldr_object(tmp_path, xz):
    path = write(tmp_path, "toy.rda", toy_rda(), xz=xz)
    ds = read_mldr(path)
    assert ds.name == "toy" and ds.task == "multilabel"
    np.testing.assert_array_equal(ds.X.toarray(), X_TOY)
    np.testing.assert_array_equal(ds.Y.toarray(), Y_TOY)
    assert ds.label_names == ("lab0", "lab1")
    assert ds.X.has_sorted_indices and 0 not in ds.X.data
    assert read_mldr(path, name="other").name == "other"
    frame = read_rds_object(path)["toy"].items[1]
    assert frame.names() == ["lab0", "lab1", "caf\xe9", "count", "flag", ".labelcount",
                             ".SCUMBLE"]  # unmarked strings are latin-1


def test_labels_last_and_feature_order_follow_the_indexes(tmp_path):
    frame = data_frame({"a": real([0, 1.5]), "b": real([2, 0]), "y1": real([1, 0]),
                        "y2": real([1, 1]), ".labelcount": real([2, 1]),
                        ".SCUMBLE": real([0, 0])}, 2)
    path = write(tmp_path, "last.rda", rda("last", mldr_object(frame, [2, 1], [3, 4],
                                                                ["y1", "y2"])))
    ds = read_mldr(path)
    np.testing.assert_array_equal(ds.X.toarray(), [[2, 0], [0, 1.5]])
    np.testing.assert_array_equal(ds.Y.toarray(), [[1, 1], [0, 1]])


def test_utf8_marked_names_and_rds_objects(tmp_path):
    frame = rlist([real([1.0, 0.0])], names=None)
    path = write(tmp_path, "u.rda", rda("u", rlist([strings(["\u00e9t\u00e9".encode()], UTF8),
                                                    frame])))
    (name, obj), = read_rds_object(path).items()
    assert name == "u" and obj.items[0].tolist() == ["\u00e9t\u00e9"]
    np.testing.assert_array_equal(obj.items[1].items[0].dense(), [1.0, 0.0])


def test_a_file_spec_reads_an_rda_file(tmp_path):
    path = write(tmp_path, "toy.rda", toy_rda())
    spec = resolve_dataset({"format": "mldr", "train": str(path)})
    assert spec.name == "toy" and spec.task == "multilabel"
    ds = load_full(spec)
    np.testing.assert_array_equal(ds.Y.toarray(), Y_TOY)


def altrep(cls, state, attributes=None):
    info = b"".join(_flags(2) + item for item in (sym(cls), sym("base"), integer([13]))) + NIL
    return _flags(238) + info + state + (pairlist(attributes) if attributes else NIL)


def test_version_3_with_compact_sequences(tmp_path):
    """R >= 3.5 writes 1:n as an ALTREP compact sequence and may wrap vectors."""
    frame = data_frame({"a": real([0, 1.5]), "b": altrep("wrap_real", rlist(
        [real([2, 0]), integer([0, 1])])), "y": real([1, 1])}, 2)
    obj = mldr_object(frame, [1, 2], [3], ["y"])
    features = integer([1, 2])
    assert obj.count(features) == 1
    obj = obj.replace(features, altrep("compact_intseq", real([2, 1, 1])))
    header = b"RDX3\nX\n" + struct.pack(">iii", 3, 0x040302, 0x030500) + \
        struct.pack(">i", 5) + b"UTF-8"
    body = _flags(2, tag=True) + sym("v3") + obj + NIL
    path = write(tmp_path, "v3.rda", header + body)
    ds = read_mldr(path)
    np.testing.assert_array_equal(ds.X.toarray(), [[0, 2], [1.5, 0]])
    np.testing.assert_array_equal(ds.Y.toarray(), [[1], [1]])
    other = altrep("deferred_string", integer([1]))
    bad = write(tmp_path, "bad3.rda", header + _flags(2, tag=True) + sym("v3")
                + rlist([other]) + NIL)
    offset = (header + _flags(2, tag=True) + sym("v3") + rlist([other])).index(other)
    assert _error(bad) == (f"{bad}: an ALTREP object of class deferred_string, which this "
                           "reader does not expand (it expands compact sequences and "
                           f"wrappers) at byte {offset} of the decompressed R serialisation; an "
                           "mldr .rda file holds a list of data frames and vectors")


# ----------------------------------------------------------------------------- errors
def _error(path) -> str:
    with pytest.raises(DataFormatError) as exc:
        read_mldr(path)
    return str(exc.value)


def test_truncated_and_corrupt_files(tmp_path):
    payload = lzma.compress(toy_rda())
    cut = write(tmp_path, "cut.rda", payload[: len(payload) // 2], xz=False)
    assert _error(cut).startswith(f"{cut}: corrupt or truncated compressed data (")
    plain = toy_rda()
    short = write(tmp_path, "short.rda", plain[:-40], xz=False)
    msg = _error(short)
    assert msg.startswith(f"{short}: the file ends early (wanted ")
    assert msg.endswith("of the decompressed R serialisation; an mldr .rda file holds a list "
                        "of data frames and vectors")
    text = write(tmp_path, "text.rda", b"name,value\n1,2\n")
    assert _error(text) == (f"{text}: not an R data file: it starts with b'name,', expected "
                            "b'RDX2\\n' or b'RDX3\\n' (a file written by save())")
    ascii_form = write(tmp_path, "a.rda", b"RDA2\nA\n2\n")
    assert "not an R data file" in _error(ascii_form)
    ascii_x = write(tmp_path, "ax.rda", b"RDX2\nA\n" + b"\0" * 12)
    assert _error(ascii_x) == (f"{ascii_x}: only the XDR (binary) R serialisation is read; "
                               "this file uses the ASCII or native form (save(..., ascii = "
                               "FALSE) writes XDR)")


@pytest.mark.parametrize("kind, name", [(3, "closure"), (4, "environment"), (15, "complex"),
                                        (24, "raw"), (25, "S4 object"), (99, "unknown")])
def test_unexpected_r_types_are_named(tmp_path, kind, name):
    bad = _flags(kind) + b"\0" * 16
    payload = rda("x", rlist([strings(["a"]), bad]))
    offset = payload.index(bad)
    path = write(tmp_path, "bad.rda", payload)
    assert _error(path) == (f"{path}: unexpected R object of type {name} (code {kind}) at "
                            f"byte {offset} of the decompressed R serialisation; an mldr .rda "
                            "file holds a list of data frames and vectors")


def test_structural_errors(tmp_path):
    not_mldr = write(tmp_path, "df.rda", rda("df", data_frame({"a": real([1.0])}, 1)))
    assert _error(not_mldr) == f"{not_mldr}: the object 'df' is not of class 'mldr' (class: " \
                               "data.frame)"
    two = write(tmp_path, "two.rda", rda("a", strings(["x"]))[:-4] + _flags(2, tag=True)
                + sym("b") + strings(["y"]) + NIL)
    assert _error(two) == f"{two}: holds 2 R objects (a, b); an mldr file holds one"
    no_labels = write(tmp_path, "nl.rda", rda("t", rlist([toy_frame(), integer([3])],
                                                         names=["dataset", "attributesIndexes"],
                                                         cls=["mldr"])))
    assert _error(no_labels) == f"{no_labels}: the mldr object has no 'labels' element (it " \
                                "has dataset, attributesIndexes)"


def test_derived_columns_are_never_features(tmp_path):
    path = write(tmp_path, "lc.rda", rda("t", mldr_object(toy_frame(), [3, 4, 6], [1, 2],
                                                           ["lab0", "lab1"])))
    assert _error(path) == (f"{path}: attributesIndexes lists '.labelcount', which the mldr "
                            "package derives from the labels; it cannot be a feature")
    overlap = write(tmp_path, "ov.rda", rda("t", mldr_object(toy_frame(), [2, 3], [1, 2],
                                                              ["lab0", "lab1"])))
    assert _error(overlap) == (f"{overlap}: column 'lab1' is listed both as a feature "
                               "(attributesIndexes) and as a label")


def test_label_and_feature_values_are_checked(tmp_path):
    p = write(tmp_path, "a.rda", toy_rda(lab1=(0, 2, 0, 1)))
    assert _error(p) == f"{p}: label column 'lab1' must hold only 0 and 1"
    p = write(tmp_path, "b.rda", toy_rda(char_values=("1", "x", "0", "1")))
    assert _error(p) == (f"{p}: feature column 'flag' holds the string 'x'; character "
                         "features must hold numbers such as '0' and '1'")
    p = write(tmp_path, "c.rda", toy_rda(char_values=("1", None, "0", "1")))
    assert _error(p) == f"{p}: feature column 'flag' holds NA; features must be finite numbers"
    p = write(tmp_path, "d.rda", toy_rda(labelcount=[1, 2, 0, 0]))
    assert _error(p) == (f"{p}: the '.labelcount' column differs from the number of labels of "
                         "each row; labels$index does not name the label columns")
    na = np.array([0.5, 0, 0, 1])
    na_bits = bytearray(real(na))
    # R's NA_real_: a NaN whose low word is 1954
    na_bits[8 + 8:8 + 16] = bytes.fromhex("7ff00000000007a2")
    frame = data_frame({"f": bytes(na_bits), "y": real([1, 0, 0, 1])}, 4)
    p = write(tmp_path, "e.rda", rda("t", mldr_object(frame, [1], [2], ["y"])))
    assert _error(p) == (f"{p}: feature column 'f' has 1 missing value(s) (NA); features must "
                         "be complete")
    frame = data_frame({"f": real([1, 0]), "y": real([1, 0, 1])}, 2)
    p = write(tmp_path, "f.rda", rda("t", mldr_object(frame, [1], [2], ["y"])))
    assert _error(p) == (f"{p}: the columns of the 'dataset' data frame differ in length or "
                         "are not vectors")
    frame = data_frame({"f": real([1, 0]), "y": real([1, 0])}, 2)
    p = write(tmp_path, "g.rda", rda("t", mldr_object(frame, [1], [3], ["y"])))
    assert _error(p) == f"{p}: labels$index holds column numbers outside 1..2"


# ----------------------------------------------------------------------------- real data
MLDR = ["ohsumed", "reutersk500", "stackex_chemistry", "stackex_coffee", "stackex_cooking",
        "stackex_cs", "stackex_philosophy"]
RCV1 = [f"rcv1sub{i}" for i in range(1, 6)]


@pytest.mark.data
@pytest.mark.filterwarnings("ignore:Missing constructor for R class")
@pytest.mark.parametrize("name", MLDR + [pytest.param(n, marks=pytest.mark.slow) for n in RCV1])
def test_agrees_with_rdata_on_the_staged_files(name, staged):
    """rdata (an independent decoder; it builds the dense data frame, ~6.5 GiB for the rcv1
    subsets, hence slow) gives the same matrices and names."""
    rdata = pytest.importorskip("rdata")
    path = staged(f"mldr/{name}.rda")
    ds = read_mldr(path)
    obj = rdata.read_rda(str(path), default_encoding="latin1")[name]
    frame = obj["dataset"]
    features = np.asarray(obj["attributesIndexes"], dtype=int) - 1
    label_cols = np.asarray(obj["labels"]["index"], dtype=int) - 1
    assert ds.label_names == tuple(frame.columns[label_cols])
    assert ds.label_names == tuple(obj["labels"].index)
    assert ds.X.shape == (len(frame), features.size)
    for mine, cols in ((ds.X.tocsc(), features), (ds.Y.tocsc(), label_cols)):
        for k, j in enumerate(cols):  # column by column: no second dense copy of the frame
            col = np.asarray(frame.iloc[:, j], dtype=float)
            lo, hi = mine.indptr[k], mine.indptr[k + 1]
            np.testing.assert_array_equal(mine.indices[lo:hi], np.flatnonzero(col))
            np.testing.assert_array_equal(mine.data[lo:hi], col[mine.indices[lo:hi]])
    np.testing.assert_array_equal(np.diff(ds.Y.indptr), frame[".labelcount"].to_numpy())


@pytest.mark.data
def test_a_truncated_real_file_is_a_one_line_error(staged, tmp_path):
    data = staged("mldr/stackex_coffee.rda").read_bytes()
    cut = tmp_path / "cut.rda"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataFormatError) as exc:
        read_mldr(cut)
    assert str(exc.value).startswith(f"{cut}: corrupt or truncated compressed data (")
    assert "\n" not in str(exc.value)
    # the same bytes decompressed, then cut inside the data frame
    raw = tmp_path / "raw.rda"
    raw.write_bytes(lzma.decompress(data)[:100_000])
    with pytest.raises(DataFormatError) as exc:
        read_mldr(raw)
    assert str(exc.value).startswith(f"{raw}: the file ends early (wanted ")
