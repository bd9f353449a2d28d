"""The table lines of a comparison of another task (imputation, anomaly detection, classification,
short-term forecasting): one per (dataset, axis point of the task), holding per metric each row's per-seed
values, plus the derived lines: a dataset's average over the mask rates (imputation) and, when M4 groups are
compared, M4's summary lines Others and Average (SMAPE and MASE weighted by each group's number of series as
TSLib's summary, `utils.m4_summary.summarize_groups`; OWA as run.py's M4 summary recorded it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compare.grid.records import TaskRun, seed_order
from compare.grid.tasks import TaskSpec
from compare.report.ranking import AVG
from utils.m4_summary import M4_GROUPS, summarize_groups

__all__ = ["DERIVED", "OTHERS", "Line", "compares_m4", "line_means", "ranked_lines", "runs_by_seed", "task_lines"]

#: M4's summary lines after the six groups
OTHERS = "Others"
#: lines whose values are derived from other lines (not tested cell by cell, not in the paired tests)
DERIVED = (AVG, OTHERS, "Average")


@dataclass
class Line:
    """One table line: (dataset, point) and, per metric key, one {seed: value} per row."""

    dataset: str
    point: float | int | str
    samples: dict[str, list[dict]]

    @property
    def derived(self) -> bool:
        return self.dataset in DERIVED or self.point in DERIVED


def runs_by_seed(runs: list[TaskRun], row: str, dataset: str, point: float | int | str) -> dict:
    """{seed: run} of (row, dataset, point), in seed order."""
    found = sorted((r for r in runs if (r.row, r.dataset, r.point) == (row, dataset, point)),
                   key=lambda r: seed_order(r.seed))
    return {r.seed: r for r in found}


def line_means(samples: list[dict]) -> list[float | None]:
    """Per row the mean over its seeds (None when it has none)."""
    return [float(np.mean(list(d.values()))) if d else None for d in samples]


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
        for seed in sorted({r.seed for r in mine}, key=seed_order):
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


def _average_line(dataset: str, mine: list[Line], rows: list[str], spec: TaskSpec) -> Line:
    """The dataset's average over its points, per seed that has every point."""
    average = Line(dataset, AVG, {})
    for m in spec.metrics:
        per_row = []
        for i in range(len(rows)):
            per_point = [line.samples[m.key][i] for line in mine]
            complete = [s for s in per_point[0] if all(s in d for d in per_point)]
            per_row.append({s: float(np.mean([d[s] for d in per_point])) for s in complete})
        average.samples[m.key] = per_row
    return average


def compares_m4(spec: TaskSpec, datasets: list[str]) -> bool:
    """Whether a short-term comparison holds M4 groups (then M4's summary lines follow them)."""
    return spec.name == "short_term_forecast" and any(d in M4_GROUPS for d in datasets)


def task_lines(runs: list[TaskRun], rows: list[str], datasets: list[str], spec: TaskSpec) -> list[Line]:
    """The table lines of a task in order."""
    lines = []
    for dataset in datasets:
        points = sorted({r.point for r in runs if r.dataset == dataset})
        mine = []
        for point in points:
            per_row = [runs_by_seed(runs, row, dataset, point) for row in rows]
            mine.append(Line(dataset, point, {m.key: [{s: r.metrics[m.key] for s, r in d.items() if m.key in r.metrics}
                                                      for d in per_row] for m in spec.metrics}))
        lines += mine
        if spec.average and mine:
            lines.append(_average_line(dataset, mine, rows, spec))
    if compares_m4(spec, datasets):
        summary, owa = _m4_summary_lines(runs, rows, spec)
        for line in lines:
            if line.dataset in owa:
                line.samples["owa"] = owa[line.dataset]
        lines += summary
    return lines


def ranked_lines(lines: list[Line], spec: TaskSpec) -> list[Line]:
    """The lines ranks are taken on: the dataset averages (imputation), M4's Average in place of its groups and
    every other set's line (short-term), else every line."""
    if spec.average:
        return [line for line in lines if line.point == AVG]
    if spec.name == "short_term_forecast":
        return [line for line in lines if line.point == "Average"
                or (not line.derived and line.dataset not in M4_GROUPS)]
    return lines
