"""The comparison's plan: model rows (table rows and `--variant NAME=BASE:FLAGS`), and every (seed, dataset,
axis point, row) as a `PlannedRun` with its final run.py argv and TSLib setting strings, or the one-line
reason it cannot run. Planning reads only the recipe tables and the data folder; it runs nothing.

Seeds are the outermost loop (every run of the first seed, then the second, ...); a `--seeds` run gets
`--seed S` and the suffix `_s<S>` on its model_id (classification: on its `--des`, since the UEA loader
reads `<model_id>_TRAIN.ts`), a variant's runs the suffix `_<tag>`, so no two runs share a setting.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from compare.grid.run_args import flag_names, flag_value, merge_flags, parse_run_args
from compare.grid.tasks import LONG_TERM, TASK_SPECS, axis_points, check_task_data
from compare.grid.zero_shot import (
    check_zero_shot_rows,
    dropped_note,
    every_run_flags,
    foundation_name,
    zero_shot_argv,
)
from compare.recipes.recipe_book import Variant
from compare.recipes.tables import MASK_RATES, RECIPES, TASK_RECIPES, Recipe, RecipeBook, TaskBook, name_key
from data_provider.protocol import RUNNER_DEFAULT
from exp.arguments import make_setting
from exp.resolved_args import resolve_args
from exp.run_config import run_config
from models.foundation import FOUNDATION_NAMES
from utils.errors import UserInputError
from utils.record_paths import REPO_ROOT

__all__ = ["RUN_PY", "PlannedRun", "Row", "global_flags", "grid_name", "parse_variant", "plan_runs",
           "protocol_flags", "refuse_replaced_row_flags", "resolve_root", "run_py",
           "rows_from_args", "tag_name", "task_dataset", "task_model"]

#: the entry point every planned run executes, from the checkout (as TSLib's scripts run it)
RUN_PY = REPO_ROOT / "run.py"


def run_py() -> Path:
    """`RUN_PY`; UserInputError when it is missing: `pip install .` installs the packages, not run.py."""
    if not RUN_PY.is_file():
        raise UserInputError(f"runs execute run.py from a checkout of CAPS-TSLib and {RUN_PY} does not exist (pip "
                             "installs the library's packages only): run this command inside a clone")
    return RUN_PY


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

    point: the task's axis value (`compare.grid.tasks`): the horizon of long-term forecasting, imputation's
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
    #: run.py's resolved flags (`exp.run_config.run_config`): what a finished record must match to be reused
    config: dict = field(default_factory=dict)
    #: lines the runner prints about this run's plan (a zero-shot row's every-run flags it does not get)
    notes: list[str] = field(default_factory=list)
    #: run.py's namespace of `argv`, parsed and resolved once when planned (None when the run cannot run); what
    #: reads the run's flags (its protocol, its window lengths) reads them here, never from argv's text again
    args: argparse.Namespace | None = None

    @property
    def protocol(self) -> str | None:
        """run.py's --protocol of this run: the runner's, or its variant's own (None when it cannot run)."""
        return None if self.args is None else self.args.protocol

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


def tag_name(name: str) -> str:
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
    if not tag_name(name):
        raise UserInputError(f"--variant {text!r}: NAME needs at least one letter or digit")
    return Row(name=name, base=base.strip(), flags=tuple(words), tag=tag_name(name))


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


def protocol_flags(args: argparse.Namespace) -> list[str]:
    """run.py's `--protocol` of the runner's --protocol, put before a row's flags (a variant may set its own)."""
    return ["--protocol", getattr(args, "protocol", RUNNER_DEFAULT)]


def global_flags(args: argparse.Namespace) -> list[str]:
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
    if args.logger:
        # One group per grid: MLflow's experiment, W&B's group, TensorBoard's folder under <out>/runs/tracking/.
        flags += ["--logger", *args.logger, "--logger_group", grid_name(args)]
    return flags + list(args.extra_flags)


#: run.py flag -> the runner's option that sets it for every run (`global_flags`)
RUNNER_OPTION_OF = {"--train_epochs": "--epochs", "--patience": "--patience", "--num_workers": "--num_workers",
                    "--inverse": "--inverse", "--logger": "--logger", "--logger_group": "--logger",
                    "--no_progress": "the runner"}


def refuse_replaced_row_flags(args: argparse.Namespace, rows: list[Row], variants: Mapping[str, Variant]) -> None:
    """UserInputError when a flag set for every run (--extra, --epochs, ...) would silently replace a flag
    that defines a row (a --variant's FLAGS, a table variant's flags such as `CAPS w/o Path1`'s
    --caps_paths), or when --extra repeats a flag another runner option sets: the runner's flags come last
    in every argv, so the row would not run what its name says."""
    extra = flag_names(args.extra_flags)
    for flag in extra:
        if flag in RUNNER_OPTION_OF:
            raise UserInputError(f"--extra sets {flag}, which {RUNNER_OPTION_OF[flag]} sets for every run; "
                                 f"give it once (as {RUNNER_OPTION_OF[flag]})")
    every_run = {flag: option for flag, option in RUNNER_OPTION_OF.items() if flag in flag_names(global_flags(args))}
    every_run.update({flag: "--extra" for flag in extra})
    for row in rows:
        variant = variants.get(row.base)
        try:
            row_flags = flag_names(row.flags)
        except UserInputError:
            row_flags = []  # a row with a bad flag fails on its own when it is planned (`_plan_one`)
        own = [*(f"--{flag}" for flag in (variant.flags if variant else {})), *row_flags]
        clash = [flag for flag in dict.fromkeys(own) if flag in every_run]
        if clash:
            flag = clash[0]
            raise UserInputError(f"row {row.name!r} sets {flag} and {every_run[flag]} sets {flag} for every run, "
                                 f"which would replace the row's value; drop {flag} from {every_run[flag]} or "
                                 "from the row")


def grid_name(args: argparse.Namespace) -> str:
    """The comparison's name in the trackers: the name of its --out folder."""
    return Path(args.out).resolve().name


def plan_runs(args: argparse.Namespace, rows: list[Row], book: RecipeBook = RECIPES,
              task_book: TaskBook = TASK_RECIPES) -> list[PlannedRun]:
    """Every (seed, dataset, axis point, row) with its final argv and settings; an unknown dataset raises
    UserInputError, other problems are recorded on the run (`error`) instead of raised, so one bad row
    never stops the others. `args.seeds` (None: the recipes' seeds) adds `--seed S` and the model_id
    suffix `_s<S>` to each run.

    args.task (default long-term): the axis is the horizon (`args.pred_lens`) for long-term forecasting,
    else the task's (`compare.grid.tasks.axis_points`: `args.mask_rates`, `args.blocks`); the recipes are
    `task_book`'s."""
    task = getattr(args, "task", LONG_TERM)
    data_root = Path(args.root).resolve() if args.root else None
    refuse_replaced_row_flags(args, rows, book.variants if task == LONG_TERM else {})
    zero_shot = {row.base for row in rows if foundation_name(row.base) == row.base} if task == LONG_TERM else set()
    check_zero_shot_rows(args, rows, zero_shot)
    overrides = global_flags(args)
    protocol = protocol_flags(args)
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
                        if row.base in zero_shot:
                            _plan_zero_shot(run, protocol, overrides, data_root, book, args)
                        else:
                            _plan_one(run, protocol, overrides, data_root, book)
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
                            _plan_task_one(run, protocol, overrides, data_root, task_book)
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


def _plan_one(run: PlannedRun, protocol: list[str], overrides: list[str], data_root: Path | None,
              book: RecipeBook) -> None:
    """Fill in run's recipe, argv and settings, or its `error` when it cannot run."""
    row, dataset, pred_len = run.row, run.dataset, run.pred_len
    try:
        run.recipe = book.recipe(row.base, dataset, pred_len)
        argv = merge_flags(merge_flags(run.recipe.argv, protocol), row.flags)
        _forecast_planned(run, merge_flags(argv, overrides), dataset, data_root)
    except UserInputError as err:
        run.error = str(err)


def _plan_zero_shot(run: PlannedRun, protocol: list[str], overrides: list[str], data_root: Path | None,
                    book: RecipeBook, args: argparse.Namespace) -> None:
    """Fill in a zero-shot row's run (`compare.grid.zero_shot`): the foundation model on the dataset's file at
    its look-back, the row's flags, the every-run flags it reads; or its `error`."""
    row, data = run.row, book.dataset(run.dataset)
    try:
        if data.stands_in:
            raise UserInputError(f"zero-shot row {row.name} on a user's own file is not planned yet; run it with "
                                 "run.py --task_name zero_shot_forecast")
        base = zero_shot_argv(row.base, data, run.pred_len, args.test_every)
        run.recipe = Recipe(row=row.name, dataset=data.name, pred_len=run.pred_len, argv=tuple(base),
                            env=dict(book.env), fetch=data.fetch, script="")
        kept, dropped = every_run_flags(overrides)
        if dropped:
            run.notes.append(dropped_note(row.name, dropped))
        argv = merge_flags(merge_flags(merge_flags(base, protocol), row.flags), kept)
        _forecast_planned(run, argv, data.name, data_root)
    except UserInputError as err:
        run.error = str(err)


def _forecast_planned(run: PlannedRun, argv: list[str], dataset: str, data_root: Path | None) -> None:
    """Finish a forecasting run's plan from its merged `argv`: tag its model id, root it at `data_root`, parse
    and resolve it once, check that its data file exists (UserInputError naming the fetch command if not)."""
    argv = _tagged(run, argv, "model_id", dataset)
    argv = merge_flags(argv, ["--root_path", resolve_root(flag_value(argv, "root_path") or "./dataset", data_root)])
    parsed = parse_run_args(argv)
    run.config = run_config(parsed)
    parsed = resolve_args(parsed)
    data_file = Path(parsed.root_path) / parsed.data_path
    if not data_file.is_file():
        raise UserInputError(f"data file {data_file} is missing: run `{_fetch_hint(run.recipe)}` from the "
                             "repository root, or pass --root DIR (a folder laid out like ./dataset)")
    _planned(run, argv, parsed)


def _planned(run: PlannedRun, argv: list[str], parsed: argparse.Namespace) -> None:
    """Give `run` its final argv, its resolved namespace and the setting string of each of its itr iterations."""
    run.argv = argv
    run.args = parsed
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
    if not task_book.has_recipe(task, row.base, dataset):
        first = (args.mask_rates or MASK_RATES)[0] if task == "imputation" else 0
        return {first: -1}
    return dict(axis_points(task, task_book, row.base, dataset, args.mask_rates, args.blocks))


def _plan_task_one(run: PlannedRun, protocol: list[str], overrides: list[str], data_root: Path | None,
                   book: TaskBook) -> None:
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
        argv = merge_flags(merge_flags(merge_flags(base, protocol), row.flags), overrides)
        # UEA's loader reads <model_id>_TRAIN.ts: classification runs are told apart by --des instead.
        argv = _tagged(run, argv, "des" if task == "classification" else "model_id",
                       "Exp" if task == "classification" else dataset)
        root_path = resolve_root(flag_value(argv, "root_path") or "./dataset", data_root)
        argv = merge_flags(argv, ["--root_path", root_path])
        parsed = parse_run_args(argv)
        # The command as typed, before the experiment fills lengths in from the data (as run.py records it).
        run.config = run_config(parsed)
        if not data.checked:
            check_task_data(task, dataset, parsed.root_path, parsed.data_path, data.fetch)
        parsed = resolve_args(parsed)  # the lengths run.py derives from the data
    except UserInputError as err:
        run.error = str(err)
        return
    _planned(run, argv, parsed)


def task_model(task_book: TaskBook, task: str, name: str) -> str:
    """The task's model named `name` (any case or punctuation); UserInputError listing the choices."""
    models = task_book.models(task)
    found = next((m for m in models if name_key(m) == name_key(name)), None)
    if found is None:
        raise UserInputError(f"{name} has no {task} recipe; choose from {', '.join(models)}")
    return found


def _row_name(book: RecipeBook, name: str) -> str:
    """The table's spelling of row `name`, else the foundation model it names (a zero-shot row)."""
    try:
        return book.row_name(name)
    except UserInputError as err:
        found = foundation_name(name)
        if found is None:
            raise UserInputError(f"{err} or a zero-shot foundation model ({', '.join(FOUNDATION_NAMES)})") from None
        return found


def rows_from_args(args: argparse.Namespace, book: RecipeBook = RECIPES, task_book: TaskBook = TASK_RECIPES) -> list[Row]:
    """The table rows named by --models (in the table's spelling) and the --variant rows, checked."""
    task = getattr(args, "task", LONG_TERM)
    if task == LONG_TERM:
        rows = [Row(name=_row_name(book, m), base=_row_name(book, m)) for m in args.models]
        rows += [replace(row, base=_row_name(book, row.base)) for row in map(parse_variant, args.variant)]
    else:
        rows = [Row(name=task_model(task_book, task, m), base=task_model(task_book, task, m)) for m in args.models]
        rows += [replace(row, base=task_model(task_book, task, row.base)) for row in map(parse_variant, args.variant)]
    if not rows:
        raise UserInputError("nothing to compare: pass --models and/or --variant")
    names = [r.name for r in rows]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserInputError(f"row names must be unique; repeated: {', '.join(duplicates)}")
    return rows
