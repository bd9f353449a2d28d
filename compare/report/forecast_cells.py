"""The cells of a forecasting comparison: its rows, datasets and horizons in the runner's order, and per
(dataset, horizon or `Avg`, metric) each row's per-seed values and their mean.

The horizon average of a model is taken only when it has every horizon the dataset has, so a failed run
never makes an average look better; with seeds, a seed's average needs that seed at every horizon.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from compare.grid.records import RunResult, mean_of_all, ordered, seed_order
from compare.report.ranking import AVG, competition_ranks

__all__ = [
    "Cells",
    "Samples",
    "accuracy_cells",
    "average_ranks",
    "cell_samples",
    "dataset_horizons",
    "first_run",
    "orders",
    "units",
]

#: (dataset, horizon or 'Avg', metric) -> per row {seed: value} ({} when missing)
Samples = dict[tuple[str, int | str, str], list[dict]]
#: (dataset, horizon or 'Avg', metric) -> per row the mean over its seeds (None when missing)
Cells = dict[tuple[str, int | str, str], list[float | None]]


def orders(runs: list[RunResult], config: dict, failed: Sequence[dict] = ()
           ) -> tuple[list[str], list[str], list[int]]:
    """Row, dataset and horizon order: the runner's order first, then anything else found."""
    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs] + [f["row"] for f in failed])
    datasets = ordered(config.get("data", []), [r.dataset for r in runs])
    horizons = sorted({r.pred_len for r in runs})
    return rows, datasets, horizons


def first_run(runs: list[RunResult], row: str, dataset: str, pred_len: int) -> RunResult | None:
    """The run of (row, dataset, horizon) with the lowest seed (forecast plots, efficiency)."""
    found = [r for r in runs if (r.row, r.dataset, r.pred_len) == (row, dataset, pred_len)]
    return min(found, key=lambda r: seed_order(r.seed)) if found else None


def cell_samples(runs: list[RunResult], rows: list[str], datasets: list[str]) -> Samples:
    """(dataset, horizon or 'Avg', metric) -> per row {seed: value} ({} when missing).

    A row's 'Avg' sample of a seed is its mean over the dataset's horizons, for the seeds that have
    every horizon."""
    by_key: dict[tuple[str, str, int], dict] = {}
    for r in runs:
        by_key.setdefault((r.row, r.dataset, r.pred_len), {})[r.seed] = r
    samples: Samples = {}
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        for metric in ("mse", "mae"):
            for h in horizons:
                samples[(dataset, h, metric)] = [
                    {seed: getattr(run, metric) for seed, run in sorted(
                        by_key.get((row, dataset, h), {}).items(), key=lambda item: seed_order(item[0]))}
                    for row in rows]
            averages = []
            for i in range(len(rows)):
                per_h = [samples[(dataset, h, metric)][i] for h in horizons]
                complete = [s for s in per_h[0] if all(s in d for d in per_h)] if per_h else []
                averages.append({s: float(np.mean([d[s] for d in per_h])) for s in complete})
            samples[(dataset, AVG, metric)] = averages
    return samples


def accuracy_cells(runs: list[RunResult], rows: list[str], datasets: list[str]) -> Cells:
    """(dataset, horizon or 'Avg', metric) -> one value per row (None when missing): the mean over the
    row's seeds (its single run's value without --seeds).

    The horizon average of a model is taken only when it has every horizon the dataset has, so
    a failed run never makes an average look better."""
    samples = cell_samples(runs, rows, datasets)
    cells: Cells = {}
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        for metric in ("mse", "mae"):
            for h in horizons:
                cells[(dataset, h, metric)] = [float(np.mean(list(d.values()))) if d else None
                                               for d in samples[(dataset, h, metric)]]
            cells[(dataset, AVG, metric)] = [
                mean_of_all([cells[(dataset, h, metric)][i] for h in horizons]) for i in range(len(rows))]
    return cells


def average_ranks(cells: Cells, rows: list[str], datasets: list[str]) -> dict[str, list[float | None]]:
    """Per metric and row: the mean over datasets of the row's rank on the horizon average (None: unranked
    everywhere)."""
    ranks: dict[str, list[float | None]] = {}
    for metric in ("mse", "mae"):
        per_dataset = [competition_ranks(cells[(dataset, AVG, metric)]) for dataset in datasets]
        ranked = [[r[i] for r in per_dataset if r[i] is not None] for i in range(len(rows))]
        ranks[metric] = [float(np.mean(r)) if r else None for r in ranked]
    return ranks


def dataset_horizons(cells: Cells, dataset: str) -> list[int | str]:
    """The horizons of `dataset` in `cells`, then 'Avg'."""
    return [h for (d, h, m) in cells if d == dataset and m == "mse"]


def units(runs: list[RunResult], config: dict) -> str:
    """What the errors are measured in: original units with --inverse, else the standardised data's."""
    inverse = any(inv.get("inverse") for inv in config.get("invocations", [])) or any(
        "--inverse" in (r.argv or []) for r in runs)
    return "original units (--inverse)" if inverse else "standardised"
