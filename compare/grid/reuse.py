"""Finished runs taken from other comparison folders instead of training them again (`python -m compare ...
--reuse DIR [DIR ...]`).

A planned run with no record in this folder is taken from the first DIR whose records hold a current result of
every one of its settings: a record `record_state` would count as done had the run run here (the planned
flags, `--root_path` aside, and no later behaviour change in `compare.grid.behaviour_changes`). Its records are
appended to this folder's `runs/results.jsonl` and its attempt to `runs/compare_runs.jsonl`, both marked
`reused_from` (DIR as given); its checkpoints and prediction arrays stay in DIR. Nothing is trained, and a run
with a record here, current or stale, is never replaced. A folder that holds a record of the run's setting but
not a current one is named with the reason (`NotReused`), so a run trained again is never a silent surprise.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compare.grid.behaviour_changes import stale_reason
from compare.grid.plan import PlannedRun
from compare.grid.records import MANIFEST_FILE, RESULTS_JSONL, REUSED_FROM, RUNS_DIR, copy_records, read_jsonl
from compare.grid.run_state import append_manifest, current_record, record_state
from exp.run_config import differing_flags
from utils.errors import UserInputError
from utils.tools import append_text

__all__ = ["NotReused", "Reused", "adopt", "reusable_runs", "reuse_folders", "take_reused"]

logger = logging.getLogger("compare")


@dataclass(frozen=True)
class Reused:
    """A planned run found finished in `folder` (as given): its records, one per setting, and its attempt."""

    run: PlannedRun
    folder: str
    records: list[dict]
    attempt: dict


@dataclass(frozen=True)
class NotReused:
    """A planned run that `folder` (as given) holds a record of, not taken: `why` in words."""

    run: PlannedRun
    folder: str
    why: str


def reuse_folders(out: Path, given: Sequence[str]) -> list[str]:
    """`given` (the command's --reuse), checked: each a comparison folder with records, not `out`, named once."""
    for folder in given:
        path = Path(folder)
        if not _record_files(path):
            raise UserInputError(f"--reuse {folder}: no {RESULTS_JSONL} there (nor under {RUNS_DIR}/); name a "
                                 "comparison folder the runner wrote")
        if path.resolve() == out.resolve():
            raise UserInputError(f"--reuse {folder}: that is --out itself; name other comparison folders")
    if len({Path(folder).resolve() for folder in given}) < len(given):
        raise UserInputError(f"--reuse names a folder twice ({', '.join(given)}): give each once")
    return list(given)


def reusable_runs(runs_dir: Path, runs: Sequence[PlannedRun], folders: Sequence[str]
                  ) -> tuple[list[Reused], list[NotReused]]:
    """(found, passed over): the runs of `runs` without any record under `runs_dir` that a folder of `folders`
    (in order) holds current results of, for every setting; and, for each such run not found, every folder
    that holds a record of one of its settings that is not current, with the reason."""
    states = record_state(runs_dir, list(runs))
    found: list[Reused] = []
    passed: list[NotReused] = []
    for run in runs:
        if run.error is not None or states[id(run)][0] != "todo":
            continue
        reasons = []
        for folder in folders:
            reused = _reused_from(Path(folder), folder, run)
            if isinstance(reused, Reused):
                found.append(reused)
                break
            if reused is not None:
                reasons.append(NotReused(run=run, folder=folder, why=reused))
        else:
            passed += reasons
    return found, passed


def take_reused(out: Path, plan: Sequence[PlannedRun], given: Sequence[str], write: bool, copy_to_out: bool
                ) -> set[int]:
    """`--reuse given`: the ids of the planned runs taken from those folders, each logged, as is each folder's
    record passed over (with why); with `write` their records are appended to `out`'s runs/ (and, with
    `copy_to_out`, the record copies beside the report rewritten, as `--resume_copies` keeps them)."""
    runs_dir = out / RUNS_DIR
    reused, passed_over = reusable_runs(runs_dir, plan, reuse_folders(out, given))
    for item in passed_over:
        logger.info("not reused %s from %s: %s; it is trained here", item.run.label, item.folder, item.why)
    for item in reused:
        made = ", ".join(f"made {r.get('time', 'at an unrecorded time')}"
                         + (f", mse {r['mse']:.4f}" if "mse" in r else "") for r in item.records)
        logger.info("reuse %s: finished in %s (%s)", item.run.label, item.folder, made)
    if reused and write:
        adopt(runs_dir, reused)
        if copy_to_out:
            copy_records(runs_dir, out)
    return {id(item.run) for item in reused}


def adopt(runs_dir: Path, reused: Sequence[Reused]) -> None:
    """Append each reused run's records and attempt to `runs_dir`, marked with the folder they came from."""
    if not reused:
        return
    runs_dir.mkdir(parents=True, exist_ok=True)
    if not (runs_dir / ".gitignore").exists():
        (runs_dir / ".gitignore").write_text("*\n")
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    for item in reused:
        append_text(runs_dir / RESULTS_JSONL,
                    "".join(json.dumps({**record, REUSED_FROM: item.folder}) + "\n" for record in item.records))
        append_manifest(runs_dir, {**item.attempt, REUSED_FROM: item.folder, "reused_at": now})


def _record_files(folder: Path) -> list[Path]:
    """The records files of a comparison folder: the committed copy, and runs/ where it exists."""
    return [path for path in (folder / RESULTS_JSONL, folder / RUNS_DIR / RESULTS_JSONL) if path.is_file()]


def _reused_from(path: Path, folder: str, run: PlannedRun) -> Reused | str | None:
    """`run` as `path` holds it finished and current; else why its latest record of a setting is not
    current; None when `path` has no record of some setting."""
    records = [r for file in _record_files(path) for r in read_jsonl(file) if isinstance(r, dict)]
    chosen = []
    for setting in run.settings:
        mine = [r for r in records if r.get("setting") == setting]
        # Unlike a record of this folder, one without its flags (`config`) is never taken: its setting string
        # alone does not say which flags made it.
        current = [r for r in mine if r.get("config") and run.config and current_record(r, run)]
        if not current:
            return _why_not_current(mine[-1], run) if mine else None
        chosen.append(current[-1])
    return Reused(run=run, folder=folder, records=chosen, attempt=_attempt(path, run))


def _why_not_current(record: dict, run: PlannedRun) -> str:
    """Why `record` (of one of `run`'s settings) is not a current result of `run`, in words."""
    if not record.get("config"):
        return "its record keeps no flags (written before records kept them), so they cannot be checked"
    stale = stale_reason(record)
    if stale:
        return f"its record is stale ({stale})"
    names = differing_flags(record["config"], run.config)
    return "its record was made with other " + ", ".join(f"--{name}" for name in names[:6])


def _attempt(path: Path, run: PlannedRun) -> dict:
    """The folder's latest finished attempt of `run` (same settings), else one made from the plan (a record
    written by run.py by hand has none)."""
    manifests = [path / MANIFEST_FILE, path / RUNS_DIR / MANIFEST_FILE]
    entries = [e for file in manifests if file.is_file() for e in read_jsonl(file)
               if isinstance(e, dict) and e.get("status") == "ok" and e.get("settings") == run.settings]
    if entries:
        return {**entries[-1], **run.where()}
    return {**run.where(), "status": "ok", "error": None, "settings": list(run.settings), "argv": list(run.argv),
            "seconds": None, "log": None}
