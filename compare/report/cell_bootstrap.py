"""Bootstrap confidence intervals over the (dataset, horizon) cells of a comparison, as fev's reports give them.

A summary over cells (a mean win share, a skill score 1 − exp(mean log rel)) is a statistic of the N cells'
values. Its interval resamples the cells: B = `BOOTSTRAP_RESAMPLES` times draw N cells with replacement, the same
draws for every model, compute the statistic on each draw, and take the 2.5 % and 97.5 % quantiles of the B values
(the percentile interval, Efron & Tibshirani 1993, §13.3), with `scipy.stats.bootstrap` and the generator seed
`BOOTSTRAP_SEED`, so the same result files give the same report. The settings are the report's other bootstrap's
(`compare.report.significance`).

Percentile, not SciPy's default BCa: BCa's acceleration is a jackknife over the cells, unstable with the 4–12
cells of a comparison and undefined when every cell has the same value (a model that wins every cell), where the
percentile interval is [x, x]. With fewer than `MIN_INTERVAL_CELLS` cells there is no interval. Horizons of one
dataset share data, so the cells are not independent and the intervals are optimistic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats

from compare.report.significance import ALPHA, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

__all__ = ["MIN_INTERVAL_CELLS", "Interval", "bootstrap_settings", "cell_intervals", "format_interval",
           "interval_note"]

#: fewer cells than this give no interval: the resamples of 1 or 2 cells take only 1 or 3 distinct values
MIN_INTERVAL_CELLS = 3

Interval = tuple[float, float]


def cell_intervals(per_cell: np.ndarray, statistic: Callable[..., np.ndarray]) -> list[Interval] | None:
    """The 1 − ALPHA percentile bootstrap interval of ``statistic`` for every model, resampling the cells.

    per_cell: ``[N, k]`` one value per cell and model. statistic(values, axis) reduces ``axis`` (the cells) of
    an array, e.g. the mean. Returns (low, high) per model, or None with fewer than MIN_INTERVAL_CELLS cells."""
    if per_cell.ndim != 2:
        raise ValueError(f"per-cell values need the shape [cells, models], got {per_cell.shape}")
    if per_cell.shape[0] < MIN_INTERVAL_CELLS:
        return None
    # axis 0: the cells; SciPy draws the same resampled cells for every model (column).
    interval = stats.bootstrap((per_cell,), statistic, axis=0, vectorized=True, method="percentile",
                               confidence_level=1 - ALPHA, n_resamples=BOOTSTRAP_RESAMPLES,
                               rng=np.random.default_rng(BOOTSTRAP_SEED)).confidence_interval
    return [(float(low), float(high)) for low, high in zip(interval.low, interval.high, strict=True)]


def bootstrap_settings() -> dict[str, object]:
    """The settings of `cell_intervals`, for the report's JSON."""
    return {"unit": "(dataset, horizon) cell", "method": "percentile", "confidence": 1 - ALPHA,
            "resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED, "min_cells": MIN_INTERVAL_CELLS}


def interval_note(n_cells: int) -> str:
    """One sentence saying how the intervals over `n_cells` cells were computed, or why there are none."""
    if n_cells < MIN_INTERVAL_CELLS:
        return (f"No 95 % interval: it resamples the (dataset, horizon) cells and needs at least "
                f"{MIN_INTERVAL_CELLS}, here {n_cells}.")
    return (f"[95 % CI]: percentile bootstrap resampling the {n_cells} (dataset, horizon) cells with replacement "
            f"(`scipy.stats.bootstrap`, {BOOTSTRAP_RESAMPLES} resamples, generator seed {BOOTSTRAP_SEED}, the same "
            "draws for every model; horizons of one dataset share data, so it is optimistic).")


def format_interval(point: float | None, interval: Interval | None, number: Callable[[float], str]) -> str:
    """`point [low, high]` with each value written by `number`; the point alone without an interval, — without
    a point."""
    if point is None:
        return "—"
    if interval is None:
        return number(point)
    return f"{number(point)} [{number(interval[0])}, {number(interval[1])}]"
