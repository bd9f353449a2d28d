"""Ranks, win rates and the Friedman / Nemenyi test over the (dataset, horizon) cells of a comparison.

The models are compared as Demšar (2006) compares classifiers over data sets: each (dataset, horizon) cell is a
block, its errors (the mean over seeds) ranked 1 = lowest with ties sharing the mean rank. The tests need every
model in every cell, so a model or a cell with missing results is left out (`complete_block`: whichever loses
fewer results) and the report names it. Over the N cells and k models left:

- average rank R_j = mean over cells of model j's rank;
- best in = the cells where the model has the lowest error (a tie counts for each tied model);
- win rate = the share of (cell, other model) pairs in which the model's error is lower, a tie counting ½:
  W_j = mean over cells c of the win share w_cj = (#{i ≠ j: e_cj < e_ci} + ½ #{i ≠ j: e_cj = e_ci}) / (k − 1),
  with a 95 % percentile bootstrap interval resampling the cells (`compare.report.cell_bootstrap`; from 3 cells on);
- Friedman test (`scipy.stats.friedmanchisquare`): χ²_F = 12N / (k(k+1)) · (Σ_j R_j² − k(k+1)²/4), with a
  correction for ties, against χ² with k − 1 degrees of freedom (the approximation is rough for small N);
- Nemenyi post-hoc test (`scikit_posthocs.posthoc_nemenyi_friedman`): two models differ at α = 0.05 when their
  average ranks differ by more than CD = q_α / √2 · √(k(k+1) / (6N)), q_α the studentized range quantile;
- `critical_difference.png`: the critical-difference diagram (`scikit_posthocs.critical_difference_diagram`),
  average ranks on an axis, models the Nemenyi test cannot separate joined by a bar, the CD drawn to scale.

A diagram needs at least MIN_DATASETS datasets, MIN_MODELS models and MIN_CELLS complete cells; otherwise the
report says why it has none. The ranks use the raw errors (unlike the table's marks, which judge ties at the
printed precision), as the tests do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from compare.report.cell_bootstrap import (
    Interval,
    bootstrap_settings,
    cell_intervals,
    format_interval,
    interval_note,
)
from compare.report.complete_block import complete_block
from compare.report.forecast_cells import Cells
from compare.report.markdown import format_p
from compare.report.plots import pyplot
from compare.report.skill_scores import SkillScores
from utils.report_files import save_figure

__all__ = [
    "ALPHA",
    "CD_FILE",
    "STATS_FILE",
    "MIN_CELLS",
    "MIN_DATASETS",
    "MIN_MODELS",
    "CellStatistics",
    "average_ranks",
    "best_counts",
    "cell_matrix",
    "cell_statistics",
    "critical_difference",
    "statistics_section",
    "write_cell_statistics",
    "win_rates",
    "win_shares",
]

ALPHA = 0.05
CD_FILE = "critical_difference.png"
STATS_FILE = "cell_statistics.json"
MIN_DATASETS, MIN_MODELS, MIN_CELLS = 2, 3, 3
METRICS = ("mse", "mae")


def cell_matrix(cells: Cells, datasets: list[str], metric: str) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """The ``[N, k]`` errors of every (dataset, horizon) cell (NaN where a row has none; row order as in
    `cells`) and those cells, in dataset order. Horizon averages are not cells."""
    keys = [(d, h) for dataset in datasets for (d, h, m) in cells if d == dataset and m == metric
            and isinstance(h, int)]
    values = [[np.nan if v is None else v for v in cells[(d, h, metric)]] for d, h in keys]
    width = len(next(iter(cells.values()))) if cells else 0
    return np.asarray(values, dtype=np.float64).reshape(len(keys), width), keys


def average_ranks(matrix: np.ndarray) -> np.ndarray:
    """``[k]``: mean over the N cells (matrix rows) of each model's rank, 1 = lowest, ties the mean rank."""
    return stats.rankdata(matrix, axis=1, method="average").mean(axis=0)


def best_counts(matrix: np.ndarray) -> np.ndarray:
    """``[k]``: per model the cells where its error is the lowest (every tied model counts)."""
    return (matrix == matrix.min(axis=1, keepdims=True)).sum(axis=0)


def win_shares(matrix: np.ndarray) -> np.ndarray:
    """``[N, k]``: per cell and model the share of the k − 1 other models it beats, a tie counting ½:
    w_cj = (#{i ≠ j: e_cj < e_ci} + ½ #{i ≠ j: e_cj = e_ci}) / (k − 1)."""
    lower = (matrix[:, :, None] < matrix[:, None, :]).sum(axis=2)  # [N, k]
    ties = (matrix[:, :, None] == matrix[:, None, :]).sum(axis=2) - 1  # [N, k], minus itself
    return (lower + 0.5 * ties) / (matrix.shape[1] - 1)


def win_rates(matrix: np.ndarray) -> np.ndarray:
    """``[k]``: per model the share of (cell, other model) pairs it wins, a tie counting ½: the mean over the
    cells of `win_shares` (every cell has k − 1 pairs)."""
    return win_shares(matrix).mean(axis=0)


def _mean_over_cells(values: np.ndarray, axis: int) -> np.ndarray:
    """The win rate of resampled win shares: their mean along `axis` (the cells)."""
    return np.mean(values, axis=axis)


def critical_difference(k: int, n: int, alpha: float = ALPHA) -> float:
    """Nemenyi's CD = q_α / √2 · √(k(k+1) / (6n)), q_α the upper-α studentized range quantile (k, ∞ d.o.f.)."""
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


@dataclass
class CellStatistics:
    """Per metric the ranks, best-in counts and win rates over `cells` (every row present) with the win rates'
    bootstrap intervals (None: fewer than 3 cells or one model), and on MSE the Friedman test, the Nemenyi
    p-values ``[k, k]`` and CD (None with `skipped` saying why)."""

    rows: list[str]
    cells: list[tuple[str, int]]
    left_out: list[tuple[str, int]]
    rows_left_out: list[str] = field(default_factory=list)
    ranks: dict[str, list[float]] = field(default_factory=dict)
    best: dict[str, list[int]] = field(default_factory=dict)
    wins: dict[str, list[float | None]] = field(default_factory=dict)
    wins_ci: dict[str, list[Interval | None]] = field(default_factory=dict)
    friedman: tuple[float, float] | None = None
    nemenyi: list[list[float]] | None = None
    cd: float | None = None
    skipped: str | None = None


def _skip_reason(rows: list[str], used: list[tuple[str, int]]) -> str | None:
    datasets = {d for d, _ in used}
    if len(rows) < MIN_MODELS:
        return f"{len(rows)} model(s): the Friedman test and the diagram need at least {MIN_MODELS}"
    if len(datasets) < MIN_DATASETS:
        return (f"{len(datasets)} dataset(s) with every model's result: the Friedman test and the diagram need at "
                f"least {MIN_DATASETS}")
    if len(used) < MIN_CELLS:
        return f"{len(used)} cell(s) with every model's result: the Friedman test and the diagram need at least {MIN_CELLS}"
    return None


def cell_statistics(cells: Cells, rows: list[str], datasets: list[str]) -> CellStatistics:
    """Ranks, best-in counts and win rates of every metric, and the Friedman / Nemenyi test on MSE, over the
    largest complete block `complete_block` finds: a model without results in most cells (a row whose runs
    failed, or that has no recipe there) is left out rather than emptying every cell, a cell some models lack is
    left out otherwise."""
    matrix, keys = cell_matrix(cells, datasets, "mse")
    kept_cells, kept_rows = complete_block(~np.isnan(matrix))
    result = CellStatistics([rows[i] for i in kept_rows], [keys[c] for c in kept_cells],
                            [keys[c] for c in range(len(keys)) if c not in kept_cells],
                            rows_left_out=[r for i, r in enumerate(rows) if i not in kept_rows])
    if not result.cells or not result.rows:
        result.skipped = "no (dataset, horizon) cell has a result of every model"
        return result
    for metric in METRICS:
        values = cell_matrix(cells, datasets, metric)[0][np.ix_(kept_cells, kept_rows)]
        result.ranks[metric] = average_ranks(values).tolist()
        result.best[metric] = best_counts(values).tolist()
        shares = win_shares(values) if len(kept_rows) > 1 else None  # [N, k]
        result.wins[metric] = shares.mean(axis=0).tolist() if shares is not None else [None] * len(kept_rows)
        intervals = cell_intervals(shares, _mean_over_cells) if shares is not None else None
        result.wins_ci[metric] = intervals or [None] * len(kept_rows)
    result.skipped = _skip_reason(result.rows, result.cells)
    if result.skipped is None:
        import pandas as pd
        import scikit_posthocs

        block = matrix[np.ix_(kept_cells, kept_rows)]
        statistic, p = stats.friedmanchisquare(*block.T)
        if not np.isfinite(statistic):
            result.skipped = "every model has the same error in every cell, so there are no ranks to test"
            return result
        result.friedman = (float(statistic), float(p))
        frame = pd.DataFrame(block, columns=result.rows)
        result.nemenyi = (scikit_posthocs.posthoc_nemenyi_friedman(frame).loc[result.rows, result.rows]
                          .to_numpy().tolist())
        result.cd = critical_difference(len(result.rows), len(result.cells))
    return result


def write_cell_statistics(out: Path, result: CellStatistics, skill: SkillScores | None = None) -> list[Path]:
    """Write `critical_difference.png` (and `.pdf`) and `cell_statistics.json` (the numbers behind the section,
    with the bootstrap's settings and, when given, the skill scores against the seasonal naive forecast); a stale
    diagram is removed when this report has none."""
    numbers = {**result.__dict__, "alpha": ALPHA, "bootstrap": bootstrap_settings()}
    if skill is not None:
        numbers["skill_vs_seasonal_naive"] = skill.record()
    (out / STATS_FILE).write_text(json.dumps(numbers, indent=1, allow_nan=False) + "\n")
    path = out / CD_FILE
    if result.skipped is not None:
        path.unlink(missing_ok=True)
        path.with_suffix(".pdf").unlink(missing_ok=True)
        return [out / STATS_FILE]
    import pandas as pd
    import scikit_posthocs

    plt = pyplot()
    ranks = pd.Series(result.ranks["mse"], index=result.rows)
    sig = pd.DataFrame(result.nemenyi, index=result.rows, columns=result.rows)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 1.0 + 0.4 * len(result.rows))))
    scikit_posthocs.critical_difference_diagram(ranks, sig, cd=result.cd, alpha=ALPHA, ax=ax)
    statistic, p = result.friedman
    ax.set_title(f"Average MSE rank over {len(result.cells)} (dataset, horizon) cells; Friedman χ² = "
                 f"{statistic:.2f}, p = {format_p(p)}; Nemenyi CD = {result.cd:.2f} (α = {ALPHA})", fontsize=9, pad=28)
    return [*save_figure(fig, path.with_suffix("")), out / STATS_FILE]


def _cell_list(cells: list[tuple[str, int]]) -> str:
    return ", ".join(f"{d} {h}" for d, h in cells)


def statistics_section(result: CellStatistics) -> list[str]:
    """`## Ranks over cells`: the per-model table, the Friedman test, the Nemenyi pairs and the diagram (or why
    there is none)."""
    md = ["## Ranks over (dataset, horizon) cells", ""]
    if not result.cells:
        return [*md, f"No ranks: {result.skipped}.", ""]
    md += [f"Over the {len(result.cells)} cells where every ranked model has a result ({_cell_list(result.cells)}); "
           "the error of a cell is the mean over seeds. *Avg rank*: mean rank over the cells (1 = lowest error, "
           "ties share the mean rank, raw values). *Best in*: cells where the model has the lowest error (ties "
           "count for each). *Win rate*: share of (cell, other model) pairs with a lower error, ties ½ "
           f"(`compare/report/cell_statistics.py`). {interval_note(len(result.cells))}", ""]
    if result.left_out:
        md += [f"Left out (a model has no result there): {_cell_list(result.left_out)}.", ""]
    if result.rows_left_out:
        md += [f"Models left out (results in too few cells; ranking them would drop more cells): "
               f"{', '.join(result.rows_left_out)}.", ""]
    md += ["| Model | Avg rank MSE | Avg rank MAE | Best in MSE | Best in MAE | Win rate MSE [95 % CI] | "
           "Win rate MAE [95 % CI] |", "|---|---:|---:|---:|---:|---:|---:|"]
    order = sorted(range(len(result.rows)), key=lambda i: result.ranks["mse"][i])
    for i in order:
        wins = [format_interval(result.wins[m][i], result.wins_ci[m][i], _percent) for m in METRICS]
        md.append(f"| {result.rows[i]} | {result.ranks['mse'][i]:.2f} | {result.ranks['mae'][i]:.2f} | "
                  f"{result.best['mse'][i]} | {result.best['mae'][i]} | {wins[0]} | {wins[1]} |")
    md.append("")
    if result.skipped is not None:
        return [*md, f"No Friedman test and no critical-difference diagram: {result.skipped}.", ""]
    statistic, p = result.friedman
    k, n = len(result.rows), len(result.cells)
    verdict = ("the models' ranks differ" if p < ALPHA else
               "no difference among the models' ranks is shown, so the Nemenyi pairs below are not to be read as "
               "differences")
    md += [f"Friedman test on the MSE ranks (`scipy.stats.friedmanchisquare`, k = {k} models, N = {n} cells): "
           f"χ² = {statistic:.3f}, p = {format_p(p)} — at α = {ALPHA}, {verdict}."
           + (" With N < 10 cells the χ² approximation is rough." if n < 10 else ""), "",
           f"Nemenyi post-hoc test (`scikit_posthocs.posthoc_nemenyi_friedman`): critical difference CD = "
           f"{result.cd:.3f} in average rank at α = {ALPHA}. {_nemenyi_pairs(result)}", "",
           f"![critical-difference diagram]({CD_FILE})", ""]
    return md


def _percent(value: float) -> str:
    return f"{100.0 * value:.0f}%"


def _nemenyi_pairs(result: CellStatistics) -> str:
    """The pairs the Nemenyi test separates (p < α), or that it separates none."""
    pairs = [f"{result.rows[i]} vs {result.rows[j]} (p = {format_p(result.nemenyi[i][j])})"
             for i in range(len(result.rows)) for j in range(i + 1, len(result.rows))
             if result.nemenyi[i][j] < ALPHA]
    return ("Pairs that differ: " + "; ".join(pairs) + ".") if pairs else "It separates no pair of models."
