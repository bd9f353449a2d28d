"""The run records of a comparison folder on disk, and which record of a run is the current one.

`compare.run.runner` and `run.py` write, under `<out>/runs/` (`RUNS_DIR`):

- `results.jsonl` (`RESULTS_JSONL`, named in exp/result_record.py, which writes it): one record per finished
  setting (its metrics, epochs, seed, curve);
- `compare_runs.jsonl` (`MANIFEST_FILE`): one entry per attempt of a run (row, dataset, axis point, seed,
  status `ok` / `failed` / `interrupted`, the settings it ran, its wall seconds, whether it `resumed`);

and `<out>/compare.json` (`CONFIG_FILE`) records every invocation. A run may have several attempts (a retry,
a resumed time budget, a later `--seeds`): the latest attempt per run is the current one. The reports read
the runs through `load_runs` (forecasting) and `load_task_runs` (the other tasks).
"""

from __future__ import annotations

import json
import logging
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from compare.grid.behaviour_changes import stale_reason
from compare.grid.tasks import TaskSpec
from exp.naive_forecast import NAIVE_METHODS
from exp.result_record import RESULTS_JSONL
from utils.errors import UserInputError
from utils.record_paths import relative_text
from utils.tools import atomic_write_text

__all__ = [
    "CONFIG_FILE",
    "MANIFEST_FILE",
    "NAIVE_BACKFILL",
    "REUSED_FROM",
    "RESULTS_JSONL",
    "RUNS_DIR",
    "RunResult",
    "TaskRun",
    "attempt_seconds",
    "copy_records",
    "finished_settings",
    "folder_runs",
    "forecast_key",
    "latest_attempts",
    "latest_interrupted",
    "load_runs",
    "load_task_runs",
    "machine_info",
    "mean_of_all",
    "naive_fields",
    "ordered",
    "read_config",
    "read_jsonl",
    "records_dir",
    "seed_order",
    "task_key",
    "task_manifest",
]

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"
MANIFEST_FILE = "compare_runs.jsonl"
CONFIG_FILE = "compare.json"
#: the field `compare.grid.naive_backfill` adds to a record whose naive scores it filled in after the run
NAIVE_BACKFILL = "naive_backfill"
#: the field of a record and of its manifest entry that `compare.grid.reuse` copied from another comparison
#: folder: that folder, as `--reuse` named it
REUSED_FROM = "reused_from"


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
    #: besides `seconds` and `REUSED_FROM` (the folder the run was reused from, else None), per naive method
    #: (`exp.naive_forecast.NAIVE_METHODS`) and `NAIVE_BACKFILL` its field of each setting's record
    extra: dict = field(default_factory=dict)


@dataclass
class TaskRun:
    """One finished (row, dataset, axis point, seed) of another task: its metrics averaged over its itr
    settings."""

    row: str
    dataset: str
    point: float | int
    settings: list[str]
    metrics: dict[str, float]
    seed: int | None = None
    argv: list[str] | None = None
    epochs_run: int | None = None
    best_epoch: int | None = None
    train_seconds: float | None = None
    params: int | None = None
    records: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    #: manifest position of the run's attempt (the latest run of an M4 row holds its summary)
    order: int = 0


def read_jsonl(path: Path) -> list[dict]:
    """The records of a JSON-lines file ([] when it does not exist); a line that is not JSON is skipped."""
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


def read_config(out: Path) -> dict:
    """`out/compare.json`, the runner's record of every invocation ({} when there is none)."""
    path = out / CONFIG_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def finished_settings(runs_dir: Path) -> set[str]:
    """Settings of the finished runs: those with a record in `runs_dir/results.jsonl`."""
    return {str(r["setting"]) for r in read_jsonl(runs_dir / RESULTS_JSONL) if isinstance(r, dict) and "setting" in r}


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


def mean_of_all(values: Sequence[float | None]) -> float | None:
    """The mean of `values`, or None when any is missing (a partial mean would look better than it is)."""
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept and len(kept) == len(values) else None


def seed_order(seed: int | None) -> tuple[bool, int]:
    """Sort key of seeds: an unknown seed (None) first, then ascending."""
    return (seed is not None, seed or 0)


def ordered(preferred: Sequence, seen: Sequence) -> list:
    """The items of `seen` in the order of `preferred` (the runner's order), then the others as first seen."""
    out = [x for x in preferred if x in seen]
    return out + [x for x in dict.fromkeys(seen) if x not in out]


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
    stopped by the time budget (`interrupted`) is in neither (see `latest_interrupted`). A finished attempt
    whose records a later behaviour change made stale (`compare.grid.behaviour_changes`) is returned among the
    failed ones as a copy with status `stale` and the reason as its `error`, never as a result. A run made
    without --seeds counts under the seed run.py recorded."""
    finished, failed = [], []
    for full_key, number, entry in _latest(manifest, key):
        found = [results.get(s) for s in entry.get("settings") or []]
        if entry["status"] == "interrupted":
            continue
        if entry["status"] != "ok" or not found or None in found:
            failed.append(entry)
            continue
        reasons = [reason for reason in map(stale_reason, found) if reason]
        if reasons:
            failed.append({**entry, "status": "stale", "error": f"stale: {reasons[0]}; rerun with --rerun-stale"})
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


def naive_fields(found: Sequence[dict]) -> dict[str, list]:
    """Per naive method, its field in each of a run's records (None where a record predates them), and under
    `NAIVE_BACKFILL` each record's note of a later backfill (None where the run scored them itself)."""
    return {method: [r.get(method) for r in found] for method in (*NAIVE_METHODS, NAIVE_BACKFILL)}


def zero_shot_fields(found: Sequence[dict]) -> dict:
    """`{"zero_shot": {lookback, test_every, test_windows_of}}` for a zero-shot run's records
    (`exp.exp_zero_shot_forecasting`), else {}."""
    if not found or not found[0].get("zero_shot"):
        return {}
    first = found[0]
    return {"zero_shot": {"lookback": first.get("lookback"), "test_every": first.get("test_every") or 1,
                          "test_windows_of": first.get("test_windows_of")}}


def forecast_key(entry: dict) -> tuple[str, str, int]:
    """A forecasting run's identity in the manifest, seed aside: (row, dataset, horizon)."""
    return entry["row"], entry["dataset"], int(entry["pred_len"])


def records_dir(folder: Path) -> Path:
    """Where a comparison folder's records are: its runs/ when that holds a results.jsonl, else the folder itself
    (the committed copies of `copy_records`)."""
    return folder / RUNS_DIR if (folder / RUNS_DIR / RESULTS_JSONL).is_file() else folder


def load_runs(runs_dir: Path) -> tuple[list[RunResult], list[dict]]:
    """Finished runs (one per row x dataset x horizon x seed, the latest attempt) and failed attempts; a
    run whose latest attempt was `interrupted` (time budget) is in neither. A run made without --seeds
    counts under the seed run.py recorded, so a later `--seeds` run of that seed replaces it.

    Without a runner manifest (run.py used by hand), every results.jsonl record is its own run, with
    the model name as row and the first `model_id` token as dataset.
    """
    results = {r["setting"]: r for r in read_jsonl(runs_dir / RESULTS_JSONL)}
    manifest = read_jsonl(runs_dir / MANIFEST_FILE)
    if not manifest:
        return [RunResult(row=r["model"], dataset=str(r["model_id"]).split("_")[0], pred_len=int(r["pred_len"]),
                          settings=[s], mse=float(r["mse"]), mae=float(r["mae"]), seed=r.get("seed"),
                          epochs_run=r.get("epochs_run"),
                          best_epoch=r.get("best_epoch"), train_seconds=r.get("train_seconds"),
                          params=r.get("params"), extra={**naive_fields([r]), **zero_shot_fields([r])})
                for s, r in results.items()], []
    by_seed: dict[tuple[str, str, int, int | None], RunResult] = {}
    finished, failed = latest_attempts(manifest, results, forecast_key)
    for (row, dataset, pred_len, seed), number, entry, found in finished:
        by_seed[(row, dataset, pred_len, seed)] = RunResult(
            row=row, dataset=dataset, pred_len=pred_len, settings=list(entry["settings"]),
            mse=float(np.mean([r["mse"] for r in found])), mae=float(np.mean([r["mae"] for r in found])),
            seed=seed, argv=entry.get("argv"), epochs_run=found[0].get("epochs_run"), best_epoch=found[0].get("best_epoch"),
            train_seconds=mean_of_all([r.get("train_seconds") for r in found]), params=found[0].get("params"),
            curve=found[0].get("curve"),
            extra={"seconds": attempt_seconds(manifest, forecast_key, number), REUSED_FROM: entry.get(REUSED_FROM),
                   **naive_fields(found), **zero_shot_fields(found)},
        )
    return list(by_seed.values()), failed


def task_key(entry: dict) -> tuple[str, str, object]:
    """A task run's identity in the manifest, seed aside: (row, dataset, point of the task's axis)."""
    return entry["row"], entry["dataset"], entry["axis"]


def task_manifest(runs_dir: Path, spec: TaskSpec) -> list[dict]:
    """The runner's manifest entries of `spec`'s task."""
    return [e for e in read_jsonl(runs_dir / MANIFEST_FILE) if e.get("task") == spec.name]


def load_task_runs(runs_dir: Path, spec: TaskSpec) -> tuple[list[TaskRun], list[dict]]:
    """Finished runs (the latest attempt per row x dataset x point x seed) and failed attempts, from the
    runner's manifest and results.jsonl; an `interrupted` latest attempt is in neither."""
    results = {r["setting"]: r for r in read_jsonl(runs_dir / RESULTS_JSONL)}
    manifest = task_manifest(runs_dir, spec)
    runs: dict[tuple, TaskRun] = {}
    finished, failed = latest_attempts(manifest, results, task_key)
    for (row, dataset, point, seed), number, entry, found in finished:
        metrics = {m.key: float(np.mean([r[m.key] for r in found])) for m in spec.metrics
                   if all(r.get(m.key) is not None for r in found)}
        runs[(row, dataset, point, seed)] = TaskRun(
            row=row, dataset=dataset, point=point, settings=list(entry["settings"]), metrics=metrics, seed=seed,
            argv=entry.get("argv"), epochs_run=found[0].get("epochs_run"), best_epoch=found[0].get("best_epoch"),
            train_seconds=mean_of_all([r.get("train_seconds") for r in found]), params=found[0].get("params"),
            records=found, extra={"seconds": attempt_seconds(manifest, task_key, number),
                                  REUSED_FROM: entry.get(REUSED_FROM)}, order=number)
    return list(runs.values()), failed


def folder_runs(folder: Path) -> list[RunResult]:
    """The finished forecasting runs of a comparison folder (`load_runs` of its `records_dir`); a one-line
    error when it holds no results.jsonl."""
    records = records_dir(folder)
    if not (records / RESULTS_JSONL).is_file():
        raise UserInputError(f"{folder}: no {RESULTS_JSONL} there or in its {RUNS_DIR}/; name a comparison folder")
    return load_runs(records)[0]


def copy_records(runs_dir: Path, out: Path) -> list[Path]:
    """Copy `results.jsonl` and the manifest from `runs_dir` into the report folder `out`; returns the copies.

    runs/ is git-ignored: committing the report commits these copies, and the runner restores them in a
    fresh clone, so a table is completed later instead of rerun. The copies hold paths relative to the repository
    (`--root_path` of every run: `utils.record_paths`); the flags a run is compared by leave --root_path out."""
    copies = []
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        if (runs_dir / name).is_file() and (runs_dir / name).resolve() != (out / name).resolve():
            atomic_write_text(out / name, relative_text((runs_dir / name).read_text()))
            copies.append(out / name)
    return copies
