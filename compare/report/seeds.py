"""What the seeds say: the focus rows (`--focus ROW [ROW ...]`), each cell's samples and marks over seeds,
and the section comparing each focus row with every other row over (dataset, axis point, seed) cells.

With one seed per cell the report says that significance cannot be assessed. With several, the section
pairs the cells both rows have: wins and losses at the printed precision, the mean difference with a
bootstrap interval, the Wilcoxon signed-rank and paired t-tests (`compare.report.significance` names them), and per
cell the difference of the seed means with Welch's interval (≈: within seed noise).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compare.grid.records import RunResult, seed_order
from compare.grid.tasks import Metric, TaskSpec
from compare.recipes.tables import name_key
from compare.report import significance
from compare.report.forecast_cells import Cells, Samples, cell_samples
from compare.report.markdown import format_p, format_relative, format_value
from compare.report.ranking import AVG, DECIMALS, Cell, mark_best, mark_with_seeds
from compare.report.task_lines import Line
from utils.errors import UserInputError

__all__ = [
    "SeedView",
    "focus_differences",
    "focus_pairs",
    "focus_rows",
    "forecast_seed_section",
    "resolve_focus",
    "seed_cell_text",
    "seed_plot_name",
    "seed_view",
    "task_seed_section",
]

_ONE_SEED = ("Each cell is a single training run (one seed), so whether a difference between models exceeds "
             "the variation between seeds **cannot be assessed**")
_ASK_FOR_SEEDS = ("Run the comparison with `--seeds S1 S2 S3` for mean ± standard deviation and significance "
                  "tests.")


def resolve_focus(focus: str | None, rows: Sequence[str]) -> str | None:
    """The row named by --focus (exact name, else the same name up to case and punctuation); the first
    row when focus is None; None when no row matches."""
    if focus is None:
        return rows[0] if rows else None
    if focus in rows:
        return focus
    return next((row for row in rows if name_key(row) == name_key(focus)), None)


def focus_rows(focus: str | Sequence[str] | None, rows: Sequence[str]) -> list[str]:
    """The rows named by --focus ROW [ROW ...] (one name, as older compare.json files store it, or several),
    each resolved as `resolve_focus`; [first row] when focus is None. Raises UserInputError for a name that
    is no row."""
    names: list[str | None] = [focus] if focus is None or isinstance(focus, str) else list(focus)
    chosen = []
    for name in names:
        row = resolve_focus(name, rows)
        if row is None:
            raise UserInputError(f"--focus {name!r} is not a row of this comparison; choose from {', '.join(rows)}")
        chosen.append(row)
    return list(dict.fromkeys(chosen))


def seed_plot_name(focus: str, first: bool) -> str:
    """File of the seed-difference plot of one focus row: `seed_differences.png` for the first focus row,
    `seed_differences_<row>.png` for each further one."""
    return "seed_differences.png" if first else f"seed_differences_{name_key(focus)}.png"


@dataclass
class SeedView:
    """The seed side of a report: per-cell samples and marks, whether seeds were tested, the focus row."""

    samples: Samples
    marks: dict[tuple[str, int | str, str], list[Cell]]
    tested: dict[tuple[str, int | str, str], bool]
    #: True when some cell has two or more seeds (mean ± std and the tests are shown)
    seeded: bool
    #: the most frequent number of seeds of a present (dataset, horizon) cell
    common_n: int
    seeds: list[int | None]
    focus: str


def seed_view(runs: list[RunResult], rows: list[str], datasets: list[str], cells: Cells,
              focus: str | None = None) -> SeedView:
    """Samples, marks and the focus row of a report (raises UserInputError for an unknown focus); another
    focus row of the same report is `dataclasses.replace(view, focus=row)`."""
    samples = cell_samples(runs, rows, datasets)
    counts = [len(d) for (_, h, _), line in samples.items() if h != AVG for d in line if d]
    seeded = max(counts, default=1) >= 2
    marks, tested = {}, {}
    for key, line in samples.items():
        if seeded:
            marks[key], tested[key] = mark_with_seeds(cells[key], line)
        else:
            marks[key], tested[key] = mark_best(cells[key]), False
    chosen = focus_rows(focus, rows)[0]
    common_n = Counter(counts).most_common(1)[0][0] if counts else 1
    seeds = sorted({r.seed for r in runs}, key=seed_order)
    return SeedView(samples, marks, tested, seeded, common_n, seeds, chosen)


def seed_cell_text(cell: Cell, sample: dict, seeded: bool, common_n: int) -> str:
    """A cell as printed: its value and mark, with seeds `mean ± std` and `(n=k)` when its number of seeds is
    not the common one."""
    if not seeded or cell.value is None:
        return format_value(cell.value, cell.mark)
    std = significance.summarize(list(sample.values())).std if sample else None
    return format_value(cell.value, cell.mark, std, None if len(sample) == common_n else len(sample))


def focus_differences(view: SeedView, rows: list[str], datasets: list[str]
                      ) -> dict[str, dict[tuple[str, int], significance.CellDifference]]:
    """Other row -> (dataset, horizon) -> the focus row's relative MSE difference to it (Welch)."""
    f = rows.index(view.focus)
    out: dict[str, dict[tuple[str, int], significance.CellDifference]] = {}
    for j, other in enumerate(rows):
        if j == f:
            continue
        out[other] = {}
        for (dataset, h, metric), line in view.samples.items():
            if metric == "mse" and h != AVG and dataset in datasets and line[f] and line[j]:
                out[other][(dataset, int(h))] = significance.relative_difference(
                    list(line[f].values()), list(line[j].values()))
    return out


def focus_pairs(view: SeedView, rows: list[str], other: str) -> tuple[list[float], list[float]]:
    """MSE of the focus row and of `other` on every (dataset, horizon, seed) cell both have."""
    f, j = rows.index(view.focus), rows.index(other)
    ours, theirs = [], []
    for (_, h, metric), line in view.samples.items():
        if metric == "mse" and h != AVG:
            for seed in line[f]:
                if seed in line[j]:
                    ours.append(line[f][seed])
                    theirs.append(line[j][seed])
    return ours, theirs


def _difference_text(d: significance.CellDifference | None, text=format_relative) -> str:
    """One per-cell difference: ≈ when within seed noise, then Δ and its Welch interval."""
    if d is None:
        return "—"
    if d.p is None:
        return f"{text(d.relative)} (one seed: untested)"
    return f"{'≈ ' if d.within_noise else ''}{text(d.relative)} [{text(d.low)}, {text(d.high)}]"


def forecast_seed_section(view: SeedView, rows: list[str], datasets: list[str], plot: str = "seed_differences.png"
                          ) -> list[str]:
    """Markdown of the paired comparison of the focus row with every other row (several seeds), or the
    statement that significance cannot be assessed (one seed per cell); `plot` names its figure."""
    if not view.seeded:
        return ["## Seeds", "", f"{_ONE_SEED}; retraining with another seed can move a test MSE by more than the "
                f"gaps between models. {_ASK_FOR_SEEDS}", ""]
    if len(rows) < 2:
        return []
    md = [f"## Seeds: {view.focus} against each other row", "",
          f"Paired over the (dataset, horizon, seed) cells where both rows have a run. Δ = ({view.focus} − other) "
          f"/ other of the test MSE per cell; negative means {view.focus} has the lower error. Wins and losses are "
          f"judged at {DECIMALS} decimals. Mean Δ with a 95 % percentile bootstrap interval "
          f"(`scipy.stats.bootstrap`, {significance.BOOTSTRAP_RESAMPLES} resamples); p-values of the Wilcoxon "
          "signed-rank test and of the paired t-test of Δ against 0. Horizons of one dataset share their data, "
          "so the cells are not independent and these p-values are optimistic.", "",
          "| Other | Cells | Wins | Losses | Ties | Mean Δ MSE | 95 % CI | Wilcoxon p | Paired t p "
          "| Cells within seed noise |",
          "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    differences = focus_differences(view, rows, datasets)
    for other, by_cell in differences.items():
        ours, theirs = focus_pairs(view, rows, other)
        tested = [d for d in by_cell.values() if d.within_noise is not None]
        noise = f"{sum(d.within_noise for d in tested)} of {len(tested)}" if tested else "—"
        if not ours:
            md.append(f"| {other} | 0 | — | — | — | — | — | — | — | {noise} |")
            continue
        pc = significance.paired_comparison(ours, theirs, decimals=DECIMALS)
        interval = "—" if math.isnan(pc.low) else f"[{format_relative(pc.low)}, {format_relative(pc.high)}]"
        md.append(f"| {other} | {pc.n} | {pc.wins} | {pc.losses} | {pc.ties} | {format_relative(pc.mean_relative)} | "
                  f"{interval} | {format_p(pc.wilcoxon_p)} | {format_p(pc.ttest_p)} | {noise} |")
    cells = sorted({c for by_cell in differences.values() for c in by_cell},
                   key=lambda c: (datasets.index(c[0]), c[1]))
    md += ["", "### Per cell", "",
           f"Δ of the seed means, (mean {view.focus} − mean other) / mean other, with the 95 % interval of Welch's "
           "t-test over the seeds divided by the other row's mean. ≈: within seed noise (Welch p ≥ 0.05, the "
           f"interval contains 0). Plotted in `{plot}`.", "",
           "| Dataset | H | " + " | ".join(f"vs {o}" for o in differences) + " |",
           "|---|---|" + "---|" * len(differences)]
    for dataset, h in cells:
        texts = [_difference_text(by_cell.get((dataset, h))) for by_cell in differences.values()]
        md.append(f"| {dataset} | {h} | " + " | ".join(texts) + " |")
    return [*md, ""]


def _metric_text(metric: Metric):
    """How a difference of `metric` is printed: relative (+1.2%) for errors, in points (+1.2 pt) else."""
    def text(value: float | None) -> str:
        if value is None or math.isnan(value):
            return "—"
        return f"{100.0 * value:+.1f}%" if metric.relative else f"{100.0 * value:+.1f} pt"
    return text


def _task_pair_line(other: str, lines: list[Line], f: int, j: int, metric: Metric) -> tuple[str, list[str]]:
    """The summary line of the focus row (index f) against row j on the headline metric, and the per-cell
    texts of that pair."""
    text = _metric_text(metric)
    ours, theirs, texts, noise = [], [], [], []
    for line in lines:
        a, b = line.samples[metric.key][f], line.samples[metric.key][j]
        for seed in a:
            if seed in b:
                ours.append(a[seed])
                theirs.append(b[seed])
        if not a or not b or (metric.relative and np.mean(list(b.values())) == 0):
            texts.append("—")
            continue
        d = significance.cell_difference(list(a.values()), list(b.values()), relative=metric.relative)
        if d.p is not None:
            noise.append(bool(d.within_noise))
        texts.append(_difference_text(d, text))
    noise_text = f"{sum(noise)} of {len(noise)}" if noise else "—"
    usable = [(a, b) for a, b in zip(ours, theirs, strict=True) if not metric.relative or b != 0]
    if not usable:
        return f"| {other} | 0 | — | — | — | — | — | — | — | {noise_text} |", texts
    pc = significance.paired_comparison([a for a, _ in usable], [b for _, b in usable], decimals=DECIMALS,
                                        higher_is_better=metric.higher_is_better, relative=metric.relative)
    interval = "—" if math.isnan(pc.low) else f"[{text(pc.low)}, {text(pc.high)}]"
    return (f"| {other} | {pc.n} | {pc.wins} | {pc.losses} | {pc.ties} | {text(pc.mean_relative)} | {interval} | "
            f"{format_p(pc.wilcoxon_p)} | {format_p(pc.ttest_p)} | {noise_text} |"), texts


def task_seed_section(lines: list[Line], rows: list[str], focus: str, spec: TaskSpec, seeded: bool) -> list[str]:
    """Markdown of the focus row against every other on the task's headline metric (several seeds), or the
    statement that significance cannot be assessed (one seed per cell)."""
    metric = spec.headline
    if not seeded:
        return ["## Seeds", "", f"{_ONE_SEED}. {_ASK_FOR_SEEDS}", ""]
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
        if j != f:
            summary, per_cell[other] = _task_pair_line(other, cells, f, j, metric)
            md.append(summary)
    md += ["", "### Per cell", "", f"| Dataset | {spec.axis_column} | " + " | ".join(f"vs {o}" for o in per_cell) + " |",
           "|---|---|" + "---|" * len(per_cell)]
    for k, line in enumerate(cells):
        md.append(f"| {line.dataset} | {line.point} | " + " | ".join(t[k] for t in per_cell.values()) + " |")
    return [*md, ""]
