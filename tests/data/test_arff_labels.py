"""Which ARFF attributes are the labels: n_labels checked against a Mulan XML label list (given
or found beside the data) and against the header's {0,1} attributes; MEKA's -C option."""

import logging

import numpy as np
import pytest

from mlx.data.arff import (
    find_mulan_xml,
    meka_labels,
    read_arff_header,
    read_mulan_arff,
    read_mulan_files,
)
from mlx.data.catalog import load_full, load_split, resolve_dataset
from mlx.errors import ConfigError, DataFormatError

MULAN = """@relation toy
@attribute f0 numeric
@attribute f1 numeric
@attribute lab0 {0,1}
@attribute lab1 {0,1}
@attribute lab2 {0,1}
@data
1.5,0,1,0,1
0,2,0,1,1
0,0,0,0,0
"""
# The same data, MEKA style: labels first, announced by -C 3 in the relation name.
MEKA = """@relation 'toy: -C 3'
@attribute lab0 {0,1}
@attribute lab1 {0,1}
@attribute lab2 {0,1}
@attribute f0 numeric
@attribute f1 numeric
@data
1,0,1,1.5,0
0,1,1,0,2
0,0,0,0,0
"""
X_TOY = [[1.5, 0], [0, 2], [0, 0]]
Y_TOY = [[1, 0, 1], [0, 1, 1], [0, 0, 0]]
# All attributes {0,1}, as in a bag-of-words file: the header cannot tell labels apart.
WORDS = """@relation words
@attribute w0 {0,1}
@attribute w1 {0,1}
@attribute lab0 {0,1}
@attribute lab1 {0,1}
@data
{0 1,2 1}
{1 1,3 1}
"""


def xml_text(*names):
    labels = "".join(f'<label name="{n}"></label>' for n in names)
    return ('<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">'
            f"{labels}</labels>")


def refused(read) -> str:
    """The message of the DataFormatError that ``read()`` raises."""
    with pytest.raises(DataFormatError) as exc:
        read()
    return str(exc.value)


def same(a, b):
    np.testing.assert_array_equal(a.X.toarray(), b.X.toarray())
    np.testing.assert_array_equal(a.Y.toarray(), b.Y.toarray())
    assert a.label_names == b.label_names


# ----------------------------------------------------------------------------- XML
def test_xml_in_another_order_gives_the_labels(write):
    path = write("t.arff", MULAN)
    ds = read_mulan_arff(path, xml=write("t.xml", xml_text("lab2", "lab0", "lab1")))
    np.testing.assert_array_equal(ds.Y.toarray(), Y_TOY)
    assert ds.label_names == ("lab0", "lab1", "lab2")
    same(ds, read_mulan_arff(path, n_labels=3))


@pytest.mark.parametrize("n_labels, message", [
    (4, "n_labels=4 does not match the label list {xml}, which names 3 labels: attribute 'f1' "
        "(2 of 5) is among the last 4 attributes but not in that list"),
    (2, "n_labels=2 does not match the label list {xml}, which names 3 labels: attribute 'lab0' "
        "(3 of 5) is in that list but not among the last 2 attributes"),
])
def test_n_labels_off_by_one_against_the_xml(write, n_labels, message):
    path, xml = write("t.arff", MULAN), write("t.xml", xml_text("lab0", "lab1", "lab2"))
    msg = refused(lambda: read_mulan_arff(path, n_labels=n_labels, xml=xml))
    assert msg == f"{path}: " + message.format(xml=xml)


def test_xml_that_names_other_attributes(write):
    path = write("t.arff", MULAN)
    xml = write("t.xml", xml_text("f1", "lab0", "lab1"))
    msg = refused(lambda: read_mulan_arff(path, xml=xml))
    assert msg == (f"{path}: the label list {xml} names 3 labels but not the last 3 "
                   "attributes (Mulan labels are the last attributes): attribute "
                   "'f1' (2 of 5) is in that list but not among the last 3 attributes")
    xml = write("u.xml", xml_text("lab0", "lab1", "lab9"))
    msg = refused(lambda: read_mulan_arff(path, xml=xml))
    assert msg == (f"{xml}: label 'lab9' is not an attribute of {path} (a Mulan "
                   "label list names label attributes of the ARFF file)")
    xml = write("v.xml", xml_text("lab0", "lab1", "lab0"))
    msg = refused(lambda: read_mulan_arff(path, xml=xml))
    assert msg == f"{xml}: label 'lab0' is listed twice (a Mulan label list names " \
                  "each label once)"


@pytest.mark.parametrize("data, xml_name", [
    ("scene-train.arff.gz", "scene.xml"),
    ("Corel5k-train-sparse.arff.gz", "Corel5k.xml"),
    ("Corel5k-train-sparse.arff.gz", "Corel5k-train.xml"),
    ("emotions_train.arff", "emotions.xml"),
    ("toy.arff", "toy.xml"),
])
def test_find_mulan_xml_beside_the_data(tmp_path, data, xml_name):
    (tmp_path / data).write_text("")
    assert find_mulan_xml(tmp_path / data) is None
    (tmp_path / xml_name).write_text("")
    assert find_mulan_xml(tmp_path / data) == tmp_path / xml_name


def test_find_mulan_xml_prefers_the_longest_name(tmp_path):
    data = tmp_path / "tmc2007-500-train.arff"
    data.write_text("")
    for name in ("tmc2007.xml", "tmc2007-500.xml"):
        (tmp_path / name).write_text("")
    assert find_mulan_xml(data) == tmp_path / "tmc2007-500.xml"


# ----------------------------------------------------------------------------- header checks
def test_n_labels_reaching_into_numeric_features_is_an_error(write):
    path = write("t.arff", MULAN)
    msg = refused(lambda: read_mulan_arff(path, n_labels=4))
    assert msg == (f"{path}: n_labels=4 makes attribute 'f1' numeric (2 of 5) a "
                   "label, but Mulan labels are nominal {0,1} and only the last 3 "
                   "attributes are; check n_labels, or give the Mulan XML label list "
                   "(xml)")


def test_n_labels_short_of_the_label_attributes_is_warned_about(write, caplog):
    path = write("t.arff", MULAN)
    with caplog.at_level(logging.WARNING, logger="mlx.data.arff"):
        ds = read_mulan_arff(path, n_labels=2)
    assert ds.Y.shape == (3, 2)
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: n_labels=2, but the last 3 attributes are nominal {{0,1}} and the one before "
        "them is not; attribute 'lab0' {0, 1} (3 of 5) will be read as a feature: check "
        "n_labels, or give the Mulan XML label list (xml)"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mlx.data.arff"):
        read_mulan_arff(path, n_labels=3)
    assert caplog.records == []


def test_all_binary_header_cannot_be_checked(write, caplog):
    """A bag-of-words file declares its features {0,1} too: nothing certain, nothing said."""
    path = write("w.arff", WORDS)
    with caplog.at_level(logging.WARNING, logger="mlx.data.arff"):
        for n_labels in (1, 2, 3):
            assert read_mulan_arff(path, n_labels=n_labels).Y.shape == (2, n_labels)
    assert caplog.records == []


def test_numeric_labels_are_not_recognisable_and_not_checked(write, caplog):
    path = write("n.arff", MULAN.replace("{0,1}", "numeric"))
    with caplog.at_level(logging.WARNING, logger="mlx.data.arff"):
        assert read_mulan_arff(path, n_labels=2).Y.shape == (3, 2)
    assert caplog.records == []
    with pytest.raises(DataFormatError, match="label attribute 'f1' has value 2"):
        read_mulan_arff(path, n_labels=4)                        # the values are still checked


# ----------------------------------------------------------------------------- MEKA
def test_meka_labels_first_equal_the_mulan_file(write):
    mulan = read_mulan_arff(write("u.arff", MULAN), n_labels=3)
    meka = read_mulan_arff(write("m.arff", MEKA))
    same(meka, mulan)
    np.testing.assert_array_equal(meka.X.toarray(), X_TOY)
    np.testing.assert_array_equal(meka.Y.toarray(), Y_TOY)
    same(read_mulan_arff(write("m3.arff", MEKA), n_labels=3), mulan)   # agreeing n_labels


def test_meka_sparse_rows(write):
    sparse = MEKA.split("@data")[0] + "@data\n{0 1,2 1,3 1.5}\n{1 1,2 1,4 2}\n{}\n"
    same(read_mulan_arff(write("s.arff", sparse)), read_mulan_arff(write("u.arff", MULAN),
                                                                   n_labels=3))


@pytest.mark.parametrize("relation", ["'toy: -C -3'", '"toy: -C -3 -split-percentage 50"',
                                      "toy: -C -3"])
def test_meka_negative_c_means_labels_last(write, relation):
    path = write("m.arff", MULAN.replace("@relation toy", f"@relation {relation}"))
    assert meka_labels(read_arff_header(path), path) == -3
    same(read_mulan_arff(path), read_mulan_arff(write("u.arff", MULAN), n_labels=3))


def test_meka_c_conflicting_with_n_labels(write):
    path = write("m.arff", MEKA)
    msg = refused(lambda: read_mulan_arff(path, n_labels=2))
    assert msg == (f"{path}:1: n_labels=2 disagrees with the MEKA option -C 3 in the "
                   "relation name (the first 3 attributes are the labels); set "
                   "n_labels to 3 or leave it out")


@pytest.mark.parametrize("relation, message", [
    ("'toy: -C x'", "the relation name 'toy: -C x' has MEKA option '-C x'; expected -C and a "
                    "non-zero integer C (C > 0: the first C attributes are the labels; C < 0: "
                    "the last -C)"),
    ("'toy: -C'", "the relation name 'toy: -C' has MEKA option '-C' without a number; expected "
                  "-C and a non-zero integer C (C > 0: the first C attributes are the labels; "
                  "C < 0: the last -C)"),
    ("'toy: -C -5'", "the relation name 'toy: -C -5' has MEKA option -C -5, which does not fit "
                     "the 5 declared attributes (need 1 <= |C| < 5: features and labels are "
                     "attributes)"),
])
def test_meka_c_malformed(write, relation, message):
    path = write("m.arff", MEKA.replace("'toy: -C 3'", relation))
    msg = refused(lambda: read_mulan_arff(path))
    assert msg == f"{path}:1: {message}"


def test_relation_without_options_or_with_a_colon_only_is_mulan(write):
    for relation in ("toy", "'toy: a description'", "'Corel5k-train: -x 2'"):
        path = write("r.arff", MULAN.replace("@relation toy", f"@relation {relation}"))
        assert meka_labels(read_arff_header(path), path) is None


def test_meka_train_and_test_must_agree(write):
    train = write("a.arff", MEKA)
    test = write("b.arff", MEKA.replace("-C 3", "-C -2"))
    msg = refused(lambda: read_mulan_files([train, test]))
    assert msg == (f"{test}:1: the relation name has MEKA option -C -2 but {train} "
                   "has -C 3; train and test files must have the same labels")
    parts = read_mulan_files([train, write("c.arff", MEKA.replace("'toy: -C 3'", "toy"))])
    assert [p.Y.shape for p in parts] == [(3, 3), (3, 3)]   # -C in one file is enough


def test_meka_labels_checked_against_xml(write):
    path = write("m.arff", MEKA)
    ds = read_mulan_arff(path, xml=write("m.xml", xml_text("lab1", "lab2", "lab0")))
    assert ds.label_names == ("lab0", "lab1", "lab2")
    xml = write("n.xml", xml_text("lab1", "lab2", "f0"))
    msg = refused(lambda: read_mulan_arff(path, xml=xml))
    assert msg == (f"{path}: MEKA option -C 3 in the relation name does not match "
                   f"the label list {xml}, which names 3 labels: attribute 'lab0' "
                   "(1 of 5) is among the first 3 attributes but not in that list")


# ----------------------------------------------------------------------------- file specs
def spec(**node):
    return resolve_dataset({"format": "arff", **{k: str(v) if k in ("train", "test", "xml")
                                                  else v for k, v in node.items()}},
                           source=None)


def test_spec_without_n_labels_reads_meka_files(write):
    split = load_split(spec(train=write("d/m-train.arff", MEKA), test=write("d/m-test.arff",
                                                                            MEKA)))
    np.testing.assert_array_equal(split.test.Y.toarray(), Y_TOY)


def test_spec_without_n_labels_uses_the_xml_beside_the_train_file(write):
    train = write("d/toy-train.arff", MULAN)
    write("d/toy.xml", xml_text("lab0", "lab1", "lab2"))
    assert load_full(spec(train=train)).Y.shape == (3, 3)


def test_spec_n_labels_checked_against_the_xml_beside(write):
    train = write("d/toy-train.arff", MULAN)
    xml = write("d/toy.xml", xml_text("lab0", "lab1", "lab2"))
    msg = refused(lambda: load_full(spec(train=train, n_labels=2)))
    assert msg == (f"{train}: n_labels=2 does not match the label list {xml} (found "
                   "beside the data file), which names 3 labels: attribute 'lab0' "
                   "(3 of 5) is in that list but not among the last 2 attributes")


def test_a_label_list_put_beside_later_rekeys_the_cache(write):
    train = write("d/toy-train.arff", MULAN)
    assert load_full(spec(train=train, n_labels=2)).Y.shape == (3, 2)   # warned, cached
    write("d/toy.xml", xml_text("lab0", "lab1", "lab2"))
    with pytest.raises(DataFormatError, match="does not match the label list"):
        load_full(spec(train=train, n_labels=2))


def test_spec_given_xml_wins_over_the_one_beside(write):
    train = write("d/toy-train.arff", MULAN)
    write("d/toy.xml", xml_text("lab9"))                  # would be refused
    xml = write("elsewhere/labels.xml", xml_text("lab0", "lab1", "lab2"))
    assert load_full(spec(train=train, xml=xml)).Y.shape == (3, 3)


def test_spec_that_cannot_know_its_labels(write, tmp_path):
    train = write("d/toy-train.arff", MULAN)
    node = {"format": "arff", "train": str(train)}
    with pytest.raises(ConfigError) as exc:
        load_full(resolve_dataset(node, source="c.yaml"))
    assert str(exc.value) == (f"c.yaml: dataset: format 'arff' needs 'n_labels' (the last "
                              "n_labels attributes are the labels) or 'xml' (the Mulan label "
                              f"list): {train} has no MEKA -C option in its relation name and no "
                              "Mulan XML label list beside it")
    assert exc.value.exit_code == 2


# ----------------------------------------------------------------------------- real data
REAL = [("scene", "scene/scene-train.arff.gz", "scene/scene.xml", 6, 300,
         ("Beach", 295), ("Att294", 294)),
        ("yeast", "yeast/yeast-train.arff.gz", "yeast/yeast.xml", 14, 117,
         ("Class1", 104), ("Att103", 103)),
        ("corel5k", "corel5k/Corel5k-train-sparse.arff.gz", "corel5k/Corel5k.xml", 374, 873,
         ("city", 500), ("Cluster499", 499)),
        ("bibtex", "bibtex/bibtex-train.arff.gz", "bibtex/bibtex.xml", 159, 1995,
         ("TAG_2005", 1837), ("zur", 1836))]


@pytest.mark.data
@pytest.mark.parametrize("name, rel, xml_rel, L, m, first_label, last_feature", REAL,
                         ids=[r[0] for r in REAL])
def test_real_mulan_files_n_labels_off_by_one_with_xml(staged, name, rel, xml_rel, L, m,
                                                       first_label, last_feature):
    train, xml = staged(rel), staged(xml_rel)
    assert find_mulan_xml(train) == xml
    ds = load_full(spec(train=train, n_labels=L))                 # the XML beside agrees
    assert ds.Y.shape[1] == L and ds.X.shape[1] == m - L
    same(ds, load_full(spec(train=train)))                        # L from the XML
    for n, (attr, k), what in ((L - 1, first_label, f"is in that list but not among the last "
                                                    f"{L - 1} attributes"),
                               (L + 1, last_feature, f"is among the last {L + 1} attributes "
                                                     "but not in that list")):
        for given in ({}, {"xml": xml}):
            msg = refused(lambda: load_full(spec(train=train, n_labels=n, **given)))
            found = "" if given else " (found beside the data file)"
            assert msg == (f"{train}: n_labels={n} does not match the label list {xml}{found}, "
                           f"which names {L} labels: attribute '{attr}' ({k} of {m}) {what}")


@pytest.mark.data
@pytest.mark.parametrize("name, rel, xml_rel, L, m, first_label, last_feature", REAL,
                         ids=[r[0] for r in REAL])
def test_real_mulan_files_n_labels_off_by_one_without_xml(staged, tmp_path, caplog, name, rel,
                                                          xml_rel, L, m, first_label,
                                                          last_feature):
    train = tmp_path / "alone" / rel.split("/")[1]
    train.parent.mkdir()
    train.symlink_to(staged(rel))
    assert find_mulan_xml(train) is None
    with pytest.raises(ConfigError, match="needs 'n_labels'"):
        load_full(spec(train=train))
    if name in ("scene", "yeast"):     # numeric features, {0,1} labels: recognisable
        attr, k = last_feature
        msg = refused(lambda: load_full(spec(train=train, n_labels=L + 1)))
        assert msg == (f"{train}: n_labels={L + 1} makes attribute '{attr}' numeric "
                       f"({k} of {m}) a label, but Mulan labels are nominal {{0,1}} "
                       f"and only the last {L} attributes are; check n_labels, or "
                       "give the Mulan XML label list (xml)")
        attr, k = first_label
        with caplog.at_level(logging.WARNING, logger="mlx.data.arff"):
            assert load_full(spec(train=train, n_labels=L - 1)).Y.shape[1] == L - 1
        assert [r.getMessage() for r in caplog.records if r.name == "mlx.data.arff"] == [
            f"{train}: n_labels={L - 1}, but the last {L} attributes are nominal {{0,1}} and the "
            f"one before them is not; attribute '{attr}' {{0, 1}} ({k} of {m}) will be read as "
            "a feature: check n_labels, or give the Mulan XML label list (xml)"]
    else:   # every attribute {0,1}: only the XML can tell (see the test above)
        for n in (L - 1, L + 1):
            assert load_full(spec(train=train, n_labels=n)).Y.shape[1] == n
