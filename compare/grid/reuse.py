"""Finished runs taken from other comparison folders instead of training them again (`python -m compare ...
--reuse DIR [DIR ...]`).

A planned run with no record in this folder is taken from the first DIR whose records hold a current result of
every one of its settings: a record `record_state` would count as done had the run run here (the planned
flags, `--root_path` aside, and no later behaviour change in `compare.grid.behaviour_changes`). Its records are
appended to this folder's `runs/results.jsonl` and its attempt to `runs/compare_runs.jsonl`, both marked
`reused_from` (DIR as given); its checkpoints and prediction arrays stay in DIR. Nothing is trained, and a run
with a record here, current or stale, is never replaced.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compare.grid.plan import PlannedRun
from compare.grid.records import MANIFEST_FILE, RESULTS_JSONL, REUSED_FROM, RUNS_DIR, read_jsonl
from compare.grid.run_state import append_manifest, current_record, record_state
from utils.errors import UserInputError
from utils.tools import append_text

__all__ = ["Reused", "adopt", "reusable_runs", "reuse_folders"]


@dataclass(frozen=True)
class Reused:
    """A planned run found finished in `folder` (as given): its records, one per setting, and its attempt."""

    run: PlannedRun
    folder: str
    records: list[dict]
    attempt: dict


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


def reusable_runs(runs_dir: Path, runs: Sequence[PlannedRun], folders: Sequence[str]) -> list[Reused]:
    """The runs of `runs` without any record under `runs_dir` that a folder of `folders` (in order) holds
    current results of, for every setting."""
    states = record_state(runs_dir, list(runs))
    found = []
    for run in runs:
        if run.error is not None or states[id(run)][0] != "todo":
            continue
        for folder in folders:
            reused = _reused_from(Path(folder), folder, run)
            if reused is not None:
                found.append(reused)
                break
    return found


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


def _reused_from(path: Path, folder: str, run: PlannedRun) -> Reused | None:
    """`run` as `path` holds it finished and current, or None."""
    records = [r for file in _record_files(path) for r in read_jsonl(file) if isinstance(r, dict)]
    chosen = []
    for setting in run.settings:
        # Unlike a record of this folder, one without its flags (`config`) is never taken: its setting string
        # alone does not say which flags made it.
        current = [r for r in records if r.get("setting") == setting and r.get("config") and run.config
                   and current_record(r, run)]
        if not current:
            return None
        chosen.append(current[-1])
    return Reused(run=run, folder=folder, records=chosen, attempt=_attempt(path, run))


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
