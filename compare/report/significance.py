"""Seed statistics for the comparison report: is a difference between two models larger than the
spread that retraining with another seed produces?

Forecasting papers report one seed per cell and bold the lowest number; retraining TimesNet on ETTh1
with three seeds moved its test MSE by ±0.017 (docs/results/TimesNet_seeds.jsonl), more than many
published margins. With several seeds per cell (`python -m compare --seeds ...`) the report uses:

- per cell (model, dataset, horizon): mean and *sample* standard deviation (ddof = 1) over the n seeds;
- per pair of models in one cell: Welch's unequal-variance t-test over the seeds (the models are
  trained independently, so seeds are not paired within a cell). A difference with p ≥ `ALPHA`
  (equivalently: its 95 % Welch confidence interval of the difference of means contains zero) is
  *within seed noise*. The relative difference (a − b) / mean(b) and its interval divide the Welch
  interval by b's mean, treated as fixed;
- the focus model against another, over every (dataset, horizon, seed) cell both have: wins and
  losses, the mean relative MSE difference (focus − other) / other with a 95 % percentile bootstrap
  interval (`scipy.stats.bootstrap`, fixed generator seed, so reports are reproducible), the
  Wilcoxon signed-rank test and the paired t-test (one-sample t-test of the relative differences)
  of the hypothesis that the differences are centred on zero. Horizons of one dataset share data, so
  the cells are not independent and these p-values are optimistic; the per-cell Welch tests are the
  conservative view.

Other tasks (`compare.grid.tasks`) score with metrics of either direction: accuracy and F1 are higher-is-better
and may be 0, so their differences are absolute, a − b in points, instead of relative (`relative=False`),
and a win is the higher value (`higher_is_better=True`). The defaults are the forecasting errors' (relative,
lower is better).

With fewer than two seeds on either side nothing is tested: the functions return None / NaN and the
report says significance cannot be assessed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "ALPHA",
    "BOOTSTRAP_RESAMPLES",
    "CellDifference",
    "PairedComparison",
    "SeedSummary",
    "cell_difference",
    "paired_comparison",
    "relative_difference",
    "summarize",
    "welch_p",
]

#: significance level of every test, and 1 - ALPHA the confidence of every interval
ALPHA = 0.05
#: resamples of the bootstrap interval of the mean relative difference
BOOTSTRAP_RESAMPLES = 9999
#: generator seed of the bootstrap: the same result files give the same report
BOOTSTRAP_SEED = 0


@dataclass(frozen=True)
class SeedSummary:
    """Mean, sample standard deviation (None with one seed) and number of seeds of one cell."""

    mean: float
    std: float | None
    n: int


def summarize(values: Sequence[float]) -> SeedSummary:
    """Mean and sample standard deviation (ddof = 1) of one cell's per-seed values (at least one)."""
    if not values:
        raise ValueError("summarize needs at least one value")
    array = np.asarray(values, dtype=np.float64)
    std = float(np.std(array, ddof=1)) if len(array) > 1 else None
    return SeedSummary(float(np.mean(array)), std, len(array))


def _degenerate(a: np.ndarray, b: np.ndarray) -> bool:
    """Both samples constant (every seed gave the same number): the t statistic is 0/0 or x/0."""
    return bool(np.ptp(a) == 0 and np.ptp(b) == 0)


def _welch(a: np.ndarray, b: np.ndarray):
    """SciPy's Welch t-test of a and b. One constant side (every seed the same number) has variance 0: SciPy then
    warns of precision loss in its moment check, yet its statistic (mean(a) − mean(b)) / sqrt(var(other) / n) is
    exact (tests/compare/report/test_significance.py holds it against the formula), so that one warning is silenced."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred in moment calculation", category=RuntimeWarning)
        return stats.ttest_ind(a, b, equal_var=False)


def welch_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided p-value of Welch's t-test that a and b have equal means; None with < 2 values on a side.

    Constant samples on both sides (deterministic training) give p = 1 when the means are equal and
    p = 0 when they differ, instead of SciPy's NaN."""
    a_, b_ = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a_) < 2 or len(b_) < 2:
        return None
    if _degenerate(a_, b_):
        return 1.0 if a_[0] == b_[0] else 0.0
    return float(_welch(a_, b_).pvalue)


@dataclass(frozen=True)
class CellDifference:
    """(mean(a) − mean(b)) / mean(b) in one cell with its Welch 1 − ALPHA interval and p-value;
    interval and p are None when a side has fewer than two seeds."""

    relative: float
    low: float | None
    high: float | None
    p: float | None

    @property
    def within_noise(self) -> bool | None:
        """True when the interval contains zero (p ≥ ALPHA); None when it cannot be assessed."""
        return None if self.p is None else self.p >= ALPHA


def relative_difference(a: Sequence[float], b: Sequence[float]) -> CellDifference:
    """How much a's per-seed values exceed b's, relative to b's mean, with Welch's interval.

    a, b: one value per seed (≥ 1 each; b's mean must not be 0)."""
    return cell_difference(a, b, relative=True)


def cell_difference(a: Sequence[float], b: Sequence[float], *, relative: bool = True) -> CellDifference:
    """mean(a) − mean(b), divided by mean(b) when `relative` (b's mean must then not be 0), with the
    Welch 1 − ALPHA interval scaled the same way.

    a, b: one value per seed (≥ 1 each)."""
    a_, b_ = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    base = float(np.mean(b_))
    if relative and base == 0:
        raise ValueError("relative difference to a mean of 0")
    scale = base if relative else 1.0
    difference = (float(np.mean(a_)) - base) / scale
    p = welch_p(a_, b_)
    if p is None:
        return CellDifference(difference, None, None, None)
    if _degenerate(a_, b_):
        return CellDifference(difference, difference, difference, p)
    interval = _welch(a_, b_).confidence_interval(1 - ALPHA)
    return CellDifference(difference, float(interval.low) / scale, float(interval.high) / scale, p)


@dataclass(frozen=True)
class PairedComparison:
    """Focus vs another model over the cells both have: counts, mean relative difference with its
    bootstrap interval, and the two paired tests (NaN where fewer than two cells or no variation)."""

    n: int
    wins: int
    losses: int
    ties: int
    mean_relative: float
    low: float
    high: float
    wilcoxon_p: float
    ttest_p: float


def paired_comparison(focus: Sequence[float], other: Sequence[float], *, decimals: int | None = None,
                      higher_is_better: bool = False, relative: bool = True) -> PairedComparison:
    """Paired statistics of focus vs other; element k of both is the same (dataset, horizon, seed) cell.

    decimals: wins and losses are judged at this printed precision (None: exactly), like the table's marks.
    higher_is_better: a win is focus > other (accuracy, F1) instead of focus < other (errors).
    relative: the differences are (focus − other) / other per cell; False: focus − other."""
    f, o = np.asarray(focus, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if f.shape != o.shape or f.ndim != 1:
        raise ValueError(f"paired values need equal 1-D shapes, got {f.shape} and {o.shape}")
    n = len(f)
    if n == 0:
        raise ValueError("paired comparison of no cells")
    rf, ro = (f, o) if decimals is None else (np.round(f, decimals), np.round(o, decimals))
    wins, losses = int(np.sum(rf < ro)), int(np.sum(rf > ro))
    if higher_is_better:
        wins, losses = losses, wins
    diffs = (f - o) / o if relative else f - o  # [n]
    mean = float(np.mean(diffs))
    low = high = wilcoxon_p = ttest_p = math.nan
    if n >= 2:
        if np.ptp(diffs) == 0:
            low = high = mean
        else:
            interval = stats.bootstrap((diffs,), np.mean, confidence_level=1 - ALPHA, method="percentile",
                                       n_resamples=BOOTSTRAP_RESAMPLES, rng=np.random.default_rng(BOOTSTRAP_SEED)
                                       ).confidence_interval
            low, high = float(interval.low), float(interval.high)
            ttest_p = float(stats.ttest_1samp(diffs, 0.0).pvalue)
        if np.any(diffs != 0):
            with warnings.catch_warnings():
                # Few cells: SciPy warns that the exact distribution has coarse p-values; that is expected.
                warnings.simplefilter("ignore", UserWarning)
                wilcoxon_p = float(stats.wilcoxon(diffs).pvalue)
    return PairedComparison(n, wins, losses, n - wins - losses, mean, low, high, wilcoxon_p, ttest_p)
