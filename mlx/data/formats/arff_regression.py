"""``format: arff-regression``: Weka ARFF with real targets last (:mod:`mlx.data.arff`)."""

from __future__ import annotations

from mlx.data.formats import Format


def _read(spec, paths, options, xml, xml_beside):
    from dataclasses import replace

    from mlx.data import arff

    parts = arff.read_regression_files(list(paths.values()), name=spec.name, **options)
    if spec.task != "regression" and dict(spec.options).get("bins") is None:
        parts = [replace(ds, task=spec.task) for ds in parts]
    return parts


FORMAT = Format(name="arff-regression", description="Weka ARFF, real targets last", order=2,
                tasks=("regression", "ordinal"), options=("n_targets", "missing", "bins"),
                suffixes=(".arff",), read=_read)
