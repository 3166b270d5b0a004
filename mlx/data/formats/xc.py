"""``format: xc``: the Extreme Classification Repository's text format, header ``n d L``,
0-based (:mod:`mlx.data.xc_repo`); written by ``mlx datasets convert --to xc``."""

from __future__ import annotations

from mlx.data.formats import Format, Writer


def _read(spec, paths, options, xml, xml_beside):
    from mlx.data.xc_repo import read_xc_files

    return read_xc_files(list(paths.values()), name=spec.name)


def _write(dataset, path):
    from mlx.data.convert import write_xc

    return write_xc(dataset, path)


FORMAT = Format(name="xc", description="Extreme Classification Repository", order=5,
                tasks=("multilabel",), suffixes=(".txt",), read=_read,
                writer=Writer(name="xc", extension="txt", write=_write,
                              description="Extreme Classification Repository", order=1))
