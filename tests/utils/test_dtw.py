from __future__ import annotations

import numpy as np
import pytest

from utils.dtw import batch_dtw


def dtw_reference(a: np.ndarray, b: np.ndarray) -> float:
    n, m = len(a), len(b)
    d = np.full((n + 1, m + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i, j] = abs(a[i - 1] - b[j - 1]) + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return d[n, m]


@pytest.mark.parametrize("n,m", [(1, 1), (7, 7), (13, 9), (5, 11)], ids=lambda v: str(v))
def test_batch_dtw_matches_quadratic_reference(n, m):
    rng = np.random.default_rng(n * 100 + m)
    x, y = rng.normal(size=(4, n)), rng.normal(size=(4, m))
    expected = [dtw_reference(a, b) for a, b in zip(x, y, strict=True)]
    np.testing.assert_allclose(batch_dtw(x, y), expected, rtol=1e-12)


def test_dtw_of_identical_series_is_zero_and_shift_is_cheap():
    x = np.sin(np.linspace(0, 6, 50))[None, :]
    assert batch_dtw(x, x)[0] == 0.0
    shifted = np.roll(x, 1, axis=1)
    assert batch_dtw(x, shifted)[0] < np.abs(x - shifted).sum()
