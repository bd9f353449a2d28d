"""The comparison in the paper's layout (`python -m compare.report --reference CSV`): a line per (dataset, horizon),
the datasets grouped in the reference's order and each closed by its Avg as in the CAPS paper's Table 1, and per
model the reference also has its MSE and MAE as ours (mean ± sample standard deviation and the seed count with two
or more seeds), the paper's, and Δ = (ours − paper) / paper.

A horizon the paper reports and we did not run shows — for ours beside the paper's number, so the table shows what
is missing, never a number made up. Our Avg stands only when we ran exactly the paper's horizons (an average over
other horizons is not the paper's), or when the paper has no number of that model on that dataset. The cells are
the report's own (`compare.report.forecast_cells`): the runs already ranked, so stale runs, runs of other flags
and zero-shot runs shown apart never enter.

Files: `paper_layout.csv` (tidy: a line per dataset, horizon or `avg`, model and metric) and `paper_layout.tex`
(booktabs, `compare.report.markdown.write_grid_latex`), and the section *In the paper's layout* of `table.md`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from compare.recipes.tables import RECIPES
from compare.report import significance
from compare.report.forecast_cells import Cells, Samples, dataset_horizons
from compare.report.markdown import (
    GridLine,
    format_value,
    grid_frame,
    markdown_grid,
    percent_text,
    write_grid_latex,
    write_long_csv,
)
from compare.report.ranking import AVG
from compare.report.reference import Reference, difference_pct, reference_horizons, reference_value

__all__ = ["CSV_FIELDS", "LayoutValue", "layout_frame", "layout_values", "paper_layout_section", "write_paper_layout"]

CSV_FIELDS = ("dataset", "pred_len", "model", "metric", "ours_mean", "ours_std", "seeds", "paper", "delta_pct")
_METRICS = ("mse", "mae")


@dataclass(frozen=True)
class LayoutValue:
    """One number pair of the table: ours (None: not run) and the paper's (None: not reported) for a
    (dataset, horizon or 'Avg', model, metric), with our seed spread and Δ in percent."""

    dataset: str
    pred_len: int | str
    model: str
    metric: str
    ours_mean: float | None
    #: sample standard deviation over the seeds; None with fewer than two
    ours_std: float | None
    #: runs behind ours (0: not run)
    seeds: int
    paper: float | None
    #: (ours − paper) / paper in percent at 3 decimals (`compare.report.reference.difference_pct`)
    delta_pct: float | None


def _layout_rows(rows: list[str], datasets: list[str], reference: Reference) -> tuple[list[int], list[str]]:
    """Indices of the rows the reference has on some dataset of the comparison, and those datasets in the
    reference's order (the paper's table order; the comparison's among equals)."""
    shown = [i for i, row in enumerate(rows) if any(reference_horizons(reference, d, row) for d in datasets)]
    kept = [d for d in datasets if any(reference_horizons(reference, d, rows[i]) for i in shown)]
    first: dict[str, int] = {}
    for n, (key, _, _) in enumerate(reference):
        first.setdefault(key, n)
    return shown, sorted(kept, key=lambda d: min(first.get(k, len(first)) for k in RECIPES.dataset_keys(d)))


def _ours(cells: Cells, samples: Samples, key: tuple[str, int | str, str], i: int
          ) -> tuple[float | None, float | None, int]:
    """Row i's mean, its standard deviation over the seeds (None below two) and its seed count in cell `key`."""
    if key not in cells or cells[key][i] is None:
        return None, None, 0
    sample = list(samples[key][i].values())
    return cells[key][i], significance.summarize(sample).std if sample else None, len(sample)


def layout_values(rows: list[str], datasets: list[str], cells: Cells, samples: Samples, reference: Reference
                  ) -> list[LayoutValue]:
    """Every number pair of the table, dataset by dataset (the reference's order), horizons ascending then Avg,
    then model and metric: the rows the reference has, at our horizons and the paper's."""
    shown, kept = _layout_rows(rows, datasets, reference)
    values = []
    for dataset in kept:
        ours_h = [h for h in dataset_horizons(cells, dataset) if h != AVG]
        paper_h = {i: reference_horizons(reference, dataset, rows[i]) for i in shown}
        for h in [*sorted(set(ours_h).union(*paper_h.values())), AVG]:
            for i in shown:
                paper = reference_value(reference, dataset, rows[i], h, paper_h[i])
                # Our Avg over other horizons than the paper's is not comparable: shown as not run.
                comparable = h != AVG or not paper_h[i] or set(ours_h) == set(paper_h[i])
                for m, metric in enumerate(_METRICS):
                    mean, std, n = _ours(cells, samples, (dataset, h, metric), i) if comparable else (None, None, 0)
                    ref = paper[m] if paper else None
                    values.append(LayoutValue(dataset, h, rows[i], metric, mean, std, n, ref,
                                              difference_pct(mean, ref)))
    return values


def _cell_text(value: LayoutValue) -> str:
    """`ours / paper (Δ)`: ours as `mean ± std (n=k)` with two or more seeds; — for a missing side."""
    ours = format_value(value.ours_mean, std=value.ours_std, n=value.seeds if value.seeds >= 2 else None)
    text = f"{ours} / {format_value(value.paper)}"
    if value.ours_mean is None or value.paper is None:
        return text
    return f"{text} ({percent_text(value.ours_mean, value.paper)})"


def layout_frame(values: list[LayoutValue]) -> pd.DataFrame:
    """The table's cell texts (`compare.report.markdown.grid_frame`): a line per (dataset, horizon), a column per
    (model, MSE / MAE)."""
    models = list(dict.fromkeys(v.model for v in values))
    by_line: dict[tuple[str, int | str], dict[tuple[str, str], str]] = {}
    for v in values:
        by_line.setdefault((v.dataset, v.pred_len), {})[(v.model, v.metric)] = _cell_text(v)
    lines = [GridLine((dataset, str(h)), [[texts[(model, metric)] for metric in _METRICS] for model in models])
             for (dataset, h), texts in by_line.items()]
    return grid_frame(("Dataset", "H"), models, ("MSE", "MAE"), lines, [], tall=False)


def paper_layout_section(frame: pd.DataFrame, reference_name: str) -> list[str]:
    """`table.md`'s section *In the paper's layout* of a `layout_frame`."""
    return [f"## In the paper's layout: {reference_name}", "",
            "Each cell: ours / the paper's (Δ = (ours − paper) / paper; negative means we measured a lower error). "
            "Ours is the mean ± sample standard deviation over the seeds, with (n=k), where the cell has two or more "
            "seeds, else the single run's value; — where we have no run (the paper's number still shows) or the "
            "paper has none. *Avg*: ours only where we ran the paper's horizons (or the paper has none). The same "
            "in `paper_layout.csv` (one line per dataset, horizon, model and metric) and `paper_layout.tex`.", "",
            *markdown_grid(frame, tall=False), ""]


def write_paper_layout(out: Path, rows: list[str], datasets: list[str], cells: Cells, samples: Samples,
                       reference: Reference, reference_name: str) -> tuple[list[str], list[Path]]:
    """Write `paper_layout.csv` and `paper_layout.tex` into `out` (nothing when no row of the comparison is in the
    reference); returns the markdown section and the paths written."""
    values = layout_values(rows, datasets, cells, samples, reference)
    if not values:
        return [], []
    records = [{**asdict(v), "pred_len": "avg" if v.pred_len == AVG else v.pred_len} for v in values]
    csv_path = write_long_csv(out / "paper_layout.csv", records, CSV_FIELDS)
    caption = (f"Ours / {reference_name} (relative difference) per dataset and horizon, MSE and MAE, lower "
               "is better; ours: mean ± sample standard deviation over n seeds where n ≥ 2; —: not run or not "
               "reported.")
    frame = layout_frame(values)
    tex_paths = write_grid_latex(frame, out / "paper_layout", caption)
    return paper_layout_section(frame, reference_name), [csv_path, *tex_paths]
