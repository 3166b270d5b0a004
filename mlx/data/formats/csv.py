"""``format: csv``: delimited text, one number per field (:mod:`mlx.data.delimited`)."""

from __future__ import annotations

from mlx.data.formats import Format


def _read(spec, paths, options, xml, xml_beside):
    from mlx.data.delimited import read_delimited_files

    return read_delimited_files(list(paths.values()), task=spec.task, name=spec.name,
                                **options)


FORMAT = Format(name="csv", description="delimited text", order=6,
                tasks=("regression", "ordinal", "multiclass"),
                options=("sep", "header", "target", "missing", "bins"), suffixes=(".csv",),
                read=_read)
