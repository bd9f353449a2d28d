"""compare.report.complete_block: a model with results in few cells is left out rather than the cells, and a cell
one model lacks rather than that model."""

from __future__ import annotations

import itertools

import numpy as np

from compare.report.complete_block import complete_block


def test_a_model_with_results_in_few_cells_is_left_out_rather_than_the_cells():
    present = np.ones((6, 4), dtype=bool)
    present[1:, 3] = False  # model 3 has one cell of six (no recipe elsewhere)
    present[4, 0] = False  # model 0 lacks one cell
    assert complete_block(present) == ([0, 1, 2, 3, 5], [0, 1, 2])
    assert complete_block(np.zeros((2, 3), dtype=bool))[0] == []  # nothing complete: no cell kept


def test_every_small_mask_gives_a_complete_block_that_is_empty_only_when_a_model_has_no_result():
    """All presence masks up to 3 cells x 4 models: the kept block is complete, and it keeps at least one cell and
    one model whenever every model has a result somewhere (so the geo-means never list every model as left out)."""
    for n, k in itertools.product(range(1, 4), range(1, 5)):
        for bits in itertools.product((False, True), repeat=n * k):
            present = np.array(bits, dtype=bool).reshape(n, k)
            cells, models = complete_block(present)
            assert present[np.ix_(cells, models)].all()
            if present.any(axis=0).all():
                assert cells and models, present.astype(int).tolist()
