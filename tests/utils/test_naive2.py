"""Naive2 (utils/naive2.py) against a slow reference written from the definition, and on series whose forecast is
known: a pure multiplicative season is continued exactly, a non-seasonal series gets Naive1."""

from __future__ import annotations

import numpy as np
import pytest

from utils.naive2 import autocorrelation, is_seasonal, naive2_forecast, seasonal_indices


def slow_naive2(x: list[float], m: int, horizon: int) -> list[float]:
    """Loop by loop: the 90 % test, the centred moving average, per-position means of the ratios, the forecast."""
    n = len(x)
    mean = sum(x) / n

    def r(k):
        return sum((x[t] - mean) * (x[t - k] - mean) for t in range(k, n)) / sum((v - mean) ** 2 for v in x)

    seasonal = m > 1 and n >= 3 * m and min(x) > 0
    if seasonal:
        limit = 1.645 * ((1 + 2 * sum(r(k) ** 2 for k in range(1, m))) / n) ** 0.5
        seasonal = abs(r(m)) > limit
    if not seasonal:
        return [x[-1]] * horizon
    ratios = {j: [] for j in range(m)}
    for t in range(n):
        if m % 2:
            window = x[t - m // 2:t + m // 2 + 1] if t - m // 2 >= 0 and t + m // 2 < n else None
            cma = sum(window) / m if window else None
        else:
            ok = t - m // 2 >= 0 and t + m // 2 < n
            cma = (0.5 * x[t - m // 2] + sum(x[t - m // 2 + 1:t + m // 2]) + 0.5 * x[t + m // 2]) / m if ok else None
        if cma is not None:
            ratios[t % m].append(x[t] / cma)
    index = [sum(v) / len(v) for v in (ratios[j] for j in range(m))]
    index = [v / (sum(index) / m) for v in index]
    level = x[-1] / index[(n - 1) % m]
    return [level * index[(n + h) % m] for h in range(horizon)]


@pytest.mark.parametrize(("m", "n"), [(12, 50), (4, 21), (7, 30), (12, 30), (1, 20), (3, 8)])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_the_slow_reference(m, n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    x = 50 + 0.3 * t + 8 * np.sin(2 * np.pi * t / m) + rng.normal(scale=0.5 + 3 * seed, size=n)
    assert is_seasonal(x, m) == (m > 1 and n >= 3 * m)  # both branches, odd and even periods, are compared
    np.testing.assert_allclose(naive2_forecast(x, m, 9), slow_naive2(list(x), m, 9), rtol=1e-12)


def test_a_pure_multiplicative_season_is_continued_exactly():
    pattern = np.array([0.8, 1.1, 1.3, 0.9, 1.0, 0.9])
    x = 100 * np.tile(pattern / pattern.mean(), 5)[:-2]  # 28 values: the forecast starts mid-cycle
    assert is_seasonal(x, 6)
    np.testing.assert_allclose(seasonal_indices(x, 6), pattern / pattern.mean(), rtol=1e-12)
    expected = 100 * np.tile(pattern / pattern.mean(), 7)[28:28 + 10]
    np.testing.assert_allclose(naive2_forecast(x, 6, 10), expected, rtol=1e-12)


@pytest.mark.parametrize("x", [
    np.random.default_rng(3).normal(10, 1, size=40),  # no season: the test says so
    np.r_[np.full(35, 5.0), 0.0, np.full(4, 5.0)],  # a zero value: no multiplicative model
    np.full(40, 7.0),  # constant
])
def test_non_seasonal_series_get_naive1(x):
    assert not is_seasonal(x, 12) or np.any(x <= 0)
    assert np.array_equal(naive2_forecast(x, 12, 5), np.full(5, x[-1]))


def test_autocorrelation_is_the_sample_acf():
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    c = x - x.mean()
    assert autocorrelation(x, 2) == pytest.approx(np.sum(c[2:] * c[:-2]) / np.sum(c * c))
