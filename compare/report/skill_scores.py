"""Skill against the seasonal naive forecast, per cell and over cells, as fev's reports give it (Shchur et al.,
"fev-bench", 2025: skill score = 1 − the geometric mean of the errors relative to seasonal naive).

Per (dataset, horizon) cell and model, with rel = model error / seasonal-naive error on the same test windows
(`compare.report.naive_scores`: the mean over seeds of each run's ratio; the seasonal naive forecast repeats the last
cycle of one period, `exp/naive_forecast.py`):

    skill_c = 1 − rel_c                                  (> 0: better than seasonal naive; 1: no error)

and over the N cells where every model with seasonal-naive scores has one (`Relative.common`, the cells of the
naive section's geometric mean; a model scored in so few cells that counting it would drop more cells has none):

    skill = 1 − exp((1/N) Σ_c log rel_c) = 1 − gmean_c rel_c

with a 95 % percentile bootstrap interval resampling those cells (`compare.report.cell_bootstrap`; from 3 cells on).
Both for MSE and MAE. A model without seasonal-naive scores (records older than them, or a seasonal naive skipped
because the input is shorter than the period) has no skill, and the report says why: a missing score is never
read as 0 (which would be a skill of 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from compare.grid.records import RunResult
from compare.report.cell_bootstrap import Interval, cell_intervals, format_interval, interval_note
from compare.report.markdown import GridLine, grid_frame, markdown_grid
from compare.report.naive_scores import METRICS, relative_scores, run_naive
from compare.report.ranking import DECIMALS

__all__ = ["SKILL_BASELINE", "SkillScores", "skill_scores", "skill_section"]

#: the naive method (`exp.naive_forecast.NAIVE_METHODS`) the skill is measured against
SKILL_BASELINE = "seasonal_naive"


@dataclass
class SkillScores:
    """Skill against seasonal naive: `per_cell[(dataset, H, metric)][row]` (None: no score), and per metric and
    row over `cells` the skill 1 − gmean rel with its bootstrap interval (None: fewer than 3 cells or no skill);
    `missing[row]` says why a row has no skill over cells."""

    rows: list[str]
    cells: list[tuple[str, int]] = field(default_factory=list)
    per_cell: dict[tuple[str, int, str], list[float | None]] = field(default_factory=dict)
    skill: dict[str, list[float | None]] = field(default_factory=dict)
    interval: dict[str, list[Interval | None]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    def record(self) -> dict:
        """The numbers as JSON (cells as [dataset, H]; per cell one entry with a value per row)."""
        per_cell = [{"dataset": d, "pred_len": h, **{m: self.per_cell[(d, h, m)] for m in METRICS}}
                    for (d, h, m) in self.per_cell if m == METRICS[0]]
        return {"baseline": SKILL_BASELINE, "rows": self.rows, "cells": [list(c) for c in self.cells],
                "skill": self.skill, "interval": self.interval, "missing": self.missing, "per_cell": per_cell}


def _skill_of_logs(log_rel: np.ndarray, axis: int) -> np.ndarray:
    """1 − exp(mean log rel) along `axis` (the cells): 1 − the geometric mean of rel."""
    return 1.0 - np.exp(np.mean(log_rel, axis=axis))


def _why_missing(runs: list[RunResult], row: str, scored: bool, left_out: bool) -> str:
    """Why `row` has no skill over cells: it has no run, scores in too few cells (counting it would drop more
    cells), an error of 0 in a cell, or no seasonal-naive score (each reason its runs give). A row with any score
    always has common cells (`complete_block` keeps a non-empty block whenever each model has a result)."""
    found = [r for r in runs if r.row == row]
    if not found:
        return "no finished run"
    if left_out:
        return "scores in too few cells (counting it would drop more cells)"
    if scored:
        return "an error of 0 in a cell, where log rel is undefined"
    reasons = dict.fromkeys(why for why in (run_naive(r, SKILL_BASELINE)[1] for r in found) if why)
    return "no seasonal-naive score in any cell: " + ("; ".join(reasons) or "a naive error of 0 (a constant series)")


def skill_scores(runs: list[RunResult], rows: list[str], datasets: list[str]) -> SkillScores:
    """Skill against seasonal naive per (dataset, horizon) cell and row, and over the common cells with its
    bootstrap interval (module docstring)."""
    rel = relative_scores(runs, rows, datasets, SKILL_BASELINE)
    result = SkillScores(list(rows), list(rel.common))
    result.per_cell = {key: [None if v is None else 1.0 - v for v in values] for key, values in rel.values.items()}
    for m in METRICS:
        result.skill[m] = [None if g is None else 1.0 - g for g in rel.geomeans[m]]
        result.interval[m] = [None] * len(rows)
        have = [i for i, s in enumerate(result.skill[m]) if s is not None]
        if not have:
            continue
        log_rel = np.log([[rel.values[(d, h, m)][i] for i in have] for d, h in rel.common])  # [N, k']
        for i, interval in zip(have, cell_intervals(log_rel, _skill_of_logs) or [None] * len(have), strict=True):
            result.interval[m][i] = interval
    for i, row in enumerate(rows):
        if result.skill["mse"][i] is None:
            scored = any(values[i] is not None for values in rel.values.values())
            result.missing[row] = _why_missing(runs, row, scored, row in rel.rows_left_out)
    return result


def _number(value: float) -> str:
    return f"{value:.{DECIMALS}f}"


def skill_section(skill: SkillScores, tall: bool) -> list[str]:
    """`## Skill vs seasonal naive`: per cell and row skill = 1 − rel, then over the common cells the skill
    score with its 95 % bootstrap interval, and which rows have none and why."""
    md = ["## Skill vs seasonal naive", ""]
    if not any(v is not None for values in skill.per_cell.values() for v in values):
        reasons = "; ".join(f"{row}: {why}" for row, why in skill.missing.items())
        return [*md, f"No skill scores: no run has a seasonal-naive score ({reasons or 'no runs'}).", ""]
    rows = skill.rows
    lines = [GridLine((d, str(h)), [["—" if skill.per_cell[(d, h, m)][i] is None else
                                     _number(skill.per_cell[(d, h, m)][i]) for m in METRICS] for i in range(len(rows))])
             for (d, h, m) in skill.per_cell if m == METRICS[0]]
    summary = [[format_interval(skill.skill[m][i], skill.interval[m][i], _number) for m in METRICS]
               for i in range(len(rows))]
    md += ["skill = 1 − rel, rel = the model's error / the seasonal naive forecast's (the last cycle of one period "
           "repeated) on the same test windows, the mean over seeds of each run's ratio: above 0 beats seasonal "
           "naive, 1 is an error of 0. *Skill over cells*: 1 − the geometric mean of rel over the "
           f"{len(skill.cells)} cells where every model with seasonal-naive scores has one (so 1 − the *Geo-mean "
           "vs seasonal naive* line above), the skill score of fev's reports (`compare/report/skill_scores.py`). "
           f"{interval_note(len(skill.cells))} —: no result there, or a record without a seasonal-naive score "
           "(such records are listed under *Relative scores missing* above).", "",
           *markdown_grid(grid_frame(("Dataset", "H"), rows, ("skill MSE", "skill MAE"), lines,
                                     [("Skill over cells [95 % CI]", summary)], tall), tall), ""]
    if skill.missing:
        md += ["No skill over cells: " + "; ".join(f"{row} ({why})" for row, why in skill.missing.items()) + ".",
               ""]
    return md
