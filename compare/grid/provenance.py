"""How a comparison's numbers were produced, as the report states it below its tables: each runner
command with the overrides it applied, the recipe, the variants, the machines and the run time.

No absolute path of the machine that ran the comparison appears: the commands name paths relative to the
repository (`shown_command`).
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from compare.grid.records import NAIVE_BACKFILL, REUSED_FROM
from utils.record_paths import REPO_ROOT, record_path

__all__ = ["RENAMED_MODULES", "REPO_ROOT", "production_notes", "production_section", "shown_command", "shown_path"]

#: commands recorded under a module that is gone -> the module they forwarded to, flags unchanged
#: (`python -m utils.compare` was an alias of `python -m compare` until it was removed)
RENAMED_MODULES = {"utils.compare": "compare"}


def shown_path(path: str, repo: Path = REPO_ROOT) -> str:
    """`path` as a report shows it: as records hold it (`utils.record_paths.record_path`: relative to the
    repository; `/work/shared/datasets` -> `../shared/datasets` from any checkout under /work)."""
    return record_path(path, repo)


def shown_command(command: str, out: Path | None = None, repo: Path = REPO_ROOT) -> str:
    """A recorded runner command with every absolute path argument shown by `shown_path`. With `out` (the
    report's folder), `--out` names that folder: the comparison lives there now, wherever the runner first
    wrote it, and the same command continues it there. A module of `RENAMED_MODULES` is shown as the one
    it forwarded to, so the command shown still runs."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if words[1:2] == ["-m"] and len(words) > 2:
        words[2] = RENAMED_MODULES.get(words[2], words[2])
    folder = None if out is None else shown_path(str(out.resolve()), repo)
    shown = []
    for k, word in enumerate(words):
        # `--flag=value` is shown as `--flag=` + the value; any other word is a value or a flag of its own.
        flag, equals, value = word.partition("=")
        if not (word.startswith("--") and equals):
            flag, value = "", word
        if folder is not None and flag == "--out":
            value = folder
        elif folder is not None and k and words[k - 1] == "--out":
            value = folder
        shown.append(f"{flag}={shown_path(value, repo)}" if flag else shown_path(value, repo))
    return shlex.join(shown)


def _overrides(invocation: dict) -> str:
    """The overrides one runner invocation applied to the runs it started, as one phrase."""
    overrides = []
    if invocation.get("epochs") is not None:
        overrides.append(f"`--train_epochs {invocation['epochs']}` (scripts' epochs overridden)")
    if invocation.get("patience") is not None:
        overrides.append(f"`--patience {invocation['patience']}`")
    if invocation.get("extra"):
        overrides.append(f"`{' '.join(invocation['extra'])}`")
    if invocation.get("seeds"):
        overrides.append(f"`--seeds {' '.join(map(str, invocation['seeds']))}` (one run per seed)")
    return ", ".join(overrides) if overrides else "none"


def _machine_lines(invocations: Sequence[dict]) -> list[str]:
    """One line per machine as printed: invocations that differ only in fields not shown (the kernel build
    in `platform`) share it, and the count says how many invocations ran there."""
    machine_counts = Counter(
        f"{m.get('processor')} ({m.get('cpu_count')} CPUs, torch {m.get('torch')}, {m.get('torch_threads')} torch "
        f"thread(s)" + (f", GPU {m['gpu']}" if m.get("gpu") else "") + ")"
        for m in (inv.get("machine") for inv in invocations) if m)
    return [f"Runs executed on {shown}: {count} invocation{'s' if count > 1 else ''}."
            for shown, count in machine_counts.items()]


def _backfill_lines(runs: Sequence) -> list[str]:
    """One line naming the runs whose naive scores were filled in after they ran, and the command that did it."""
    filled = [(run, note) for run in runs for note in run.extra.get(NAIVE_BACKFILL) or () if note]
    if not filled:
        return []
    named = ", ".join(dict.fromkeys(f"{run.row} on {run.dataset} H={run.pred_len}" for run, _ in filled))
    return [f"The naive and seasonal naive scores of {named} were filled in after those runs, from each run's own "
            f"flags, by `{filled[0][1].get('command')}` (their records' `{NAIVE_BACKFILL}`)."]


def _reused_lines(runs: Sequence) -> list[str]:
    """One line per folder that runs were reused from (`--reuse`), naming them."""
    by_folder: dict[str, list[str]] = {}
    for run in runs:
        folder = run.extra.get(REUSED_FROM)
        if folder:
            point = f"H={run.pred_len}" if hasattr(run, "pred_len") else f"at {run.point:g}"
            by_folder.setdefault(folder, []).append(f"{run.row} on {run.dataset} {point}")
    return [f"Reused, not run here (`--reuse`: the same flags and no later behaviour change): {', '.join(named)}, "
            f"finished in `{folder}` (its commands and machine are in that folder's `table.md`)."
            for folder, named in by_folder.items()]


def production_notes(config: dict, runs: Sequence, failed: Sequence[dict], out: Path | None = None) -> list[str]:
    """Markdown lines stating how the numbers were produced (commands, overrides, machine, time).

    runs: the finished runs (`compare.grid.records.RunResult` or `TaskRun`: their `extra["seconds"]` and
    `epochs_run`); out: the report's folder, which each command's `--out` names (`shown_command`)."""
    invocations = config.get("invocations", [])
    lines = [f"Runner: `{shown_command(inv['command'], out)}`; overrides for the runs it started: "
             f"{_overrides(inv)}." for inv in invocations]
    if invocations:
        lines.append("Each model uses its recipe from `compare/recipes/tables.py` (the settings of its `scripts/`: same "
                     "data, splits, seed and evaluation) plus the overrides of the invocation that ran it; `table.csv` has the epochs "
                     "each run trained.")
    if any(inv.get("seeds") for inv in invocations):
        lines.append("With `--seeds`, each seed is a run of its own: run.py's `--seed S` replaces the recipe's seed "
                     "and `_sS` ends its model_id, so its setting differs from the other seeds'.")
    for row in config.get("rows", []):
        if row.get("flags"):
            lines.append(f"Variant **{row['name']}** = {row['base']} recipe + `{' '.join(row['flags'])}`.")
    lines += _machine_lines(invocations)
    seconds = [r.extra.get("seconds") for r in runs if r.extra.get("seconds") is not None]
    if seconds:
        lines.append(f"{len(runs)} finished runs, {sum(seconds) / 3600:.2f} h of run wall time in total.")
    epochs = sorted({r.epochs_run for r in runs if r.epochs_run is not None})
    if epochs:
        lines.append(f"Epochs actually run (early stopping included): {', '.join(map(str, epochs))}.")
    lines += _backfill_lines(runs)
    lines += _reused_lines(runs)
    stale = [entry for entry in failed if entry.get("status") == "stale"]
    if len(failed) > len(stale):
        lines.append(f"{len(failed) - len(stale)} runs failed and are shown as —; see *Failed runs* below.")
    if stale:
        lines.append(f"{len(stale)} runs are stale (finished by older code or with other flags) and are shown as —; see *Stale runs* below.")
    return lines


def production_section(notes: Sequence[str]) -> list[str]:
    """The report's section of `production_notes`, below its tables ([] without notes)."""
    return ["## How these numbers were produced", "", *notes, ""] if notes else []
