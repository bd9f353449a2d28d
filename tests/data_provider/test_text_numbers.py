"""Text cells to float64: bit-exact round trips (where pandas' to_numeric is not), missing cells, text positions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from data_provider.text_numbers import parse_numbers


def test_repr_round_trips_bit_for_bit():
    values = np.random.default_rng(0).normal(10, 3, size=2000)
    parsed, text = parse_numbers(pd.Series([repr(float(v)) for v in values]))
    assert text.size == 0 and np.array_equal(parsed, values)


def test_missing_cells_are_nan_and_text_is_located():
    parsed, text = parse_numbers(pd.Series(["1.5", "", None, "nan", "?", " 2 ", "abc", "inf", "1e40", "3,4"]))
    assert np.isnan(parsed[[1, 2, 3, 4, 6, 9]]).all()
    assert parsed[0] == 1.5 and parsed[5] == 2.0 and parsed[7] == np.inf and parsed[8] == 1e40
    assert text.tolist() == [6, 9]
