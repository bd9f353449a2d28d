"""M4 competition scores as TSLib's M4Summary reports them (Makridakis et al. 2020, "The M4 Competition").

Per series i of horizon H, with y the test values, f the forecast and x the training history:

    sMAPE_i = mean_h 200 |f − y| / (|f| + |y|)           (a 0/0 term counts 0)
    MAPE_i  = mean_h 100 |f − y| / |y|                    (a zero y divides by 1, as TSLib)
    MASE_i  = mean_h |f − y| / mean_t |x[t] − x[t−m]|     (m: the group's frequency, 1/4/12/1/1/24)

A frequency group's score is the mean over its series (over all its points for sMAPE and MAPE, the same
thing since every series of a group has the same H). The summary keeps Yearly, Quarterly and Monthly,
pools Weekly, Daily and Hourly into "Others" and adds "Average", both weighted by the number of series.
OWA compares a summarised score with Naive2's (the M4 benchmark: seasonally adjusted naive forecast):

    OWA_k = (MASE_k / MASE_k(Naive2) + sMAPE_k / sMAPE_k(Naive2)) / 2

on the summarised (pooled) sMAPE and MASE, never as a mean of per-group OWAs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["M4_GROUPS", "SUMMARY_KEYS", "group_scores", "mape", "mase", "smape", "summarize_groups", "summary"]

#: M4's six frequency groups in TSLib's order.
M4_GROUPS = ("Yearly", "Quarterly", "Monthly", "Weekly", "Daily", "Hourly")
#: The rows of TSLib's summary.
SUMMARY_KEYS = ("Yearly", "Quarterly", "Monthly", "Others", "Average")
_POOLED = ("Weekly", "Daily", "Hourly")


def smape(forecast: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Element-wise sMAPE in percent, `[N, H]` → `[N, H]`; a zero denominator divides by 1."""
    forecast, target = np.asarray(forecast, dtype=np.float64), np.asarray(target, dtype=np.float64)
    denominator = np.abs(target) + np.abs(forecast)
    return 200 * np.abs(forecast - target) / np.where(denominator == 0.0, 1.0, denominator)


def mape(forecast: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Element-wise MAPE in percent, `[N, H]` → `[N, H]`; a zero target divides by 1."""
    forecast, target = np.asarray(forecast, dtype=np.float64), np.asarray(target, dtype=np.float64)
    denominator = np.abs(target)
    return 100 * np.abs(forecast - target) / np.where(denominator == 0.0, 1.0, denominator)


def mase(forecast: np.ndarray, insample: np.ndarray, outsample: np.ndarray, frequency: int) -> float:
    """MASE of one series: forecast and outsample `[H]`, insample `[T]` with T > frequency."""
    history = np.asarray(insample, dtype=np.float64)
    scale = np.mean(np.abs(history[frequency:] - history[:-frequency]))
    return float(np.mean(np.abs(np.asarray(forecast, dtype=np.float64) - outsample)) / scale)


def group_scores(forecast: np.ndarray, insample: Sequence[np.ndarray], target: np.ndarray,
                 frequency: int) -> dict[str, float]:
    """sMAPE, MAPE and MASE of one frequency group: forecast and target `[N, H]`, insample N histories."""
    forecast, target = np.asarray(forecast, dtype=np.float64), np.asarray(target, dtype=np.float64)
    if forecast.shape != target.shape or len(insample) != len(target):
        raise ValueError(f"forecasts {forecast.shape} do not match the test values {target.shape} of "
                         f"{len(insample)} series")
    return {
        "smape": float(np.mean(smape(forecast, target))),
        "mape": float(np.mean(mape(forecast, target))),
        "mase": float(np.mean([mase(f, x, y, frequency) for f, x, y in zip(forecast, insample, target, strict=True)])),
    }


def summarize_groups(scores: Mapping[str, float], counts: Mapping[str, int]) -> dict[str, float]:
    """Per-group scores → Yearly, Quarterly, Monthly, Others (Weekly+Daily+Hourly) and Average, pooled
    with weights = number of series per group (`counts`)."""
    pooled_count = sum(counts[g] for g in _POOLED)
    total = sum(counts[g] for g in M4_GROUPS)
    out = {g: float(scores[g]) for g in ("Yearly", "Quarterly", "Monthly")}
    out["Others"] = sum(scores[g] * counts[g] for g in _POOLED) / pooled_count
    out["Average"] = sum(scores[g] * counts[g] for g in M4_GROUPS) / total
    return out


def summary(model: Mapping[str, Mapping[str, float]], naive2: Mapping[str, Mapping[str, float]],
            counts: Mapping[str, int]) -> dict[str, dict[str, float]]:
    """TSLib's M4 summary from per-group `group_scores` of the model and of Naive2.

    Returns {"smape", "mape", "mase", "owa"} → {Yearly, Quarterly, Monthly, Others, Average} → value
    (unrounded; TSLib prints them rounded to 3 decimals).
    """
    pooled = {name: summarize_groups({g: model[g][name] for g in M4_GROUPS}, counts)
              for name in ("smape", "mape", "mase")}
    base = {name: summarize_groups({g: naive2[g][name] for g in M4_GROUPS}, counts) for name in ("smape", "mase")}
    pooled["owa"] = {k: (pooled["mase"][k] / base["mase"][k] + pooled["smape"][k] / base["smape"][k]) / 2
                     for k in SUMMARY_KEYS}
    return pooled
