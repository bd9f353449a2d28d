"""The M4 competition's Naive2 benchmark (the reference of OWA), computed for any series; the M4 summary reads the
competition's published Naive2 forecasts instead (submission-Naive2.csv).

For a series x of T values, seasonal period m and horizon H (the rules of the M4 benchmarks' code):

    seasonal  iff m > 1, T >= 3m and |r_m| > 1.645 · sqrt((1 + 2 Σ_{k=1}^{m−1} r_k²) / T)    (90 % test)
              r_k = Σ_{t=k}^{T−1} (x_t − x̄)(x_{t−k} − x̄) / Σ_t (x_t − x̄)²                 (lag-k autocorrelation)
    indices   classical multiplicative decomposition: the centred moving average CMA_t of order m (2×m for even
              m: weights 1/2m at both ends), s_j = mean of x_t / CMA_t over the t ≡ j (mod m) where CMA_t exists,
              then s_j / mean(s)
    forecast  ŷ_{T+h} = (x_{T−1} / s_{(T−1) mod m}) · s_{(T+h) mod m}, h = 0..H−1   (seasonal)
              ŷ_{T+h} = x_{T−1}                                                 (otherwise: Naive1)

A series with a value <= 0 is forecast by Naive1 (the multiplicative model needs positive values; every M4 series
is positive).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SEASONALITY_Z", "autocorrelation", "is_seasonal", "naive2_forecast", "seasonal_indices"]

#: the one-sided 90 % normal quantile of the seasonality test
SEASONALITY_Z = 1.645


def autocorrelation(x: np.ndarray, lag: int) -> float:
    """r_lag of the series `x` `[T]` (module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean()
    return float(np.dot(centred[lag:], centred[:len(x) - lag]) / np.dot(centred, centred))


def is_seasonal(x: np.ndarray, period: int) -> bool:
    """The 90 % autocorrelation test at lag `period` (False for period 1 or fewer than 3 periods of values)."""
    x = np.asarray(x, dtype=np.float64)
    if period <= 1 or len(x) < 3 * period or np.all(x == x[0]):
        return False
    r = [autocorrelation(x, k) for k in range(1, period + 1)]
    limit = SEASONALITY_Z * np.sqrt((1 + 2 * sum(v * v for v in r[:-1])) / len(x))
    return abs(r[-1]) > limit


def seasonal_indices(x: np.ndarray, period: int) -> np.ndarray:
    """The `period` multiplicative seasonal indices of `x` (position j ↔ t ≡ j mod period), averaging 1."""
    x = np.asarray(x, dtype=np.float64)
    weights = np.ones(period + 1 if period % 2 == 0 else period)
    if period % 2 == 0:
        weights[0] = weights[-1] = 0.5
    weights /= period
    half = len(weights) // 2
    trend = np.convolve(x, weights, mode="valid")  # CMA_t for t = half .. T − 1 − half
    ratios = x[half:len(x) - half] / trend
    positions = np.arange(half, len(x) - half) % period
    indices = np.array([ratios[positions == j].mean() for j in range(period)])
    return indices / indices.mean()


def naive2_forecast(x: np.ndarray, period: int, horizon: int) -> np.ndarray:
    """Naive2's `horizon` forecasts `[H]` of the series `x` `[T]` with seasonal period `period`."""
    x = np.asarray(x, dtype=np.float64)
    if np.any(x <= 0) or not is_seasonal(x, period):
        return np.full(horizon, x[-1])
    indices = seasonal_indices(x, period)
    level = x[-1] / indices[(len(x) - 1) % period]
    return level * indices[(len(x) + np.arange(horizon)) % period]
