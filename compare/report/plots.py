"""The figures of a comparison report, drawn with matplotlib's Agg backend from the records alone:

- `mse_by_horizon.png`: test MSE against the horizon, one panel per dataset (mean and ± std over seeds),
  reference values as x;
- `learning_curves.png`: per run its validation and test loss by epoch, the scored epoch marked (any task);
- `seed_differences.png` (several seeds only): per cell, the focus row's relative MSE difference to each
  other row with its 95 % Welch interval (`seed_differences_<row>.png` for each further focus row);
- `forecast_<data>_<H>.png`: ground truth and every model's forecast for the same test window.

Each figure is written as PNG at print resolution and as PDF (`utils.report_files.save_figure`); each row
keeps its colour in every figure of a report (`row_colors`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from compare.grid.records import RunResult
from compare.report import significance
from compare.report.forecast_cells import accuracy_cells, cell_samples, first_run, orders, units
from compare.report.reference import Reference, reference_for
from compare.report.seeds import SeedView, focus_differences, focus_rows, seed_plot_name, seed_view
from utils.report_files import save_figure

__all__ = [
    "LossCurve",
    "finish_figure",
    "forecast_loss_curves",
    "learning_curve_figure",
    "plot_forecasts",
    "plot_learning_curves",
    "plot_mse_by_horizon",
    "plot_seed_differences",
    "row_colors",
    "series_of",
    "value_axis_limits",
]

logger = logging.getLogger(__name__)


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, imported when a figure is drawn (not by the runner's
    start or by a report that draws nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _legend_line(**kwargs):
    """A legend handle without data."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **kwargs)


def row_colors(rows: Sequence[str]) -> dict[str, tuple]:
    """One tab10 colour per row, in row order."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {row: cmap(i % 10) for i, row in enumerate(rows)}


def finish_figure(fig, handles: list, ncols: int, title: str, stem: Path) -> list[Path]:
    """Title `fig`, put the legend of `handles` below the panels (two columns per panel column, so it is
    never cut off), save it as `stem.png` and `stem.pdf` and close it; returns both paths."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
               ncol=max(1, min(len(handles), 2 * ncols)))
    return save_figure(fig, stem)


def plot_mse_by_horizon(out: Path, runs: list[RunResult], config: dict, reference: Reference | None) -> list[Path]:
    """`mse_by_horizon.png`: one panel per dataset, one line per model (the mean over seeds, error bars
    ± one sample standard deviation when a cell has several), reference values as x."""
    plt = pyplot()
    rows, datasets, _ = orders(runs, config)
    colors = row_colors(rows)
    samples = cell_samples(runs, rows, datasets)
    ncols = min(len(datasets), 3) or 1
    nrows = math.ceil(len(datasets) / ncols) or 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.0 * nrows), squeeze=False)
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        xs = range(len(horizons))
        values: list[float] = []
        for i, row in enumerate(rows):
            summaries = [significance.summarize(list(samples[(dataset, h, "mse")][i].values()))
                         if samples[(dataset, h, "mse")][i] else None for h in horizons]
            ys = [np.nan if m is None else m.mean for m in summaries]
            errors = [np.nan if m is None or m.std is None else m.std for m in summaries]
            ax.errorbar(xs, ys, yerr=errors, marker="o", color=colors[row], label=row, capsize=3)
            values += [y + (0.0 if np.isnan(e) else e) for y, e in zip(ys, errors, strict=True)]
            if reference:
                refs = [(reference_for(reference, dataset, row, h) or (np.nan,))[0] for h in horizons]
                ax.plot(xs, refs, linestyle="none", marker="x", markersize=8, color=colors[row])
                values += refs
        value_axis_limits(ax, values)
        ax.set_xticks(list(xs), [str(h) for h in horizons])
        ax.set_title(dataset)
        ax.set_xlabel("horizon H (steps)")
        ax.set_ylabel(f"test MSE ({units(runs, config)})")
        ax.grid(alpha=0.3)
    handles = [_legend_line(color=colors[r], marker="o", label=r) for r in rows]
    if reference:
        handles.append(_legend_line(color="grey", marker="x", linestyle="none", label="reference (same colour)"))
    seeded = any(len(d) > 1 for line in samples.values() for d in line)
    return finish_figure(fig, handles, ncols, "Test MSE by horizon" + (" (mean ± std over seeds)" if seeded else ""),
                         out / "mse_by_horizon")


@dataclass
class LossCurve:
    """One run's per-epoch losses (its record's `curve`) as drawn in `learning_curves.png`."""

    panel: str  # e.g. "ETTh1, H = 96"
    row: str
    epochs: list[dict]  # {"epoch", "train", "vali", "test", ...} per finished epoch
    best_epoch: int | None = None


def forecast_loss_curves(runs: list[RunResult], config: dict) -> list[LossCurve]:
    """The runs whose record has a curve, panel by panel in the report's dataset and horizon order."""
    _, datasets, _ = orders(runs, config)
    ordered_runs = sorted((r for r in runs if r.curve), key=lambda r: (datasets.index(r.dataset), r.pred_len))
    return [LossCurve(f"{r.dataset}, H = {r.pred_len}", r.row, r.curve, r.best_epoch) for r in ordered_runs]


def value_axis_limits(ax, values: list[float]) -> None:
    """Where a panel's non-negative values (losses, errors) span less than 5 % of their size (one epoch, one
    model, a flat curve), its y axis starts at 0 so that the ticks do not magnify rounding into a slope (a
    dot on an axis from 0.96 to 1.04); otherwise matplotlib's limits stand."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return
    low, high = min(finite), max(finite)
    size = max(abs(low), abs(high))
    if size > 0 and high - low < 0.05 * size and low >= 0:
        ax.set_ylim(0.0, 1.15 * high)


def learning_curve_figure(curves: Sequence[LossCurve], rows: Sequence[str], ylabel: str):
    """The figure of `plot_learning_curves`, not yet saved: one panel per `panel`, per run its validation loss
    (solid, dots) and test loss (dashed, squares) by epoch on an integer epoch axis, a ring on the scored
    epoch; a panel whose runs have one epoch says so in its title and shows its losses from 0."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    shown = [row for row in rows if any(c.row == row for c in curves)]
    colors = row_colors(shown)
    panels = list(dict.fromkeys(c.panel for c in curves))
    ncols = min(len(panels), 4)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        values, last = [], 1
        for curve in (c for c in curves if c.panel == panel):
            epochs = [e["epoch"] for e in curve.epochs]
            vali, test = [e["vali"] for e in curve.epochs], [e["test"] for e in curve.epochs]
            values += vali + test
            last = max([last, *epochs])
            ax.plot(epochs, vali, color=colors[curve.row], linewidth=1.4, marker="o", markersize=3.5)
            ax.plot(epochs, test, color=colors[curve.row], linewidth=1.0, linestyle="--", alpha=0.7, marker="s",
                    markersize=3)
            if curve.best_epoch in epochs:
                ax.plot(curve.best_epoch, vali[epochs.index(curve.best_epoch)], marker="o", markersize=9,
                        markerfacecolor="none", color=colors[curve.row])
        ax.set_title(panel + (" (1 epoch)" if last == 1 else ""))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        ax.set_xlim(0.5, last + 0.5)
        value_axis_limits(ax, values)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    handles = [_legend_line(color=colors[r], label=r) for r in shown]
    handles += [_legend_line(color="grey", marker="o", markersize=3.5, label="validation"),
                _legend_line(color="grey", linestyle="--", marker="s", markersize=3, label="test"),
                _legend_line(color="grey", marker="o", markersize=9, markerfacecolor="none", linestyle="none",
                             label="scored epoch")]
    return fig, handles, ncols


def plot_learning_curves(out: Path, curves: Sequence[LossCurve], rows: Sequence[str], ylabel: str) -> list[Path]:
    """`learning_curves.png` / `.pdf` (`learning_curve_figure`); colours follow `rows`. Nothing is written
    without curves."""
    if not curves:
        return []
    fig, handles, ncols = learning_curve_figure(curves, rows, ylabel)
    return finish_figure(fig, handles, ncols, "Loss by epoch", out / "learning_curves")


def plot_seed_differences(out: Path, runs: list[RunResult], config: dict,
                          focus: str | Sequence[str] | None = None) -> list[Path]:
    """Per focus row (`seed_plot_name`): per (dataset, horizon) cell, its relative MSE difference to each
    other row with the 95 % Welch interval over seeds (hollow markers: within seed noise), and the zero
    line. Nothing is written with one seed per cell or a single row."""
    rows, datasets, _ = orders(runs, config)
    cells = accuracy_cells(runs, rows, datasets)
    focused = focus_rows(focus, rows)
    view = seed_view(runs, rows, datasets, cells, focused[0])
    if not view.seeded or len(rows) < 2:
        return []
    return [path for k, row in enumerate(focused)
            for path in _plot_focus_differences(out / Path(seed_plot_name(row, k == 0)).stem,
                                                replace(view, focus=row), rows, datasets)]


def _plot_focus_differences(stem: Path, view: SeedView, rows: list[str], datasets: list[str]) -> list[Path]:
    """One seed-difference figure (see `plot_seed_differences`) of `view.focus`, written to `stem`.png/.pdf."""
    plt = pyplot()
    differences = focus_differences(view, rows, datasets)
    keys = sorted({c for by_cell in differences.values() for c in by_cell}, key=lambda c: (datasets.index(c[0]), c[1]))
    colors = row_colors(rows)
    width = 0.8 / max(len(differences), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(keys) + 2), 4.2))
    for k, (other, by_cell) in enumerate(differences.items()):
        for x, key in enumerate(keys):
            d = by_cell.get(key)
            if d is None:
                continue
            y = 100.0 * d.relative
            err = None if d.low is None else [[y - 100.0 * d.low], [100.0 * d.high - y]]
            ax.errorbar(x - 0.4 + width * (k + 0.5), y, yerr=err, marker="o", capsize=3, color=colors[other],
                        markerfacecolor="white" if d.within_noise else colors[other],
                        label=f"vs {other}" if x == min(i for i, c in enumerate(keys) if c in by_cell) else None)
    ax.axhline(0.0, color="black", linewidth=1)
    ax.set_xticks(range(len(keys)), [f"{d}\nH={h}" for d, h in keys])
    ax.set_ylabel(f"({view.focus} − other) / other, test MSE (%)")
    ax.set_title(f"{view.focus} against each row: mean over seeds, 95 % Welch interval (hollow: within seed noise)",
                 fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False, ncol=min(len(differences), 4))
    return save_figure(fig, stem)


def series_of(true: np.ndarray, channel: int) -> np.ndarray:
    """The test target series of one channel rebuilt from overlapping windows `[N, H, C]`:
    window i covers steps i .. i + H - 1, so s = true[:, 0] followed by the rest of the last window."""
    return np.concatenate([true[:, 0, channel], true[-1, 1:, channel]])  # [N + H - 1]


def _forecast_arrays(runs: list[RunResult], rows: list[str], dataset: str, h: int, runs_dir: Path
                     ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], list[str]]:
    """Per row with a run of (dataset, h) its memory-mapped (pred, true) `[N, H, C]`, and the rows whose
    pred.npy is gone."""
    arrays, missing = {}, []
    for row in rows:
        run = first_run(runs, row, dataset, h)
        if run is None:
            continue
        folder = runs_dir / "results" / run.settings[0]
        if not (folder / "pred.npy").is_file():
            missing.append(row)
            continue
        arrays[row] = (np.load(folder / "pred.npy", mmap_mode="r"), np.load(folder / "true.npy", mmap_mode="r"))
    return arrays, missing


def _draw_forecast(stem: Path, arrays: dict[str, tuple[np.ndarray, np.ndarray]], dataset: str, h: int,
                   window: int | None, colors: dict[str, tuple], value_units: str) -> list[Path]:
    """One forecast figure: truth with its context and each row's forecast of the last channel at `window`."""
    plt = pyplot()
    count = min(p.shape[0] for p, _ in arrays.values())
    index = count // 2 if window is None else min(max(window, 0), count - 1)
    reference_row = next(iter(arrays))
    truth_all = np.asarray(arrays[reference_row][1][: count])
    for row, (_, true) in arrays.items():
        if not np.allclose(np.asarray(true[index, :, -1]), truth_all[index, :, -1], atol=1e-5):
            logger.warning("%s H=%d: %s's ground truth differs from %s's at window %d; its test "
                           "windows are not aligned with the others", dataset, h, row, reference_row, index)
    series = series_of(truth_all, -1)
    context = min(index, max(h, 48))
    fig, ax = plt.subplots(figsize=(10, 4))
    steps = np.arange(-context, h)
    ax.plot(steps, series[index - context : index + h], color="black", linewidth=1.8, label="ground truth")
    ax.axvline(0, color="grey", linestyle="--", linewidth=1)
    for row, (pred, _) in arrays.items():
        forecast = np.asarray(pred[index, :, -1])  # [H]
        window_mse = float(np.mean((forecast - truth_all[index, :, -1]) ** 2))
        ax.plot(np.arange(h), forecast, color=colors[row], linewidth=1.3,
                label=f"{row} (window MSE {window_mse:.3f})")
    ax.set_title(f"{dataset}, H = {h}: test window {index} of {count}, last channel")
    ax.set_xlabel("time step relative to the forecast start (context left of the dashed line)")
    ax.set_ylabel(f"value ({value_units})")
    ax.grid(alpha=0.3)
    # Below the axes: a legend inside would hide the curves, and wide labels would be cut off.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False,
              ncol=min(len(arrays) + 1, 3))
    return save_figure(fig, stem)


def plot_forecasts(out: Path, runs: list[RunResult], config: dict, runs_dir: Path,
                   window: int | None = None) -> list[Path]:
    """`forecast_<data>_<H>.png` and `.pdf` per dataset and horizon: truth, context and each model's forecast of
    the last channel for the same test window (default: the middle window); with several seeds, each
    row's run of its lowest seed. Where a finished row's pred.npy is gone (runs/ lost, records committed), an
    existing figure is kept rather than redrawn without that row."""
    rows, datasets, _ = orders(runs, config)
    colors = row_colors(rows)
    value_units = units(runs, config)
    paths = []
    for dataset in datasets:
        for h in sorted({r.pred_len for r in runs if r.dataset == dataset}):
            path = out / f"forecast_{dataset}_{h}.png"
            arrays, missing = _forecast_arrays(runs, rows, dataset, h, runs_dir)
            if missing and path.is_file():
                # A fresh clone has the records but not runs/: redrawing would drop the finished rows whose
                # forecasts only the committed figure still shows.
                logger.warning("%s kept as it is: no pred.npy in %s for %s", path, runs_dir / "results",
                               ", ".join(missing))
                continue
            if missing:
                logger.warning("%s: no pred.npy in %s for %s; drawn without them", path, runs_dir / "results",
                               ", ".join(missing))
            if arrays:
                paths += _draw_forecast(path.with_suffix(""), arrays, dataset, h, window, colors, value_units)
    return paths
