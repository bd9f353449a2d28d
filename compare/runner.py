"""Side-by-side comparison runner: `python -m compare --data ETTh1 --models CAPS DLinear ...`.

Every (model row, dataset, horizon) runs `python -u run.py` with its recipe from the table in
`compare/recipes.py` (the table `scripts/` is generated from, so scripts and runner share one source of
truth), in a subprocess whose working directory is `<out>/runs`: all TSLib outputs
(`checkpoints/`, `results/`, `results.jsonl`, ...) stay inside `--out`, and a crash or an
out-of-memory run cannot take the others down. Runs whose settings are already in
`<out>/runs/results.jsonl` are skipped, so an interrupted comparison continues where it stopped.
The runner records each attempt in `<out>/runs/compare_runs.jsonl` and finally writes the report
(`compare.report`).

`--jobs N` runs N of them at once (each its own process; results and manifest lines are appended
atomically): small models leave a GPU mostly idle, so several runs share it well. Each job gets
`cpu_count // N` CPU threads unless OMP_NUM_THREADS is set.

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
standard deviation over the seeds and tests the differences (`compare.significance`).

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
it is listed as given up and not started again unless `--retry-failed` is passed.

Exit codes: 0 the grid is complete; 1 some runs failed (nothing left to run); 2 usage error;
3 (`EXIT_UNFINISHED`) runs remain after the time budget (takes precedence over 1); 128 + signal when
the runner itself was stopped by SIGTERM/SIGINT.

Other tasks: `--task imputation|anomaly_detection|classification|short_term_forecast` (`compare.tasks`)
plans from `TASK_RECIPES` instead: the horizon axis becomes the task's (imputation's `--mask_rates`, each
the block of that rate; else `--blocks`, default every block of the model's recipe), everything else above
holds. The manifest names such a run by `task` and `axis` (instead of `pred_len`), `compare.json` records the
task (one `--out` holds one task) and the report is the task's (`compare.task_report`). The planned setting
string has the lengths the experiment sets before run.py makes it (M4's from the seasonal pattern,
classification's seq_len from the .ts files), so finished runs are recognised. Classification runs carry the
variant tag and seed suffix in `--des`, since the UEA loader reads `<model_id>_TRAIN.ts`. Missing data is a
one-line error with the fetch command or what to copy by hand.

Moving the folder between machines: `python -m compare pack --out DIR ARCHIVE` and
`python -m compare restore ARCHIVE --out DIR` (`compare.archive`). Committing it instead (`runs/` is
git-ignored): `--resume_copies MIB` keeps each stopped run's `last.pth` of at most MIB MiB in `<out>/resume/`,
and any invocation copies such a file back where `runs/` has none (`compare.resume_copies`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

# Imported now although only the final report uses it: a grid runs for hours, and the report must not import
# code edited meanwhile (a module changed under a running process fails to import against the old ones).
import compare.efficiency  # noqa: F401
from compare.recipes import MASK_RATES, RECIPES, TASK_RECIPES, Recipe, RecipeBook, TaskBook, name_key
from compare.records import (
    CONFIG_FILE,
    MANIFEST_FILE,
    RESULTS_JSONL,
    RUNS_DIR,
    finished_settings,
    machine_info,
)
from compare.report import write_report
from compare.resume_copies import RESUME_DIR, drop_resume_copies, keep_resume_copies, restore_resume_copies
from compare.run_args import flag_value, merge_flags, parse_run_args
from compare.seeds import focus_rows
from compare.tasks import (
    LONG_TERM,
    TASK_CHOICES,
    TASK_SPECS,
    apply_experiment_lengths,
    axis_points,
    check_task_data,
)
from exp.arguments import make_setting
from exp.checkpointing import LAST_FILE, read_progress
from exp.training_guards import StopSignals
from utils.errors import UserInputError
from utils.tools import append_text

__all__ = ["EXIT_UNFINISHED", "PlannedRun", "Row", "build_parser", "main", "parse_variant", "plan_runs"]

logger = logging.getLogger("compare")

REPO_ROOT = Path(__file__).resolve().parent.parent
#: exit code when the time budget ended the invocation with runs left to do (rerun to continue)
EXIT_UNFINISHED = 3
#: seconds of a --time_budget kept for writing the report after the runs are stopped
REPORT_RESERVE_SECONDS = 30.0
# run.py's exit codes after it saved last.pth on SIGTERM / SIGINT (128 + signal)
_INTERRUPTED_CODES = frozenset({128 + signal.SIGTERM, 128 + signal.SIGINT})
_EPOCH_LINE = re.compile(r"Epoch: (\d+), Steps: \d+ \| Train Loss: (\S+) Vali Loss: (\S+) Test Loss: (\S+)")


@dataclass(frozen=True)
class Row:
    """A model row of the comparison: BASE's recipe plus `flags`; `tag` suffixes variant model_ids."""

    name: str
    base: str
    flags: tuple[str, ...] = ()
    tag: str = ""


@dataclass
class PlannedRun:
    """One (row, dataset, axis point): the run.py argv, its settings, or why it cannot run.

    point: the task's axis value (`compare.tasks`): the horizon of long-term forecasting, imputation's
    mask rate, the other tasks' block number; block: the recipe block it runs (other tasks)."""

    row: Row
    dataset: str
    point: float | int
    #: --seeds value of this run; None when the recipe's seed is used (no --seeds)
    seed: int | None = None
    argv: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    recipe: Recipe | None = None
    error: str | None = None
    task: str = LONG_TERM
    block: int = 0

    @property
    def pred_len(self) -> float | int:
        """The horizon of a long-term run (its axis point)."""
        return self.point

    @property
    def label(self) -> str:
        seed = "" if self.seed is None else f" | seed {self.seed}"
        if self.task == LONG_TERM:
            return f"{self.row.name} | {self.dataset} | H={self.pred_len}{seed}"
        return f"{self.row.name} | {self.dataset} | {TASK_SPECS[self.task].axis} {self.point:g}{seed}"

    def where(self) -> dict:
        """The manifest fields naming this run: row, dataset, horizon (long-term) or task and axis, seed."""
        if self.task == LONG_TERM:
            return {"row": self.row.name, "dataset": self.dataset, "pred_len": self.pred_len, "seed": self.seed}
        return {"row": self.row.name, "dataset": self.dataset, "task": self.task, "axis": self.point,
                "seed": self.seed}


def _tag(name: str) -> str:
    """A file-name-safe tag for a variant name (`CAPS (official)` -> `CAPS-official`)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", name).strip("-")


def parse_variant(text: str) -> Row:
    """`NAME=BASE:FLAGS` -> Row; FLAGS is a shell-quoted string of run.py flags (may be empty)."""
    name, eq, rest = text.partition("=")
    base, colon, flags = rest.partition(":")
    if not eq or not colon or not name.strip() or not base.strip():
        raise UserInputError(f"--variant {text!r} must look like NAME=BASE:FLAGS, e.g. "
                             "'LinAttn=CAPS:--caps_paths none --learning_rate 6e-4'")
    try:
        words = shlex.split(flags)
    except ValueError as err:
        raise UserInputError(f"--variant {text!r}: cannot split its flags ({err})") from None
    name = name.strip()
    if not _tag(name):
        raise UserInputError(f"--variant {text!r}: NAME needs at least one letter or digit")
    return Row(name=name, base=base.strip(), flags=tuple(words), tag=_tag(name))


def resolve_root(root_path: str, data_root: Path | None) -> str:
    """The recipe's `--root_path` made absolute: `./dataset/X/` maps to `<data_root>/X/` when a data
    root is given, else it is taken relative to the repository root (where the scripts are run from)."""
    path = Path(root_path)
    if path.is_absolute():
        return str(path)
    if data_root is not None:
        parts = path.parts[1:] if path.parts and path.parts[0] == "dataset" else path.parts
        return str(data_root.joinpath(*parts).resolve()) + os.sep
    return str((REPO_ROOT / path).resolve()) + os.sep


def _fetch_hint(recipe: Recipe) -> str:
    return f"python -m data_provider.fetch {recipe.fetch} --root ./dataset"


def _global_flags(args: argparse.Namespace) -> list[str]:
    """Flags the runner applies to every run after the recipe and variant flags."""
    flags = ["--no_progress"]
    if args.epochs is not None:
        flags += ["--train_epochs", str(args.epochs)]
    if args.patience is not None:
        flags += ["--patience", str(args.patience)]
    if args.num_workers is not None:
        flags += ["--num_workers", str(args.num_workers)]
    if args.inverse:
        flags.append("--inverse")
    return flags + list(args.extra_flags)


def plan_runs(args: argparse.Namespace, rows: list[Row], book: RecipeBook = RECIPES,
              task_book: TaskBook = TASK_RECIPES) -> list[PlannedRun]:
    """Every (seed, dataset, axis point, row) with its final argv and settings; an unknown dataset raises
    UserInputError, other problems are recorded on the run (`error`) instead of raised, so one bad row
    never stops the others. `args.seeds` (None: the recipes' seeds) adds `--seed S` and the model_id
    suffix `_s<S>` to each run.

    args.task (default long-term): the axis is the horizon (`args.pred_lens`) for long-term forecasting,
    else the task's (`compare.tasks.axis_points`: `args.mask_rates`, `args.blocks`); the recipes are
    `task_book`'s."""
    task = getattr(args, "task", LONG_TERM)
    data_root = Path(args.root).resolve() if args.root else None
    overrides = _global_flags(args)
    seeds: list[int | None] = list(getattr(args, "seeds", None) or [None])
    plan = []
    if task == LONG_TERM:
        datasets = [book.dataset(name).name for name in args.data]
        for seed in seeds:
            for dataset in datasets:
                for pred_len in args.pred_lens:
                    for row in rows:
                        run = PlannedRun(row, dataset, pred_len, seed)
                        plan.append(run)
                        _plan_one(run, overrides, data_root, book)
    else:
        datasets = [task_dataset(task_book, task, name) for name in args.data]
        for seed in seeds:
            for dataset in datasets:
                points = {row.name: _task_points(task_book, task, row, dataset, args) for row in rows}
                # Every point any row has, in order: a block only some rows have (SWaT's widths) is one line.
                for point in sorted({p for found in points.values() for p in found}):
                    for row in rows:
                        if point in points[row.name]:
                            run = PlannedRun(row, dataset, point, seed, task=task, block=points[row.name][point])
                            plan.append(run)
                            _plan_task_one(run, overrides, data_root, task_book)
    seen: dict[str, PlannedRun] = {}
    for run in plan:
        for setting in run.settings:
            if setting in seen:
                raise UserInputError(f"{run.label} and {seen[setting].label} produce the same setting {setting}; "
                                     "give one of them a different --model_id")
            seen[setting] = run
    return plan


def _tagged(run: PlannedRun, argv: list[str], flag: str, default: str) -> list[str]:
    """argv with the variant tag and the seed suffix appended to `--flag` (model_id; classification's
    des, since its model_id names the files) and `--seed S` for a --seeds run."""
    value = flag_value(argv, flag) or default
    if run.row.tag:
        value = f"{value}_{run.row.tag}"
    if run.seed is not None:
        # TSLib's setting string has no seed: without the suffix the seeds would overwrite each other.
        value = f"{value}_s{run.seed}"
        argv = merge_flags(argv, ["--seed", str(run.seed)])
    return merge_flags(argv, [f"--{flag}", value])


def _plan_one(run: PlannedRun, overrides: list[str], data_root: Path | None, book: RecipeBook) -> None:
    """Fill in run's recipe, argv and settings, or its `error` when it cannot run."""
    row, dataset, pred_len = run.row, run.dataset, run.pred_len
    try:
        run.recipe = book.recipe(row.base, dataset, pred_len)
        argv = merge_flags(run.recipe.argv, row.flags)
        argv = merge_flags(argv, overrides)
        argv = _tagged(run, argv, "model_id", dataset)
        root_path = resolve_root(flag_value(argv, "root_path") or "./dataset", data_root)
        argv = merge_flags(argv, ["--root_path", root_path])
        parsed = parse_run_args(argv)
        data_file = Path(parsed.root_path) / parsed.data_path
        if not data_file.is_file():
            raise UserInputError(f"data file {data_file} is missing: run `{_fetch_hint(run.recipe)}`"
                                 " from the repository root, or pass --root DIR (a folder laid out "
                                 "like ./dataset)")
    except UserInputError as err:
        run.error = str(err)
        return
    run.argv = argv
    run.settings = [make_setting(parsed, ii) for ii in range(parsed.itr)]


def task_dataset(task_book: TaskBook, task: str, name: str) -> str:
    """The task's dataset named `name` (any case or punctuation); UserInputError listing the choices."""
    choices = task_book.datasets[task_book.task(task)]
    found = next((d for d in choices if name_key(d) == name_key(name)), None)
    if found is None:
        raise UserInputError(f"--data {name} is not a {task} dataset; choose from {', '.join(choices)}")
    return found


def _task_points(task_book: TaskBook, task: str, row: Row, dataset: str, args: argparse.Namespace
                 ) -> dict[float | int, int]:
    """{axis point: recipe block} of `row` on `dataset` ({} when its model has no recipe for it: the run is
    planned with that error on its first requested point)."""
    if dataset not in task_book.recipe(task, row.base).per_dataset:
        first = (args.mask_rates or MASK_RATES)[0] if task == "imputation" else 0
        return {first: -1}
    return dict(axis_points(task, task_book, row.base, dataset, args.mask_rates, args.blocks))


def _plan_task_one(run: PlannedRun, overrides: list[str], data_root: Path | None, book: TaskBook) -> None:
    """Fill in a task run's recipe, argv and settings from `book`'s block, or its `error`."""
    task, row, dataset = run.task, run.row, run.dataset
    try:
        if run.block < 0:
            book.flags(task, row.base, dataset)  # raises: the model has no recipe for the dataset
        base = book.argv(task, row.base, dataset, run.block)
        data = book.datasets[task][dataset]
        run.recipe = Recipe(row=row.name, dataset=dataset, pred_len=int(flag_value(base, "pred_len") or 0),
                            argv=tuple(base), env=dict(book.env), fetch=data.fetch,
                            script=book.script(task, row.base, dataset))
        argv = merge_flags(merge_flags(base, row.flags), overrides)
        # UEA's loader reads <model_id>_TRAIN.ts: classification runs are told apart by --des instead.
        argv = _tagged(run, argv, "des" if task == "classification" else "model_id",
                       "Exp" if task == "classification" else dataset)
        root_path = resolve_root(flag_value(argv, "root_path") or "./dataset", data_root)
        argv = merge_flags(argv, ["--root_path", root_path])
        parsed = parse_run_args(argv)
        check_task_data(task, dataset, parsed.root_path, parsed.data_path, data.fetch)
        apply_experiment_lengths(task, parsed)
    except UserInputError as err:
        run.error = str(err)
        return
    run.argv = argv
    run.settings = [make_setting(parsed, ii) for ii in range(parsed.itr)]


def _restore_committed_records(out: Path, runs_dir: Path) -> None:
    """Seed a missing `runs/` from the report's committed copies (`<out>/results.jsonl`, `compare_runs.jsonl`).

    `runs/` is git-ignored, the report's copies are committed: in a fresh clone the finished runs of a
    committed table are known again, so an interrupted table is completed instead of rerun."""
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        committed, local = out / name, runs_dir / name
        if committed.is_file() and not local.exists():
            runs_dir.mkdir(parents=True, exist_ok=True)
            local.write_text(committed.read_text())
            logger.info("%s: restored from the committed %s", local, committed)


def _without_root(argv: list[str]) -> list[str]:
    """argv without its `--root_path VALUE` pair."""
    if "--root_path" not in argv:
        return list(argv)
    k = argv.index("--root_path")
    return argv[:k] + argv[k + 2:]


def _warn_changed_recipes(runs_dir: Path, skipped: list[PlannedRun]) -> None:
    """Warn when a finished run was made with other flags than the ones planned now (the setting
    string does not contain every flag, e.g. --learning_rate or --train_epochs)."""
    path = runs_dir / MANIFEST_FILE
    earlier = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("status") == "ok":
            earlier[tuple(entry.get("settings") or [])] = entry.get("argv") or []
    for run in skipped:
        before = earlier.get(tuple(run.settings))
        # The data may live elsewhere on another machine (a restored archive): --root_path does not count.
        if before is not None and _without_root(before) != _without_root(run.argv):
            changed = sorted(set(_without_root(before)) ^ set(_without_root(run.argv)))
            logger.warning("  %s finished earlier with different flags (%s); its old result is kept: delete "
                           "%s/results/%s and its line in results.jsonl to rerun it", run.label,
                           " ".join(changed), runs_dir, run.settings[0])


def _crash_counts(runs_dir: Path) -> Counter[tuple[str, ...]]:
    """How often each run (by its settings) crashed, from the manifest's `failed` attempts."""
    path = runs_dir / MANIFEST_FILE
    counts: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("status") == "failed" and entry.get("settings"):
            counts[tuple(entry["settings"])] += 1
    return counts


def _last_files(runs_dir: Path, run: PlannedRun) -> dict[str, Path]:
    """Where each of the run's settings keeps its `last.pth` (existing or not)."""
    checkpoints = runs_dir / (flag_value(run.argv, "checkpoints") or "./checkpoints/")
    return {setting: checkpoints / setting / LAST_FILE for setting in run.settings}


def _has_last(runs_dir: Path, run: PlannedRun) -> bool:
    """True when one of the run's settings has a `last.pth` to continue from (run.py --resume)."""
    return any(path.is_file() for path in _last_files(runs_dir, run).values())


def _saved_progress(runs_dir: Path, run: PlannedRun) -> dict[str, dict]:
    """Per setting with a readable `last.pth`: the epoch in progress (1-based), the batches done in it and
    the curve of its finished epochs, so an interrupted run's progress outlives its checkpoint folder."""
    saved = {}
    for setting, path in _last_files(runs_dir, run).items():
        progress = read_progress(path)
        if progress is not None:
            saved[setting] = {"epoch": int(progress["epoch"]) + 1, "batch": int(progress["step"]),
                              "curve": list(progress.get("curve", []))}
    return saved


class _Stopper:
    """Ends the runs in flight at the stop time of --time_budget or when the runner receives
    SIGTERM/SIGINT: one SIGTERM to each run (run.py saves last.pth and exits 128 + 15), then SIGKILL to
    the run's process group when it is still alive `grace` seconds later. A thread of its own polls
    `clock` (injectable, so tests decide when time is up) and the runner's signals."""

    POLL_SECONDS = 0.1

    def __init__(self, stop_at: float | None, grace: float, clock: Callable[[], float],
                 signals: StopSignals) -> None:
        self.stop_at = stop_at
        self.grace = grace
        self.clock = clock
        self.signals = signals
        #: why the runs are being stopped ("the time budget", "signal 15"); None while they are not
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._procs: dict[int, subprocess.Popen] = {}
        # pid -> time.monotonic() of its SIGTERM; the grace period is real time whatever `clock` says
        self._terminated: dict[int, float] = {}
        self._killed: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="compare-stopper", daemon=True)

    def __enter__(self) -> _Stopper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def stop_requested(self) -> bool:
        """True once the runs are being stopped, or a signal to the runner awaits the next poll."""
        return self.reason is not None or self.signals.signum is not None

    def seconds_left(self) -> float:
        """Seconds until the stop time (infinite without a budget)."""
        return float("inf") if self.stop_at is None else self.stop_at - self.clock()

    def register(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs[proc.pid] = proc
        # A run started just as the stop came is stopped by the next poll.

    def unregister(self, proc: subprocess.Popen) -> tuple[bool, bool]:
        """Forget a finished run; returns (it was sent SIGTERM, it was killed after the grace period)."""
        with self._lock:
            self._procs.pop(proc.pid, None)
            return proc.pid in self._terminated, proc.pid in self._killed

    def kill_all(self) -> None:
        """SIGKILL every run in flight at once (the runner is aborting)."""
        with self._lock:
            for proc in self._procs.values():
                self._kill(proc)

    def _kill(self, proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            try:
                # The whole group: DataLoader workers die with the run.
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._killed.add(proc.pid)

    def _watch(self) -> None:
        while not self._done.wait(self.POLL_SECONDS):
            self.poll()

    def poll(self) -> None:
        """Decide whether to stop, then SIGTERM new runs and SIGKILL those past their grace period."""
        if self.reason is None:
            if self.signals.signum is not None:
                self.reason = f"signal {self.signals.signum} to the runner"
            elif self.stop_at is not None and self.clock() >= self.stop_at:
                self.reason = "the time budget"
            if self.reason is None:
                return
            logger.info("stopping the runs in flight (%s): SIGTERM, then SIGKILL after %gs", self.reason, self.grace)
        now = time.monotonic()
        with self._lock:
            for pid, proc in self._procs.items():
                if pid not in self._terminated:
                    # send_signal does nothing once the run has exited.
                    proc.send_signal(signal.SIGTERM)
                    self._terminated[pid] = now
                elif pid not in self._killed and now - self._terminated[pid] >= self.grace:
                    self._kill(proc)


def _append_manifest(runs_dir: Path, record: dict) -> None:
    append_text(runs_dir / MANIFEST_FILE, json.dumps(record) + "\n")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


@dataclass
class RunOutcome:
    """How one run.py subprocess ended."""

    code: int
    error_line: str | None
    log_path: Path
    #: the runner sent it SIGTERM (time budget or a signal to the runner)
    stopped: bool = False
    #: it was still alive after the grace period and got SIGKILL
    killed: bool = False


def _execute(run: PlannedRun, runs_dir: Path, timeout: float | None, threads: int | None = None, *,
             resume: bool = False, stopper: _Stopper | None = None) -> RunOutcome:
    """Run one `python -u run.py` subprocess, echoing epoch progress.

    threads: OMP_NUM_THREADS for the subprocess when the environment does not set it already.
    resume: add run.py's --resume (continue from last.pth) and append to the run's log.
    stopper: stops the run at the time budget or when the runner is signalled.
    """
    log_dir = runs_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{run.settings[0]}.log"
    env = {**os.environ, **(run.recipe.env if run.recipe else {}), "PYTHONUNBUFFERED": "1"}
    if threads is not None:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    command = [sys.executable, "-u", str(REPO_ROOT / "run.py"), *run.argv, *(["--resume"] if resume else [])]
    epochs = flag_value(run.argv, "train_epochs") or "?"
    error_line = None
    stopped = killed = False
    # Line-buffered: `tail -f` on a run's log follows it while it trains (a block buffer held an hour of
    # a slow run's output back).
    with log_path.open("a" if resume else "w", buffering=1) as log:
        log.write(" ".join(shlex.quote(c) for c in command) + "\n")
        # A session of its own: a terminal's Ctrl-C or `timeout` signals only the runner, which forwards
        # one SIGTERM (a second signal would make run.py abort without saving last.pth).
        proc = subprocess.Popen(command, cwd=runs_dir, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1, start_new_session=True)
        if stopper is not None:
            stopper.register(proc)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        try:
            assert proc.stdout is not None  # PIPE was requested
            for line in proc.stdout:
                log.write(line)
                match = _EPOCH_LINE.search(line)
                if match:
                    logger.info("    %s  epoch %s/%s  train %.4f  vali %.4f  test %.4f", run.label, match[1],
                                epochs, float(match[2]), float(match[3]), float(match[4]))
                elif line.startswith(("error:", "interrupted:")):
                    error_line = line.strip()
                elif "Traceback" in line and error_line is None:
                    error_line = "crashed with a traceback"
                elif error_line == "crashed with a traceback" and line.strip() and not line.startswith(" "):
                    error_line = line.strip()
            code = proc.wait()
        finally:
            if timer:
                timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if stopper is not None:
                stopped, killed = stopper.unregister(proc)
    if timer and code < 0 and error_line is None and not stopped:
        error_line = f"killed after the --run-timeout of {timeout:g} s"
    return RunOutcome(code, error_line, log_path, stopped, killed)


def _result_line(runs_dir: Path, settings: list[str], task: str = LONG_TERM) -> str:
    records = {}
    path = runs_dir / RESULTS_JSONL
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        records[rec.get("setting")] = rec
    found = [records[s] for s in settings if s in records]
    if not found:
        return "no result recorded"
    if task != LONG_TERM:
        values = [f"{m.key} {sum(r[m.key] for r in found) / len(found):.4f}" for m in TASK_SPECS[task].metrics
                  if all(r.get(m.key) is not None for r in found)]
        return "  ".join([*values, f"epochs {found[0].get('epochs_run')}"])
    mse = sum(r["mse"] for r in found) / len(found)
    mae = sum(r["mae"] for r in found) / len(found)
    return f"mse {mse:.4f}  mae {mae:.4f}  epochs {found[0].get('epochs_run')}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m compare",
        description="Run models side by side with their recipes (compare/recipes.py) and write a comparison report.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--task", default=LONG_TERM, choices=TASK_CHOICES,
                   help="TSLib task: its recipes (compare/recipes.py TASK_RECIPES), axis and report metrics")
    p.add_argument("--data", nargs="+", required=True,
                   help=f"datasets of compare/recipes.py: {' '.join(RECIPES.datasets)}; other tasks: "
                        + "; ".join(f"{t}: {' '.join(TASK_RECIPES.datasets[t])}" for t in TASK_CHOICES[1:]))
    p.add_argument("--models", nargs="*", default=[],
                   help=f"model rows of compare/recipes.py: {', '.join(RECIPES.rows)} (other tasks: the models "
                        "of TASK_RECIPES)")
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96, 192, 336, 720],
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
    p.add_argument("--epochs", type=int, default=None, help="override every recipe's --train_epochs")
    p.add_argument("--patience", type=int, default=None, help="override every recipe's --patience")
    p.add_argument("--num_workers", type=int, default=None, help="override --num_workers (0 loads in-process)")
    p.add_argument("--extra", default="",
                   help="run.py flags applied to every run, as one string after '=': --extra='--d_model 16'")
    p.add_argument("--inverse", action="store_true", help="score and plot in original units (--inverse)")
    p.add_argument("--root", default=None, help="dataset root replacing the recipes' ./dataset (e.g. a mirror)")
    p.add_argument("--out", default="comparison", help="output folder (runs go to OUT/runs)")
    # Recipes come from compare/recipes.py now; the old flag stays only to say so.
    p.add_argument("--scripts", default=None, help=argparse.SUPPRESS)
    p.add_argument("--reference", default=None, help="CSV dataset,pred_len,model,mse,mae shown beside ours")
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
                        "its resume point; delete the copy when the run finishes (default 0: no copies)")
    p.add_argument("--max-crashes", type=int, default=2,
                   help="do not start again a run that crashed this many times (see --retry-failed)")
    p.add_argument("--retry-failed", action="store_true", help="start runs again whatever their crash count")
    p.add_argument("--jobs", type=int, default=1,
                   help="runs at once (each gets cpu_count // jobs threads unless OMP_NUM_THREADS is set)")
    p.add_argument("--no-timing", action="store_true", help="efficiency.md without train-step measurements")
    p.add_argument("--efficiency-device", default="cpu", choices=("cpu", "cuda"),
                   help="device of the efficiency.md measurements")
    p.add_argument("--no-report", action="store_true", help="run only; write the report later with compare.report")
    p.add_argument("--dry-run", action="store_true", help="print the plan (commands, skips, problems) and exit")
    return p


def _task_model(task_book: TaskBook, task: str, name: str) -> str:
    """The task's model named `name` (any case or punctuation); UserInputError listing the choices."""
    models = task_book.models(task)
    found = next((m for m in models if name_key(m) == name_key(name)), None)
    if found is None:
        raise UserInputError(f"{name} has no {task} recipe; choose from {', '.join(models)}")
    return found


def _rows(args: argparse.Namespace, book: RecipeBook = RECIPES, task_book: TaskBook = TASK_RECIPES) -> list[Row]:
    """The table rows named by --models (in the table's spelling) and the --variant rows, checked."""
    task = getattr(args, "task", LONG_TERM)
    if task == LONG_TERM:
        rows = [Row(name=book.row_name(m), base=book.row_name(m)) for m in args.models]
        rows += [replace(row, base=book.row_name(row.base)) for row in map(parse_variant, args.variant)]
    else:
        rows = [Row(name=_task_model(task_book, task, m), base=_task_model(task_book, task, m)) for m in args.models]
        rows += [replace(row, base=_task_model(task_book, task, row.base)) for row in map(parse_variant, args.variant)]
    if not rows:
        raise UserInputError("nothing to compare: pass --models and/or --variant")
    names = [r.name for r in rows]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserInputError(f"row names must be unique; repeated: {', '.join(duplicates)}")
    return rows


def _check_seed_flags(args: argparse.Namespace, rows: list[Row], out: Path) -> None:
    """--seeds must be distinct; --focus must name a row of this invocation or of an earlier one."""
    if args.seeds is not None:
        repeated = sorted({s for s in args.seeds if args.seeds.count(s) > 1})
        if repeated:
            raise UserInputError(f"--seeds repeats {', '.join(map(str, repeated))}: give each seed once")
    if args.focus is not None:
        path = out / CONFIG_FILE
        earlier = [r["name"] for r in json.loads(path.read_text()).get("rows", [])] if path.is_file() else []
        # The rows' own spellings go into compare.json, so a later `compare.report` finds them as they are.
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
        "reference": str(Path(args.reference).resolve()) if args.reference else config.get("reference"),
        "seeds": sorted({*config.get("seeds", []), *(args.seeds or [])}),
        "focus": args.focus if args.focus is not None else config.get("focus"),
    })
    if args.task != LONG_TERM:
        config.pop("pred_lens")
    config.setdefault("invocations", []).append({
        "command": "python -m compare " + " ".join(shlex.quote(a) for a in argv),
        "epochs": args.epochs,
        "patience": args.patience,
        "extra": list(args.extra_flags),
        "inverse": args.inverse,
        "root": args.root,
        "seeds": args.seeds,
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


def main(argv: list[str] | None = None, book: RecipeBook = RECIPES,
         clock: Callable[[], float] = time.monotonic, task_book: TaskBook = TASK_RECIPES) -> int:
    """Run the comparison; returns 0 when every run finished, 1 when some failed, 2 on a usage error,
    EXIT_UNFINISHED (3) when the time budget left runs to do, 128 + signal when the runner was signalled.

    book: the recipe table (tests pass a small one); task_book: the other tasks' table (`--task`).
    clock: seconds of the time budget (tests pass one that jumps to the deadline on cue)."""
    start_time = clock()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if args.scripts is not None:
            raise UserInputError("--scripts is gone: recipes come from compare/recipes.py (scripts/ is generated "
                                 "from it); add a row there or use --variant NAME=BASE:FLAGS")
        if args.jobs < 1:
            raise UserInputError(f"--jobs {args.jobs}: use 1 or more")
        _check_budget_flags(args)
        stop_at = _stop_time(args, start_time)
        args.extra_flags = shlex.split(args.extra)
        _check_task_flags(args, argv, Path(args.out))
        if args.reference and not Path(args.reference).is_file():
            raise UserInputError(f"--reference {args.reference} does not exist")
        if args.task == LONG_TERM:
            args.data = [book.dataset(name).name for name in args.data]
        else:
            args.data = [task_dataset(task_book, args.task, name) for name in args.data]
        rows = _rows(args, book, task_book)
        _check_seed_flags(args, rows, Path(args.out))
        plan = plan_runs(args, rows, book, task_book)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    out = Path(args.out)
    runs_dir = out / RUNS_DIR
    _restore_committed_records(out, runs_dir)
    done = finished_settings(runs_dir)
    crashes = _crash_counts(runs_dir)
    pending = [r for r in plan if r.error is None and not set(r.settings) <= done]
    skipped = [r for r in plan if r.error is None and set(r.settings) <= done]
    broken = [r for r in plan if r.error is not None]
    given_up = [r for r in pending if not args.retry_failed and crashes[tuple(r.settings)] >= args.max_crashes]
    todo = [r for r in pending if r not in given_up]
    if not args.dry_run:
        for run in todo:
            for path in restore_resume_copies(out, _last_files(runs_dir, run)):
                logger.info("%s: restored from the committed copy in %s/", path, out / RESUME_DIR)
        if args.resume_copies:
            drop_resume_copies(out, [setting for run in skipped for setting in run.settings])
    resumable = [r for r in todo if _has_last(runs_dir, r)]
    logger.info("comparison: %d runs planned, %d already finished, %d to run, %d cannot run%s%s",
                len(plan), len(skipped), len(todo), len(broken),
                f", {len(given_up)} given up after crashes" if given_up else "",
                f"; {len(resumable)} resume from last.pth" if resumable else "")
    _warn_changed_recipes(runs_dir, skipped)
    for run in broken:
        logger.info("  cannot run %s: %s", run.label, run.error)
    for run in given_up:
        logger.info("  not started again: %s crashed %d times (see compare_runs.jsonl and its log); fix the cause "
                    "and pass --retry-failed", run.label, crashes[tuple(run.settings)])
    if args.dry_run:
        for run in plan:
            if run.error is None:
                state = ("skip" if run in skipped else "gave up" if run in given_up
                         else "resume" if run in resumable else "run ")
                resume = " --resume" if run in resumable else ""
                logger.info("%s %s\n     python -u run.py %s%s", state, run.label, shlex.join(run.argv), resume)
        return 1 if broken else 0

    runs_dir.mkdir(parents=True, exist_ok=True)
    # Run artefacts (checkpoints, predictions) are large; only the report files are meant for git.
    (runs_dir / ".gitignore").write_text("*\n")
    _write_config(out, args, argv, rows, plan)
    for run in broken:
        _append_manifest(runs_dir, {**run.where(), "status": "failed", "error": run.error, "settings": [], "argv": [],
                                    "seconds": 0.0, "log": None, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})

    failures = [(r, r.error) for r in broken]
    failures += [(r, f"given up after {crashes[tuple(r.settings)]} crashes") for r in given_up]
    durations: list[float] = []
    finished: list[PlannedRun] = []
    stopped: list[PlannedRun] = []
    not_started: list[PlannedRun] = []
    lock = threading.Lock()
    threads = max(1, (os.cpu_count() or 1) // args.jobs) if args.jobs > 1 else None

    def attempt(k: int, run: PlannedRun, stopper: _Stopper) -> None:
        with lock:
            # Starting a run that would be stopped while it is still loading wastes the slice.
            if stopper.stop_requested() or stopper.seconds_left() < args.min_start:
                not_started.append(run)
                return
            eta = "ETA ?"
            if durations:
                remaining = (len(todo) - k + 1) / args.jobs
                eta = f"ETA {_duration(sum(durations) / len(durations) * remaining)}"
            logger.info("[%d/%d] %s  (%s)%s", k, len(todo), run.label, eta,
                        "  resuming from last.pth" if run in resumable else "")
        start = time.time()
        resume = _has_last(runs_dir, run)
        outcome = _execute(run, runs_dir, args.run_timeout, threads, resume=resume, stopper=stopper)
        seconds = time.time() - start
        ok = outcome.code == 0 and set(run.settings) <= finished_settings(runs_dir)
        if ok:
            status, error = "ok", None
        elif outcome.stopped or outcome.code in _INTERRUPTED_CODES:
            status = "interrupted"
            saved = _has_last(runs_dir, run)
            error = (f"interrupted by {stopper.reason or 'a signal'}"
                     + ("; killed after the grace period" if outcome.killed else "")
                     + ("; the next invocation resumes from last.pth" if saved
                        else "; no last.pth yet: the next invocation starts it from scratch"))
        else:
            status, error = "failed", outcome.error_line or f"run.py exited with code {outcome.code}"
            if resume and "--resume" in error:
                error += f"; to start this run over, delete its last.pth under {runs_dir / 'checkpoints'}"
        entry = {**run.where(), "status": status, "error": error, "settings": run.settings, "argv": run.argv,
                 "resumed": resume, "seconds": round(seconds, 3), "log": str(outcome.log_path.relative_to(out)),
                 "script": run.recipe.script, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        if status == "interrupted":
            entry["progress"] = _saved_progress(runs_dir, run)
            if args.resume_copies:
                keep_resume_copies(out, _last_files(runs_dir, run), args.resume_copies)
        elif status == "ok" and args.resume_copies:
            drop_resume_copies(out, run.settings)
        _append_manifest(runs_dir, entry)
        with lock:
            durations.append(seconds)
            if status == "ok":
                finished.append(run)
                logger.info("      done in %s: %s: %s", _duration(seconds), run.label,
                            _result_line(runs_dir, run.settings, run.task))
            elif status == "interrupted":
                stopped.append(run)
                logger.info("      stopped after %s: %s: %s", _duration(seconds), run.label, error)
            else:
                logger.info("      FAILED after %s: %s: %s (log: %s)", _duration(seconds), run.label, error,
                            outcome.log_path)
                failures.append((run, error))

    aborted = False
    with StopSignals() as signals, _Stopper(stop_at, args.grace, clock, signals) as stopper:
        pool = ThreadPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else None
        try:
            if pool is None:
                for k, run in enumerate(todo, start=1):
                    attempt(k, run, stopper)
            else:
                for future in [pool.submit(attempt, k, run, stopper) for k, run in enumerate(todo, start=1)]:
                    future.result()
        except KeyboardInterrupt:
            # A second Ctrl-C: no more waiting for runs to save.
            stopper.kill_all()
            logger.info("interrupted: rerun the same command to continue (finished runs are kept)")
            aborted = True
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        runner_signal = signals.signum

    crashed = len(failures) - len(broken) - len(given_up)
    logger.info("summary: %d ran (%d failed), %d skipped as finished, %d could not start; %s of run time",
                len(durations), crashed, len(skipped), len(broken), _duration(sum(durations)))
    for run, error in failures:
        logger.info("  FAILED %s: %s", run.label, error)
    remain = len(stopped) + len(not_started)
    logger.info("grid: %d of %d runs finished, %d interrupted, %d not started, %d failed; %s",
                len(skipped) + len(finished), len(plan), len(stopped), len(not_started), len(failures),
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
            if remain and not skipped and not finished:
                logger.info("no report yet: no run has finished")
                return EXIT_UNFINISHED
            print(f"error: {err}", file=sys.stderr)
            return 1
        logger.info("report: %s", ", ".join(str(p) for p in paths))
    if remain:
        return EXIT_UNFINISHED
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
