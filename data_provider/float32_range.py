"""Values a float32 model cannot take: NaN, ±inf, and finite values whose square overflows float32
(|x| > sqrt(float32 max) ≈ 1.845e19). Models, their normalisations (RevIN's variance) and the MSE losses square
the values in float32, so such a value turns them into inf; where float64 statistics absorb it instead (the
StandardScaler), one value of 3e38 squeezes every other value of its column to the same number, the model
learns nothing from that column and the reported error even improves. The loaders name the first such value
in their own terms (file, row, column) and end with `unusable_reason`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FLOAT32_MAX", "LARGEST_USABLE", "first_beyond_float32", "unusable_mask", "unusable_reason"]

FLOAT32_MAX = float(np.finfo(np.float32).max)
#: the largest |x| whose square float32 still holds: sqrt(FLOAT32_MAX) ≈ 1.845e+19 (its float32 square is finite)
LARGEST_USABLE = math.sqrt(FLOAT32_MAX)


def unusable_mask(values: np.ndarray) -> np.ndarray:
    """True where a value of `values` is not finite or |x| > LARGEST_USABLE (same shape)."""
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(values) | (np.abs(values) > LARGEST_USABLE)


def first_beyond_float32(values: np.ndarray) -> tuple[int, int, int] | None:
    """(row, column, how many) of the first value of the 2-D `values` that `unusable_mask` flags; None when every
    value is usable."""
    bad = unusable_mask(values)
    if not bad.any():
        return None
    row, col = np.argwhere(bad)[0]
    return int(row), int(col), int(bad.sum())


def unusable_reason(value: float, count: int | None = None, part: str = "column") -> str:
    """Why `value` (flagged by `unusable_mask`) cannot go into a float32 model, and how to fix it: the end of a
    one-line error that names where it is and goes on with "holds <value>, ". `count`: how many such values
    (None: not said); `part`: what to rescale ("column", "channel", "series", ...)."""
    counted = "" if count is None else f"; {count} such values"
    if not math.isfinite(value):
        return f"which is not a finite number{' (' + counted[2:] + ')' if counted else ''}; fix the file"
    return (f"whose square overflows float32 (the models, their normalisation and the losses square the values, "
            f"so |x| must be at most {LARGEST_USABLE:.4g}{counted}); rescale the {part} (e.g. other units) or fix "
            "the file")
