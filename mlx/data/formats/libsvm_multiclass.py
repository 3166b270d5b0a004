"""``format: libsvm-multiclass``: LIBSVM text with one class per row, 1-based features
(:mod:`mlx.data.libsvm`); integer classes can be read as ordinal levels."""

from __future__ import annotations

from mlx.data.formats import Format
from mlx.data.formats.libsvm_multilabel import read

FORMAT = Format(name="libsvm-multiclass", description="LIBSVM multi-class", order=4,
                tasks=("multiclass", "ordinal"), options=("n_features",),
                suffixes=(".svm", ".txt", ".libsvm", ".scale"), read=read)
