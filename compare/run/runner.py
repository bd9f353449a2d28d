"""Side-by-side comparison runner: `python -m compare --data ETTh1 --models CAPS DLinear ...`.

Every (model row, dataset, horizon) runs `python -u run.py` with its recipe from the table in
`compare/recipes/tables.py` (the table `scripts/` is generated from, so scripts and runner share one source of
truth), in a subprocess whose working directory is `<out>/runs`: all TSLib outputs
(`checkpoints/`, `results/`, `results.jsonl`, ...) stay inside `--out`, and a crash or an
out-of-memory run cannot take the others down. Runs whose settings are already in
`<out>/runs/results.jsonl` are skipped, so an interrupted comparison continues where it stopped.
The runner records each attempt in `<out>/runs/compare_runs.jsonl` and finally writes the report
(`compare.report.build`).

Where runs execute is the executor's choice (`compare.run.executor`): `--executor local` (default) runs
`--jobs N` run.py processes at once on this machine (results and manifest lines are appended atomically;
small models leave a GPU mostly idle, so several runs share it well; each gets `--cpus_per_run` threads,
default `cpu_count // N`, unless OMP_NUM_THREADS is set). `--executor ray [--address auto|HOST:PORT]`
runs the same plan as Ray tasks on a Ray cluster (a local Ray instance without `--address`), each asking
for `--cpus_per_run` CPUs and `--gpus_per_run` GPUs (fractions share a GPU): `compare.run.ray_executor`.

Rows are the table's models and named variants (`--models CAPS LinAttn+RoPE DLinear`). Ad-hoc variants
are extra rows built on another row's recipe: `--variant "NAME=BASE:FLAGS"`, e.g.
`--variant "CAPS (official numerics)=CAPS:--caps_numerics official"`; their `--model_id` gets the
suffix `_<NAME>` so their settings never collide with BASE's.

Seeds: `--seeds 2021 2022 2023` repeats every planned run once per seed, with run.py's `--seed S`
replacing the recipe's. TSLib's setting string has no seed, so the runner appends `_s<S>` to the
`--model_id` (after a variant's tag: `ETTh1_96_96_s2021`, `ETTh1_96_96_LinAttn_s2021`) and the runs of
different seeds never share a checkpoint, result folder or results.jsonl setting. Only runs planned
with `--seeds` get the suffix: without it the recipe's seed is used and the settings are TSLib's, as
before. Seeds are the outermost loop of the plan (every run of the first seed, then the second, ...),
so a time-limited slice completes whole single-seed grids first. With `--itr K` a run's iterations use
seeds S .. S + K - 1 as run.py does. The report (`--focus ROW [ROW ...]`, default the first row) gives mean ±
standard deviation over the seeds and tests the differences (`compare.report.significance`).

Time-limited slices (pre-emptible GPUs, cluster wall-time limits): `--time_budget MINUTES` makes the
invocation end within the budget. Runs get SIGTERM at the *stop time* = budget - `--grace` - 30 s kept
for the report (0 with `--no-report`); run.py then saves `last.pth` and exits, and a run still alive
`--grace` seconds later is killed (its last periodic `last.pth`, if any, is kept). No run starts
when less than `--min-start` seconds remain before the stop time. Stopped runs are recorded as
`interrupted` in the manifest (not failed: the report shows them as — until they finish), the report
of the finished runs is written, one line `grid: F of N runs finished, I interrupted, S not started,
X failed; R remain ...` sums up, and the exit code is `EXIT_UNFINISHED` (3): rerun the same command
with the same `--out` to continue. The 30 s reserve does not bound efficiency.md's train-step
timings: use `--no-timing` (or `--no-report`) inside tight slices. SIGTERM or SIGINT sent to the
runner itself stops the runs the same way at once and skips the report (exit 128 + signal); a
second one kills the runs and aborts. Runs are started in their own session, so a terminal's Ctrl-C
or a `timeout` reaches only the runner, which forwards exactly one SIGTERM to each run (run.py
aborts without saving on a second one).

Continuing: an unfinished run whose `<out>/runs/checkpoints/<setting>/last.pth` exists is restarted
with run.py's `--resume` (bit-for-bit the same result on the CPU as an uninterrupted run); without
one (stopped while still loading) it starts from scratch. The manifest line of each attempt says
whether it was `resumed`; run.py's log of a resumed run is appended to the first one's. Crashes (any other non-zero exit, or a `--run-timeout` kill) are retried
by later invocations until a run has crashed `--max-crashes` times (default 2: one retry); after that
it is listed as given up and not started again unless `--retry-failed` is passed. A run whose folder another
process holds (exp/run_folder.py's lock: the same command started twice, or two invocations sharing an `--out`) is
left to that process: listed as training elsewhere with its pid, not started, not counted as a crash.

Exit codes: 0 the grid is complete; 1 some runs failed (nothing left to run); 2 usage error;
3 (`EXIT_UNFINISHED`) runs remain after the time budget or train in another process (takes precedence over 1);
128 + signal when the runner itself was stopped by SIGTERM/SIGINT.

Protocol: every run gets run.py's `--protocol` of `--protocol` (default `strict`, unlike run.py's `tslib`: a
comparison keeps every TEST sample out of training, early stopping and anomaly thresholds; the runner says so in
its output, `compare.json` records it and every report names it); it comes before a row's flags, so a variant
`--variant "X (TSLib protocol)=X:--protocol tslib"` runs TSLib's protocol beside the others. One `--out` holds
one protocol for the tasks whose results it changes (classification, anomaly detection, M4); long-term
forecasting and imputation compute the same under both, so their finished runs count under either.

Other tasks: `--task imputation|anomaly_detection|classification|short_term_forecast` (`compare.grid.tasks`)
plans from `TASK_RECIPES` instead: the horizon axis becomes the task's (imputation's `--mask_rates`, each
the block of that rate; else `--blocks`, default every block of the model's recipe), everything else above
holds. The manifest names such a run by `task` and `axis` (instead of `pred_len`), `compare.json` records the
task (one `--out` holds one task) and the report is the task's (`compare.report.task_report`). The planned setting
string has the lengths the experiment sets before run.py makes it (M4's from the seasonal pattern,
classification's seq_len from the .ts files), so finished runs are recognised. Classification runs carry the
variant tag and seed suffix in `--des`, since the UEA loader reads `<model_id>_TRAIN.ts`. Missing data is a
one-line error with the fetch command or what to copy by hand.

Moving the folder between machines: `python -m compare pack --out DIR ARCHIVE` and
`python -m compare restore ARCHIVE --out DIR` (`compare.run.archive`). Committing it instead (`runs/` is
git-ignored): `--resume_copies MIB` keeps each stopped run's `last.pth` of at most MIB MiB in `<out>/resume/`,
and any invocation copies such a file back where `runs/` has none (`compare.run.resume_copies`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# Imported now although only the final report uses it: a grid runs for hours, and the report must not import
# code edited meanwhile (a module changed under a running process fails to import against the old ones).
import compare.grid.efficiency  # noqa: F401
from compare.grid.own_data import add_own_data_flags, fit_plan, own_data_record, resolve_own_data
from compare.grid.plan import (
    PlannedRun,
    Row,
    grid_name,
    parse_variant,
    plan_runs,
    rows_from_args,
    run_py,
    task_dataset,
)
from compare.grid.plan_file import expand_plan_file
from compare.grid.protocol_notes import protocol_summary
from compare.grid.provenance import shown_command
from compare.grid.records import CONFIG_FILE, RUNS_DIR, machine_info
from compare.grid.reuse import take_reused
from compare.grid.run_args import flag_value
from compare.grid.run_state import (
    CODE_REASON,
    append_manifest,
    crash_counts,
    has_last,
    held_elsewhere,
    last_files,
    move_stale,
    record_state,
    restore_committed_records,
    warn_changed_recipes,
)
from compare.grid.tasks import LONG_TERM, TASK_CHOICES
from compare.recipes.tables import RECIPES, TASK_RECIPES, RecipeBook, TaskBook
from compare.report.build import write_report
from compare.report.seeds import focus_rows
from compare.run.eta import RunTimes
from compare.run.executor import EXECUTORS, Executor, check_executor_flags, executor_class, run_jobs
from compare.run.local_process import RunStopper
from compare.run.resume_copies import RESUME_DIR, drop_resume_copies, restore_resume_copies
from compare.run.scheduler import Grid, GridOptions, duration
from data_provider.protocol import PROTOCOLS, RUNNER_DEFAULT, changes_results
from exp.trackers.mlflow_tracker import experiment_id as mlflow_experiment
from exp.trackers.options import DEFAULT_LOGGER_DIR, TRACKERS, LoggerNames
from exp.training_guards import StopSignals
from utils.cli_parser import OneLineArgumentParser
from utils.command_main import exit_code_of, log_to_stdout
from utils.errors import UserInputError
from utils.path_names import check_output_folder, check_path_component
from utils.record_paths import record_path, relative_record

__all__ = ["EXIT_UNFINISHED", "PlannedRun", "Row", "build_parser", "horizon_arg", "main", "parse_variant", "plan_runs"]

logger = logging.getLogger("compare")

#: exit code when the time budget ended the invocation with runs left to do (rerun to continue)
EXIT_UNFINISHED = 3
#: seconds of a --time_budget kept for writing the report after the runs are stopped
REPORT_RESERVE_SECONDS = 30.0


def horizon_arg(text: str) -> int:
    """--pred_lens value: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a horizon: give positive integers (e.g. 96 192)")
    return value


def build_parser() -> argparse.ArgumentParser:
    # One-line parser errors (a bad value, an unknown or missing flag) instead of the 21-line usage before them.
    p = OneLineArgumentParser(
        prog="python -m compare",
        description="Run models side by side with their recipes (compare/recipes/tables.py) and write a comparison report.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_grid_flags(p)
    _add_run_flags(p)
    _add_schedule_flags(p)
    _add_report_flags(p)
    return p


def _add_grid_flags(p: argparse.ArgumentParser) -> None:
    """The grid: task, protocol, datasets, rows, horizons or blocks, variants, seeds and the focus."""
    p.add_argument("--task", default=LONG_TERM, choices=TASK_CHOICES,
                   help="TSLib task: its recipes (compare/recipes/tables.py TASK_RECIPES), axis and report metrics")
    p.add_argument("--protocol", default=RUNNER_DEFAULT, choices=PROTOCOLS,
                   help="run.py --protocol of every run (a --variant may set its own): strict keeps every TEST "
                        "sample out of training, early stopping and anomaly thresholds (the runner's default, for "
                        "a fair comparison); tslib reproduces TSLib's protocol and numbers (docs/tasks.md)")
    p.add_argument("--data", nargs="+", default=None,
                   help=f"datasets of compare/recipes/tables.py: {' '.join(RECIPES.datasets)}; other tasks: "
                        + "; ".join(f"{t}: {' '.join(TASK_RECIPES.datasets[t])}" for t in TASK_CHOICES[1:])
                        + " (your own CSV: --data_path and --name)")
    add_own_data_flags(p)
    p.add_argument("--models", nargs="*", default=[],
                   help=f"model rows of compare/recipes/tables.py: {', '.join(RECIPES.rows)} (other tasks: the models "
                        "of TASK_RECIPES)")
    p.add_argument("--pred_lens", nargs="+", type=horizon_arg, default=[96, 192, 336, 720],
                   help="horizons (PEMS: 96 48 24 12); long_term_forecast only")
    p.add_argument("--mask_rates", nargs="+", type=float, default=None, metavar="RATE",
                   help="imputation: mask rates of the recipes' blocks (default: 0.125 0.25 0.375 0.5)")
    p.add_argument("--blocks", nargs="+", type=int, default=None, metavar="K",
                   help="anomaly_detection, classification, short_term_forecast: recipe blocks to run "
                        "(default: every block, usually one; TimesNet on SWaT has eight widths)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=BASE:FLAGS",
                   help="extra row: BASE's recipe plus run.py FLAGS (repeatable)")
    p.add_argument("--seeds", nargs="+", type=int, default=None, metavar="SEED",
                   help="repeat every run once per seed (run.py --seed S; the model_id gets the suffix _sS); "
                        "default: one run with the recipe's seed")
    p.add_argument("--focus", nargs="+", default=None, metavar="ROW",
                   help="row(s) each compared with every other over (dataset, horizon, seed) cells in the report "
                        "(default: the first row)")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """What every run gets: overrides of the recipes, trackers, the plan file, data and output folders."""
    p.add_argument("--epochs", type=int, default=None, help="override every recipe's --train_epochs")
    p.add_argument("--patience", type=int, default=None, help="override every recipe's --patience")
    p.add_argument("--num_workers", type=int, default=None, help="override --num_workers (0 loads in-process)")
    p.add_argument("--extra", default="",
                   help="run.py flags applied to every run, as one string after '=': --extra='--d_model 16'")
    p.add_argument("--inverse", action="store_true", help="score and plot in original units (--inverse)")
    p.add_argument("--test_every", type=int, default=None, metavar="K",
                   help="zero-shot rows (a foundation model such as Fracast in --models) score every K-th test "
                        "window only: an estimate, shown apart and never ranked in the report")
    p.add_argument("--logger", nargs="+", action=LoggerNames, default=[], metavar="NAME",
                   help=f"run.py --logger for every run ({' '.join(TRACKERS)}): one TensorBoard folder per run under "
                        "OUT/runs/tracking/tensorboard/<grid>/, one MLflow experiment and one W&B group named after "
                        "the grid (OUT's folder name)")
    p.add_argument("--plan", default=None, metavar="PLAN.yaml",
                   help="read the comparison's flags from a YAML file (docs/compare.md: Plan files); flags given on "
                        "the command line as well override the file's")
    p.add_argument("--root", default=None, help="dataset root replacing the recipes' ./dataset (e.g. a mirror)")
    p.add_argument("--out", default="comparison", help="output folder (runs go to OUT/runs)")
    # Recipes come from compare/recipes/tables.py now; the old flag stays only to say so.
    p.add_argument("--scripts", default=None, help=argparse.SUPPRESS)
    p.add_argument("--reference", default=None, help="CSV dataset,pred_len,model,mse,mae shown beside ours")


def _add_schedule_flags(p: argparse.ArgumentParser) -> None:
    """Where and when runs execute: time limits, crashes, stale records, executors and resources."""
    p.add_argument("--run-timeout", type=float, default=None, help="kill a run after this many seconds")
    p.add_argument("--time_budget", "--time-budget", type=float, default=None, metavar="MINUTES",
                   help="end within this many minutes: stop the runs in flight (they save last.pth), write the "
                        f"report and exit {EXIT_UNFINISHED} when runs remain; the next invocation resumes them")
    p.add_argument("--grace", type=float, default=60.0, metavar="SECONDS",
                   help="with --time_budget: time a stopped run gets to save last.pth before it is killed")
    p.add_argument("--min-start", type=float, default=120.0, metavar="SECONDS",
                   help="with --time_budget: start no run when less than this remains before the stop time")
    p.add_argument("--resume_copies", "--resume-copies", type=float, default=0.0, metavar="MIB",
                   help="copy a stopped run's last.pth (if at most MIB MiB) to OUT/resume/ so that committing OUT keeps "
                        "its resume point; delete the copy when the run finishes, and keep OUT/results.jsonl and "
                        "OUT/compare_runs.jsonl in step with runs/ after every run (default 0: no copies)")
    p.add_argument("--max-crashes", type=int, default=2,
                   help="do not start again a run that crashed this many times (see --retry-failed)")
    p.add_argument("--retry-failed", action="store_true", help="start runs again whatever their crash count")
    p.add_argument("--rerun-stale", action="store_true",
                   help="rerun finished runs whose recorded flags differ from the planned ones, or that older code "
                        "recorded (compare/grid/behaviour_changes.py); their old folders move to OUT/runs/stale/, their "
                        "records stay, with their flags")
    p.add_argument("--reuse", nargs="+", default=None, metavar="DIR",
                   help="take a planned run that has no record here from these comparison folders (in order) when "
                        "one holds a current result of it (the same flags, no later behaviour change); its records "
                        "are copied here marked reused_from, and it is not trained (compare/grid/reuse.py)")
    p.add_argument("--jobs", type=int, default=1,
                   help="--executor local: runs at once (each gets cpu_count // jobs threads unless "
                        "OMP_NUM_THREADS or --cpus_per_run is set)")
    p.add_argument("--executor", default="local", choices=list(EXECUTORS),
                   help="where runs execute: local (run.py processes on this machine) or ray (Ray tasks on a Ray "
                        "cluster; compare/run/ray_executor.py)")
    p.add_argument("--address", default=None, metavar="auto|HOST:PORT",
                   help="--executor ray: the cluster to join (default: start a local Ray instance)")
    p.add_argument("--cpus_per_run", type=float, default=None, metavar="N",
                   help="CPUs (threads) each run gets: its Ray resource request, and OMP_NUM_THREADS (default: 1 "
                        "under Ray; cpu_count // --jobs locally)")
    p.add_argument("--gpus_per_run", type=float, default=0.0, metavar="F",
                   help="--executor ray: GPUs each run asks for; a fraction lets runs share a GPU (0.0625: 16 runs)")
    p.add_argument("--estimate", action="store_true",
                   help="probe each planned run's training step, print what each run and the grid will take at the "
                        "configured epochs on this machine, and exit (writes nothing)")
    p.add_argument("--progress-every", type=float, default=300.0, metavar="SECONDS",
                   help="log the progress line with the ETA this often while runs are in flight")
    p.add_argument("--no-probe", action="store_true",
                   help="no up-front probe of each planned run's step time: the ETA then comes from each run's own "
                        "estimate once it trains (compare/run/eta.py)")


def _add_report_flags(p: argparse.ArgumentParser) -> None:
    """The report and the dry forms (plan, estimate) of an invocation."""
    p.add_argument("--no-timing", action="store_true", help="efficiency.md without train-step measurements")
    p.add_argument("--efficiency-device", default="cpu", choices=("cpu", "cuda"),
                   help="device of the efficiency.md measurements")
    p.add_argument("--no-report", action="store_true", help="run only; write the report later with compare.report.build")
    p.add_argument("--dry-run", action="store_true", help="print the plan (commands, skips, problems) and exit")
    return p


def _check_seed_flags(args: argparse.Namespace, rows: list[Row], out: Path) -> None:
    """--seeds must be distinct; --focus must name a row of this invocation or of an earlier one."""
    if args.seeds is not None:
        repeated = sorted({s for s in args.seeds if args.seeds.count(s) > 1})
        if repeated:
            raise UserInputError(f"--seeds repeats {', '.join(map(str, repeated))}: give each seed once")
    if args.focus is not None:
        path = out / CONFIG_FILE
        earlier = [r["name"] for r in json.loads(path.read_text()).get("rows", [])] if path.is_file() else []
        # The rows' own spellings go into compare.json, so a later `compare.report.build` finds them as they are.
        args.focus = focus_rows(args.focus, list(dict.fromkeys([r.name for r in rows] + earlier)))


def _write_config(out: Path, args: argparse.Namespace, argv: list[str], rows: list[Row],
                  plan: Sequence[PlannedRun] = ()) -> None:
    """Record this invocation in `out/compare.json`, merged with earlier ones (a comparison may be
    continued or extended by later commands): rows, datasets and horizons are united, and every
    invocation's overrides and machine are kept."""
    path = out / CONFIG_FILE
    config = json.loads(path.read_text()) if path.is_file() else {}
    if args.task != LONG_TERM:
        # The report reads the task from here; a long-term comparison's compare.json stays as it was.
        config["task"] = args.task
        config["points"] = sorted({*config.get("points", []), *(run.point for run in plan)})
    row_defs = {r["name"]: r for r in config.get("rows", [])}
    row_defs.update({r.name: {"name": r.name, "base": r.base, "flags": list(r.flags)} for r in rows})
    config.update({
        "data": list(dict.fromkeys([*config.get("data", []), *args.data])),
        "pred_lens": sorted({*config.get("pred_lens", []), *args.pred_lens}),
        "rows": list(row_defs.values()),
        # Paths as records keep them: relative to the repository (utils/record_paths.py), read back by the report.
        "reference": record_path(str(Path(args.reference).resolve())) if args.reference else config.get("reference"),
        "seeds": sorted({*config.get("seeds", []), *(args.seeds or [])}),
        "focus": args.focus if args.focus is not None else config.get("focus"),
    })
    if args.task != LONG_TERM:
        config.pop("pred_lens")
    if getattr(args, "own_data", None):
        config["own_data"] = {**config.get("own_data", {}), **own_data_record(args.own_data, out)}
    config["protocol"] = args.protocol
    config.setdefault("invocations", []).append({
        "command": shown_command("python -m compare " + " ".join(shlex.quote(a) for a in argv), out),
        "epochs": args.epochs,
        "patience": args.patience,
        "extra": list(args.extra_flags),
        "inverse": args.inverse,
        "root": record_path(str(Path(args.root).resolve())) if args.root else args.root,
        "seeds": args.seeds,
        "protocol": args.protocol,
        # --plan: the file's path as given and what it held (the command above names only the file)
        "plan": relative_record(getattr(args, "plan_file", None)),
        "logger": args.logger,
        "machine": machine_info(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    })
    path.write_text(json.dumps(config, indent=2) + "\n")


def _stop_time(args: argparse.Namespace, start: float) -> float | None:
    """When the runs in flight get SIGTERM: start + budget - grace - the report's reserve (None: no budget)."""
    if args.time_budget is None:
        return None
    reserve = 0.0 if args.no_report else REPORT_RESERVE_SECONDS
    usable = args.time_budget * 60 - args.grace - reserve
    if usable <= 0:
        raise UserInputError(f"--time_budget {args.time_budget:g} leaves no time to run: it must exceed --grace "
                             f"{args.grace:g} s + {reserve:g} s for the report (--no-report keeps none)")
    return start + usable


def _check_task_flags(args: argparse.Namespace, argv: list[str], out: Path) -> None:
    """--mask_rates is imputation's, --blocks the other tasks', --pred_lens long-term's; one folder holds
    one task's comparison."""
    if args.mask_rates is not None and args.task != "imputation":
        raise UserInputError(f"--mask_rates belongs to --task imputation, not {args.task}")
    if args.blocks is not None and args.task in (LONG_TERM, "imputation"):
        raise UserInputError(f"--blocks belongs to the anomaly_detection, classification and short_term_forecast "
                             f"tasks, not {args.task}")
    if args.task != LONG_TERM and any(a == "--pred_lens" or a.startswith("--pred_lens=") for a in argv):
        raise UserInputError(f"--pred_lens belongs to --task {LONG_TERM}; {args.task} runs its recipes' blocks")
    if args.task != LONG_TERM and args.reference:
        raise UserInputError(f"--reference holds long-term MSE/MAE numbers; {args.task} reports have no reference column")
    path = out / CONFIG_FILE
    earlier = json.loads(path.read_text()).get("task", LONG_TERM) if path.is_file() else args.task
    if earlier != args.task:
        raise UserInputError(f"--out {out} holds a {earlier} comparison; give --task {args.task} its own --out")
    # A comparison written before --protocol existed ran TSLib's protocol.
    protocol = json.loads(path.read_text()).get("protocol", "tslib") if path.is_file() else args.protocol
    if protocol != args.protocol and changes_results(args.task):
        raise UserInputError(f"--out {out} holds a --protocol {protocol} comparison and --protocol {args.protocol} "
                             f"computes other {args.task} results; pass --protocol {protocol}, or give --protocol "
                             f"{args.protocol} its own --out")
    if flag_value(args.extra_flags, "protocol") is not None:
        raise UserInputError("--extra sets --protocol: give it as the runner's --protocol (a --variant may set its "
                             "own)")


def _check_budget_flags(args: argparse.Namespace) -> None:
    if args.time_budget is not None and args.time_budget <= 0:
        raise UserInputError(f"--time_budget {args.time_budget:g}: give a positive number of minutes")
    if args.grace < 0 or args.min_start < 0:
        raise UserInputError(f"--grace {args.grace:g} / --min-start {args.min_start:g}: use 0 or more seconds")
    if not args.resume_copies >= 0:
        raise UserInputError(f"--resume_copies {args.resume_copies:g}: give the largest last.pth to copy in MiB "
                             "(0 copies none)")
    if args.max_crashes < 1:
        raise UserInputError(f"--max-crashes {args.max_crashes}: use 1 or more (--retry-failed ignores it)")


def _checked_plan(argv: list[str], book: RecipeBook, task_book: TaskBook,
                  start_time: float) -> tuple[argparse.Namespace, list[Row], list[PlannedRun], float | None]:
    """Parse and check the runner's flags, then plan: (args, rows, plan, stop time); UserInputError otherwise."""
    argv, plan_file = expand_plan_file(argv, build_parser())
    args = build_parser().parse_args(argv)
    args.plan_file = plan_file
    if args.scripts is not None:
        raise UserInputError("--scripts is gone: recipes come from compare/recipes/tables.py (scripts/ is generated "
                             "from it); add a row there or use --variant NAME=BASE:FLAGS")
    if args.jobs < 1:
        raise UserInputError(f"--jobs {args.jobs}: use 1 or more")
    check_output_folder("--out", args.out)
    if not args.progress_every > 0:
        raise UserInputError(f"--progress-every {args.progress_every:g}: give a positive number of seconds")
    if args.estimate and (args.dry_run or args.no_probe):
        raise UserInputError(f"--estimate probes the runs and exits: drop {'--dry-run' if args.dry_run else '--no-probe'}")
    _check_budget_flags(args)
    _check_executor_flags(args)
    stop_at = _stop_time(args, start_time)
    try:
        args.extra_flags = shlex.split(args.extra)
    except ValueError as err:
        raise UserInputError(f"--extra {args.extra!r}: cannot split its flags ({err})") from None
    for flag in ("model_id", "des"):
        value = flag_value(args.extra_flags, flag)
        if value is not None:
            check_path_component(f"--extra's --{flag}", value)
    _check_task_flags(args, argv, Path(args.out))
    if args.reference and not Path(args.reference).is_file():
        raise UserInputError(f"--reference {args.reference} does not exist")
    if args.logger:
        check_path_component("--out's folder name (the trackers' group)", grid_name(args))
    args.own_data, book, task_book = resolve_own_data(args, book, task_book)
    if args.task == LONG_TERM:
        args.data = [book.dataset(name).name for name in args.data]
    else:
        args.data = [task_dataset(task_book, args.task, name) for name in args.data]
    rows = rows_from_args(args, book, task_book)
    _check_seed_flags(args, rows, Path(args.out))
    plan = fit_plan(plan_runs(args, rows, book, task_book), args.own_data,
                    explicit_horizons=any(a == "--pred_lens" or a.startswith("--pred_lens=") for a in argv))
    return args, rows, plan, stop_at


def _report_stale(stale: list[PlannedRun], states: dict, rerun: bool) -> None:
    """One line per finished run whose record came from other flags than the planned ones, or from code older
    than a change of what the run computes (`compare.grid.behaviour_changes`)."""
    for run in stale:
        reasons = states[id(run)][1]
        if reasons and reasons[0].startswith(CODE_REASON):
            short = f"recorded by older code ({reasons[0].removeprefix(CODE_REASON)})"
        else:
            short = "recorded with other " + (", ".join(f"--{n}" for n in reasons[:6]) or "flags")
        run.error = None if rerun else (f"stale: its result was {short}; pass --rerun-stale to move the old run "
                                        "aside and run it with the planned flags and the current code")
        logger.info("  %s: %s: %s", run.label, short,
                    "rerun (--rerun-stale)" if rerun else "not current; pass --rerun-stale to rerun it")


def _check_executor_flags(args: argparse.Namespace) -> None:
    """Flags of another executor than --executor are refused; resources are positive."""
    check_executor_flags(args, {name: executor_class(name).flags for name in EXECUTORS})
    if args.cpus_per_run is not None and not args.cpus_per_run > 0:
        raise UserInputError(f"--cpus_per_run {args.cpus_per_run:g}: give a positive number of CPUs")
    if not args.gpus_per_run >= 0:
        raise UserInputError(f"--gpus_per_run {args.gpus_per_run:g}: give 0 or a positive fraction of a GPU")
    executor_class(args.executor).from_args(args)


def main(argv: list[str] | None = None, book: RecipeBook = RECIPES,
         clock: Callable[[], float] = time.monotonic, task_book: TaskBook = TASK_RECIPES) -> int:
    """Run the comparison; returns 0 when every run finished, 1 when some failed, 2 on a usage error,
    EXIT_UNFINISHED (3) when the time budget left runs to do, 128 + signal when the runner was signalled.

    book: the recipe table (tests pass a small one); task_book: the other tasks' table (`--task`).
    clock: seconds of the time budget (tests pass one that jumps to the deadline on cue)."""
    start_time = clock()
    log_to_stdout()
    argv = list(sys.argv[1:] if argv is None else argv)
    return exit_code_of(lambda: _compare(argv, book, task_book, clock, start_time))


def _compare(argv: list[str], book: RecipeBook, task_book: TaskBook, clock: Callable[[], float],
             start_time: float) -> int:
    """main's work: plan, report the plan, then (unless --dry-run / --estimate) run what is to do."""
    args, rows, plan, stop_at = _checked_plan(argv, book, task_book, start_time)
    out = Path(args.out)
    runs_dir = out / RUNS_DIR
    restore_committed_records(out, runs_dir)
    crashes = crash_counts(runs_dir)
    reused = _reuse(args, out, plan)
    stale, todo, skipped, broken, given_up = _sorted_plan(args, runs_dir, plan, crashes)
    if args.dry_run or args.estimate:  # nothing was copied: the reusable runs are shown as skipped
        skipped += [run for run in todo if id(run) in reused]
        todo = [run for run in todo if id(run) not in reused]
    elsewhere = {id(run): holder for run in todo if (holder := held_elsewhere(runs_dir, run)) is not None}
    busy = [run for run in todo if id(run) in elsewhere]
    todo = [run for run in todo if id(run) not in elsewhere]
    _report_plan(args, out, plan, todo, skipped, broken, given_up, crashes, elsewhere)
    if args.dry_run:
        return 1 if broken else 0
    if args.estimate:
        RunTimes(args.jobs, runs_dir).probe(todo, _threads(args))
        return 1 if broken else 0
    if broken and not (todo or skipped or given_up or stale or busy):  # (stale records are reported, not refused)
        first = broken[0]
        raise UserInputError(f"none of the {len(broken)} planned runs can run ({first.label}: {first.error}); "
                             f"nothing was run or recorded in {out}")
    executor = _executor(args)
    if todo:
        run_py()
        executor.start()
    _prepare_runs_dir(args, out, argv, rows, plan, todo, broken, stale)
    failures = [(r, r.error) for r in broken]
    failures += [(r, f"given up after {crashes[tuple(r.settings)]} crashes") for r in given_up]
    try:
        grid, aborted, runner_signal = _run_grid(args, out, todo, stop_at, clock, executor)
    finally:
        executor.close()
    failures += grid.failures
    return _finish(args, out, plan, grid, failures, skipped, broken, given_up, busy, aborted, runner_signal)


def _reuse(args: argparse.Namespace, out: Path, plan: list[PlannedRun]) -> set[int]:
    """With --reuse: the ids of the planned runs taken from other folders (`compare.grid.reuse.take_reused`);
    nothing is copied in a dry run or estimate."""
    if not args.reuse:
        return set()
    return take_reused(out, plan, args.reuse, write=not (args.dry_run or args.estimate),
                       copy_to_out=bool(args.resume_copies))


def _sorted_plan(args: argparse.Namespace, runs_dir: Path, plan: list[PlannedRun], crashes
                 ) -> tuple[list[PlannedRun], list[PlannedRun], list[PlannedRun], list[PlannedRun], list[PlannedRun]]:
    """(stale, todo, skipped, broken, given_up) of the plan, from the records under runs_dir; with
    --rerun-stale (and not a dry run or estimate) moves the stale runs' old folders aside."""
    states = record_state(runs_dir, [r for r in plan if r.error is None])
    stale = [r for r in plan if r.error is None and states[id(r)][0] == "stale"]
    pending = [r for r in plan if r.error is None and states[id(r)][0] == "todo"]
    skipped = [r for r in plan if r.error is None and states[id(r)][0] == "done"]
    # A stale run not rerun becomes a run that cannot run (listed, exit code 1), never a current result.
    _report_stale(stale, states, args.rerun_stale)
    pending += stale if args.rerun_stale else []
    broken = [r for r in plan if r.error is not None]
    if args.rerun_stale and not (args.dry_run or args.estimate):
        for run in stale:
            logger.info("  %s: its old folders moved to %s", run.label, move_stale(runs_dir, run))
    given_up = [r for r in pending if not args.retry_failed and crashes[tuple(r.settings)] >= args.max_crashes]
    todo = [r for r in pending if r not in given_up]
    return stale, todo, skipped, broken, given_up


def _prepare_runs_dir(args: argparse.Namespace, out: Path, argv: list[str], rows, plan: list[PlannedRun],
                      todo: list[PlannedRun], broken: list[PlannedRun], stale: list[PlannedRun]) -> None:
    """runs/ with its .gitignore, the MLflow experiment (before parallel runs race to create it), the grid's
    config, and one manifest line per run that cannot run (stale and not rerun, or failed to plan)."""
    runs_dir = out / RUNS_DIR
    runs_dir.mkdir(parents=True, exist_ok=True)
    if "mlflow" in args.logger and todo:
        # The store and the grid's experiment exist before runs start, so parallel runs never race to create them.
        mlflow_experiment(runs_dir / DEFAULT_LOGGER_DIR, grid_name(args))
    # Run artefacts (checkpoints, predictions) are large; only the report files are meant for git.
    (runs_dir / ".gitignore").write_text("*\n")
    _write_config(out, args, argv, rows, plan)
    not_rerun = set() if args.rerun_stale else {id(run) for run in stale}
    for run in broken:
        status = "stale" if id(run) in not_rerun else "failed"
        append_manifest(runs_dir, {**run.where(), "status": status, "error": run.error, "settings": [], "argv": [],
                                   "seconds": 0.0, "log": None, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})


def _report_plan(args: argparse.Namespace, out: Path, plan: list[PlannedRun], todo: list[PlannedRun], skipped: list,
                 broken: list, given_up: list, crashes, elsewhere: dict[int, str]) -> None:
    """Restore committed resume copies, then log what will run, resume, be skipped, is left to the process
    that trains it (`elsewhere`: run id -> holder) or cannot run (with --dry-run: every command)."""
    runs_dir = out / RUNS_DIR
    if not (args.dry_run or args.estimate):
        for run in todo:
            for path in restore_resume_copies(out, last_files(runs_dir, run)):
                logger.info("%s: restored from the committed copy in %s/", path, out / RESUME_DIR)
        if args.resume_copies:
            drop_resume_copies(out, [setting for run in skipped for setting in run.settings])
    logger.info("protocol: %s", protocol_summary(args.protocol, args.task, runner=True))
    resumable = [r for r in todo if has_last(runs_dir, r)]
    logger.info("comparison: %d runs planned, %d already finished, %d to run, %d cannot run%s%s%s",
                len(plan), len(skipped), len(todo), len(broken),
                f", {len(given_up)} given up after crashes" if given_up else "",
                f", {len(elsewhere)} training in another process" if elsewhere else "",
                f"; {len(resumable)} resume from last.pth" if resumable else "")
    warn_changed_recipes(runs_dir, skipped)
    for note in dict.fromkeys(note for run in plan for note in run.notes):
        logger.info("  %s", note)
    for run in broken:
        logger.info("  cannot run %s: %s", run.label, run.error)
    for run in given_up:
        logger.info("  not started again: %s crashed %d times (see compare_runs.jsonl and its log); fix the cause "
                    "and pass --retry-failed", run.label, crashes[tuple(run.settings)])
    for run in plan:
        if id(run) in elsewhere:
            logger.info("  left to %s, which is training %s now (its run folder is locked); rerun this command "
                        "after it stops to pick up its result", elsewhere[id(run)], run.label)
    if args.dry_run:
        for run in plan:
            if run.error is None:
                state = ("skip" if run in skipped else "gave up" if run in given_up
                         else "elsewhere" if id(run) in elsewhere else "resume" if run in resumable else "run ")
                resume = " --resume" if run in resumable else ""
                logger.info("%s %s\n     python -u run.py %s%s", state, run.label, shlex.join(run.argv), resume)


def _executor(args: argparse.Namespace) -> Executor:
    """The executor of --executor (each is imported only when asked for)."""
    return executor_class(args.executor).from_args(args)


def _threads(args: argparse.Namespace) -> int | None:
    """OMP_NUM_THREADS of each local run: --cpus_per_run, else cpu_count // --jobs with several jobs."""
    if args.cpus_per_run:
        return max(1, int(args.cpus_per_run))
    return max(1, (os.cpu_count() or 1) // args.jobs) if args.jobs > 1 else None


def _run_grid(args: argparse.Namespace, out: Path, todo: list[PlannedRun], stop_at: float | None,
              clock: Callable[[], float], executor: Executor) -> tuple[Grid, bool, int | None]:
    """Run `todo` on the chosen executor; (grid, aborted by a second Ctrl-C, signal to the runner or None)."""
    options = GridOptions(out=out, min_start=args.min_start, resume_copies=args.resume_copies,
                          run_timeout=args.run_timeout, threads=_threads(args),
                          parallel=executor.capacity())
    aborted = False
    times = RunTimes(options.parallel, out / RUNS_DIR)
    if todo and not args.no_probe:
        logger.info("probing each planned run's training step for the ETA (--no-probe skips it):")
        times.probe(todo, options.threads)
    with StopSignals() as signals, RunStopper(stop_at, args.grace, clock, signals) as stopper:
        grid = Grid(todo=todo, options=options, stopper=stopper, times=times)
        stop_reports = threading.Event()
        threading.Thread(target=grid.report_every, args=(args.progress_every, stop_reports), daemon=True).start()
        try:
            run_jobs(executor, grid, list(enumerate(todo, start=1)))
        except KeyboardInterrupt:
            # A second Ctrl-C: no more waiting for runs to save.
            stopper.kill_all()
            logger.info("interrupted: rerun the same command to continue (finished runs are kept)")
            aborted = True
        finally:
            stop_reports.set()
        runner_signal = signals.signum
    return grid, aborted, runner_signal


def _finish(args: argparse.Namespace, out: Path, plan: list[PlannedRun], grid: Grid, failures: list,
            skipped: list, broken: list, given_up: list, busy: list, aborted: bool, runner_signal: int | None) -> int:
    """Summary lines, the report, and the exit code (`busy`: runs left to another process that trains them)."""
    crashed = len(failures) - len(broken) - len(given_up)
    logger.info("summary: %d ran (%d failed), %d skipped as finished, %d could not start; %s of run time",
                len(grid.durations), crashed, len(skipped), len(broken), duration(sum(grid.durations)))
    for run, error in failures:
        logger.info("  FAILED %s: %s", run.label, error)
    remain = len(grid.stopped) + len(grid.not_started) + len(busy)
    logger.info("grid: %d of %d runs finished, %d interrupted, %d not started, %d failed%s; %s",
                len(skipped) + len(grid.finished), len(plan), len(grid.stopped), len(grid.not_started), len(failures),
                f", {len(busy)} training in another process" if busy else "",
                f"{remain} remain: rerun the same command (same --out) to continue" if remain else "nothing left to run")
    if aborted:
        return 130
    if runner_signal is not None:
        # The machine is going away: no time for the report.
        logger.info("report skipped: write it later with `python -m compare.report --out %s`", out)
        return 128 + runner_signal
    if not args.no_report:
        try:
            paths = write_report(out, reference=args.reference, timing=not args.no_timing,
                                 device=args.efficiency_device, focus=args.focus)
        except UserInputError as err:
            if remain and not skipped and not grid.finished:
                logger.info("no report yet: no run has finished")
                return EXIT_UNFINISHED
            print(f"error: {err}", file=sys.stderr)
            return 1
        logger.info("report: %s", ", ".join(str(p) for p in paths))
    if remain:
        return EXIT_UNFINISHED
    return 1 if failures else 0

