"""Comparison report of imputation, anomaly detection, classification and short-term (M4) forecasting,
from result files only (`compare.report.write_report` calls it when `compare.json` names such a task).

Each line of a table is one (dataset, axis point) of the task (`compare.tasks`: the mask rate for
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
  records once all six groups exist (lower is better).

As in the forecasting report: **bold** best, _underline_ second per line and metric at 3 decimals, the
average rank and first-place count per row; with several seeds mean ± sd, marks tested with Welch's
t-test, and the focus row against every other (`compare.significance`, with the metric's direction;
accuracies and F1 compared as differences in points, errors relatively). `<metric>_by_dataset.png` draws
the headline metric as bars per dataset. No forecast plots, and no `efficiency.md` (it measures
forecasting train steps): the report says so.
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from compare import significance
from compare.report import (
    AVG,
    DECIMALS,
    MANIFEST_FILE,
    RESULTS_JSONL,
    Cell,
    GridLine,
    LossCurve,
    _colors,
    _competition_ranks,
    _conditions,
    _finish_figure,
    _fmt,
    _is_tall,
    _mean,
    _p,
    _read_jsonl,
    _seed_order,
    attempt_seconds,
    focus_rows,
    latest_attempts,
    latest_interrupted,
    mark_best,
    mark_with_seeds,
    markdown_grid,
    plot_learning_curves,
    run_status_sections,
)
from compare.tasks import TASK_SPECS, Metric, TaskSpec
from utils.errors import UserInputError
from utils.m4_summary import M4_GROUPS, summarize_groups

__all__ = ["Line", "TaskRun", "load_task_runs", "task_lines", "write_task_report", "write_task_tables"]

logger = logging.getLogger(__name__)

#: M4's summary lines after the six groups
OTHERS = "Others"
#: lines whose values are derived from other lines (not tested cell by cell, not in the paired tests)
_DERIVED = (AVG, OTHERS, "Average")


@dataclass
class TaskRun:
    """One finished (row, dataset, axis point, seed): its metrics averaged over its itr settings."""

    row: str
    dataset: str
    point: float | int
    settings: list[str]
    metrics: dict[str, float]
    seed: int | None = None
    argv: list[str] | None = None
    epochs_run: int | None = None
    best_epoch: int | None = None
    train_seconds: float | None = None
    params: int | None = None
    records: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    #: manifest position of the run's attempt (the latest run of an M4 row holds its summary)
    order: int = 0


@dataclass
class Line:
    """One table line: (dataset, point) and, per metric key, one {seed: value} per row."""

    dataset: str
    point: float | int | str
    samples: dict[str, list[dict]]

    @property
    def derived(self) -> bool:
        return self.dataset in _DERIVED or self.point in _DERIVED


def task_key(entry: dict) -> tuple[str, str, object]:
    """A task run's identity in the manifest, seed aside: (row, dataset, point of the task's axis)."""
    return entry["row"], entry["dataset"], entry["axis"]


def task_manifest(runs_dir: Path, spec: TaskSpec) -> list[dict]:
    """The runner's manifest entries of `spec`'s task."""
    return [e for e in _read_jsonl(runs_dir / MANIFEST_FILE) if e.get("task") == spec.name]


def load_task_runs(runs_dir: Path, spec: TaskSpec) -> tuple[list[TaskRun], list[dict]]:
    """Finished runs (the latest attempt per row x dataset x point x seed) and failed attempts, from the
    runner's manifest and results.jsonl; an `interrupted` latest attempt is in neither."""
    results = {r["setting"]: r for r in _read_jsonl(runs_dir / RESULTS_JSONL)}
    manifest = task_manifest(runs_dir, spec)
    runs: dict[tuple, TaskRun] = {}
    finished, failed = latest_attempts(manifest, results, task_key)
    for (row, dataset, point, seed), number, entry, found in finished:
        metrics = {m.key: float(np.mean([r[m.key] for r in found])) for m in spec.metrics
                   if all(r.get(m.key) is not None for r in found)}
        runs[(row, dataset, point, seed)] = TaskRun(
            row=row, dataset=dataset, point=point, settings=list(entry["settings"]), metrics=metrics, seed=seed,
            argv=entry.get("argv"), epochs_run=found[0].get("epochs_run"), best_epoch=found[0].get("best_epoch"),
            train_seconds=_mean([r.get("train_seconds") for r in found]), params=found[0].get("params"),
            records=found, extra={"seconds": attempt_seconds(manifest, task_key, number)}, order=number)
    return list(runs.values()), failed


def _ordered(preferred: list, seen: list) -> list:
    out = [x for x in preferred if x in seen]
    return out + [x for x in dict.fromkeys(seen) if x not in out]


def _by_seed(runs: list[TaskRun], row: str, dataset: str, point: float | int) -> dict:
    found = sorted((r for r in runs if (r.row, r.dataset, r.point) == (row, dataset, point)),
                   key=lambda r: _seed_order(r.seed))
    return {r.seed: r for r in found}


def _m4_summary_lines(runs: list[TaskRun], rows: list[str], spec: TaskSpec
                      ) -> tuple[list[Line], dict[str, list[dict]]]:
    """M4's Others and Average lines (SMAPE and MASE pooled per (row, seed) having all six groups, OWA from
    run.py's summary) and the OWA samples of the Yearly, Quarterly and Monthly lines."""
    # Each (row, seed) keeps its own m4_results folder (its model_id tag; exp.exp_short_term_forecasting.
    # m4_results_folder), so its recorded summary scores its own six groups.
    lines = {name: Line("M4", name, {m.key: [{} for _ in rows] for m in spec.metrics}) for name in (OTHERS, "Average")}
    owa_lines: dict[str, list[dict]] = {g: [{} for _ in rows] for g in ("Yearly", "Quarterly", "Monthly")}
    for i, row in enumerate(rows):
        mine = [r for r in runs if r.row == row]
        for seed in sorted({r.seed for r in mine}, key=_seed_order):
            groups = {r.dataset: r for r in mine if r.seed == seed and r.dataset in M4_GROUPS}
            if set(groups) == set(M4_GROUPS):
                counts = {g: int(groups[g].records[0].get("series") or 0) for g in M4_GROUPS}
                if all(counts.values()):
                    for key in ("smape", "mase"):
                        pooled = summarize_groups({g: groups[g].metrics[key] for g in M4_GROUPS}, counts)
                        lines[OTHERS].samples[key][i][seed] = pooled[OTHERS]
                        lines["Average"].samples[key][i][seed] = pooled["Average"]
            with_summary = [r for r in mine if r.seed == seed and r.records[-1].get("m4_summary")]
            if with_summary:
                owa = max(with_summary, key=lambda r: r.order).records[-1]["m4_summary"].get("owa") or {}
                targets = {OTHERS: lines[OTHERS].samples["owa"], "Average": lines["Average"].samples["owa"],
                           **owa_lines}
                for name, target in targets.items():
                    if name in owa:
                        target[i][seed] = float(owa[name])
    return list(lines.values()), owa_lines


def task_lines(runs: list[TaskRun], rows: list[str], datasets: list[str], spec: TaskSpec
               ) -> list[Line]:
    """The table lines of a task in order."""
    lines = []
    for dataset in datasets:
        points = sorted({r.point for r in runs if r.dataset == dataset})
        mine = []
        for point in points:
            per_row = [_by_seed(runs, row, dataset, point) for row in rows]
            mine.append(Line(dataset, point, {m.key: [{s: r.metrics[m.key] for s, r in d.items() if m.key in r.metrics}
                                                      for d in per_row] for m in spec.metrics}))
        lines += mine
        if spec.average and mine:
            average = Line(dataset, AVG, {})
            for m in spec.metrics:
                per_row = []
                for i in range(len(rows)):
                    per_point = [line.samples[m.key][i] for line in mine]
                    complete = [s for s in per_point[0] if all(s in d for d in per_point)]
                    per_row.append({s: float(np.mean([d[s] for d in per_point])) for s in complete})
                average.samples[m.key] = per_row
            lines.append(average)
    if spec.name == "short_term_forecast":
        summary, owa = _m4_summary_lines(runs, rows, spec)
        for line in lines:
            if line.dataset in owa:
                line.samples["owa"] = owa[line.dataset]
        lines += summary
    return lines


def _means(samples: list[dict]) -> list[float | None]:
    return [float(np.mean(list(d.values()))) if d else None for d in samples]


def _marks(line: Line, metric: Metric, seeded: bool) -> tuple[list[Cell], bool]:
    values = _means(line.samples[metric.key])
    if seeded:
        return mark_with_seeds(values, line.samples[metric.key], metric.higher_is_better)
    return mark_best(values, metric.higher_is_better), False


def _cell(cell: Cell, sample: dict, seeded: bool, common_n: int) -> str:
    if not seeded or cell.value is None:
        return _fmt(cell.value, cell.mark)
    std = significance.summarize(list(sample.values())).std if sample else None
    return _fmt(cell.value, cell.mark, std, None if len(sample) == common_n else len(sample))


def _ranked(lines: list[Line], spec: TaskSpec) -> list[Line]:
    """The lines ranks are taken on: the dataset averages (imputation), M4's Average, else every line."""
    if spec.average:
        return [line for line in lines if line.point == AVG]
    if spec.name == "short_term_forecast":
        return [line for line in lines if line.point == "Average"]
    return lines


def _diff_text(value: float | None, metric: Metric) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{100.0 * value:+.1f}%" if metric.relative else f"{100.0 * value:+.1f} pt"


def _seed_section(lines: list[Line], rows: list[str], focus: str, spec: TaskSpec, seeded: bool) -> list[str]:
    """Markdown of the focus row against every other on the headline metric (several seeds), or the statement
    that significance cannot be assessed (one seed per cell)."""
    metric = spec.headline
    if not seeded:
        return ["## Seeds", "",
                "Each cell is a single training run (one seed), so whether a difference between models exceeds "
                "the variation between seeds **cannot be assessed**. Run the comparison with `--seeds S1 S2 S3` "
                "for mean ± standard deviation and significance tests.", ""]
    if len(rows) < 2:
        return []
    better = "higher" if metric.higher_is_better else "lower"
    kind = ("relative, (focus − other) / other" if metric.relative
            else "in points, focus − other (×100)")
    md = [f"## Seeds: {focus} against each other row ({metric.label}, {better} is better)", "",
          f"Paired over the (dataset, {spec.axis}, seed) cells where both rows have a run (averages and summary lines "
          f"left out). Δ {metric.label} is {kind}; a win is a {better} {metric.label} at {DECIMALS} decimals. "
          f"Mean Δ with a 95 % percentile bootstrap interval ({significance.BOOTSTRAP_RESAMPLES} resamples); "
          "p-values of the Wilcoxon signed-rank test and of the paired t-test of Δ against 0. Per-cell "
          "differences with Welch's interval over the seeds: ≈ within seed noise (p ≥ 0.05).", "",
          f"| Other | Cells | Wins | Losses | Ties | Mean Δ {metric.label} | 95 % CI | Wilcoxon p | Paired t p "
          "| Cells within seed noise |",
          "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    f = rows.index(focus)
    cells = [line for line in lines if not line.derived]
    per_cell: dict[str, list[str]] = {}
    for j, other in enumerate(rows):
        if j == f:
            continue
        ours, theirs, texts, noise = [], [], [], []
        for line in cells:
            a, b = line.samples[metric.key][f], line.samples[metric.key][j]
            for seed in a:
                if seed in b:
                    ours.append(a[seed])
                    theirs.append(b[seed])
            if not a or not b or (metric.relative and np.mean(list(b.values())) == 0):
                texts.append("—")
                continue
            d = significance.cell_difference(list(a.values()), list(b.values()), relative=metric.relative)
            if d.p is None:
                texts.append(f"{_diff_text(d.relative, metric)} (one seed: untested)")
            else:
                noise.append(bool(d.within_noise))
                texts.append(f"{'≈ ' if d.within_noise else ''}{_diff_text(d.relative, metric)} "
                             f"[{_diff_text(d.low, metric)}, {_diff_text(d.high, metric)}]")
        per_cell[other] = texts
        noise_text = f"{sum(noise)} of {len(noise)}" if noise else "—"
        usable = [(a, b) for a, b in zip(ours, theirs, strict=True) if not metric.relative or b != 0]
        if not usable:
            md.append(f"| {other} | 0 | — | — | — | — | — | — | — | {noise_text} |")
            continue
        pc = significance.paired_comparison([a for a, _ in usable], [b for _, b in usable], decimals=DECIMALS,
                                            higher_is_better=metric.higher_is_better, relative=metric.relative)
        interval = "—" if math.isnan(pc.low) else f"[{_diff_text(pc.low, metric)}, {_diff_text(pc.high, metric)}]"
        md.append(f"| {other} | {pc.n} | {pc.wins} | {pc.losses} | {pc.ties} | "
                  f"{_diff_text(pc.mean_relative, metric)} | {interval} | {_p(pc.wilcoxon_p)} | {_p(pc.ttest_p)} "
                  f"| {noise_text} |")
    md += ["", "### Per cell", "", f"| Dataset | {spec.axis_column} | " + " | ".join(f"vs {o}" for o in per_cell) + " |",
           "|---|---|" + "---|" * len(per_cell)]
    for k, line in enumerate(cells):
        md.append(f"| {line.dataset} | {line.point} | " + " | ".join(t[k] for t in per_cell.values()) + " |")
    return [*md, ""]


def write_task_tables(out: Path, runs: list[TaskRun], failed: list[dict], config: dict, spec: TaskSpec,
                      focus: str | Sequence[str] | None = None, layout: str = "auto",
                      unfinished: Sequence[dict] = ()) -> tuple[Path, Path]:
    """Write the task's `table.md` and `table.csv` into `out`; returns their paths. focus: the row or rows
    each compared with every other over seeds (default: the first row). layout: "wide" (a line per dataset
    and point), "tall" (a line per model) or "auto" (tall from `compare.report.TALL_FROM` models on).
    unfinished: the manifest entries of interrupted runs, listed after the tables."""
    rows = _ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs] + [f["row"] for f in failed])
    datasets = _ordered(config.get("data", []), [r.dataset for r in runs])
    focused = focus_rows(focus, rows)
    lines = task_lines(runs, rows, datasets, spec)
    counts = [len(d) for line in lines if not line.derived for d in line.samples[spec.headline.key] if d]
    seeded = max(counts, default=1) >= 2
    common_n = max(set(counts), key=counts.count) if counts else 1
    marks = {(k, m.key): _marks(line, m, seeded) for k, line in enumerate(lines) for m in spec.metrics}

    md = [f"# {spec.name.replace('_', ' ').capitalize()} comparison", ""]
    conditions = _conditions(config, runs, failed)  # type: ignore[arg-type]
    if spec.name == "classification":
        # UEA's loader reads <model_id>_TRAIN.ts, so the runner tags classification runs' --des instead.
        conditions = [c.replace("`_sS` ends its model_id", "`_sS` ends its `--des`") for c in conditions]
    md += conditions
    untested = False
    tall = _is_tall(layout, rows)
    for title, metrics in spec.tables:
        grid, shown = [], []
        for k, line in enumerate(lines):
            texts = [[_cell(marks[(k, m.key)][0][i], line.samples[m.key][i], seeded, common_n) for m in metrics]
                     for i in range(len(rows))]
            if all(t == "—" for per_row in texts for t in per_row):
                continue
            dagger = seeded and not line.derived and not marks[(k, metrics[0].key)][1]
            untested |= dagger
            shown.append(k)
            grid.append(GridLine((line.dataset, f"{line.point}{' †' if dagger else ''}"), texts))
        summaries = []
        if title == spec.tables[0][0]:
            ranked = _ranked(lines, spec)
            rank_cells, first_cells = [], []
            for i in range(len(rows)):
                rank_cells.append([])
                first_cells.append([])
                for m in metrics:
                    ranks = [_competition_ranks(_means(line.samples[m.key]), m.higher_is_better)[i] for line in ranked]
                    ranks = [r for r in ranks if r is not None]
                    rank_cells[i].append("—" if not ranks else f"{float(np.mean(ranks)):.1f}")
                    first_cells[i].append(str(sum(marks[(k, m.key)][0][i].mark == "best" for k in shown)))
            summaries = [("Avg rank", rank_cells), ("1st count", first_cells)]
        md += ["", f"## {title}", "",
               *markdown_grid(("Dataset", spec.axis_column), rows, [m.label for m in metrics], grid, summaries, tall)]
    md.append("")
    ranked_on = ("the dataset averages over the mask rates" if spec.average else
                 "the Average line" if spec.name == "short_term_forecast" else "every line")
    if seeded:
        md += [f"Cells: mean ± sample standard deviation over n = {common_n} seeds (a cell with another number shows "
               "(n=k)). **Bold**: the best mean, apart from every other row by Welch's t-test over the seeds "
               "(p < 0.05); _underline_: the second, apart in the same way; ≈: within seed noise of the best, "
               "no row wins that line." + (" †: a model of that line has a single seed, its marks are untested."
                                           if untested else "")]
    else:
        md += ["**Bold**: best, _underline_: second best in the line (ties at 3 decimals share the mark)."]
    md[-1] += (f" *Avg rank*: mean rank over {ranked_on} (ties share the lowest rank). *1st count*: lines where "
               "the model is bold.")
    if spec.average:
        md[-1] += f" *{AVG}*: mean over the dataset's mask rates (only when the model has all of them)."
    if spec.name == "short_term_forecast":
        md[-1] += (" *Others*: Weekly, Daily and Hourly, *Average*: all six groups, weighted by their number of "
                   "series (TSLib's summary); OWA (Naive2 = 1) as run.py's M4 summary recorded it once all six "
                   "groups had run.")
    md += ["", "No `efficiency.md` for this task: `compare.efficiency` measures forecasting train steps. No forecast "
           "plots either; the headline metric is drawn per dataset in "
           f"`{spec.headline.key}_by_dataset.png`.", ""]
    for row in focused if seeded else focused[:1]:
        md += _seed_section(lines, rows, row, spec, seeded)
    md += run_status_sections(failed, unfinished, spec.axis_column, "axis")

    axis_field = spec.axis.replace(" ", "_")
    csv_rows = []
    for k, line in enumerate(lines):
        for i, row in enumerate(rows):
            if not any(line.samples[m.key][i] for m in spec.metrics):
                continue
            found = [] if line.derived else list(_by_seed(runs, row, line.dataset, line.point).values())
            rec: dict = {"dataset": line.dataset, axis_field: line.point, "model": row}
            for m in spec.metrics:
                sample = line.samples[m.key][i]
                values = _means(line.samples[m.key])
                rec[m.key] = values[i]
                rec[f"{m.key}_rank"] = _competition_ranks(values, m.higher_is_better)[i]
                rec[f"{m.key}_std"] = significance.summarize(list(sample.values())).std if sample else None
                rec[f"{m.key}_mark"] = marks[(k, m.key)][0][i].mark
            sample = next((line.samples[m.key][i] for m in spec.metrics if line.samples[m.key][i]), {})
            rec.update({"n_seeds": len(sample), "seeds": ";".join(str(s) for s in sample),
                        "epochs_run": ";".join(str(r.epochs_run) for r in found) or None,
                        "train_seconds": ";".join(f"{r.train_seconds:.3f}" for r in found
                                                  if r.train_seconds is not None) or None,
                        "params": found[0].params if found else None,
                        "settings": ";".join(s for r in found for s in r.settings) or None})
            csv_rows.append(rec)
    md_path, csv_path = out / "table.md", out / "table.csv"
    md_path.write_text("\n".join(md))
    fields = list(dict.fromkeys(k for rec in csv_rows for k in rec)) or ["dataset", axis_field, "model"]
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for rec in csv_rows:
            writer.writerow({k: "" if rec.get(k) is None else rec[k] for k in fields})
    return md_path, csv_path


def plot_headline(out: Path, runs: list[TaskRun], config: dict, spec: TaskSpec) -> Path:
    """`<metric>_by_dataset.png`: one panel per dataset, bars of the headline metric per axis point and row
    (mean over seeds, ± one sample standard deviation when a cell has several)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = spec.headline
    rows = _ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs])
    datasets = _ordered(config.get("data", []), [r.dataset for r in runs])
    colors = _colors(rows)
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
                values = [r.metrics[metric.key] for r in _by_seed(runs, row, dataset, point).values()
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
    return _finish_figure(fig, handles, ncols, f"{metric.label} per dataset", out / f"{metric.key}_by_dataset.png")


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
    paths.append(plot_headline(out, runs, config, spec))
    rows = _ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs])
    curves = [LossCurve(f"{r.dataset}, {spec.axis} {r.point}", r.row, r.records[0]["curve"], r.best_epoch)
              for r in sorted(runs, key=lambda r: r.order) if r.records and r.records[0].get("curve")]
    paths += plot_learning_curves(out, curves, rows, "loss (the task's training loss)")
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        if (runs_dir / name).is_file() and (runs_dir / name).resolve() != (out / name).resolve():
            (out / name).write_text((runs_dir / name).read_text())
            paths.append(out / name)
    return paths
