"""Numbers from the text cells of a CSV read as strings: Python's `float` on every cell, so a value written with
`repr` reads back bit for bit (pandas' `to_numeric` rounds some 17-digit decimals in the last place)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["parse_numbers"]

#: cells that stand for a missing value (besides an empty cell)
MISSING_TEXT = frozenset({"nan", "?"})


def parse_numbers(cells: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(values `[n]` float64 with NaN for empty / `nan` / `?` cells, positions of the cells that are text, not
    numbers)."""
    values = np.full(len(cells), np.nan)
    text = []
    for i, cell in enumerate(cells.tolist()):
        if cell is None or (isinstance(cell, float) and np.isnan(cell)):
            continue
        stripped = str(cell).strip()
        if not stripped or stripped.lower() in MISSING_TEXT:
            continue
        try:
            values[i] = float(stripped)
        except ValueError:
            text.append(i)
    return values, np.asarray(text, dtype=np.int64)
