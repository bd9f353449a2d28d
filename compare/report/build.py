"""Comparison report from result files only: `python -m compare.report --out DIR`.

Reads what `compare.run.runner` and `run.py` wrote under `DIR/runs/` (`results.jsonl`, the runner's
`compare_runs.jsonl` naming the model row of each setting, `results/<setting>/{pred,true}.npy`) and
`DIR/compare.json` (the invocation), and writes into DIR:

- `table.md` / `table.csv`: MSE and MAE per dataset x horizon plus the horizon average, like the CAPS
  paper's Table 1 (**bold** best, _underline_ second best per row and metric, average rank and
  first-place count per model), and per-model comparisons with reference numbers from a CSV
  (`dataset,pred_len,model,mse,mae`) with the relative difference; `table.csv` holds the same in long
  form (one line per dataset, horizon or `avg`, and model, with ranks, reference and run statistics);
  with reference numbers also `paper_layout.csv` / `paper_layout.tex` and their section in `table.md`: ours,
  the reference's and the difference per model the reference has, in the paper's layout
  (`compare.report.paper_layout`);
  from 9 models on (`--layout`) the markdown table turns to a line per model; below the tables, how the
  numbers were produced (the runner's commands, paths relative to the repository, and the machines);
- with several seeds per cell (`python -m compare --seeds ...`): mean ± sample standard deviation per
  cell, marks and ranks on the means, differences within seed noise marked ≈ and never bolded, and a
  section comparing each focus row (`--focus ROW [ROW ...]`, default the first row) with every other over
  (dataset, horizon, seed) cells (`compare.report.significance` names the tests); with one seed per cell the report
  says that significance cannot be assessed;
- `mse_by_horizon.png`: MSE against horizon, one panel per dataset (mean and ± std over seeds);
- `seed_differences.png` (several seeds only): per cell, the focus row's relative MSE difference to each
  other row with its 95 % Welch interval (`seed_differences_<row>.png` for each further focus row);
- relative to the naive forecasts each run scored on its test windows (`compare.report.naive_scores`), the skill
  against seasonal naive per cell and over cells (`compare.report.skill_scores`), and ranks, win rates and the Friedman /
  Nemenyi test over (dataset, horizon) cells (`compare.report.cell_statistics`), the skill and win rates with 95 %
  bootstrap intervals over the cells (`compare.report.cell_bootstrap`), in `table.md`, with `critical_difference.png`
  and `cell_statistics.json`;
- `forecast_<data>_<H>.png`: ground truth and every model's forecast for the same test window;
- `efficiency.md`: parameters, forward FLOPs, train-step time and peak memory (`compare.grid.efficiency`).

For the paper, every figure is also a PDF (PNGs at print resolution) and every table also LaTeX: `table.tex`
(the accuracy table, booktabs, bold / underline as in the markdown), `efficiency.csv` and `efficiency.tex`
(`utils.report_files`).

A comparison of another task (`python -m compare --task imputation ...`; `compare.json` names it) gets
that task's tables instead (`compare.report.task_report`).

Ties are judged at the printed precision (3 decimals), so equal-looking numbers share a mark and a rank.

The parts live in their own modules, which this one puts together: the run records on disk
(`compare.grid.records`), marks and ranks (`compare.report.ranking`), the table text (`compare.report.markdown`,
`compare.report.forecast_tables`), the cells (`compare.report.forecast_cells`), reference numbers (`compare.report.reference`),
the seeds and focus rows (`compare.report.seeds`), how the numbers were produced (`compare.grid.provenance`) and the
figures (`compare.report.plots`). The names listed in `__all__` stay importable from here.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from compare.grid.efficiency import format_bytes, format_count, measure
from compare.grid.records import (
    CONFIG_FILE,
    MANIFEST_FILE,
    RESULTS_JSONL,
    RUNS_DIR,
    RunResult,
    attempt_seconds,
    copy_records,
    finished_settings,
    forecast_key,
    latest_attempts,
    latest_interrupted,
    load_runs,
    machine_info,
    read_config,
    read_jsonl,
)
from compare.grid.run_args import parse_run_args
from compare.grid.run_state import restore_committed_records
from compare.grid.zero_shot import ZERO_SHOT_TASK
from compare.report.cell_statistics import cell_statistics, write_cell_statistics
from compare.report.forecast_cells import accuracy_cells, cell_samples, first_run, orders, units
from compare.report.forecast_tables import write_tables
from compare.report.markdown import LAYOUTS, TALL_FROM, run_status_sections
from compare.report.plots import (
    LossCurve,
    forecast_loss_curves,
    plot_forecasts,
    plot_learning_curves,
    plot_mse_by_horizon,
    plot_seed_differences,
)
from compare.report.pooled_seeds import pool_folders, pool_note, pool_runs, remember_pool
from compare.report.ranking import Cell, mark_best, mark_with_seeds
from compare.report.reference import load_reference
from compare.report.seeds import focus_rows, resolve_focus, seed_plot_name, seed_view
from compare.report.skill_scores import skill_scores
from compare.report.task_report import write_task_report
from compare.report.zero_shot import apart_section, labelled_focus, zero_shot_view
from utils.cli_parser import OneLineArgumentParser
from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.record_paths import from_record
from utils.report_files import write_table

__all__ = [
    "CONFIG_FILE",
    "MANIFEST_FILE",
    "RESULTS_JSONL",
    "RUNS_DIR",
    "TALL_FROM",
    "Cell",
    "RunResult",
    "UserInputError",
    "accuracy_cells",
    "attempt_seconds",
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
    "plot_forecasts",
    "plot_learning_curves",
    "plot_seed_differences",
    "resolve_focus",
    "run_status_sections",
    "seed_plot_name",
    "seed_view",
    "write_efficiency",
    "write_report",
]

logger = logging.getLogger(__name__)


def _efficiency_line(row: str, runs: list[RunResult], dataset: str, horizons: list[int], *, timing: bool,
                     steps: int, device: str) -> tuple[str, str | None]:
    """One model's `efficiency.md` line on `dataset`, and the data shape its recipe reads (None: no recipe)."""
    cols, timed, shape = [], None, None
    for j, h in enumerate(horizons):
        run = first_run(runs, row, dataset, h)
        if run is None or not run.argv:
            cols.append("— | —")
            continue
        configs = parse_run_args(run.argv)
        if configs.task_name == ZERO_SHOT_TASK:
            # A pretrained model forecasting only: nothing to train, so no train step to time and no epochs (the
            # dataset's heading names the trained rows' look-back; the row's label names its own).
            cols.append(f"{format_count(run.params) if run.params else '—'} | —")
            timed = timed or (None, None)
            continue
        shape = shape or f"L = {configs.seq_len}, {configs.enc_in} variates"
        eff = measure(configs, device=device, steps=steps, timing=timing and j == 0, warmup=1)
        cols.append(f"{format_count(eff.params)} | {format_count(eff.flops)}")
        if j == 0:
            per_epoch = (run.train_seconds / run.epochs_run
                         if run.train_seconds is not None and run.epochs_run else None)
            timed = (eff, per_epoch)
    if timed == (None, None):
        return f"| {row} | {' | '.join(cols)} | — | — | — | not trained |", shape
    per_epoch = timed[1] if timed else None
    epoch_cell = "—" if per_epoch is None else f"{per_epoch:.1f}"
    if timed and timed[0].step_ms is not None:
        eff = timed[0]
        tail = f"{eff.batch_size} | {eff.step_ms:.1f} | {format_bytes(eff.peak_bytes)} | {epoch_cell}"
    else:
        # No measurement now (--no-timing): s/epoch still comes from the run records.
        tail = f"— | — | — | {epoch_cell}"
    return f"| {row} | {' | '.join(cols)} | {tail} |", shape


def _earlier_measurements(path: Path) -> dict[tuple[str, str], list[str]]:
    """(dataset, row) -> the batch, step-time and peak-memory cells of an existing efficiency.md."""
    found: dict[tuple[str, str], list[str]] = {}
    dataset = None
    for line in path.read_text().splitlines() if path.is_file() else []:
        if line.startswith("## "):
            dataset = line[3:].split(" (")[0]
        elif dataset and line.startswith("| ") and not line.startswith(("| Model", "|---")):
            cells = [c.strip() for c in line.strip("|").split("|")]
            found[(dataset, cells[0])] = cells[-4:-1]
    return found


def _keep_earlier(line: str, earlier: list[str] | None) -> str:
    """`line` with the earlier measured batch/step/peak cells where this one measured none."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if earlier is None or cells[-3] != "—" or earlier[1] == "—":
        return line
    cells[-4:-1] = earlier
    return "| " + " | ".join(cells) + " |"


def _efficiency_frame(horizons: list[int], lines: list[str]) -> pd.DataFrame:
    """One dataset's efficiency.md lines as a table: a line per model, columns (H = h, Params | FLOPs) per
    horizon, then (train step at the shortest H, Batch | ms | Peak memory | s/epoch)."""
    step = f"Train step, H = {horizons[0]}"
    columns = [(f"H = {h}", what) for h in horizons for what in ("Params", "FLOPs")]
    columns += [(step, "Batch"), (step, "ms"), (step, "Peak memory"), ("", "s/epoch")]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    return pd.DataFrame([c[1:] for c in cells], index=pd.Index([c[0] for c in cells], name="Model"),
                        columns=pd.MultiIndex.from_tuples(columns), dtype=object)


def write_efficiency(out: Path, runs: list[RunResult], config: dict, *, timing: bool = True,
                     steps: int = 3, device: str = "cpu") -> list[Path]:
    """`efficiency.md`: per dataset, each model's parameters and forward FLOPs at every horizon, and
    its train-step time and peak memory at the dataset's shortest horizon (measured here, now); the same
    tables as `efficiency.csv` and `efficiency.tex` (`utils.report_files.write_table`), one per dataset when
    the datasets' horizons differ. Returns the paths written."""
    rows, datasets, _ = orders(runs, config)
    path = out / "efficiency.md"
    frames: dict[str, pd.DataFrame] = {}
    # Regenerating without timing never drops a figure measured earlier: those cells are kept.
    earlier = _earlier_measurements(path) if not timing else {}
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
        lines, shape = [], None
        for row in rows:
            line, row_shape = _efficiency_line(row, runs, dataset, horizons, timing=timing, steps=steps,
                                               device=device)
            lines.append(_keep_earlier(line, earlier.get((dataset, row))))
            shape = shape or row_shape
        md += [f"## {dataset} ({shape or 'no recipe recorded'})", "",
               "| " + " | ".join(header) + " |", "|---|" + "---:|" * (2 * len(horizons) + 4), *lines, ""]
        frames[dataset] = _efficiency_frame(horizons, lines)
    if earlier:
        md.insert(2, "Train-step cells not measured by the last regeneration (`--no-timing`) are the earlier "
                     "measurement's, kept.")
    path.write_text("\n".join(md))
    caption = ("Parameters and forward FLOPs per horizon; train-step time and peak memory at the shortest "
               f"horizon ({info['processor']}, device {device}); s/epoch: the runs' measured wall time per epoch.")
    by_columns: dict[tuple, dict[str, pd.DataFrame]] = {}
    for dataset, frame in frames.items():
        by_columns.setdefault(tuple(frame.columns), {})[dataset] = frame
    written = [path]
    for k, group in enumerate(by_columns.values()):
        stem = out / ("efficiency" if k == 0 else f"efficiency_{k + 1}")
        written += write_table(pd.concat(group, names=["Dataset"]), stem, caption=caption)
    return written


def write_report(out: str | Path, *, runs_dir: str | Path | None = None, reference: str | Path | None = None,
                 timing: bool = True, steps: int = 3, window: int | None = None, device: str = "cpu",
                 focus: str | Sequence[str] | None = None, layout: str = "auto",
                 pool: Sequence[str] | None = None) -> list[Path]:
    """Write every report file into `out` from the result files in `runs_dir` (default `out/runs`).

    focus: the row or rows each compared with every other over seeds (default: the runner's --focus, else the
    first row). layout: the accuracy table's, see `compare.report.forecast_tables.write_tables`. pool: folders
    whose runs count as further seeds of this folder's cells (`compare.report.pooled_seeds`; None: those
    compare.json remembers, []: none)."""
    out = Path(out)
    runs_dir = Path(runs_dir) if runs_dir else out / RUNS_DIR
    config = read_config(out)
    focus = focus if focus is not None else config.get("focus")
    if config.get("task", "long_term_forecast") != "long_term_forecast":
        if pool:
            raise UserInputError(f"--pool: only long-term forecasting reports pool seeds; {out} is a "
                                 f"{config['task']} comparison")
        return write_task_report(out, runs_dir, config, focus=focus, layout=layout)
    runs, failed = load_runs(runs_dir)
    if not runs:
        raise UserInputError(f"no finished runs in {runs_dir}: run `python -m compare --out {out} ...` first")
    folders = pool_folders(out, pool, config)
    own = {id(r) for r in runs}
    runs, pooled = pool_runs(runs, folders, out)
    if pool is not None:
        remember_pool(out, folders)
    out.mkdir(parents=True, exist_ok=True)
    # Zero-shot runs get their label; those not scored on the trained rows' windows are shown apart, never ranked.
    focus = labelled_focus(focus, runs)
    runs, config, all_runs, all_config, apart = zero_shot_view(runs, config, runs_dir, out)
    if reference is None and config.get("reference"):
        reference = str(from_record(config["reference"]))
    ref_table = load_reference(reference) if reference else None
    unfinished = latest_interrupted(read_jsonl(runs_dir / MANIFEST_FILE), forecast_key)
    paths = list(write_tables(out, runs, failed, config, ref_table, Path(reference).name if reference else "",
                              focus=focus, layout=layout, unfinished=unfinished))
    section = apart_section(apart, sorted({r.row for r in runs if r.extra.get("zero_shot")})) + pool_note(pooled)
    if section:
        table = out / "table.md"
        table.write_text(table.read_text().rstrip("\n") + "\n\n" + "\n".join(section))
    paths += plot_mse_by_horizon(out, runs, config, ref_table)
    paths += plot_learning_curves(out, forecast_loss_curves(runs, config), orders(runs, config)[0],
                                  f"loss ({units(runs, config)})")
    paths += plot_seed_differences(out, runs, config, focus)
    rows, datasets, _ = orders(runs, config, failed)
    paths += write_cell_statistics(out, cell_statistics(accuracy_cells(runs, rows, datasets), rows, datasets),
                                   skill_scores(runs, rows, datasets))
    # The pooled runs' forecasts are in their own folders: the figures show this folder's runs.
    paths += plot_forecasts(out, [r for r in runs if id(r) in own], config, runs_dir, window)
    paths += write_efficiency(out, all_runs, all_config, timing=timing, steps=steps, device=device)
    return paths + copy_records(runs_dir, out)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineArgumentParser(prog="python -m compare.report",
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
    p.add_argument("--pool", nargs="*", default=None, metavar="DIR",
                   help="comparison folders whose runs are further seeds of this folder's cells (same run.py "
                        "flags apart from --seed), counted in every table; kept in compare.json for later "
                        "reports; --pool alone stops pooling")
    return p


def main(argv: list[str] | None = None) -> int:
    """Rewrite the report of --out from its records; 2 with one `error: ...` line on bad input."""
    log_to_stdout()
    args = build_parser().parse_args(argv)
    if args.runs is None:
        # In a fresh clone runs/ is missing (git-ignored): the committed record copies stand in for it.
        restore_committed_records(Path(args.out), Path(args.out) / RUNS_DIR)
    return run_command(lambda: write_report(args.out, runs_dir=args.runs, reference=args.reference,
                                            timing=not args.no_timing, steps=args.steps, window=args.window,
                                            device=args.device, focus=args.focus, layout=args.layout,
                                            pool=args.pool))

