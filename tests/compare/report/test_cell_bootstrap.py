"""compare.report.cell_bootstrap: the percentile interval over cells against a replay of its resamples, its seed, its
coverage of the point, its narrowing with more cells, and no interval from too few cells."""

from __future__ import annotations

import numpy as np
import pytest

from compare.report.cell_bootstrap import MIN_INTERVAL_CELLS, cell_intervals, format_interval, interval_note
from compare.report.significance import ALPHA, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

# [N cells, k models] of positive values, e.g. relative errors.
MATRIX = np.array([[0.40, 0.30, 0.50],
                   [0.20, 0.25, 0.20],
                   [0.90, 0.70, 0.80],
                   [0.10, 0.20, 0.20],
                   [0.33, 0.31, 0.35]])


def mean(values: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(values, axis=axis)


def skill(log_rel: np.ndarray, axis: int) -> np.ndarray:
    return 1.0 - np.exp(np.mean(log_rel, axis=axis))


@pytest.mark.parametrize("statistic", [mean, skill], ids=["mean", "skill"])
def test_the_interval_is_the_percentiles_of_the_statistic_over_resampled_cells(statistic):
    # Replays SciPy's draws: B x N cell indices from the seeded generator, shared by every model (column).
    data = np.log(MATRIX) if statistic is skill else MATRIX
    n = len(data)
    picks = np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, (BOOTSTRAP_RESAMPLES, n))  # [B, N]
    replayed = statistic(data[picks], axis=1)  # [B, k]
    low, high = np.percentile(replayed, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)], axis=0)
    got = np.array(cell_intervals(data, statistic))  # [k, 2]
    np.testing.assert_allclose(got[:, 0], low, rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], high, rtol=1e-12)
    # Each model's interval is the one it gets alone: the cells drawn do not depend on the other models.
    for j in range(data.shape[1]):
        assert cell_intervals(data[:, [j]], statistic) == [tuple(got[j])]


def test_the_interval_contains_the_point_is_reproducible_and_narrows_with_more_cells():
    point = MATRIX.mean(axis=0)
    first = cell_intervals(MATRIX, mean)
    assert cell_intervals(MATRIX, mean) == first  # same seed, same interval
    for (low, high), p in zip(first, point, strict=True):
        assert low < p < high
    # Four times the cells with the same values: the standard error halves, so does the interval, roughly.
    more = cell_intervals(np.tile(MATRIX, (4, 1)), mean)
    for (low, high), (low4, high4) in zip(first, more, strict=True):
        assert high4 - low4 < 0.7 * (high - low)


def test_too_few_cells_give_no_interval_and_a_constant_gives_a_point():
    assert MIN_INTERVAL_CELLS == 3
    assert cell_intervals(MATRIX[:2], mean) is None
    assert "needs at least 3, here 2" in interval_note(2)
    assert "resampling the 5 (dataset, horizon) cells" in interval_note(5) and f"{BOOTSTRAP_RESAMPLES} resamples" \
        in interval_note(5) and f"seed {BOOTSTRAP_SEED}" in interval_note(5)
    assert cell_intervals(np.full((4, 1), 0.5), mean) == [(0.5, 0.5)]  # a model winning every cell
    with pytest.raises(ValueError, match=r"\[cells, models\]"):
        cell_intervals(MATRIX[:, 0], mean)


def test_format_interval():
    assert format_interval(0.1234, (0.05, 0.2), lambda v: f"{v:.2f}") == "0.12 [0.05, 0.20]"
    assert format_interval(0.1234, None, lambda v: f"{v:.2f}") == "0.12"
    assert format_interval(None, (0.05, 0.2), lambda v: f"{v:.2f}") == "—"
