"""`python -m compare.naive_backfill FOLDER...`: fill the naive forecasters' scores into the records of a results
folder written before runs recorded them, so the report's relative scores, skill scores and win rates cover
their cells.

Each forecasting record of `<folder>/results.jsonl` and `<folder>/runs/results.jsonl` without a `naive` field gets
`naive` and `seasonal_naive` from `exp.naive_forecast.naive_test_scores`, computed from the run's own flags: the
record's `config`, or for a record older than that the argv of the manifest line (`compare_runs.jsonl` beside it)
that ran its setting. The same flags, data file, test windows, batches and shards (the record's `world_size`)
through the same code give the values a new run of those flags records, bit for bit. A filled record also gets
`naive_backfill` (date, commit, command, where its flags came from), which the report's notes name. Records that
have the fields, records of other tasks and stale records (`compare.grid.behaviour_changes`: the report leaves them
out, and the older code behind them may have scored other windows) keep their bytes.

Nothing is written unless every record to fill can be: a record whose flags cannot be recovered or whose data file
is missing is one `error:` line, and no file changes. `--dry-run` lists what would be filled.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compare.grid.behaviour_changes import stale_reason
from compare.grid.records import MANIFEST_FILE, NAIVE_BACKFILL, RESULTS_JSONL, RUNS_DIR, read_jsonl
from compare.grid.run_args import parse_run_args
from exp.naive_forecast import NAIVE_METHODS, naive_test_scores
from exp.resolved_args import resolve_args
from exp.run_config import code_version
from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.flag_defaults import FLAG_DEFAULTS
from utils.record_paths import from_record
from utils.tools import atomic_write_text

__all__ = ["BACKFILL_COMMAND", "Fill", "main", "needs_naive", "planned_fills", "run_flags", "write_fills"]

logger = logging.getLogger("compare")

BACKFILL_COMMAND = "python -m compare.naive_backfill"
#: the tasks whose records carry the naive scores (exp/exp_long_term_forecasting.py writes them)
FORECAST_TASKS = ("long_term_forecast", "zero_shot_forecast")
#: the record fields a run's recovered flags must reproduce
IDENTITY = ("data", "data_path", "features", "seq_len", "pred_len")


@dataclass
class Fill:
    """One record to fill: line `line` (0-based) of `path`, the run's flags (reading its data where it is now),
    where they came from, and once scored (`write_fills`) its naive fields."""

    path: Path
    line: int
    record: dict
    args: argparse.Namespace
    flags_from: str
    fields: dict | None = None

    @property
    def where(self) -> str:
        return _where(self.path, self.line, self.record)


def _where(path: Path, line: int, record: dict) -> str:
    """`path:line (setting)`, as messages name a record (line 0-based)."""
    return f"{path}:{line + 1} ({record.get('setting')})"


def needs_naive(record: dict) -> bool:
    """Whether `record` is a forecasting record without the naive fields (a record older than the config
    field names its task only by its setting's prefix)."""
    task = (record.get("config") or {}).get("task_name") or record.get("task_name")
    if task is None:
        task = next((t for t in FORECAST_TASKS if str(record.get("setting", "")).startswith(t + "_")), None)
    return task in FORECAST_TASKS and not any(method in record for method in NAIVE_METHODS)


def _manifest_argv(record: dict, manifest: Path, where: str) -> list[str]:
    """The argv of the latest manifest line that ran `record`'s setting (a finished one first)."""
    setting = record.get("setting")
    entries = [e for e in read_jsonl(manifest) if setting in (e.get("settings") or []) and e.get("argv")]
    if not entries:
        raise UserInputError(f"{where}: no `config` and no line of {manifest} with an argv runs this setting, so its "
                             "flags cannot be recovered; rerun the cell (python -m compare ...) to record them")
    finished = [e for e in entries if e.get("status") == "ok"]
    return (finished or entries)[-1]["argv"]


def run_flags(record: dict, manifest: Path, where: str) -> tuple[argparse.Namespace, str]:
    """(run.py's resolved arguments of the run behind `record`, where they came from): its `config` over run.py's
    defaults (flags added to run.py later keep their defaults, which keep the earlier behaviour), else the argv
    of its `manifest` line parsed by run.py's parser."""
    if record.get("config"):
        args, source = argparse.Namespace(**copy.deepcopy({**FLAG_DEFAULTS, **record["config"]})), "config"
    else:
        argv = _manifest_argv(record, manifest, where)
        try:
            args = parse_run_args(argv)
        except UserInputError as err:
            raise UserInputError(f"{where}: its argv in {manifest} does not parse: {err}") from None
        source = f"{MANIFEST_FILE} argv"
    mismatched = [f"{name} {record[name]!r} vs {getattr(args, name, None)!r}" for name in IDENTITY
                  if name in record and record[name] != getattr(args, name, None)]
    if mismatched:
        raise UserInputError(f"{where}: its flags from {source} do not match the record ({'; '.join(mismatched)}); "
                             "fix that line or rerun the cell")
    return resolve_args(args), source


def _rooted(args: argparse.Namespace, data_root: Path | None, where: str) -> argparse.Namespace:
    """`args` reading its data file from where it is now: `data_root/<last folder of --root_path>/` or `data_root/`
    with a data root, else --root_path as the record holds it (relative to the repository). Data loader workers
    change no window or its order, so the replay runs in this process (--num_workers 0)."""
    recorded = Path(args.root_path)
    roots = [from_record(recorded)] if data_root is None else [data_root / recorded.name, data_root]
    found = next((root for root in roots if (root / args.data_path).is_file()), None)
    if found is None:
        raise UserInputError(f"{where}: data file {roots[0] / args.data_path} is missing; pass --root DIR (the folder "
                             "holding its data folder, e.g. ../shared/datasets) or fetch it (python -m "
                             "data_provider.fetch)")
    return argparse.Namespace(**{**vars(args), "root_path": f"{found}/", "num_workers": 0})


def _record_files(folder: Path) -> list[tuple[Path, Path]]:
    """(results.jsonl, the manifest beside it) of `folder` and of its `runs/`, those that exist."""
    if not folder.is_dir():
        raise UserInputError(f"{folder} is not a folder; pass a results folder such as docs/results/paper_recipe")
    pairs = [(place / RESULTS_JSONL, place / MANIFEST_FILE) for place in (folder, folder / RUNS_DIR)
             if (place / RESULTS_JSONL).is_file()]
    if not pairs:
        raise UserInputError(f"{folder} holds no {RESULTS_JSONL} (nor {RUNS_DIR}/{RESULTS_JSONL}); pass a results "
                             "folder such as docs/results/paper_recipe")
    return pairs


def planned_fills(folders: Sequence[Path], data_root: Path | None = None) -> list[Fill]:
    """Every record of `folders` to fill, with the flags to score it by (UserInputError before anything is
    computed when one cannot be)."""
    fills = []
    for folder in folders:
        for results, manifest in _record_files(folder):
            for line, text in enumerate(results.read_text().splitlines()):
                try:
                    record = json.loads(text) if text.strip() else None
                except json.JSONDecodeError:
                    record = None
                if not isinstance(record, dict) or not needs_naive(record):
                    continue
                where = _where(results, line, record)
                # The report leaves a stale record out, and the code it ran may have scored other windows.
                if stale_reason(record):
                    logger.info("left as is (stale, the report leaves it out): %s", where)
                    continue
                args, source = run_flags(record, manifest, where)
                fills.append(Fill(results, line, record, _rooted(args, data_root, where), source))
    return fills


def _score(fills: Sequence[Fill]) -> None:
    """Each fill's naive fields, computed once per distinct (flags, world size)."""
    done: dict[str, dict] = {}
    for fill in fills:
        world_size = int(fill.record.get("world_size") or 1)
        key = json.dumps([vars(fill.args), world_size], sort_keys=True, default=str)
        if key not in done:
            try:
                done[key] = naive_test_scores(fill.args, world_size)
            except UserInputError as err:
                raise UserInputError(f"{fill.where}: {err}") from None
        fill.fields = done[key]


def write_fills(fills: Sequence[Fill]) -> list[Path]:
    """Score `fills` and rewrite each file holding one, atomically, with every other line as it was."""
    _score(fills)
    provenance = {"date": time.strftime("%Y-%m-%d"), "code_version": code_version()}
    written = []
    for path in dict.fromkeys(fill.path for fill in fills):
        lines = path.read_text().splitlines(keepends=True)
        for fill in (f for f in fills if f.path == path):
            filled = {**fill.record, **fill.fields,
                      NAIVE_BACKFILL: {**provenance, "command": BACKFILL_COMMAND, "flags_from": fill.flags_from}}
            ending = lines[fill.line][len(lines[fill.line].rstrip("\r\n")):]
            lines[fill.line] = json.dumps(filled, sort_keys=True, allow_nan=False) + ending
        atomic_write_text(path, "".join(lines))
        written.append(path)
    return written


def _describe(fill: Fill) -> str:
    """One record as the command lists it: file, line, setting, and its naive MSEs once scored."""
    text = f"{fill.where}, flags from {fill.flags_from}"
    if fill.fields is None:
        return text
    naive, seasonal = fill.fields["naive"] or {}, fill.fields["seasonal_naive"]
    return (f"{text}: naive MSE {naive.get('mse')!r}, seasonal naive MSE {seasonal.get('mse')!r} "
            f"(period {seasonal.get('period')})")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=BACKFILL_COMMAND,
                                description="Fill the naive forecasters' scores into results records written "
                                            "before runs recorded them, from each run's own flags.")
    p.add_argument("folders", nargs="+", type=Path, help="results folders, e.g. docs/results/paper_recipe")
    p.add_argument("--root", type=Path, default=None,
                   help="data root laid out like ./dataset (e.g. ../shared/datasets); default: each record's "
                        "--root_path, relative to the repository")
    p.add_argument("--dry-run", action="store_true", help="list the records that would be filled; write nothing")
    return p


def _backfill(args: argparse.Namespace) -> list[Path]:
    """main's work: plan every fill, then (unless --dry-run) score and write them, one line a record."""
    fills = planned_fills(args.folders, args.root.resolve() if args.root else None)
    if not fills:
        logger.info("no record to fill: every current forecasting record has its naive scores")
        return []
    if args.dry_run:
        for fill in fills:
            logger.info("would fill %s", _describe(fill))
        return []
    written = write_fills(fills)
    for fill in fills:
        logger.info("filled %s", _describe(fill))
    return written


def main(argv: list[str] | None = None) -> int:
    """Fill the folders' records; 2 with one `error: ...` line on bad input (and nothing written)."""
    log_to_stdout()
    args = build_parser().parse_args(argv)
    return run_command(lambda: _backfill(args))
