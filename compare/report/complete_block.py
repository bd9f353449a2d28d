"""A block of (dataset, horizon) cells x models in which every model has a result, found greedily: what the ranks
and the geometric means over cells are computed on, so that a model with results in few cells does not empty
them for every other model, nor a cell that one model lacks remove that model."""

from __future__ import annotations

import numpy as np

__all__ = ["complete_block"]


def complete_block(present: np.ndarray) -> tuple[list[int], list[int]]:
    """(kept cells, kept models) of a ``[N, k]`` presence mask such that every kept model has every kept cell:
    while a value is missing, drop the model with the most missing cells or the cell with the most missing models,
    whichever removes fewer present values (the cell on a tie, so that models stay)."""
    cells, models = list(range(present.shape[0])), list(range(present.shape[1]))
    while cells and models:
        block = present[np.ix_(cells, models)]
        if block.all():
            break
        j = int(np.argmax((~block).sum(axis=0)))
        c = int(np.argmax((~block).sum(axis=1)))
        if block[:, j].sum() < block[c, :].sum():
            del models[j]
        else:
            del cells[c]
    return cells, models
