"""Comparison report from result files only: `python -m compare.report --out DIR`.

Reads what `compare.runner` and `run.py` wrote under `DIR/runs/` (`results.jsonl`, the runner's
`compare_runs.jsonl` naming the model row of each setting, `results/<setting>/{pred,true}.npy`) and
`DIR/compare.json` (the invocation), and writes into DIR:

- `table.md` / `table.csv`: MSE and MAE per dataset x horizon plus the horizon average, like the CAPS
  paper's Table 1 (**bold** best, _underline_ second best per row and metric, average rank and
  first-place count per model), and per-model comparisons with reference numbers from a CSV
  (`dataset,pred_len,model,mse,mae`) with the relative difference; `table.csv` holds the same in long
  form (one line per dataset, horizon or `avg`, and model, with ranks, reference and run statistics);
  from 9 models on (`--layout`) the markdown table turns to a line per model;
- with several seeds per cell (`python -m compare --seeds ...`): mean ± sample standard deviation per
  cell, marks and ranks on the means, differences within seed noise marked ≈ and never bolded, and a
  section comparing each focus row (`--focus ROW [ROW ...]`, default the first row) with every other over
  (dataset, horizon, seed) cells (`compare.significance` names the tests); with one seed per cell the report
  says that significance cannot be assessed;
- `mse_by_horizon.png`: MSE against horizon, one panel per dataset (mean and ± std over seeds);
- `seed_differences.png` (several seeds only): per cell, the focus row's relative MSE difference to each
  other row with its 95 % Welch interval (`seed_differences_<row>.png` for each further focus row);
- `forecast_<data>_<H>.png`: ground truth and every model's forecast for the same test window;
- `efficiency.md`: parameters, forward FLOPs, train-step time and peak memory (`compare.efficiency`).

A comparison of another task (`python -m compare --task imputation ...`; `compare.json` names it) gets
that task's tables instead (`compare.task_report`).

Ties are judged at the printed precision (3 decimals), so equal-looking numbers share a mark and a rank.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import os
import platform
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from compare import significance
from compare.recipes import RECIPES, name_key
from compare.run_args import parse_run_args
from utils.errors import UserInputError

__all__ = [
    "CONFIG_FILE",
    "MANIFEST_FILE",
    "RUNS_DIR",
    "Cell",
    "RunResult",
    "accuracy_cells",
    "load_reference",
    "forecast_key",
    "latest_attempts",
    "latest_interrupted",
    "load_runs",
    "machine_info",
    "main",
    "cell_samples",
    "finished_settings",
    "focus_rows",
    "mark_best",
    "mark_with_seeds",
    "LossCurve",
    "forecast_loss_curves",
    "plot_learning_curves",
    "plot_seed_differences",
    "resolve_focus",
    "run_status_sections",
    "seed_plot_name",
    "seed_view",
    "write_report",
]

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"
MANIFEST_FILE = "compare_runs.jsonl"
CONFIG_FILE = "compare.json"
RESULTS_JSONL = "results.jsonl"
DECIMALS = 3
AVG = "Avg"
LAYOUTS = ("auto", "wide", "tall")  # of the accuracy table, see write_tables
TALL_FROM = 9  # models from which layout "auto" puts a model per line: a wide line of 9+ models is unreadable


@dataclass
class RunResult:
    """One finished (row, dataset, horizon, seed): metrics averaged over its itr settings."""

    row: str
    dataset: str
    pred_len: int
    settings: list[str]
    mse: float
    mae: float
    #: the run's seed (the runner's --seeds value, else run.py's recorded seed; None when unknown)
    seed: int | None = None
    argv: list[str] | None = None
    epochs_run: int | None = None
    best_epoch: int | None = None
    train_seconds: float | None = None
    params: int | None = None
    #: the first setting's per-epoch losses (`epoch`, `train`, `vali`, `test`); None in older records
    curve: list[dict] | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Cell:
    """One table cell: a value (None = missing) and its mark ('best', 'second', '' or, with seeds,
    'tied': the lowest mean or within seed noise of it, so no row wins)."""

    value: float | None
    mark: str = ""


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            # A run killed mid-write leaves a partial last line; the finished records are still valid.
            logger.warning("%s:%d is not valid JSON; ignoring that line", path, number)
    return records


def finished_settings(runs_dir: Path) -> set[str]:
    """Settings of the finished runs: those with a record in `runs_dir/results.jsonl`."""
    return {str(r["setting"]) for r in _read_jsonl(runs_dir / RESULTS_JSONL) if isinstance(r, dict) and "setting" in r}


def machine_info() -> dict:
    """Where measurements were taken: OS, CPU, threads, torch version and GPU name."""
    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept and len(kept) == len(values) else None


def _latest(manifest: list[dict], key: Callable[[dict], tuple]) -> list[tuple[tuple, int, dict]]:
    """The latest attempt per (key(entry), seed) of the runner's manifest as (full key, index, entry), in
    manifest order."""
    latest: dict[tuple, tuple[int, dict]] = {}
    for number, entry in enumerate(manifest):
        latest[(*key(entry), entry.get("seed"))] = number, entry
    return [(full_key, number, entry) for full_key, (number, entry) in sorted(latest.items(), key=lambda i: i[1][0])]


def latest_attempts(manifest: list[dict], results: dict[str, dict], key: Callable[[dict], tuple]
                    ) -> tuple[list[tuple[tuple, int, dict, list[dict]]], list[dict]]:
    """The latest attempt per (key(entry), seed) of the runner's manifest, in manifest order: finished ones
    as ((*key, seed), manifest index, entry, their results.jsonl records) and failed entries; an attempt
    stopped by the time budget (`interrupted`) is in neither (see `latest_interrupted`). A run made
    without --seeds counts under the seed run.py recorded."""
    finished, failed = [], []
    for full_key, number, entry in _latest(manifest, key):
        found = [results.get(s) for s in entry.get("settings") or []]
        if entry["status"] == "interrupted":
            continue
        if entry["status"] != "ok" or not found or None in found:
            failed.append(entry)
            continue
        seed = full_key[-1] if full_key[-1] is not None else found[0].get("seed")
        finished.append(((*full_key[:-1], seed), number, entry, found))
    return finished, failed


def attempt_seconds(manifest: list[dict], key: Callable[[dict], tuple], number: int) -> float | None:
    """Wall seconds of the attempt at manifest index `number` plus those of the interrupted attempts it
    continued: walking back over the same run's earlier entries while each attempt says it `resumed`
    (a restart after a lost `runs/` does not count its predecessors)."""
    entry = manifest[number]
    total = entry.get("seconds")
    if total is None:
        return None
    ident = (*key(entry), entry.get("seed"))
    resumed = bool(entry.get("resumed"))
    for earlier in reversed(manifest[:number]):
        if not resumed:
            break
        if (*key(earlier), earlier.get("seed")) != ident:
            continue
        if earlier["status"] != "interrupted" or earlier.get("seconds") is None:
            break
        total += earlier["seconds"]
        resumed = bool(earlier.get("resumed"))
    return total


def latest_interrupted(manifest: list[dict], key: Callable[[dict], tuple]) -> list[dict]:
    """The manifest entries of runs whose latest attempt was stopped unfinished (`interrupted`: a time
    budget or a signal), in manifest order; the next invocation resumes them."""
    return [entry for _, _, entry in _latest(manifest, key) if entry["status"] == "interrupted"]


def forecast_key(entry: dict) -> tuple[str, str, int]:
    """A forecasting run's identity in the manifest, seed aside: (row, dataset, horizon)."""
    return entry["row"], entry["dataset"], int(entry["pred_len"])


def load_runs(runs_dir: Path) -> tuple[list[RunResult], list[dict]]:
    """Finished runs (one per row x dataset x horizon x seed, the latest attempt) and failed attempts; a
    run whose latest attempt was `interrupted` (time budget) is in neither. A run made without --seeds
    counts under the seed run.py recorded, so a later `--seeds` run of that seed replaces it.

    Without a runner manifest (run.py used by hand), every results.jsonl record is its own run, with
    the model name as row and the first `model_id` token as dataset.
    """
    results = {r["setting"]: r for r in _read_jsonl(runs_dir / RESULTS_JSONL)}
    manifest = _read_jsonl(runs_dir / MANIFEST_FILE)
    if not manifest:
        return [RunResult(row=r["model"], dataset=str(r["model_id"]).split("_")[0], pred_len=int(r["pred_len"]),
                          settings=[s], mse=float(r["mse"]), mae=float(r["mae"]), seed=r.get("seed"),
                          epochs_run=r.get("epochs_run"),
                          best_epoch=r.get("best_epoch"), train_seconds=r.get("train_seconds"),
                          params=r.get("params")) for s, r in results.items()], []
    by_seed: dict[tuple[str, str, int, int | None], RunResult] = {}
    finished, failed = latest_attempts(manifest, results, forecast_key)
    for (row, dataset, pred_len, seed), number, entry, found in finished:
        by_seed[(row, dataset, pred_len, seed)] = RunResult(
            row=row, dataset=dataset, pred_len=pred_len, settings=list(entry["settings"]),
            mse=float(np.mean([r["mse"] for r in found])), mae=float(np.mean([r["mae"] for r in found])),
            seed=seed, argv=entry.get("argv"), epochs_run=found[0].get("epochs_run"), best_epoch=found[0].get("best_epoch"),
            train_seconds=_mean([r.get("train_seconds") for r in found]), params=found[0].get("params"),
            curve=found[0].get("curve"), extra={"seconds": attempt_seconds(manifest, forecast_key, number)},
        )
    return list(by_seed.values()), failed


def load_reference(path: str | Path) -> dict[tuple[str, str, int | str], tuple[float, float]]:
    """Reference numbers keyed by (normalised dataset, normalised model, pred_len or 'Avg') -> (mse, mae).

    The CSV has columns dataset,pred_len,model,mse,mae (`variant` is accepted for `model`, as in the
    paper's ablation tables); a pred_len of `Avg` is the reference's own horizon average."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"reference file {path} does not exist; pass a CSV with columns "
                             "dataset,pred_len,model,mse,mae")
    table: dict[tuple[str, str, int | str], tuple[float, float]] = {}
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields = set(reader.fieldnames or [])
        name_col = "model" if "model" in fields else "variant"
        missing = {"dataset", "pred_len", name_col, "mse", "mae"} - fields
        if missing:
            raise UserInputError(f"reference file {path} lacks columns {sorted(missing)}; "
                                 "expected dataset,pred_len,model,mse,mae")
        for number, rec in enumerate(reader, start=2):
            horizon_text = rec["pred_len"].strip()
            try:
                horizon: int | str = AVG if horizon_text.lower() == "avg" else int(horizon_text)
                values = (float(rec["mse"]), float(rec["mae"]))
            except ValueError:
                raise UserInputError(f"{path}:{number}: pred_len must be an integer or Avg and mse/mae numbers, "
                                     f"got {horizon_text!r}, {rec['mse']!r}, {rec['mae']!r}") from None
            for key in RECIPES.dataset_keys(rec["dataset"]):
                table[(key, name_key(rec[name_col]), horizon)] = values
    return table


def _reference_for(reference: dict, dataset: str, row: str, pred_len: int) -> tuple[float, float] | None:
    for key in RECIPES.dataset_keys(dataset):
        hit = reference.get((key, name_key(row), pred_len))
        if hit is not None:
            return hit
    return None


def mark_best(values: Sequence[float | None], higher_is_better: bool = False) -> list[Cell]:
    """Cells with 'best' on the smallest value (the largest when `higher_is_better`) and 'second' on the
    next distinct one, judged at the printed precision (ties share a mark)."""
    rounded = [None if v is None else round(v, DECIMALS) for v in values]
    distinct = sorted({v for v in rounded if v is not None}, reverse=higher_is_better)
    marks = {distinct[0]: "best"} if distinct else {}
    if len(distinct) > 1:
        marks[distinct[1]] = "second"
    return [Cell(v, marks.get(r, "") if r is not None else "") for v, r in zip(values, rounded, strict=True)]


def mark_with_seeds(values: Sequence[float | None], samples: Sequence[dict], higher_is_better: bool = False
                    ) -> tuple[list[Cell], bool]:
    """Marks of one table line from the means `values` and each row's per-seed values `samples`
    ({seed: value}); returns (cells, tested).

    When every present row has at least two seeds, two rows are *apart* when their means differ at the
    printed precision and Welch's t-test over their seeds gives p < ALPHA. The lowest mean is 'best'
    only when it is apart from every other row; otherwise it and the rows not apart from it are 'tied'
    (within seed noise: nobody wins). 'second' goes to the second-lowest mean when the best is 'best'
    and it is apart from every row after it. With a row of a single seed nothing is tested
    (tested = False) and the marks are `mark_best`'s. higher_is_better: the highest mean is the best."""
    present = [i for i, v in enumerate(values) if v is not None]
    if len(present) < 2 or any(len(samples[i]) < 2 for i in present):
        return mark_best(values, higher_is_better), len(present) < 2
    rounded = {i: round(values[i], DECIMALS) for i in present}
    sign = -1.0 if higher_is_better else 1.0
    order = sorted(present, key=lambda i: (sign * rounded[i], sign * values[i]))

    def apart(i: int, j: int) -> bool:
        p = significance.welch_p(list(samples[i].values()), list(samples[j].values()))
        return rounded[i] != rounded[j] and p is not None and p < significance.ALPHA

    cells = [Cell(v) for v in values]
    best, rest = order[0], order[1:]
    tied = [i for i in rest if not apart(i, best)]
    if tied:
        for i in [best, *tied]:
            cells[i].mark = "tied"
        return cells, True
    cells[best].mark = "best"
    if rest and all(apart(rest[0], j) for j in rest[1:]):
        cells[rest[0]].mark = "second"
    return cells, True


def _competition_ranks(values: Sequence[float | None], higher_is_better: bool = False) -> list[int | None]:
    """Rank 1 = smallest (largest when `higher_is_better`) at the printed precision; ties share the lowest
    rank (1, 1, 3)."""
    sign = -1.0 if higher_is_better else 1.0
    rounded = [None if v is None else sign * round(v, DECIMALS) for v in values]
    present = [v for v in rounded if v is not None]
    return [None if v is None else 1 + sum(u < v for u in present) for v in rounded]


def _orders(runs: list[RunResult], config: dict, failed: Sequence[dict] = ()
            ) -> tuple[list[str], list[str], list[int]]:
    """Row, dataset and horizon order: the runner's order first, then anything else found."""
    def ordered(preferred: Sequence, seen: Sequence) -> list:
        out = [x for x in preferred if x in seen]
        return out + [x for x in dict.fromkeys(seen) if x not in out]

    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs] + [f["row"] for f in failed])
    datasets = ordered(config.get("data", []), [r.dataset for r in runs])
    horizons = sorted({r.pred_len for r in runs})
    return rows, datasets, horizons


def _seed_order(seed: int | None) -> tuple[bool, int]:
    return (seed is not None, seed or 0)


def _first_run(runs: list[RunResult], row: str, dataset: str, pred_len: int) -> RunResult | None:
    """The run of (row, dataset, horizon) with the lowest seed (forecast plots, efficiency)."""
    found = [r for r in runs if (r.row, r.dataset, r.pred_len) == (row, dataset, pred_len)]
    return min(found, key=lambda r: _seed_order(r.seed)) if found else None


def cell_samples(runs: list[RunResult], rows: list[str], datasets: list[str]
                 ) -> dict[tuple[str, int | str, str], list[dict]]:
    """(dataset, horizon or 'Avg', metric) -> per row {seed: value} ({} when missing).

    A row's 'Avg' sample of a seed is its mean over the dataset's horizons, for the seeds that have
    every horizon."""
    by_key: dict[tuple[str, str, int], dict] = {}
    for r in runs:
        by_key.setdefault((r.row, r.dataset, r.pred_len), {})[r.seed] = r
    samples: dict[tuple[str, int | str, str], list[dict]] = {}
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        for metric in ("mse", "mae"):
            for h in horizons:
                samples[(dataset, h, metric)] = [
                    {seed: getattr(run, metric) for seed, run in sorted(
                        by_key.get((row, dataset, h), {}).items(), key=lambda item: _seed_order(item[0]))}
                    for row in rows]
            averages = []
            for i in range(len(rows)):
                per_h = [samples[(dataset, h, metric)][i] for h in horizons]
                complete = [s for s in per_h[0] if all(s in d for d in per_h)] if per_h else []
                averages.append({s: float(np.mean([d[s] for d in per_h])) for s in complete})
            samples[(dataset, AVG, metric)] = averages
    return samples


def accuracy_cells(runs: list[RunResult], rows: list[str], datasets: list[str]
                   ) -> dict[tuple[str, int | str, str], list[float | None]]:
    """(dataset, horizon or 'Avg', metric) -> one value per row (None when missing): the mean over the
    row's seeds (its single run's value without --seeds).

    The horizon average of a model is taken only when it has every horizon the dataset has, so
    a failed run never makes an average look better."""
    samples = cell_samples(runs, rows, datasets)
    cells: dict[tuple[str, int | str, str], list[float | None]] = {}
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        for metric in ("mse", "mae"):
            for h in horizons:
                cells[(dataset, h, metric)] = [float(np.mean(list(d.values()))) if d else None
                                               for d in samples[(dataset, h, metric)]]
            cells[(dataset, AVG, metric)] = [
                _mean([cells[(dataset, h, metric)][i] for h in horizons]) for i in range(len(rows))]
    return cells


def _fmt(value: float | None, mark: str = "", std: float | None = None, n: int | None = None) -> str:
    """A table number: `mean ± std` when std is given, `(n=k)` when n is given, then the mark."""
    if value is None:
        return "—"
    text = f"{value:.{DECIMALS}f}"
    if std is not None:
        text += f" ± {std:.{DECIMALS}f}"
    if n is not None:
        text += f" (n={n})"
    return {"best": f"**{text}**", "second": f"_{text}_", "tied": f"≈{text}"}.get(mark, text)


def _pct(ours: float | None, ref: float | None) -> str:
    if ours is None or ref is None or ref == 0:
        return "—"
    return f"{100.0 * (ours - ref) / ref:+.1f}%"


def _average_ranks(cells: dict, rows: list[str], datasets: list[str]) -> dict[str, list[float | None]]:
    """Per metric and row: the mean over datasets of the row's rank on the horizon average (None: unranked
    everywhere)."""
    ranks: dict[str, list[float | None]] = {}
    for metric in ("mse", "mae"):
        per_dataset = [_competition_ranks(cells[(dataset, AVG, metric)]) for dataset in datasets]
        ranked = [[r[i] for r in per_dataset if r[i] is not None] for i in range(len(rows))]
        ranks[metric] = [float(np.mean(r)) if r else None for r in ranked]
    return ranks


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

    samples: dict[tuple[str, int | str, str], list[dict]]
    marks: dict[tuple[str, int | str, str], list[Cell]]
    tested: dict[tuple[str, int | str, str], bool]
    #: True when some cell has two or more seeds (mean ± std and the tests are shown)
    seeded: bool
    #: the most frequent number of seeds of a present (dataset, horizon) cell
    common_n: int
    seeds: list[int | None]
    focus: str


def seed_view(runs: list[RunResult], rows: list[str], datasets: list[str], cells: dict,
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
    seeds = sorted({r.seed for r in runs}, key=_seed_order)
    return SeedView(samples, marks, tested, seeded, common_n, seeds, chosen)


def _cell_text(cell: Cell, sample: dict, view: SeedView) -> str:
    if not view.seeded or cell.value is None:
        return _fmt(cell.value, cell.mark)
    std = significance.summarize(list(sample.values())).std if sample else None
    return _fmt(cell.value, cell.mark, std, None if len(sample) == view.common_n else len(sample))


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


def _p(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3g}"


def _rel(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{100.0 * value:+.1f}%"


def _seed_section(view: SeedView, rows: list[str], datasets: list[str], plot: str = "seed_differences.png"
                  ) -> list[str]:
    """Markdown of the paired comparison of the focus row with every other row (several seeds), or the
    statement that significance cannot be assessed (one seed per cell); `plot` names its figure."""
    if not view.seeded:
        return ["## Seeds", "",
                "Each cell is a single training run (one seed), so whether a difference between models exceeds "
                "the variation between seeds **cannot be assessed**; retraining with another seed can move a "
                "test MSE by more than the gaps between models. Run the comparison with `--seeds S1 S2 S3` "
                "for mean ± standard deviation and significance tests.", ""]
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
        interval = "—" if math.isnan(pc.low) else f"[{_rel(pc.low)}, {_rel(pc.high)}]"
        md.append(f"| {other} | {pc.n} | {pc.wins} | {pc.losses} | {pc.ties} | {_rel(pc.mean_relative)} | "
                  f"{interval} | {_p(pc.wilcoxon_p)} | {_p(pc.ttest_p)} | {noise} |")
    cells = sorted({c for by_cell in differences.values() for c in by_cell},
                   key=lambda c: (datasets.index(c[0]), c[1]))
    md += ["", "### Per cell", "",
           f"Δ of the seed means, (mean {view.focus} − mean other) / mean other, with the 95 % interval of Welch's "
           "t-test over the seeds divided by the other row's mean. ≈: within seed noise (Welch p ≥ 0.05, the "
           f"interval contains 0). Plotted in `{plot}`.", "",
           "| Dataset | H | " + " | ".join(f"vs {o}" for o in differences) + " |",
           "|---|---|" + "---|" * len(differences)]
    for dataset, h in cells:
        texts = []
        for by_cell in differences.values():
            d = by_cell.get((dataset, h))
            if d is None:
                texts.append("—")
            elif d.p is None:
                texts.append(f"{_rel(d.relative)} (one seed: untested)")
            else:
                texts.append(f"{'≈ ' if d.within_noise else ''}{_rel(d.relative)} [{_rel(d.low)}, {_rel(d.high)}]")
        md.append(f"| {dataset} | {h} | " + " | ".join(texts) + " |")
    return [*md, ""]


def _conditions(config: dict, runs: list[RunResult], failed: list[dict]) -> list[str]:
    """Markdown lines stating how the numbers were produced (commands, overrides, machine, time)."""
    lines = []
    invocations = config.get("invocations", [])
    for inv in invocations:
        overrides = []
        if inv.get("epochs") is not None:
            overrides.append(f"`--train_epochs {inv['epochs']}` (scripts' epochs overridden)")
        if inv.get("patience") is not None:
            overrides.append(f"`--patience {inv['patience']}`")
        if inv.get("extra"):
            overrides.append(f"`{' '.join(inv['extra'])}`")
        if inv.get("seeds"):
            overrides.append(f"`--seeds {' '.join(map(str, inv['seeds']))}` (one run per seed)")
        lines.append(f"Runner: `{inv['command']}`; overrides for the runs it started: "
                     + (", ".join(overrides) if overrides else "none") + ".")
    if invocations:
        lines.append("Each model uses its recipe from `compare/recipes.py` (the settings of its `scripts/`: same "
                     "data, splits, seed and evaluation) plus the overrides of the invocation that ran it; `table.csv` has the epochs "
                     "each run trained.")
    if any(inv.get("seeds") for inv in invocations):
        lines.append("With `--seeds`, each seed is a run of its own: run.py's `--seed S` replaces the recipe's seed "
                     "and `_sS` ends its model_id, so its setting differs from the other seeds'.")
    for row in config.get("rows", []):
        if row.get("flags"):
            lines.append(f"Variant **{row['name']}** = {row['base']} recipe + `{' '.join(row['flags'])}`.")
    # One line per machine as printed: invocations that differ only in fields not shown (the kernel build in
    # `platform`) share it, and the count says how many invocations ran there.
    machine_counts = Counter(
        f"{m.get('processor')} ({m.get('cpu_count')} CPUs, torch {m.get('torch')}, {m.get('torch_threads')} torch "
        f"thread(s)" + (f", GPU {m['gpu']}" if m.get("gpu") else "") + ")"
        for m in (inv.get("machine") for inv in invocations) if m)
    for shown, count in machine_counts.items():
        lines.append(f"Runs executed on {shown}: {count} invocation{'s' if count > 1 else ''}.")
    seconds = [r.extra.get("seconds") for r in runs if r.extra.get("seconds") is not None]
    if seconds:
        lines.append(f"{len(runs)} finished runs, {sum(seconds) / 3600:.2f} h of run wall time in total.")
    epochs = sorted({r.epochs_run for r in runs if r.epochs_run is not None})
    if epochs:
        lines.append(f"Epochs actually run (early stopping included): {', '.join(map(str, epochs))}.")
    if failed:
        lines.append(f"{len(failed)} runs failed and are shown as —; see *Failed runs* below.")
    return lines


def _units(runs: list[RunResult], config: dict) -> str:
    inverse = any(inv.get("inverse") for inv in config.get("invocations", [])) or any(
        "--inverse" in (r.argv or []) for r in runs)
    return "original units (--inverse)" if inverse else "standardised"


def _is_tall(layout: str, rows: Sequence[str]) -> bool:
    """Whether the accuracy table puts a model per line: layout "tall", or "auto" with TALL_FROM+ rows."""
    if layout not in LAYOUTS:
        raise UserInputError(f"table layout {layout!r} is not one of {', '.join(LAYOUTS)}: pass one of those")
    return layout == "tall" or (layout == "auto" and len(rows) >= TALL_FROM)


def _horizons(cells: dict, dataset: str) -> list[int | str]:
    return [h for (d, h, m) in cells if d == dataset and m == "mse"]


@dataclass
class GridLine:
    """One (dataset, horizon) line of an accuracy table: its label cells and `cells[row][metric]` texts."""

    label: tuple[str, ...]
    cells: list[list[str]]


def markdown_grid(label_heads: Sequence[str], rows: Sequence[str], metric_labels: Sequence[str],
                  lines: Sequence[GridLine], summaries: Sequence[tuple[str, list[list[str]]]], tall: bool
                  ) -> list[str]:
    """Markdown lines of a table of `lines[k].cells[row][metric]` plus per-row summaries (name,
    `cells[row][metric]`, e.g. the average rank).

    Wide: a line per GridLine (its label in the `label_heads` columns) with a column per (row, metric), then a
    line per summary. Tall, the transpose: a line per row with a column per (GridLine, metric), then a column
    per (summary, metric)."""
    if not tall:
        md = ["| " + " | ".join([*label_heads, *(f"{r} {m}" for r in rows for m in metric_labels)]) + " |",
              "|" + "---|" * len(label_heads) + "---:|" * (len(rows) * len(metric_labels))]
        md += ["| " + " | ".join([*line.label, *(c for per_row in line.cells for c in per_row)]) + " |"
               for line in lines]
        md += [f"| {name} | " + "| " * (len(label_heads) - 1) + " | ".join(c for per_row in cells for c in per_row)
               + " |" for name, cells in summaries]
        return md
    heads = [f"{' '.join(line.label)} {m}" for line in lines for m in metric_labels]
    heads += [f"{name} {m}" for name, _ in summaries for m in metric_labels]
    md = ["| " + " | ".join(["Model", *heads]) + " |", "|---|" + "---:|" * len(heads)]
    for i, row in enumerate(rows):
        cells = [c for line in lines for c in line.cells[i]] + [c for _, per_row in summaries for c in per_row[i]]
        md.append("| " + " | ".join([row, *cells]) + " |")
    return md


def _accuracy_grid(rows: list[str], datasets: list[str], cells: dict, view: SeedView, tall: bool
                   ) -> tuple[list[str], bool]:
    """The MSE / MAE table as markdown lines, and whether a line's marks went untested (†). The tall layout
    leaves out the Avg of a dataset with a single horizon (it would repeat that horizon); the first-place
    count counts the lines shown."""
    metrics = ("mse", "mae")
    lines, shown, untested = [], [], False
    for dataset in datasets:
        horizons = _horizons(cells, dataset)
        for h in horizons:
            if tall and h == AVG and len(horizons) == 2:
                continue
            dagger = view.seeded and not view.tested[(dataset, h, "mse")]
            untested |= dagger
            shown.append((dataset, h))
            lines.append(GridLine((dataset, f"{h}{' †' if dagger else ''}"), [
                [_cell_text(view.marks[(dataset, h, m)][i], view.samples[(dataset, h, m)][i], view) for m in metrics]
                for i in range(len(rows))]))
    ranks = _average_ranks(cells, rows, datasets)
    rank_cells = [["—" if ranks[m][i] is None else f"{ranks[m][i]:.1f}" for m in metrics] for i in range(len(rows))]
    first_cells = [[str(sum(view.marks[(d, h, m)][i].mark == "best" for d, h in shown)) for m in metrics]
                   for i in range(len(rows))]
    return markdown_grid(("Dataset", "H"), rows, ("MSE", "MAE"), lines,
                         [("Avg rank", rank_cells), ("1st count", first_cells)], tall), untested


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _train_epochs(argv: Sequence[str] | None) -> int | None:
    try:
        return int(parse_run_args(argv).train_epochs) if argv else None
    except UserInputError:
        return None


def _best_so_far(curve: Sequence[dict]) -> str:
    """'<validation> (epoch e) | <test>' at the best validation epoch of `curve` so far: the highest
    validation accuracy where the task early-stops on it (classification), else the lowest validation loss."""
    if not curve:
        return "— | —"
    if "vali_accuracy" in curve[0]:
        best = max(curve, key=lambda e: e["vali_accuracy"])
        return f"accuracy {best['vali_accuracy']:.4f} (epoch {best['epoch']}) | accuracy {best['test_accuracy']:.4f}"
    best = min(curve, key=lambda e: e["vali"])
    return f"{best['vali']:.4f} (epoch {best['epoch']}) | {best['test']:.4f}"


def run_status_sections(failed: Sequence[dict], unfinished: Sequence[dict], axis_column: str = "H",
                        axis_field: str = "pred_len") -> list[str]:
    """Markdown sections for the runs without a result: *Failed runs* (reason, log) and *Unfinished runs*
    (latest attempt interrupted; where the runner read its last.pth: the epoch it stopped in, the epochs
    finished and, at the best validation epoch so far, the validation and test losses, which the finished
    run reports unless a later epoch validates better). `axis_field` names the manifest field shown under
    `axis_column`."""
    md: list[str] = []

    def where(entry: dict) -> str:
        seed = f" (seed {entry['seed']})" if entry.get("seed") is not None else ""
        return f"| {entry['row']} | {entry['dataset']} | {entry.get(axis_field)}{seed} |"

    if failed:
        md += ["## Failed runs", "", f"| Model | Dataset | {axis_column} | Reason | Log |", "|---|---|---|---|---|"]
        for entry in failed:
            md.append(f"{where(entry)} {_cell(entry.get('error') or 'no result recorded')} | "
                      f"{entry.get('log') or '—'} |")
        md.append("")
    if unfinished:
        md += ["## Unfinished runs", "",
               "Stopped by a time budget or a signal; the same command resumes them from `last.pth` while `runs/` "
               "survives, else restarts them. The test loss at the best validation epoch so far is not a result: "
               "it is what the finished run reports only if no later epoch validates better.", "",
               f"| Model | Dataset | {axis_column} | Stopped in | Epochs finished | Best validation so far | "
               "Test loss there | Log |", "|---|---|---|---|---:|---:|---:|---|"]
        for entry in unfinished:
            epochs = _train_epochs(entry.get("argv"))
            of = f" of {epochs}" if epochs else ""
            progress = entry.get("progress")
            if not progress:
                note = "no last.pth" if progress == {} else "not recorded (runner older than 2026-11-28)"
                md.append(f"{where(entry)} {note} | — | — | — | {entry.get('log') or '—'} |")
                continue
            for setting in entry.get("settings") or []:
                if setting not in progress:
                    continue
                state = progress[setting]
                md.append(f"{where(entry)} epoch {state['epoch']}{of}, batch {state['batch']} | "
                          f"{len(state['curve'])} | {_best_so_far(state['curve'])} | {entry.get('log') or '—'} |")
        md.append("")
    return md


def write_tables(out: Path, runs: list[RunResult], failed: list[dict], config: dict,
                 reference: dict | None, reference_name: str = "",
                 focus: str | Sequence[str] | None = None, layout: str = "auto",
                 unfinished: Sequence[dict] = ()) -> tuple[Path, Path]:
    """Write `table.md` and `table.csv` into `out`; returns their paths.

    focus: the row or rows each compared with every other one over seeds (default: the first row).
    unfinished: the manifest entries of interrupted runs (`latest_interrupted`), listed after the tables.
    layout: "wide" (a line per dataset and horizon, two columns per model), "tall" (a line per model, two
    columns per dataset and horizon) or "auto" (tall from TALL_FROM models on)."""
    rows, datasets, _ = _orders(runs, config, failed)
    cells = accuracy_cells(runs, rows, datasets)
    focused = focus_rows(focus, rows)
    view = seed_view(runs, rows, datasets, cells, focused[0])
    units = _units(runs, config)

    md = [f"# Forecasting accuracy ({units} MSE / MAE, lower is better)", ""]
    md += _conditions(config, runs, failed)
    table, untested = _accuracy_grid(rows, datasets, cells, view, _is_tall(layout, rows))
    md += ["", *table, ""]
    if view.seeded:
        seeds = ", ".join("?" if s is None else str(s) for s in view.seeds)
        md += [f"Cells: mean ± sample standard deviation over n = {view.common_n} seeds (seeds {seeds}); a cell "
               "with another number of seeds shows (n=k). Marks and ranks use the means. **Bold**: the lowest "
               "mean, lower than every other row by Welch's t-test over the seeds (p < 0.05); _underline_: the "
               "second-lowest mean, separated in the same way from the best and from every row after it; ≈: "
               "within seed noise, i.e. the lowest mean and every row whose difference from it has Welch "
               "p ≥ 0.05 (its 95 % interval contains 0) or is invisible at 3 decimals: no row wins that line. "
               + ("†: a model of that line has a single seed (tall layout: of that column), so its marks "
                  "follow the means untested. " if untested else "")
               + "*Avg*: mean over the dataset's horizons (only when the model has all of them); its ± and test "
               "use the per-seed horizon averages of the seeds that have every horizon. *Avg rank*: mean over "
               "datasets of the model's rank on the horizon-averaged mean (the paper's Table 2 rule; ties at "
               "3 decimals share the lowest rank). *1st count*: lines (horizons and Avg) where the model is bold, "
               "i.e. a win beyond seed noise.", ""]
    else:
        md += ["**Bold**: best, _underline_: second best in the row (ties at 3 decimals share the mark). "
               "*Avg*: mean over the dataset's horizons (only when the model has all of them). "
               "*Avg rank*: mean over datasets of the model's rank on the horizon-averaged metric (the paper's "
               "Table 2 rule; ties share the lowest rank). *1st count*: rows (horizons and Avg) where the model "
               "is best.", ""]
    for k, row in enumerate(focused if view.seeded else focused[:1]):
        md += _seed_section(replace(view, focus=row), rows, datasets, seed_plot_name(row, k == 0))

    horizons_of = {d: sorted({r.pred_len for r in runs if r.dataset == d}) for d in datasets}
    csv_rows: list[dict] = []
    by_key: dict[tuple[str, str, int], list[RunResult]] = {}
    for r in sorted(runs, key=lambda r: _seed_order(r.seed)):
        by_key.setdefault((r.row, r.dataset, r.pred_len), []).append(r)
    for (dataset, h, metric), values in cells.items():
        if metric != "mse":
            continue
        mse_ranks = _competition_ranks(values)
        mae_values = cells[(dataset, h, "mae")]
        mae_ranks = _competition_ranks(mae_values)
        for i, row in enumerate(rows):
            ref = _reference_value(reference, dataset, row, h, horizons_of[dataset]) if reference else None
            found = by_key.get((row, dataset, h), []) if h != AVG else []
            mse_sample, mae_sample = view.samples[(dataset, h, "mse")][i], view.samples[(dataset, h, "mae")][i]

            def per_run(name: str, found: list[RunResult] = found) -> object:
                # One value as before; the seeds' values joined by ';' in seed order with several seeds.
                got = [getattr(r, name) for r in found if getattr(r, name) is not None]
                return None if not got else got[0] if len(found) == 1 else ";".join(map(str, got))

            csv_rows.append({
                "dataset": dataset, "pred_len": h if h != AVG else "avg", "model": row,
                "mse": values[i], "mae": mae_values[i], "mse_rank": mse_ranks[i], "mae_rank": mae_ranks[i],
                "ref_mse": ref[0] if ref else None, "ref_mae": ref[1] if ref else None,
                "mse_diff_pct": _diff(values[i], ref[0] if ref else None),
                "mae_diff_pct": _diff(mae_values[i], ref[1] if ref else None),
                "epochs_run": per_run("epochs_run"), "best_epoch": per_run("best_epoch"),
                "train_seconds": per_run("train_seconds"), "params": found[0].params if found else None,
                "settings": ";".join(s for r in found for s in r.settings) if found else None,
                "n_seeds": len(mse_sample), "seeds": ";".join(str(s) for s in mse_sample),
                "mse_std": significance.summarize(list(mse_sample.values())).std if mse_sample else None,
                "mae_std": significance.summarize(list(mae_sample.values())).std if mae_sample else None,
                "mse_mark": view.marks[(dataset, h, "mse")][i].mark, "mae_mark": view.marks[(dataset, h, "mae")][i].mark,
            })

    if reference:
        md += [f"## Reference: {reference_name}", "",
               "Δ = (ours − reference) / reference; negative means we measured a lower error.", ""]
        for row in rows:
            lines = []
            for dataset in datasets:
                for h in _horizons(cells, dataset):
                    ref = _reference_value(reference, dataset, row, h, horizons_of[dataset])
                    if ref is None:
                        continue
                    i = rows.index(row)
                    ours_mse, ours_mae = cells[(dataset, h, "mse")][i], cells[(dataset, h, "mae")][i]
                    lines.append(f"| {dataset} | {h} | {_fmt(ours_mse)} | {ref[0]:.3f} | {_pct(ours_mse, ref[0])} "
                                 f"| {_fmt(ours_mae)} | {ref[1]:.3f} | {_pct(ours_mae, ref[1])} |")
            if lines:
                md += [f"### {row}", "", "| Dataset | H | MSE | ref MSE | Δ MSE | MAE | ref MAE | Δ MAE |",
                       "|---|---|---:|---:|---:|---:|---:|---:|", *lines, ""]
    md += run_status_sections(failed, unfinished)

    md_path, csv_path = out / "table.md", out / "table.csv"
    md_path.write_text("\n".join(md))
    fields = list(csv_rows[0]) if csv_rows else ["dataset", "pred_len", "model", "mse", "mae"]
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for rec in csv_rows:
            writer.writerow({k: "" if v is None else v for k, v in rec.items()})
    return md_path, csv_path


def _reference_value(reference: dict | None, dataset: str, row: str, h: int | str,
                     horizons: Sequence[int] = ()) -> tuple[float, float] | None:
    """Reference (mse, mae) at horizon h. For Avg, only when the reference covers exactly our
    `horizons` (an average over other horizons is not comparable): its Avg row, else the mean."""
    if not reference:
        return None
    if h != AVG:
        return _reference_for(reference, dataset, row, int(h))
    keys, model = RECIPES.dataset_keys(dataset), name_key(row)
    by_h = {k[2]: v for k, v in reference.items() if k[0] in keys and k[1] == model}
    numeric = {k: v for k, v in by_h.items() if k != AVG}
    if not numeric or set(numeric) != set(horizons):
        return None
    if AVG in by_h:
        return by_h[AVG]
    return float(np.mean([v[0] for v in numeric.values()])), float(np.mean([v[1] for v in numeric.values()]))


def _diff(ours: float | None, ref: float | None) -> float | None:
    if ours is None or ref is None or ref == 0:
        return None
    return round(100.0 * (ours - ref) / ref, 3)


def _colors(rows: list[str]) -> dict[str, tuple]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {row: cmap(i % 10) for i, row in enumerate(rows)}


def _finish_figure(fig, handles: list, ncols: int, title: str, path: Path, dpi: int = 120) -> Path:
    """Title `fig`, put the legend of `handles` below the panels (two columns per panel column, so it is
    never cut off), save it to `path` and close it."""
    import matplotlib.pyplot as plt

    fig.suptitle(title)
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
               ncol=max(1, min(len(handles), 2 * ncols)))
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_mse_by_horizon(out: Path, runs: list[RunResult], config: dict, reference: dict | None) -> Path:
    """`mse_by_horizon.png`: one panel per dataset, one line per model (the mean over seeds, error bars
    ± one sample standard deviation when a cell has several), reference values as x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows, datasets, _ = _orders(runs, config)
    colors = _colors(rows)
    samples = cell_samples(runs, rows, datasets)
    ncols = min(len(datasets), 3) or 1
    nrows = math.ceil(len(datasets) / ncols) or 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.0 * nrows), squeeze=False)
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        xs = range(len(horizons))
        for i, row in enumerate(rows):
            summaries = [significance.summarize(list(samples[(dataset, h, "mse")][i].values()))
                         if samples[(dataset, h, "mse")][i] else None for h in horizons]
            ys = [np.nan if m is None else m.mean for m in summaries]
            errors = [np.nan if m is None or m.std is None else m.std for m in summaries]
            ax.errorbar(xs, ys, yerr=errors, marker="o", color=colors[row], label=row, capsize=3)
            if reference:
                refs = [(_reference_for(reference, dataset, row, h) or (np.nan,))[0] for h in horizons]
                ax.plot(xs, refs, linestyle="none", marker="x", markersize=8, color=colors[row])
        ax.set_xticks(list(xs), [str(h) for h in horizons])
        ax.set_title(dataset)
        ax.set_xlabel("horizon H (steps)")
        ax.set_ylabel(f"test MSE ({_units(runs, config)})")
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colors[r], marker="o", label=r) for r in rows]
    if reference:
        handles.append(Line2D([], [], color="grey", marker="x", linestyle="none", label="reference (same colour)"))
    seeded = any(len(d) > 1 for line in samples.values() for d in line)
    return _finish_figure(fig, handles, ncols, "Test MSE by horizon" + (" (mean ± std over seeds)" if seeded else ""),
                          out / "mse_by_horizon.png")


@dataclass
class LossCurve:
    """One run's per-epoch losses (its record's `curve`) as drawn in `learning_curves.png`."""

    panel: str  # e.g. "ETTh1, H = 96"
    row: str
    epochs: list[dict]  # {"epoch", "train", "vali", "test", ...} per finished epoch
    best_epoch: int | None = None


def forecast_loss_curves(runs: list[RunResult], config: dict) -> list[LossCurve]:
    """The runs whose record has a curve, panel by panel in the report's dataset and horizon order."""
    _, datasets, _ = _orders(runs, config)
    ordered = sorted((r for r in runs if r.curve), key=lambda r: (datasets.index(r.dataset), r.pred_len))
    return [LossCurve(f"{r.dataset}, H = {r.pred_len}", r.row, r.curve, r.best_epoch) for r in ordered]


def plot_learning_curves(out: Path, curves: Sequence[LossCurve], rows: Sequence[str], ylabel: str) -> list[Path]:
    """`learning_curves.png`: one panel per `panel` (first-seen order), per run its validation loss (solid)
    and test loss (dashed) by epoch, a dot on the best validation epoch (the weights that are scored);
    colours follow `rows`. Nothing is written without curves."""
    if not curves:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    shown = [row for row in rows if any(c.row == row for c in curves)]
    colors = _colors(shown)
    panels = list(dict.fromkeys(c.panel for c in curves))
    ncols = min(len(panels), 4)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        for curve in (c for c in curves if c.panel == panel):
            epochs = [e["epoch"] for e in curve.epochs]
            vali = [e["vali"] for e in curve.epochs]
            ax.plot(epochs, vali, color=colors[curve.row], linewidth=1.4)
            ax.plot(epochs, [e["test"] for e in curve.epochs], color=colors[curve.row], linewidth=1.0,
                    linestyle="--", alpha=0.7)
            if curve.best_epoch in epochs:
                ax.plot(curve.best_epoch, vali[epochs.index(curve.best_epoch)], marker="o", color=colors[curve.row])
        ax.set_title(panel)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colors[r], label=r) for r in shown]
    handles += [Line2D([], [], color="grey", label="validation"),
                Line2D([], [], color="grey", linestyle="--", label="test"),
                Line2D([], [], color="grey", marker="o", linestyle="none", label="scored epoch")]
    return [_finish_figure(fig, handles, ncols, "Loss by epoch", out / "learning_curves.png", dpi=110)]


def plot_seed_differences(out: Path, runs: list[RunResult], config: dict,
                          focus: str | Sequence[str] | None = None) -> list[Path]:
    """Per focus row (`seed_plot_name`): per (dataset, horizon) cell, its relative MSE difference to each
    other row with the 95 % Welch interval over seeds (hollow markers: within seed noise), and the zero
    line. Nothing is written with one seed per cell or a single row."""
    rows, datasets, _ = _orders(runs, config)
    cells = accuracy_cells(runs, rows, datasets)
    focused = focus_rows(focus, rows)
    view = seed_view(runs, rows, datasets, cells, focused[0])
    if not view.seeded or len(rows) < 2:
        return []
    return [_plot_focus_differences(out / seed_plot_name(row, k == 0), replace(view, focus=row), rows, datasets)
            for k, row in enumerate(focused)]


def _plot_focus_differences(path: Path, view: SeedView, rows: list[str], datasets: list[str]) -> Path:
    """One seed-difference figure (see `plot_seed_differences`) of `view.focus`, written to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    differences = focus_differences(view, rows, datasets)
    keys = sorted({c for by_cell in differences.values() for c in by_cell}, key=lambda c: (datasets.index(c[0]), c[1]))
    colors = _colors(rows)
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
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _series_of(true: np.ndarray, channel: int) -> np.ndarray:
    """The test target series of one channel rebuilt from overlapping windows `[N, H, C]`:
    window i covers steps i .. i + H - 1, so s = true[:, 0] followed by the rest of the last window."""
    return np.concatenate([true[:, 0, channel], true[-1, 1:, channel]])  # [N + H - 1]


def plot_forecasts(out: Path, runs: list[RunResult], config: dict, runs_dir: Path,
                   window: int | None = None) -> list[Path]:
    """`forecast_<data>_<H>.png` per dataset and horizon: truth, context and each model's forecast of
    the last channel for the same test window (default: the middle window); with several seeds, each
    row's run of its lowest seed. Where a finished row's pred.npy is gone (runs/ lost, records committed), an
    existing figure is kept rather than redrawn without that row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, datasets, _ = _orders(runs, config)
    colors = _colors(rows)
    units = _units(runs, config)
    paths = []
    for dataset in datasets:
        for h in sorted({r.pred_len for r in runs if r.dataset == dataset}):
            path = out / f"forecast_{dataset}_{h}.png"
            arrays, missing = {}, []
            for row in rows:
                run = _first_run(runs, row, dataset, h)
                if run is None:
                    continue
                folder = runs_dir / "results" / run.settings[0]
                if not (folder / "pred.npy").is_file():
                    missing.append(row)
                    continue
                arrays[row] = (np.load(folder / "pred.npy", mmap_mode="r"), np.load(folder / "true.npy", mmap_mode="r"))
            if missing and path.is_file():
                # A fresh clone has the records but not runs/: redrawing would drop the finished rows whose
                # forecasts only the committed figure still shows.
                logger.warning("%s kept as it is: no pred.npy in %s for %s", path, runs_dir / "results",
                               ", ".join(missing))
                continue
            if missing:
                logger.warning("%s: no pred.npy in %s for %s; drawn without them", path, runs_dir / "results",
                               ", ".join(missing))
            if not arrays:
                continue
            count = min(p.shape[0] for p, _ in arrays.values())
            index = count // 2 if window is None else min(max(window, 0), count - 1)
            reference_row = next(iter(arrays))
            truth_all = np.asarray(arrays[reference_row][1][: count])
            for row, (_, true) in arrays.items():
                if not np.allclose(np.asarray(true[index, :, -1]), truth_all[index, :, -1], atol=1e-5):
                    logger.warning("%s H=%d: %s's ground truth differs from %s's at window %d; its test "
                                   "windows are not aligned with the others", dataset, h, row, reference_row, index)
            series = _series_of(truth_all, -1)
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
            ax.set_ylabel(f"value ({units})")
            ax.grid(alpha=0.3)
            # Below the axes: a legend inside would hide the curves, and wide labels would be cut off.
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False,
                      ncol=min(len(arrays) + 1, 3))
            fig.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(fig)
            paths.append(path)
    return paths


def write_efficiency(out: Path, runs: list[RunResult], config: dict, *, timing: bool = True,
                     steps: int = 3, device: str = "cpu") -> Path:
    """`efficiency.md`: per dataset, each model's parameters and forward FLOPs at every horizon, and
    its train-step time and peak memory at the dataset's shortest horizon (measured here, now)."""
    from compare.efficiency import format_bytes, format_count, measure

    rows, datasets, _ = _orders(runs, config)
    info = machine_info()
    md = ["# Efficiency", "",
          f"Measured by `python -m compare.report` on {info['processor']} ({info['cpu_count']} CPUs, torch "
          f"{info['torch']}, {info['torch_threads']} threads, device {device}). FLOPs: forward pass of one "
          "sample counted by `torch.utils.flop_counter` (matmul/conv/attention only). Train step: forward, "
          "MSE loss, backward and optimiser step at the recipe's batch size on random inputs, median of "
          f"{steps} steps; peak memory = parameters + optimiser state + peak tensors of one step. "
          "*s/epoch*: measured wall time of the actual training runs divided by their epochs.", ""]
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        header = ["Model", *[f"H={h} Params | H={h} FLOPs" for h in horizons],
                  f"Batch | Train step ms (H={horizons[0]}) | Peak memory (H={horizons[0]}) | s/epoch (H={horizons[0]})"]
        lines = []
        shape = None
        for row in rows:
            cols, timed = [], None
            for j, h in enumerate(horizons):
                run = _first_run(runs, row, dataset, h)
                if run is None or not run.argv:
                    cols.append("— | —")
                    continue
                configs = parse_run_args(run.argv)
                shape = shape or f"L = {configs.seq_len}, {configs.enc_in} variates"
                eff = measure(configs, device=device, steps=steps, timing=timing and j == 0, warmup=1)
                cols.append(f"{format_count(eff.params)} | {format_count(eff.flops)}")
                if j == 0:
                    per_epoch = (run.train_seconds / run.epochs_run
                                 if run.train_seconds is not None and run.epochs_run else None)
                    timed = (eff, per_epoch)
            if timed and timed[0].step_ms is not None:
                eff, per_epoch = timed
                tail = (f"{eff.batch_size} | {eff.step_ms:.1f} | {format_bytes(eff.peak_bytes)} | "
                        + ("—" if per_epoch is None else f"{per_epoch:.1f}"))
            else:
                tail = "— | — | — | —"
            lines.append(f"| {row} | {' | '.join(cols)} | {tail} |")
        md += [f"## {dataset} ({shape or 'no recipe recorded'})", "",
               "| " + " | ".join(header) + " |", "|---|" + "---:|" * (2 * len(horizons) + 4), *lines, ""]
    path = out / "efficiency.md"
    path.write_text("\n".join(md))
    return path


def write_report(out: str | Path, *, runs_dir: str | Path | None = None, reference: str | Path | None = None,
                 timing: bool = True, steps: int = 3, window: int | None = None, device: str = "cpu",
                 focus: str | Sequence[str] | None = None, layout: str = "auto") -> list[Path]:
    """Write every report file into `out` from the result files in `runs_dir` (default `out/runs`).

    focus: the row or rows each compared with every other over seeds (default: the runner's --focus, else the
    first row). layout: the accuracy table's, see `write_tables`."""
    out = Path(out)
    runs_dir = Path(runs_dir) if runs_dir else out / RUNS_DIR
    config_path = out / CONFIG_FILE
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    if config.get("task", "long_term_forecast") != "long_term_forecast":
        from compare.task_report import write_task_report

        return write_task_report(out, runs_dir, config, focus=focus if focus is not None else config.get("focus"),
                                 layout=layout)
    runs, failed = load_runs(runs_dir)
    if not runs:
        raise UserInputError(f"no finished runs in {runs_dir}: run `python -m compare --out {out} ...` first")
    if reference is None and config.get("reference"):
        reference = config["reference"]
    ref_table = load_reference(reference) if reference else None
    focus = focus if focus is not None else config.get("focus")
    out.mkdir(parents=True, exist_ok=True)
    unfinished = latest_interrupted(_read_jsonl(runs_dir / MANIFEST_FILE), forecast_key)
    paths = list(write_tables(out, runs, failed, config, ref_table, Path(reference).name if reference else "",
                              focus=focus, layout=layout, unfinished=unfinished))
    paths.append(plot_mse_by_horizon(out, runs, config, ref_table))
    paths += plot_learning_curves(out, forecast_loss_curves(runs, config), _orders(runs, config)[0],
                                  f"loss ({_units(runs, config)})")
    paths += plot_seed_differences(out, runs, config, focus)
    paths += plot_forecasts(out, runs, config, runs_dir, window)
    paths.append(write_efficiency(out, runs, config, timing=timing, steps=steps, device=device))
    # The run records beside the report (runs/ is git-ignored): committing the report commits them, and the
    # runner restores them in a fresh clone, so a table is completed later instead of rerun.
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        if (runs_dir / name).is_file() and (runs_dir / name).resolve() != (out / name).resolve():
            (out / name).write_text((runs_dir / name).read_text())
            paths.append(out / name)
    return paths


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compare.report",
                                description="Tables and plots of a comparison from its result files.")
    p.add_argument("--out", required=True, help="comparison folder (holds compare.json and runs/)")
    p.add_argument("--runs", default=None, help="folder with results.jsonl and results/ (default OUT/runs)")
    p.add_argument("--reference", default=None,
                   help="CSV dataset,pred_len,model,mse,mae of reference numbers (default: the runner's)")
    p.add_argument("--focus", nargs="+", default=None, metavar="ROW",
                   help="row(s) each compared with every other over seeds (default: the runner's --focus, else the "
                        "first row)")
    p.add_argument("--layout", choices=LAYOUTS, default="auto",
                   help=f"accuracy table: a line per dataset and horizon (wide) or per model (tall); auto: tall "
                        f"from {TALL_FROM} models on")
    p.add_argument("--window", type=int, default=None, help="test window of the forecast plots (default: middle)")
    p.add_argument("--no-timing", action="store_true", help="efficiency.md without train-step measurements")
    p.add_argument("--steps", type=int, default=3, help="timed train steps per model")
    p.add_argument("--device", default="cpu", help="device for efficiency measurements (cpu, cuda)")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    args = build_parser().parse_args(argv)
    try:
        paths = write_report(args.out, runs_dir=args.runs, reference=args.reference, timing=not args.no_timing,
                             steps=args.steps, window=args.window, device=args.device, focus=args.focus,
                             layout=args.layout)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in paths:
        logger.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
