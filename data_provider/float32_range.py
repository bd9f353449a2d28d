"""Values a float32 model cannot take: NaN, ±inf, and finite float64 values beyond float32's range (they
overflow to inf in the model and turn every loss into NaN). The loaders name the first one in their own terms."""

from __future__ import annotations

import numpy as np

__all__ = ["FLOAT32_MAX", "first_beyond_float32"]

FLOAT32_MAX = float(np.finfo(np.float32).max)


def first_beyond_float32(values: np.ndarray) -> tuple[int, int, int] | None:
    """(row, column, how many) of the first value of the 2-D `values` that is not finite or |x| > FLOAT32_MAX;
    None when every value is usable."""
    bad = ~np.isfinite(values) | (np.abs(values) > FLOAT32_MAX)
    if not bad.any():
        return None
    row, col = np.argwhere(bad)[0]
    return int(row), int(col), int(bad.sum())
