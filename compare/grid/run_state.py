"""What `<out>/runs/` says about the runs of a comparison: the manifest of attempts (`compare_runs.jsonl`),
crash counts, each run's `last.pth`, its saved progress, and the result line printed when a run finishes.
Both executors (local processes, Ray) leave the same files here, so everything below reads one layout.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from pathlib import Path

from compare.grid.behaviour_changes import stale_reason
from compare.grid.plan import PlannedRun
from compare.grid.records import MANIFEST_FILE, RESULTS_JSONL, read_jsonl
from compare.grid.run_args import flag_value, split_flags
from compare.grid.tasks import LONG_TERM, TASK_SPECS
from data_provider.protocol import changes_results
from exp.checkpointing import LAST_FILE, read_progress
from exp.run_config import RESULT_FREE_FLAGS, differing_flags
from exp.run_folder import lock_holder
from utils.errors import UserInputError
from utils.tools import append_text

__all__ = ["CODE_REASON", "STALE_DIR", "append_manifest", "crash_counts", "current_record", "move_stale", "record_state",
           "has_last", "held_elsewhere", "last_files", "restore_committed_records",
           "result_line", "saved_progress", "warn_changed_recipes"]

logger = logging.getLogger("compare")


def restore_committed_records(out: Path, runs_dir: Path) -> None:
    """Seed a missing `runs/` from the report's committed copies (`<out>/results.jsonl`, `compare_runs.jsonl`).

    `runs/` is git-ignored, the report's copies are committed: in a fresh clone the finished runs of a
    committed table are known again, so an interrupted table is completed instead of rerun."""
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        committed, local = out / name, runs_dir / name
        if committed.is_file() and not local.exists():
            runs_dir.mkdir(parents=True, exist_ok=True)
            if not (runs_dir / ".gitignore").exists():  # run artefacts stay out of git, as the runner keeps them
                (runs_dir / ".gitignore").write_text("*\n")
            local.write_text(committed.read_text())
            logger.info("%s: restored from the committed %s", local, committed)


def _result_flags(argv: list[str], task: str = LONG_TERM) -> dict[str, tuple[str, ...]]:
    """argv's flags that change a run's result: {flag: values} without the result-free ones
    (`exp.run_config.RESULT_FREE_FLAGS`: --root_path, --num_workers, ...), nor `--protocol` where the protocol
    does not change the task's results (runs recorded before --protocol existed count as current). An argv
    run.py cannot read any more (a flag since removed) is split at each `--`."""
    free = {f"--{name}" for name in RESULT_FREE_FLAGS | ({"protocol"} if not changes_results(task) else set())}
    try:
        pairs = split_flags(argv)
    except UserInputError:  # each `--flag` takes the words up to the next one
        pairs = []
        for token in argv:
            if token.startswith("--") or not pairs:
                pairs.append((token, []))
            else:
                pairs[-1][1].append(token)
    return {flag: tuple(values) for flag, values in pairs if flag not in free}


def _shown(values: tuple[str, ...] | None) -> str:
    """A flag's values as the warning shows them: `unset`, `set` (a switch), or the values."""
    return "unset" if values is None else " ".join(values) or "set"


def warn_changed_recipes(runs_dir: Path, skipped: list[PlannedRun]) -> None:
    """Warn when a finished run was made with other result-changing flags than the ones planned now and its
    record cannot tell (an older record without its flags: the setting string does not contain every flag,
    e.g. --learning_rate or --train_epochs)."""
    earlier = {}
    for entry in read_jsonl(runs_dir / MANIFEST_FILE):
        if entry.get("status") == "ok":
            earlier[tuple(entry.get("settings") or [])] = entry.get("argv") or []
    for run in skipped:
        before = earlier.get(tuple(run.settings))
        if before is None:
            continue
        was, now = _result_flags(before, run.task), _result_flags(run.argv, run.task)
        changed = [f"{flag} {_shown(now.get(flag))} (was {_shown(was.get(flag))})"
                   for flag in sorted(set(was) | set(now)) if was.get(flag) != now.get(flag)]
        if changed:
            logger.warning("  %s finished earlier with different flags (%s); its old result is kept: delete "
                           "%s/results/%s and its line in results.jsonl to rerun it", run.label,
                           ", ".join(changed), runs_dir, run.settings[0])


def crash_counts(runs_dir: Path) -> Counter[tuple[str, ...]]:
    """How often each run (by its settings) crashed, from the manifest's `failed` attempts."""
    counts: Counter[tuple[str, ...]] = Counter()
    for entry in read_jsonl(runs_dir / MANIFEST_FILE):
        if entry.get("status") == "failed" and entry.get("settings"):
            counts[tuple(entry["settings"])] += 1
    return counts


def last_files(runs_dir: Path, run: PlannedRun) -> dict[str, Path]:
    """Where each of the run's settings keeps its `last.pth` (existing or not)."""
    checkpoints = runs_dir / (flag_value(run.argv, "checkpoints") or "./checkpoints/")
    return {setting: checkpoints / setting / LAST_FILE for setting in run.settings}


def held_elsewhere(runs_dir: Path, run: PlannedRun) -> str | None:
    """Which process holds one of the run's folders under `runs_dir` ('process N'), or None: a run another
    invocation is training right now (exp/run_folder.py's lock), to be left to it."""
    for path in last_files(runs_dir, run).values():
        holder = lock_holder(path.parent)
        if holder is not None:
            return holder
    return None


def has_last(runs_dir: Path, run: PlannedRun) -> bool:
    """True when one of the run's settings has a `last.pth` to continue from (run.py --resume)."""
    return any(path.is_file() for path in last_files(runs_dir, run).values())


def saved_progress(runs_dir: Path, run: PlannedRun) -> dict[str, dict]:
    """Per setting with a readable `last.pth`: the epoch in progress (1-based), the batches done in it and
    the curve of its finished epochs, so an interrupted run's progress outlives its checkpoint folder."""
    saved = {}
    for setting, path in last_files(runs_dir, run).items():
        progress = read_progress(path)
        if progress is not None:
            saved[setting] = {"epoch": int(progress["epoch"]) + 1, "batch": int(progress["step"]),
                              "curve": list(progress.get("curve", []))}
    return saved


def append_manifest(runs_dir: Path, record: dict) -> None:
    append_text(runs_dir / MANIFEST_FILE, json.dumps(record) + "\n")


def result_line(runs_dir: Path, settings: list[str], task: str = LONG_TERM) -> str:
    records = {rec.get("setting"): rec for rec in read_jsonl(runs_dir / RESULTS_JSONL)}
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


#: where `--rerun-stale` moves the folders of a run whose record came from other flags
STALE_DIR = "stale"


def _recorded(runs_dir: Path) -> dict[str, list[dict]]:
    """setting -> each of its records, in file order."""
    found: dict[str, list[dict]] = {}
    for record in read_jsonl(runs_dir / RESULTS_JSONL):
        if isinstance(record, dict) and "setting" in record:
            found.setdefault(str(record["setting"]), []).append(record)
    return found


#: how a reason of `record_state` that is not a flag name begins: older code made the record
CODE_REASON = "code: "


def record_state(runs_dir: Path, runs: list[PlannedRun]) -> dict[int, tuple[str, list[str]]]:
    """Per run (by id): ("todo", []) when a setting has no record, ("done", []) when every setting has one made
    with the planned flags (or an older record without its flags) by code no later behaviour change made stale
    (`compare.grid.behaviour_changes`), else ("stale", reasons): the differing flag names, or one reason that
    begins with `CODE_REASON`."""
    recorded = _recorded(runs_dir)
    states = {}
    for run in runs:
        candidates_per_setting = [recorded.get(setting) for setting in run.settings]
        if not all(candidates_per_setting):
            states[id(run)] = ("todo", [])
            continue
        reasons: list[str] = []
        for candidates in candidates_per_setting:
            if any(current_record(record, run) for record in candidates):
                continue
            last = candidates[-1]
            code = stale_reason(last)
            reasons = reasons or ([CODE_REASON + code] if code else differing_flags(last["config"], run.config))
        states[id(run)] = ("stale", reasons) if reasons else ("done", [])
    return states


def current_record(record: dict, run: PlannedRun) -> bool:
    """Whether `record` is a current result of `run`: no later behaviour change, and its flags (when kept)
    are the planned ones."""
    if stale_reason(record):
        return False
    config = record.get("config")
    return config is None or not run.config or not differing_flags(config, run.config)


def move_stale(runs_dir: Path, run: PlannedRun) -> Path:
    """Move the run's checkpoint, result and plot folders to runs/stale/<time>/ (its records stay in
    results.jsonl, with their flags) so it can run again with the planned flags; returns the new folder."""
    target = runs_dir / STALE_DIR / time.strftime("%Y%m%dT%H%M%S")
    checkpoints = (flag_value(run.argv, "checkpoints") or "./checkpoints/").strip("/").removeprefix("./")
    for setting in run.settings:
        for top in (checkpoints, "results", "test_results"):
            source = runs_dir / top / setting
            if source.exists():
                (target / top).mkdir(parents=True, exist_ok=True)
                source.rename(target / top / setting)
    return target
