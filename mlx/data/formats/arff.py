"""``format: arff``: Mulan or MEKA multi-label ARFF (:mod:`mlx.data.arff`)."""

from __future__ import annotations

from mlx.data.formats import Format


def _read(spec, paths, options, xml, xml_beside):
    from mlx.data import arff
    from mlx.errors import ConfigError

    roles, files = list(paths), list(paths.values())
    if spec.n_labels is None and xml is None and xml_beside is None \
            and arff.meka_labels(arff.read_arff_header(files[0]), files[0]) is None:
        raise ConfigError(spec.source, spec.key_path,
                          "format 'arff' needs 'n_labels' (the last n_labels attributes "
                          "are the labels) or 'xml' (the Mulan label list): "
                          f"{spec.file(roles[0])} has no MEKA -C option in its relation "
                          "name and no Mulan XML label list beside it")
    return arff.read_mulan_files(files, n_labels=spec.n_labels, xml=xml, xml_beside=xml_beside,
                                 name=spec.name)


def _find_beside(path):
    from mlx.data.arff import find_mulan_xml

    return find_mulan_xml(path)


FORMAT = Format(name="arff", description="Mulan or MEKA multi-label ARFF", order=1,
                tasks=("multilabel",), options=("n_labels", "xml"), suffixes=(".arff",),
                read=_read,
                find_beside=_find_beside)
