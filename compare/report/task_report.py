"""Comparison report of imputation, anomaly detection, classification and short-term (M4) forecasting,
from result files only (`compare.report.build.write_report` calls it when `compare.json` names such a task).

Each line of a table is one (dataset, axis point) of the task (`compare.grid.tasks`: the mask rate for
imputation, else the recipe's block), each model row gets the task's metrics, with the task's direction
of "best":

- imputation: MSE / MAE on the masked points per mask rate plus the dataset's average over the rates
  (lower is better);
- anomaly detection: F1 point-adjusted (TSLib's number) and unadjusted, then a second table with
  precision and recall of both (higher is better);
- classification: accuracy and macro F1 (higher is better);
- short-term forecasting: SMAPE and MASE per M4 group, and TSLib's summary lines Others (Weekly, Daily,
  Hourly) and Average, weighted by each group's number of series (`utils.m4_summary.summarize_groups`);
  OWA (Naive2 as reference) on Yearly, Quarterly, Monthly, Others and Average from the summary run.py
  records once all six groups exist; on another set (sktime_monthly) SMAPE, MASE and the OWA its record
  carries (Naive2 from the same training series), one line per set (lower is better).

As in the forecasting report: **bold** best, _underline_ second per line and metric at 3 decimals, the
average rank and first-place count per row; with several seeds mean ± sd, marks tested with Welch's
t-test, and the focus row against every other (`compare.report.seeds`, with the metric's direction;
accuracies and F1 compared as differences in points, errors relatively). `<metric>_by_dataset.png` draws
the headline metric as bars per dataset. No forecast plots, and no `efficiency.md` (it measures
forecasting train steps): the report says so. The lines themselves are `compare.report.task_lines`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from compare.grid.own_data import own_data_lines
from compare.grid.protocol_notes import protocol_header
from compare.grid.provenance import production_notes, production_section
from compare.grid.records import (
    TaskRun,
    copy_records,
    latest_interrupted,
    load_task_runs,
    ordered,
    task_key,
    task_manifest,
)
from compare.grid.tasks import TASK_SPECS, Metric, TaskSpec
from compare.report import significance
from compare.report.markdown import (
    GridLine,
    grid_frame,
    is_tall,
    latex_marks_caption,
    markdown_grid,
    run_status_sections,
    write_grid_latex,
    write_long_csv,
)
from compare.report.plots import LossCurve, finish_figure, plot_learning_curves, pyplot, row_colors
from compare.report.ranking import AVG, Cell, competition_ranks, mark_best, mark_with_seeds
from compare.report.seeds import focus_rows, seed_cell_text, task_seed_section
from compare.report.task_lines import Line, compares_m4, line_means, ranked_lines, runs_by_seed, task_lines
from utils.errors import UserInputError

__all__ = ["plot_headline", "write_task_report", "write_task_tables"]

#: marks of each (line index, metric key): the cells and whether they were tested over seeds
Marks = dict[tuple[int, str], tuple[list[Cell], bool]]


def _marks(line: Line, metric: Metric, seeded: bool) -> tuple[list[Cell], bool]:
    values = line_means(line.samples[metric.key])
    if seeded:
        return mark_with_seeds(values, line.samples[metric.key], metric.higher_is_better)
    return mark_best(values, metric.higher_is_better), False


def _rank_summaries(lines: list[Line], shown: list[int], rows: list[str], metrics: Sequence[Metric],
                    spec: TaskSpec, marks: Marks) -> list[tuple[str, list[list[str]]]]:
    """The *Avg rank* (over `ranked_lines`) and *1st count* (over the lines shown) columns per row."""
    ranked = ranked_lines(lines, spec)
    rank_cells, first_cells = [], []
    for i in range(len(rows)):
        rank_cells.append([])
        first_cells.append([])
        for m in metrics:
            ranks = [competition_ranks(line_means(line.samples[m.key]), m.higher_is_better)[i] for line in ranked]
            ranks = [r for r in ranks if r is not None]
            rank_cells[i].append("—" if not ranks else f"{float(np.mean(ranks)):.1f}")
            first_cells[i].append(str(sum(marks[(k, m.key)][0][i].mark == "best" for k in shown)))
    return [("Avg rank", rank_cells), ("1st count", first_cells)]


def _task_grids(lines: list[Line], rows: list[str], spec: TaskSpec, marks: Marks, seeded: bool, common_n: int,
                tall: bool) -> tuple[list[str], bool, list[pd.DataFrame]]:
    """Each table of the task as markdown (a `## title` section per table), whether a line's marks went
    untested (†), and each table's cell texts (`grid_frame`); lines without any value are left out."""
    md, untested, frames = [], False, []
    for title, metrics in spec.tables:
        grid, shown = [], []
        for k, line in enumerate(lines):
            texts = [[seed_cell_text(marks[(k, m.key)][0][i], line.samples[m.key][i], seeded, common_n)
                      for m in metrics] for i in range(len(rows))]
            if all(t == "—" for per_row in texts for t in per_row):
                continue
            dagger = seeded and not line.derived and not marks[(k, metrics[0].key)][1]
            untested |= dagger
            shown.append(k)
            grid.append(GridLine((line.dataset, f"{line.point}{' †' if dagger else ''}"), texts))
        summaries = _rank_summaries(lines, shown, rows, metrics, spec, marks) if title == spec.tables[0][0] else []
        frames.append(grid_frame(("Dataset", spec.axis_column), rows, [m.label for m in metrics], grid, summaries,
                                 tall))
        md += ["", f"## {title}", "", *markdown_grid(frames[-1], tall)]
    return md, untested, frames


def _legend(spec: TaskSpec, seeded: bool, common_n: int, untested: bool, m4: bool = False) -> str:
    """What the cells, marks and summary columns of the task's tables mean (m4: M4 groups are compared)."""
    ranked_on = ("the dataset averages over the mask rates" if spec.average else
                 "M4's Average line and every other set's line" if m4 else "every line")
    if seeded:
        text = (f"Cells: mean ± sample standard deviation over n = {common_n} seeds (a cell with another number shows "
                "(n=k)). **Bold**: the best mean, apart from every other row by Welch's t-test over the seeds "
                "(p < 0.05); _underline_: the second, apart in the same way; ≈: within seed noise of the best, "
                "no row wins that line." + (" †: a model of that line has a single seed, its marks are untested."
                                            if untested else ""))
    else:
        text = "**Bold**: best, _underline_: second best in the line (ties at 3 decimals share the mark)."
    text += (f" *Avg rank*: mean rank over {ranked_on} (ties share the lowest rank). *1st count*: lines where "
             "the model is bold.")
    if spec.average:
        text += f" *{AVG}*: mean over the dataset's mask rates (only when the model has all of them)."
    if m4:
        text += (" *Others*: Weekly, Daily and Hourly, *Average*: all six groups, weighted by their number of "
                 "series (TSLib's summary); OWA (Naive2 = 1) as run.py's M4 summary recorded it once all six "
                 "groups had run.")
    return text


def _task_records(runs: list[TaskRun], lines: list[Line], rows: list[str], spec: TaskSpec, marks: Marks
                  ) -> list[dict]:
    """The lines of the task's `table.csv`: one per (line, row) with a value."""
    axis_field = spec.axis.replace(" ", "_")
    records = []
    for k, line in enumerate(lines):
        for i, row in enumerate(rows):
            if not any(line.samples[m.key][i] for m in spec.metrics):
                continue
            found = [] if line.derived else list(runs_by_seed(runs, row, line.dataset, line.point).values())
            rec: dict = {"dataset": line.dataset, axis_field: line.point, "model": row}
            for m in spec.metrics:
                sample = line.samples[m.key][i]
                values = line_means(line.samples[m.key])
                rec[m.key] = values[i]
                rec[f"{m.key}_rank"] = competition_ranks(values, m.higher_is_better)[i]
                rec[f"{m.key}_std"] = significance.summarize(list(sample.values())).std if sample else None
                rec[f"{m.key}_mark"] = marks[(k, m.key)][0][i].mark
            sample = next((line.samples[m.key][i] for m in spec.metrics if line.samples[m.key][i]), {})
            rec.update({"n_seeds": len(sample), "seeds": ";".join(str(s) for s in sample),
                        "epochs_run": ";".join(str(r.epochs_run) for r in found) or None,
                        "train_seconds": ";".join(f"{r.train_seconds:.3f}" for r in found
                                                  if r.train_seconds is not None) or None,
                        "params": found[0].params if found else None,
                        "settings": ";".join(s for r in found for s in r.settings) or None})
            records.append(rec)
    return records


def _task_notes(config: dict, runs: list[TaskRun], failed: list[dict], spec: TaskSpec, out: Path) -> list[str]:
    """How the task's numbers were produced (`compare.grid.provenance`)."""
    notes = production_notes(config, runs, failed, out)
    if spec.name == "classification":
        # UEA's loader reads <model_id>_TRAIN.ts, so the runner tags classification runs' --des instead.
        notes = [c.replace("`_sS` ends its model_id", "`_sS` ends its `--des`") for c in notes]
    return notes


def write_task_tables(out: Path, runs: list[TaskRun], failed: list[dict], config: dict, spec: TaskSpec,
                      focus: str | Sequence[str] | None = None, layout: str = "auto",
                      unfinished: Sequence[dict] = ()) -> tuple[Path, ...]:
    """Write the task's `table.md`, `table.csv` and each table as LaTeX (`table.tex`, `table_2.tex`, ...)
    into `out`; returns their paths. focus: the row or rows
    each compared with every other over seeds (default: the first row). layout: "wide" (a line per dataset
    and point), "tall" (a line per model) or "auto" (tall from `compare.report.markdown.TALL_FROM` models on).
    unfinished: the manifest entries of interrupted runs, listed after the tables."""
    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs] + [f["row"] for f in failed])
    datasets = ordered(config.get("data", []), [r.dataset for r in runs])
    focused = focus_rows(focus, rows)
    lines = task_lines(runs, rows, datasets, spec)
    counts = [len(d) for line in lines if not line.derived for d in line.samples[spec.headline.key] if d]
    seeded = max(counts, default=1) >= 2
    common_n = max(set(counts), key=counts.count) if counts else 1
    marks = {(k, m.key): _marks(line, m, seeded) for k, line in enumerate(lines) for m in spec.metrics}

    tall = is_tall(layout, rows)
    grids, untested, frames = _task_grids(lines, rows, spec, marks, seeded, common_n, tall)
    md = [f"# {spec.name.replace('_', ' ').capitalize()} comparison", "",
          protocol_header([(r.row, r.argv) for r in runs], spec.name),
          *[line for own in own_data_lines(config) for line in ("", own)], *grids, "",
          _legend(spec, seeded, common_n, untested, compares_m4(spec, datasets))]
    md += ["", "No `efficiency.md` for this task: `compare.grid.efficiency` measures forecasting train steps. No forecast "
           "plots either; the headline metric is drawn per dataset in "
           f"`{spec.headline.key}_by_dataset.png`.", ""]
    md += production_section(_task_notes(config, runs, failed, spec, out))
    for row in focused if seeded else focused[:1]:
        md += task_seed_section(lines, rows, row, spec, seeded)
    md += run_status_sections(failed, unfinished, spec.axis_column, "axis")

    md_path = out / "table.md"
    md_path.write_text("\n".join(md))
    csv_path = write_long_csv(out / "table.csv", _task_records(runs, lines, rows, spec, marks),
                              ["dataset", spec.axis.replace(" ", "_"), "model"])
    # One .tex per table: table.tex, then table_2.tex, ... (anomaly detection has two).
    tex_paths = [path for k, ((title, _), frame) in enumerate(zip(spec.tables, frames, strict=True))
                 for path in write_grid_latex(frame, out / ("table" if k == 0 else f"table_{k + 1}"),
                                              f"{title}. {latex_marks_caption(seeded)}")]
    return md_path, csv_path, *tex_paths


def plot_headline(out: Path, runs: list[TaskRun], config: dict, spec: TaskSpec) -> list[Path]:
    """`<metric>_by_dataset.png` / `.pdf`: one panel per dataset, bars of the headline metric per axis point and row
    (mean over seeds, ± one sample standard deviation when a cell has several)."""
    plt = pyplot()
    metric = spec.headline
    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs])
    datasets = ordered(config.get("data", []), [r.dataset for r in runs])
    colors = row_colors(rows)
    ncols = min(len(datasets), 3) or 1
    nrows = math.ceil(len(datasets) / ncols) or 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    width = 0.8 / max(len(rows), 1)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        points = sorted({r.point for r in runs if r.dataset == dataset})
        for i, row in enumerate(rows):
            summaries = []
            for point in points:
                values = [r.metrics[metric.key] for r in runs_by_seed(runs, row, dataset, point).values()
                          if metric.key in r.metrics]
                summaries.append(significance.summarize(values) if values else None)
            xs = [x - 0.4 + width * (i + 0.5) for x in range(len(points))]
            ys = [np.nan if s is None else s.mean for s in summaries]
            errors = [0.0 if s is None or s.std is None else s.std for s in summaries]
            ax.bar(xs, ys, width=width, yerr=errors, color=colors[row], label=row, capsize=3)
        ax.set_xticks(range(len(points)), [f"{spec.axis} {p}" for p in points])
        ax.set_title(dataset)
        ax.set_ylabel(f"{metric.label} ({'higher' if metric.higher_is_better else 'lower'} is better)")
        ax.grid(alpha=0.3, axis="y")
    handles, _ = axes.flat[0].get_legend_handles_labels()
    return finish_figure(fig, handles, ncols, f"{metric.label} per dataset", out / f"{metric.key}_by_dataset")


def write_task_report(out: Path, runs_dir: Path, config: dict, *,
                      focus: str | Sequence[str] | None = None, layout: str = "auto") -> list[Path]:
    """Every report file of a task comparison (`config["task"]`) into `out`; returns their paths."""
    task = config["task"]
    if task not in TASK_SPECS:
        raise UserInputError(f"{out}/compare.json names the unknown task {task!r}; choose from {', '.join(TASK_SPECS)}")
    spec = TASK_SPECS[task]
    runs, failed = load_task_runs(runs_dir, spec)
    if not runs:
        raise UserInputError(f"no finished {task} runs in {runs_dir}: run `python -m compare --task {task} "
                             f"--out {out} ...` first")
    out.mkdir(parents=True, exist_ok=True)
    unfinished = latest_interrupted(task_manifest(runs_dir, spec), task_key)
    paths = list(write_task_tables(out, runs, failed, config, spec, focus, layout, unfinished))
    paths += plot_headline(out, runs, config, spec)
    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs])
    curves = [LossCurve(f"{r.dataset}, {spec.axis} {r.point}", r.row, r.records[0]["curve"], r.best_epoch)
              for r in sorted(runs, key=lambda r: r.order) if r.records and r.records[0].get("curve")]
    paths += plot_learning_curves(out, curves, rows, "loss (the task's training loss)")
    return paths + copy_records(runs_dir, out)
