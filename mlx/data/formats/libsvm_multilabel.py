"""``format: libsvm-multilabel``: LIBSVM multi-label text, 1-based features
(:mod:`mlx.data.libsvm`); written by ``mlx datasets convert --to libsvm``."""

from __future__ import annotations

from mlx.data.formats import Format, Writer


def read(spec, paths, options, xml, xml_beside):
    """Both LIBSVM formats: the spec's task says how the label field is read."""
    from mlx.data.libsvm import read_libsvm_files

    return read_libsvm_files(list(paths.values()), task=spec.task, n_features=spec.n_features,
                             n_labels=spec.n_labels, name=spec.name)


def _write(dataset, path):
    from mlx.data.convert import write_libsvm

    return write_libsvm(dataset, path)


def _after_load(parts, path):
    from mlx.data.libsvm import warn_if_multiclass

    warn_if_multiclass(parts, path)


FORMAT = Format(name="libsvm-multilabel", description="LIBSVM multi-label", order=3,
                tasks=("multilabel",), options=("n_labels", "n_features"),
                suffixes=(".svm", ".txt", ".libsvm", ".scale"), read=read,
                writer=Writer(name="libsvm", extension="svm", write=_write,
                              description="LIBSVM multi-label", order=2),
                after_load=_after_load)
