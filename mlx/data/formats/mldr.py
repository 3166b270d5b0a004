"""``format: mldr``: an R data file holding one ``mldr`` object (:mod:`mlx.data.rda`)."""

from __future__ import annotations

from mlx.data.formats import Format


def _read(spec, paths, options, xml, xml_beside):
    from mlx.data.rda import read_mldr_files

    return read_mldr_files(list(paths.values()), name=spec.name)


FORMAT = Format(name="mldr", description="an R mldr object, .rda", order=7,
                tasks=("multilabel",), suffixes=(".rda",), read=_read)
