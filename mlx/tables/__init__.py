"""Paper tables and figures: our results beside the published numbers.

One job per module (import from them directly; nothing is re-exported here):

- :mod:`mlx.tables.spec` - table specs (``configs/tables/*.yaml``): parsing, checks
- :mod:`mlx.tables.published` - the papers' published numbers (``mlx/reference``)
- :mod:`mlx.tables.build` - reading results and matching them with the published values
- :mod:`mlx.tables.render` - Markdown, CSV and LaTeX output
- :mod:`mlx.tables.compare` - ``mlx compare``: automatic matching with a paper
- :mod:`mlx.tables.paired` - paired significance tests between two methods
- :mod:`mlx.tables.results_doc` - docs/RESULTS.md
- :mod:`mlx.tables.plot` - figures (metric against k/L or the observed ratio)
- :mod:`mlx.tables.cli` - the ``table``, ``compare``, ``plot`` and ``results-doc`` commands
"""
