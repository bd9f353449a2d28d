"""Forecast metrics (TSLib's definitions, accumulated in float64).

MAE = mean|p - t|, MSE = mean (p - t)^2, RMSE = sqrt(MSE), MAPE = mean|(p - t)/t|, MSPE = mean((p - t)/t)^2.
As in TSLib there is no epsilon: zero targets make MAPE/MSPE infinite.
"""

from __future__ import annotations

import numpy as np


def metric(pred: np.ndarray, true: np.ndarray) -> tuple[float, float, float, float, float]:
    """Return (mae, mse, rmse, mape, mspe) over every element of `pred` and `true` (same shape)."""
    if pred.shape != true.shape:
        raise ValueError(f"metric: prediction shape {pred.shape} does not match target shape {true.shape}")
    p = np.asarray(pred, dtype=np.float64)
    t = np.asarray(true, dtype=np.float64)
    err = p - t
    mae = float(np.mean(np.abs(err)))
    mse = float(np.mean(err**2))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = err / t
    mape = float(np.mean(np.abs(rel)))
    mspe = float(np.mean(rel**2))
    return mae, mse, float(np.sqrt(mse)), mape, mspe


def masked_metric(pred: np.ndarray, true: np.ndarray, mask: np.ndarray) -> tuple[float, float, float, float, float]:
    """`metric` over the hidden points only (mask == 0), as TSLib scores imputation; all three `[N, L, C]`."""
    if mask.shape != true.shape:
        raise ValueError(f"masked_metric: mask shape {mask.shape} does not match target shape {true.shape}")
    hidden = mask == 0
    if not hidden.any():
        raise ValueError("masked_metric: no point is masked, so there is nothing to score; raise --mask_rate")
    return metric(pred[hidden], true[hidden])
