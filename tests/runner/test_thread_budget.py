"""Each cell's thread budget: the cores divided among the cells that run at once."""

import pytest

from mlx.runner import cells as cells_module
from mlx.runner.cells import cell_threads


@pytest.mark.parametrize("jobs, n_cells, cores, want", [
    (1, 10, 2, 2),      # -j 1 on 2 cores: the cell has the machine
    (2, 1, 2, 2),       # one cell left to run: both cores
    (2, 2, 2, 1),       # two cells at once: one thread each
    (2, 30, 2, 1),
    (4, 30, 2, 1),      # more jobs than cores: never below 1
    (3, 30, 8, 2),      # 8 // 3
    (8, 3, 8, 2),       # only 3 cells run at once: 8 // 3
    (1, 0, 4, 4),
])
def test_cell_threads(jobs, n_cells, cores, want):
    assert cell_threads(jobs, n_cells, cores) == want


def test_serial_run_gives_each_cell_the_budget(monkeypatch):
    seen = []
    monkeypatch.setattr("mlx.numerics.spmm.available_cores", lambda: 2)
    monkeypatch.setattr(cells_module, "run_cell", lambda cell, threads=1: seen.append(threads)
                        or {"cell": cell})
    done = []
    cells_module.run_cells(["a", "b"], jobs=1, on_done=lambda c, r: done.append(r["cell"]))
    assert seen == [2, 2] and done == ["a", "b"]


def test_a_cell_runs_its_kernels_on_the_budget(monkeypatch):
    from mlx.numerics import spmm

    seen = []
    monkeypatch.setattr(cells_module, "_run_cell", lambda cell: seen.append(spmm.get_threads()))
    cells_module.run_cell("cell", 2)
    cells_module.run_cell("cell")
    assert seen == [2, 1] and spmm.get_threads() == 1
