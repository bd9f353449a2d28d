"""data_provider/float32_range.py: the bound is the largest |x| whose float32 square is finite, NaN and ±inf
are flagged, and the reason line says what is wrong and how to fix it."""

from __future__ import annotations

import numpy as np
import pytest

from data_provider.float32_range import LARGEST_USABLE, first_beyond_float32, unusable_mask, unusable_reason


def test_the_bound_is_the_largest_value_float32_can_square():
    bound = np.float32(LARGEST_USABLE)
    assert float(bound) <= LARGEST_USABLE
    with np.errstate(over="ignore"):
        assert np.isfinite(bound * bound)
        above = np.nextafter(bound, np.float32(np.inf))
        assert np.isinf(above * above)
    assert 1.8e19 < LARGEST_USABLE < 1.9e19


@pytest.mark.parametrize(("value", "flagged"), [
    (0.0, False), (-1.8e19, False), (LARGEST_USABLE, False), (-LARGEST_USABLE, False),
    (np.nextafter(LARGEST_USABLE, np.inf), True), (-1.9e19, True), (3e38, True), (1e40, True),
    (np.inf, True), (-np.inf, True), (np.nan, True),
], ids=["zero", "-1.8e19", "bound", "-bound", "just-above", "-1.9e19", "3e38", "1e40", "inf", "-inf", "nan"])
def test_unusable_values(value, flagged):
    assert bool(unusable_mask(np.array([value]))[0]) is flagged


def test_first_flagged_value_in_row_order_and_the_count():
    values = np.array([[1.0, 2.0], [3.0, 3e38], [np.inf, 4.0], [2e19, 5.0]])
    assert first_beyond_float32(values) == (1, 1, 3)
    assert first_beyond_float32(values[:1]) is None


def test_reasons_name_the_problem_and_the_fix():
    assert unusable_reason(float("inf"), 2) == "which is not a finite number (2 such values); fix the file"
    assert unusable_reason(float("nan")) == "which is not a finite number; fix the file"
    large = unusable_reason(3e38, 1, part="channel")
    assert large.startswith("whose square overflows float32")
    assert "|x| must be at most 1.845e+19; 1 such values" in large
    assert large.endswith("; rescale the channel (e.g. other units) or fix the file") and "\n" not in large
