"""A comparison on the user's own data: `python -m compare --data_path FILE --name NAME --models ...`.

A user's file has no recipe of its own, so it *stands in* for a dataset of the recipe tables, as the real sets
of `compare.recipes.task_book` do: every model runs its block of that dataset with the file's own data flags in place,
and every run, table, figure and `compare.json` entry carries NAME.

- long-term forecasting (the default task): each model's **ETTh1** recipe (`GENERIC_RECIPE`: every row of the
  table has one; small, 7-variate hourly data), its block of the nearest ETTh1 horizon, with `--data custom
  --root_path DIR --data_path FILE --enc_in/--dec_in/--c_out N --freq F --target LAST --model_id
  NAME_<seq_len>_<H>`: N is the number of columns beside `date`, F pandas' frequency of the dates
  (`compare.grid.own_files.run_freq`), LAST the file's last column (so its column order is kept). Without
  `--pred_lens` the table's horizons that fit the file's splits are run and the others named in one line;
- `--task short_term_forecast`: a long CSV (`--data short_term_csv`) takes the M4 block of its timestamps' group
  (Monthly without timestamps) with that group's horizon and seasonality;
- `--task anomaly_detection`: an anomaly CSV (`--data anomaly_csv`) takes each model's MSL block.

Per file, `--data_flags "NAME=--flag value ..."` sets the data flags of `DATA_FLAGS` (a horizon and seasonality
for a short-term file without timestamps, a target column, an anomaly train ratio, ...). Every problem (no
date column, text in a value column, too few rows for a window, an unsafe NAME, a NAME without a file) is one
line before anything is written.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from compare.grid.own_files import (
    AnomalyFile,
    LongTermFile,
    ShortTermFile,
    read_anomaly_file,
    read_long_term_file,
    read_short_term_file,
)
from compare.grid.plan import PlannedRun
from compare.grid.tasks import LONG_TERM
from compare.recipes.recipe_book import DEFAULT, Dataset, RecipeBook, name_key
from compare.recipes.task_book import TaskBook, TaskData
from data_provider.anomaly_csv import DEFAULT_TRAIN_RATIO
from data_provider.data_loader import FILLNA_CHOICES
from data_provider.protocol import is_strict
from exp.naive_forecast import seasonal_period
from utils.errors import UserInputError
from utils.flag_defaults import flag_default
from utils.record_paths import REPO_ROOT
from utils.timefeatures import base_unit

__all__ = ["DATA_FLAGS", "GENERIC_RECIPE", "OwnData", "add_own_data_flags", "fit_plan", "own_data_lines",
           "own_data_record", "resolve_own_data", "with_own_data"]

logger = logging.getLogger("compare")

#: the recipe dataset a user's file borrows each model's block from, per task (short-term: without timestamps)
GENERIC_RECIPE = {LONG_TERM: "ETTh1", "short_term_forecast": "Monthly", "anomaly_detection": "MSL"}
#: the run.py data flags `--data_flags NAME=FLAGS` may set, per task
DATA_FLAGS = {LONG_TERM: ("target", "freq", "fillna"), "short_term_forecast": ("pred_len", "seasonality"),
              "anomaly_detection": ("anomaly_train_ratio", "seq_len")}
_INTEGER_FLAGS = ("pred_len", "seasonality", "seq_len")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def add_own_data_flags(p: argparse.ArgumentParser) -> None:
    """The runner's flags of a user's own files (this module's docstring)."""
    p.add_argument("--data_path", nargs="+", default=None, metavar="FILE",
                   help="your own CSV file(s), compared beside or instead of --data (docs/compare.md: Your own data); "
                        "long-term: a date column and numeric variates, run with each model's ETTh1 recipe")
    p.add_argument("--name", nargs="+", default=None, metavar="NAME",
                   help="the name of each --data_path file in every table, figure and model_id (letters, digits, "
                        "'_', '-', '.')")
    p.add_argument("--data_flags", action="append", default=[], metavar="NAME=FLAGS",
                   help="run.py data flags of one own file (repeatable): long-term "
                        f"{', '.join(DATA_FLAGS[LONG_TERM])}; short-term {', '.join(DATA_FLAGS['short_term_forecast'])}; "
                        f"anomaly {', '.join(DATA_FLAGS['anomaly_detection'])}")


@dataclass(frozen=True)
class OwnData:
    """One user file of the comparison: its NAME, absolute path, task, the recipe dataset it stands in for, the
    run.py data flags its runs get, what was read from it (`file`) and the facts the report states (`facts`)."""

    name: str
    path: Path
    task: str
    stands_in: str
    flags: dict[str, str | int | float]
    file: LongTermFile | ShortTermFile | AnomalyFile
    facts: dict = field(default_factory=dict)


def _check_name(name: str, taken: set[str]) -> str:
    if not _NAME.fullmatch(name):
        raise UserInputError(f"--name {name!r} cannot name the runs' model_id, folders and tables: use 1 to 64 "
                             "letters, digits, '_', '-' and '.', starting with a letter or digit (e.g. --name ILI)")
    if name_key(name) in taken:
        raise UserInputError(f"--name {name} is also the name of a dataset of --data, of the recipe dataset it "
                             "borrows from or of another --name: give each dataset its own name")
    return name


def _data_flags(args: argparse.Namespace, names: Sequence[str]) -> dict[str, dict[str, str]]:
    """{NAME: {flag: value}} of the `--data_flags NAME=FLAGS` values, checked against `DATA_FLAGS`."""
    allowed = DATA_FLAGS[args.task]
    found: dict[str, dict[str, str]] = {name: {} for name in names}
    for text in args.data_flags:
        name, eq, rest = text.partition("=")
        if not eq or name.strip() not in found:
            raise UserInputError(f"--data_flags {text!r} must look like NAME=FLAGS with NAME one of --name "
                                 f"{' '.join(names) or '(none given)'}, e.g. '{names[0] if names else 'ILI'}=--target OT'")
        try:
            words = shlex.split(rest)
        except ValueError as err:
            raise UserInputError(f"--data_flags {text!r}: cannot split its flags ({err})") from None
        flags = found[name.strip()]
        pairs = [w.split("=", 1) if w.startswith("--") and "=" in w else [w] for w in words]
        words = [part for pair in pairs for part in pair]
        if len(words) % 2 or not all(w.startswith("--") for w in words[::2]):
            raise UserInputError(f"--data_flags {text!r}: give '--flag value' pairs of {', '.join(allowed)}")
        for flag, value in zip(words[::2], words[1::2], strict=True):
            if flag[2:] not in allowed:
                raise UserInputError(f"--data_flags {text!r}: {flag} is not a data flag of {args.task}; choose from "
                                     f"{', '.join('--' + f for f in allowed)}")
            flags[flag[2:]] = value
    return found


def _number(name: str, flags: dict[str, str], flag: str, kind: type) -> int | float | None:
    """The data flag `flag` of `name` as a positive `kind`, None when it is not given; one line when it is not one."""
    if flag not in flags:
        return None
    try:
        value = kind(flags[flag])
    except ValueError:
        value = 0
    if value <= 0:
        raise UserInputError(f"--data_flags {name}=--{flag} {flags[flag]}: give a positive "
                             f"{'whole number' if kind is int else 'number'}")
    return value


def _own_long_term(name: str, path: Path, flags: dict[str, str]) -> OwnData:
    fillna = flags.get("fillna", flag_default("fillna"))
    if fillna not in FILLNA_CHOICES:
        raise UserInputError(f"--data_flags {name}=--fillna {flags['fillna']}: choose from {', '.join(FILLNA_CHOICES)}")
    if "freq" in flags:
        base_unit(flags["freq"])
    file = read_long_term_file(path, fillna)
    target = flags.get("target", file.columns[-1])
    if target not in file.columns:
        raise UserInputError(f"--data_flags {name}=--target {target}: {path} has no such column; its columns: "
                             f"{', '.join(file.columns)}")
    n = len(file.columns)
    freq = flags.get("freq", file.freq)
    period, period_from = seasonal_period(file.step, freq)
    run_flags = {"enc_in": n, "dec_in": n, "c_out": n, "freq": freq, "target": target,
                 **{k: v for k, v in flags.items() if k == "fillna"}}
    facts = {"variates": n, "rows": file.rows, "splits": list(file.splits()), "freq": freq,
             "freq_from": "--data_flags" if "freq" in flags else file.freq_from, "target": target,
             "seasonal_period": period, "period_from": period_from}
    return OwnData(name, path, LONG_TERM, GENERIC_RECIPE[LONG_TERM], run_flags, file, facts)


def _own_short_term(name: str, path: Path, flags: dict[str, str]) -> OwnData:
    file = read_short_term_file(path)
    horizon = _number(name, flags, "pred_len", int) or file.horizon
    seasonality = _number(name, flags, "seasonality", int) or file.seasonality
    if horizon is None or seasonality is None:
        raise UserInputError(f"{path}: no M4 group is known for its step ({file.freq_from}), so its horizon and "
                             f"seasonality are unknown: pass --data_flags '{name}=--pred_len H --seasonality m'")
    run_flags = {"data": "short_term_csv", "data_path": path.name, "seasonal_patterns": DEFAULT,
                 "pred_len": horizon, "seasonality": seasonality}
    facts = {"series": file.series, "shortest": file.shortest, "pred_len": horizon, "seasonality": seasonality,
             "group": file.group, "freq_from": file.freq_from}
    return OwnData(name, path, "short_term_forecast", file.group or GENERIC_RECIPE["short_term_forecast"],
                   run_flags, file, facts)


def _own_anomaly(name: str, path: Path, flags: dict[str, str]) -> OwnData:
    file = read_anomaly_file(path)
    ratio = _number(name, flags, "anomaly_train_ratio", float)
    if ratio is not None and ratio >= 1:
        raise UserInputError(f"--data_flags {name}=--anomaly_train_ratio {ratio:g}: give the share of rows that "
                             "trains, in (0, 1)")
    run_flags = {"data_path": path.name, **({"anomaly_train_ratio": ratio} if ratio else {}),
                 **({"seq_len": _number(name, flags, "seq_len", int)} if "seq_len" in flags else {})}
    facts = {"variates": len(file.columns), "rows": file.rows, "train_ratio": ratio or DEFAULT_TRAIN_RATIO}
    return OwnData(name, path, "anomaly_detection", GENERIC_RECIPE["anomaly_detection"], run_flags, file, facts)


_READERS = {LONG_TERM: _own_long_term, "short_term_forecast": _own_short_term, "anomaly_detection": _own_anomaly}


def _reserved_names(args: argparse.Namespace, book: RecipeBook, task_book: TaskBook) -> set[str]:
    """The normalised names a NAME must not take: long-term, those of the --data datasets and of the recipe dataset
    it borrows from; another task, every set of the task's table (an M4 group's name changes the report)."""
    if args.task == LONG_TERM:
        return {key for name in [*(args.data or []), GENERIC_RECIPE[LONG_TERM]] for key in book.dataset_keys(name)}
    return {name_key(name) for name in [*(args.data or []), *task_book.datasets.get(args.task, {})]}


def resolve_own_data(args: argparse.Namespace, book: RecipeBook, task_book: TaskBook
                     ) -> tuple[list[OwnData], RecipeBook, TaskBook]:
    """Read and check every `--data_path` file with its `--name`, add the names to `args.data`, and give the
    recipe tables a dataset for each (`with_own_data`); no files and the tables unchanged without --data_path."""
    paths, names = args.data_path or [], args.name or []
    if len(paths) != len(names):
        missing = "--name" if len(paths) > len(names) else "--data_path"
        raise UserInputError(f"--data_path names {len(paths)} file(s) and --name {len(names)} name(s): give {missing} "
                             "one per file, in the same order (--data_path my.csv --name Mine)")
    if not args.data and not paths:
        raise UserInputError("nothing to run on: pass --data NAME [NAME ...] (datasets of compare/recipes/tables.py) or "
                             "--data_path FILE --name NAME (your own CSV)")
    if args.data_flags and not paths:
        raise UserInputError("--data_flags sets the data flags of a --data_path file: add --data_path FILE --name NAME")
    if paths and args.task not in _READERS:
        raise UserInputError(f"--data_path runs {', '.join(_READERS)} on your own file, not {args.task}; use a dataset "
                             "of --data")
    if not paths:
        return [], book, task_book
    taken = _reserved_names(args, book, task_book)
    for name in names:
        taken.add(name_key(_check_name(name, taken)))
    flags = _data_flags(args, names)
    owns = [_READERS[args.task](name, Path(path).resolve(), flags[name]) for path, name in zip(paths, names, strict=True)]
    args.data = [*(args.data or []), *names]
    return owns, *with_own_data(owns, book, task_book)


def with_own_data(owns: Sequence[OwnData], book: RecipeBook, task_book: TaskBook) -> tuple[RecipeBook, TaskBook]:
    """The recipe tables with each own file as a dataset standing in for its recipe dataset (first, so its name
    is found before a table dataset's alias)."""
    datasets = {}
    tasks = {task: dict(sets) for task, sets in task_book.datasets.items()}
    for own in owns:
        folder = str(own.path.parent) + os.sep
        if own.task == LONG_TERM:
            datasets[own.name] = Dataset(own.name, folder, own.path.name, "custom", own.facts["variates"],
                                         fetch=own.name, folder="", stands_in=own.stands_in, flags=own.flags)
            continue
        fields = {"root_path": folder, "id": own.name, "data": "anomaly_csv", "channels": own.facts.get("variates", 1)}
        tasks[own.task] = {own.name: TaskData(own.name, fields, "", "", stands_in=own.stands_in, flags=own.flags,
                                              checked=True), **tasks[own.task]}
    table = {name: data for name, data in book.datasets.items() if name not in datasets}
    return replace(book, datasets={**datasets, **table}), replace(task_book, datasets=tasks)


_FIT_HINTS = {LONG_TERM: "pass a shorter --pred_lens (or --extra='--seq_len L')",
              "short_term_forecast": "drop the series from the file or pass --data_flags '{name}=--pred_len H'",
              "anomaly_detection": "pass --data_flags '{name}=--seq_len L' with a shorter window"}


def _misfit(own: OwnData, run: PlannedRun) -> str | None:
    """Why `run`'s windows do not fit its own file (under its own protocol), or None."""
    parsed = run.args
    if own.task == LONG_TERM:
        return own.file.window_problem(parsed.seq_len, parsed.pred_len)
    if own.task == "short_term_forecast":
        return own.file.series_problem(parsed.pred_len, parsed.seasonality, is_strict(parsed))
    ratio = parsed.anomaly_train_ratio if parsed.anomaly_train_ratio is not None else DEFAULT_TRAIN_RATIO
    return own.file.window_problem(parsed.seq_len, ratio)


def fit_plan(plan: list[PlannedRun], owns: Sequence[OwnData], explicit_horizons: bool) -> list[PlannedRun]:
    """`plan` with every run on an own file checked against the file's splits: a misfit is one line
    (UserInputError), except a long-term horizon the user did not ask for (`explicit_horizons` False), which
    is left out of the plan with one logged line per file. Each run is checked under its own protocol (the
    runner's --protocol, or its variant's)."""
    by_name = {own.name: own for own in owns}
    left_out: dict[str, dict[int, str]] = {}
    for run in plan:
        own = by_name.get(run.dataset)
        if own is None or run.error is not None:
            continue
        problem = _misfit(own, run)
        if problem is None:
            continue
        where = f"{run.row.name} on {own.name} ({own.path.name})"
        if own.task != LONG_TERM or explicit_horizons:
            raise UserInputError(f"{where}: {problem}; {_FIT_HINTS[own.task].format(name=own.name)}")
        left_out.setdefault(own.name, {}).setdefault(run.pred_len, problem)
    for name, horizons in left_out.items():
        if all(run.pred_len in horizons for run in plan if run.dataset == name):
            raise UserInputError(f"{name} ({by_name[name].path.name}): no horizon of --pred_lens fits: "
                                 f"{next(iter(horizons.values()))}; pass a shorter --pred_lens")
        logger.info("%s: H = %s left out: %s; pass --pred_lens to choose the horizons", name,
                    " ".join(map(str, sorted(horizons))), horizons[min(horizons)])
    return [run for run in plan if run.pred_len not in left_out.get(run.dataset, {}) or run.task != LONG_TERM]


def _recorded_path(path: Path, out: Path) -> dict[str, str]:
    """The file's path relative to the repository when inside it, else relative to the output folder."""
    if path == REPO_ROOT or REPO_ROOT in path.parents:
        return {"data_path": path.relative_to(REPO_ROOT).as_posix(), "relative_to": "repository"}
    return {"data_path": Path(os.path.relpath(path, out.resolve())).as_posix(), "relative_to": "output folder"}


def own_data_record(owns: Sequence[OwnData], out: Path) -> dict[str, dict]:
    """compare.json's `own_data` entries: per NAME its file (a relative path), task, the recipe dataset it
    stands in for, its run.py data flags and what was read from it."""
    return {own.name: {**_recorded_path(own.path, out), "task": own.task, "stands_in": own.stands_in,
                       "flags": {k: v for k, v in own.flags.items() if v != DEFAULT}, **own.facts}
            for own in owns}


def _long_term_line(name: str, entry: dict) -> str:
    flags = entry["flags"]
    n = entry["variates"]
    season = (f"seasonal naive period {entry['seasonal_period']} ({entry['period_from']})" if entry["seasonal_period"]
              else f"no seasonal period is known for its step ({entry['period_from']}): seasonal naive not scored")
    return (f"each model runs its {entry['stands_in']} recipe (the block of the nearest {entry['stands_in']} horizon) "
            f"with the data flags replaced: `--data custom`, its folder and file, `--enc_in {n} --dec_in {n} --c_out "
            f"{n} --freq {flags['freq']} --target {flags['target']}`, model_id `{name}_<seq_len>_<H>`; {n} variates, "
            f"{entry['rows']} rows split {'/'.join(map(str, entry['splits']))}, --freq from {entry['freq_from']}; "
            f"{season}")


def own_data_lines(config: dict) -> list[str]:
    """The report's lines naming each own file of `config` (compare.json), where its path is relative to, and the
    recipe its runs borrow; [] when the comparison has none."""
    lines = []
    for name, entry in config.get("own_data", {}).items():
        if name not in config.get("data", []):
            continue
        where = f"**Own data {name}:** `{entry['data_path']}` (relative to the {entry['relative_to']}); "
        if entry["task"] == LONG_TERM:
            lines.append(where + _long_term_line(name, entry) + ".")
        elif entry["task"] == "short_term_forecast":
            lines.append(where + f"each model runs its M4 {entry['stands_in']} block with `--data short_term_csv`, "
                         f"`--pred_len {entry['pred_len']} --seasonality {entry['seasonality']}` "
                         f"({entry['series']} series, the shortest {entry['shortest']} values; group from "
                         f"{entry['freq_from']}).")
        else:
            own = " ".join(f"--{k} {v}" for k, v in entry["flags"].items() if k != "data_path")
            lines.append(where + f"each model runs its {entry['stands_in']} block with `--data anomaly_csv --enc_in "
                         f"{entry['variates']} --c_out {entry['variates']}{' ' + own if own else ''}` ({entry['rows']} "
                         f"rows, the first {entry['train_ratio']:g} of them train).")
    return lines
