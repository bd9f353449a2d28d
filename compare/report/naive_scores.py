"""Forecast errors relative to the naive forecasters' on the same test windows, per cell and over cells.

Every long-term run records the naive forecasters' MSE and MAE on its own test windows, in the space its own
metrics use (`exp/naive_forecast.py`: `naive` repeats the last input value, `seasonal_naive` the last cycle).
Per (dataset, horizon) cell and row:

    rel = model error / naive error      (< 1: better than the naive forecast)

averaged over the row's seeds (each seed divided by its own run's naive error), and over the cells the
geometric mean exp(mean log rel), the scale-free summary (Hyndman & Koehler 2006), taken over the cells where
every row that has relative scores has one, so the rows are summarised on the same cells. A record written before the naive
scores existed, or a seasonal naive skipped (input shorter than the period), leaves its cell missing, and the
report says which and why: a missing score is never read as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from compare.grid.records import RunResult, seed_order
from compare.report.complete_block import complete_block
from compare.report.markdown import GridLine, grid_frame, markdown_grid
from compare.report.ranking import DECIMALS
from exp.naive_forecast import NAIVE_METHODS

__all__ = ["METRICS", "NAIVE_LABELS", "Relative", "geometric_mean", "naive_section", "relative_scores",
           "run_naive"]

METRICS = ("mse", "mae")
NAIVE_LABELS = {"naive": "naive (last value repeated)", "seasonal_naive": "seasonal naive (last cycle repeated)"}
_OLD_RECORD = ("its record predates the naive scores (fill them in with `python -m compare.naive_backfill FOLDER`, or "
               "rerun the cell)")


def run_naive(run: RunResult, method: str) -> tuple[dict[str, float] | None, str | None]:
    """(`method`'s {mse, mae} on the run's test windows, the mean over its settings; None and why when the
    run has no such score)."""
    found = run.extra.get(method) or [None]
    if any(f is None for f in found):
        return None, _OLD_RECORD
    if any(f.get("mse") is None or f.get("mae") is None for f in found):
        return None, next((f.get("skipped") for f in found if f.get("skipped")), "not scored")
    return {m: float(np.mean([f[m] for f in found])) for m in METRICS}, None


def geometric_mean(values: Sequence[float]) -> float | None:
    """exp(mean log v) of positive values (None when there are none or one is not positive)."""
    if not values or any(v <= 0 for v in values):
        return None
    return float(np.exp(np.mean(np.log(values))))


@dataclass
class Relative:
    """Relative scores of one naive method: `values[(dataset, H, metric)][row]` (None: missing; `missing` maps
    each reason to the "row on dataset H=h" it applies to), `naive[(dataset, H)]` the naive scores and period of each cell's first run, and the geometric means
    per metric and row over `common` cells (every row with any score has one there, except `rows_left_out`: rows
    scored in so few cells that counting them would drop more cells, `compare.report.complete_block`)."""

    method: str
    values: dict[tuple[str, int, str], list[float | None]] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)
    naive: dict[tuple[str, int], dict] = field(default_factory=dict)
    common: list[tuple[str, int]] = field(default_factory=list)
    rows_left_out: list[str] = field(default_factory=list)
    geomeans: dict[str, list[float | None]] = field(default_factory=dict)


def _cell_ratios(found: list[RunResult], method: str) -> tuple[dict[str, float] | None, str | None, dict | None]:
    """Per metric the mean over the runs (seeds) of run error / its naive error; or None and why."""
    ratios: dict[str, list[float]] = {m: [] for m in METRICS}
    first = None
    for run in sorted(found, key=lambda r: seed_order(r.seed)):
        naive, why = run_naive(run, method)
        if naive is None:
            return None, why, None
        if min(naive.values()) <= 0:
            return None, "the naive error is 0 (a constant series), so no ratio is defined", None
        first = first or naive
        for m in METRICS:
            ratios[m].append(getattr(run, m) / naive[m])
    return {m: float(np.mean(v)) for m, v in ratios.items()}, None, first


def relative_scores(runs: list[RunResult], rows: list[str], datasets: list[str], method: str) -> Relative:
    """The relative scores of every (dataset, horizon) cell and row against `method` (a NAIVE_METHODS key)."""
    rel = Relative(method)
    by_key: dict[tuple[str, str, int], list[RunResult]] = {}
    for r in runs:
        by_key.setdefault((r.row, r.dataset, r.pred_len), []).append(r)
    for dataset in datasets:
        for h in sorted({r.pred_len for r in runs if r.dataset == dataset}):
            for m in METRICS:
                rel.values[(dataset, h, m)] = [None] * len(rows)
            for i, row in enumerate(rows):
                found = by_key.get((row, dataset, h))
                if not found:
                    continue
                ratios, why, naive = _cell_ratios(found, method)
                if ratios is None:
                    rel.missing.setdefault(why, []).append(f"{row} on {dataset} H={h}")
                    continue
                for m in METRICS:
                    rel.values[(dataset, h, m)][i] = ratios[m]
                if (dataset, h) not in rel.naive:
                    seasonal = found[0].extra.get("seasonal_naive") or [None]
                    rel.naive[(dataset, h)] = {**naive, "period": (seasonal[0] or {}).get("period"),
                                               "period_from": (seasonal[0] or {}).get("period_from")}
    # A row without any score (e.g. all its records predate them) is left out here rather than emptying every cell;
    # of the others, a row scored in few cells is left out where counting it would drop more cells (as the ranks).
    scored = [i for i in range(len(rows)) if any(v[i] is not None for v in rel.values.values())]
    cells = sorted({(d, h) for (d, h, _) in rel.values}, key=lambda c: (datasets.index(c[0]), c[1]))
    present = np.array([[rel.values[(d, h, METRICS[0])][i] is not None for i in scored] for d, h in cells],
                       dtype=bool).reshape(len(cells), len(scored))
    kept_cells, kept = complete_block(present)
    rel.common = [cells[c] for c in kept_cells]
    in_block = {scored[j] for j in kept}  # empty only when no row is scored (test_complete_block.py)
    rel.rows_left_out = [rows[i] for i in scored if i not in in_block]
    rel.geomeans = {m: [geometric_mean([rel.values[(d, h, m)][i] for d, h in rel.common])
                        if i in in_block else None for i in range(len(rows))] for m in METRICS}
    return rel


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.{DECIMALS}f}"


def _baseline_lines(rels: dict[str, Relative], datasets: list[str]) -> list[str]:
    """The naive forecasters' own errors per cell (of the cell's first run), with the seasonal period."""
    md = ["| Dataset | H | naive MSE | naive MAE | seasonal naive MSE | seasonal naive MAE | period (from) |",
          "|---|---|---:|---:|---:|---:|---|"]
    cells = sorted({(d, h) for rel in rels.values() for (d, h, _) in rel.values},
                   key=lambda c: (datasets.index(c[0]), c[1]))
    for d, h in cells:
        naive, seasonal = rels["naive"].naive.get((d, h)), rels["seasonal_naive"].naive.get((d, h))
        period = seasonal or naive or {}
        where = f"{period['period']} ({period['period_from']})" if period.get("period") else "—"
        md.append(f"| {d} | {h} | {_number((naive or {}).get('mse'))} | {_number((naive or {}).get('mae'))} | "
                  f"{_number((seasonal or {}).get('mse'))} | {_number((seasonal or {}).get('mae'))} | {where} |")
    return md


def naive_section(runs: list[RunResult], rows: list[str], datasets: list[str], tall: bool) -> list[str]:
    """`## Relative to naive forecasts`: rel MSE / MAE per cell and row against the last-value naive forecast,
    the geometric means against both naive forecasters, their own errors, and what is missing and why."""
    rels = {method: relative_scores(runs, rows, datasets, method) for method in NAIVE_METHODS}
    naive = rels["naive"]
    if not any(run.extra.get("naive") and None not in run.extra["naive"] for run in runs):
        return ["## Relative to naive forecasts", "",
                f"No relative scores: none of the {len(runs)} runs' records holds the naive forecasters' scores (the "
                "records predate them); fill them in with `python -m compare.naive_backfill FOLDER`, or rerun the runs.", ""]
    lines = [GridLine((d, str(h)), [[_number(naive.values[(d, h, m)][i]) for m in METRICS]
                                    for i in range(len(rows))])
             for (d, h, m) in naive.values if m == "mse"]
    summaries = [(f"Geo-mean vs {name}", [[_number(rel.geomeans[m][i]) for m in METRICS] for i in range(len(rows))])
                 for name, rel in (("naive", naive), ("seasonal naive", rels["seasonal_naive"]))]
    md = ["## Relative to naive forecasts", "",
          "rel = the model's error / the naive forecaster's error on the same test windows (`exp/naive_forecast.py`"
          ", scored in the test loop, same channels and scale); below 1 beats it. Cells: relative to the naive "
          "forecast that repeats the last input value (mean over seeds of each run's ratio). *Geo-mean*: geometric "
          "mean over the (dataset, horizon) cells where every model with scores has one, against the naive and the "
          "seasonal naive forecast (the last cycle of one period repeated).", "",
          *markdown_grid(grid_frame(("Dataset", "H"), rows, ("rel MSE", "rel MAE"), lines, summaries, tall), tall), ""]
    for name, rel in (("naive", naive), ("seasonal naive", rels["seasonal_naive"])):
        total = len({(d, h) for (d, h, _) in rel.values})
        if len(rel.common) < total:
            md.append(f"Geo-mean vs {name} over {len(rel.common)} of {total} cells (the others lack a score of "
                      "some model that has scores elsewhere).")
        if rel.rows_left_out:
            md.append(f"No geo-mean vs {name} for {', '.join(rel.rows_left_out)}: scores in too few cells (counting "
                      "them would drop more cells).")
    md += ["", "The naive forecasters' own errors:", "", *_baseline_lines(rels, datasets), ""]
    missing = [f"- vs {NAIVE_LABELS[method]}: {why}: {', '.join(where)}" for method, rel in rels.items()
               for why, where in rel.missing.items()]
    if missing:
        md += ["Relative scores missing:", "", *missing, ""]
    return md
