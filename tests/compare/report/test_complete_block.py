"""compare.report.complete_block: a model with results in few cells is left out rather than the cells, and a cell
one model lacks rather than that model."""

from __future__ import annotations

import numpy as np

from compare.report.complete_block import complete_block


def test_a_model_with_results_in_few_cells_is_left_out_rather_than_the_cells():
    present = np.ones((6, 4), dtype=bool)
    present[1:, 3] = False  # model 3 has one cell of six (no recipe elsewhere)
    present[4, 0] = False  # model 0 lacks one cell
    assert complete_block(present) == ([0, 1, 2, 3, 5], [0, 1, 2])
    assert complete_block(np.zeros((2, 3), dtype=bool))[0] == []  # nothing complete: no cell kept
