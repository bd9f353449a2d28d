"""Resume copies: an interrupted run's `last.pth` kept beside the report, so it outlives a lost `runs/`.

`runs/` is git-ignored (checkpoints are large), and a fresh clone knows a comparison's finished runs
only from the committed `results.jsonl` / `compare_runs.jsonl`. A run longer than one session or one
wall-time slot therefore restarts from scratch on a machine without the old `runs/`. With
`python -m compare ... --resume_copies MIB` the runner copies the `last.pth` of every run it stops
(`interrupted`) to `<out>/resume/<setting>/last.pth` when that file is at most MIB MiB, so committing
`<out>` commits the resume point; a later invocation copies it back where `runs/` has none, and run.py
`--resume` continues at the saved batch. `last.pth` carries the best weights so far, so run.py writes the
missing `checkpoint.pth` again from it (a copy made before that, without them, is refused up front when
its run has a best epoch). A finished run's copy is deleted (by an invocation with the
flag); with the flag the runner also rewrites the committed record copies (`<out>/results.jsonl`,
`<out>/compare_runs.jsonl`) after every run, so the finished record is committed with the same folder even
under --no-report. For folders carried whole between machines, `python -m compare pack` does the same for every run.

    <out>/resume/<setting>/last.pth   (the run's `runs/<checkpoints>/<setting>/last.pth`)
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

from utils.tools import atomic_copy

__all__ = ["RESUME_DIR", "drop_resume_copies", "keep_resume_copies", "restore_resume_copies"]

logger = logging.getLogger("compare.run.resume_copies")

RESUME_DIR = "resume"


def _copy_path(out: Path, setting: str, last_file: Path) -> Path:
    return out / RESUME_DIR / setting / last_file.name


def keep_resume_copies(out: Path, last_files: dict[str, Path], max_mib: float) -> list[Path]:
    """Copy each existing `last_files[setting]` of at most `max_mib` MiB to `<out>/resume/<setting>/`;
    returns the copies written (a larger file is named in a warning and not copied)."""
    written = []
    for setting, path in last_files.items():
        if not path.is_file():
            continue
        size = path.stat().st_size / 2**20
        if size > max_mib:
            logger.warning("  %s is %.1f MiB, more than --resume_copies %g: not copied beside the report (the run "
                           "resumes only while runs/ survives)", path, size, max_mib)
            continue
        target = _copy_path(out, setting, path)
        atomic_copy(path, target)
        written.append(target)
    return written


def restore_resume_copies(out: Path, last_files: dict[str, Path]) -> list[Path]:
    """Copy `<out>/resume/<setting>/last.pth` to `last_files[setting]` where that file is missing;
    returns the files restored."""
    restored = []
    for setting, path in last_files.items():
        copy = _copy_path(out, setting, path)
        if copy.is_file() and not path.exists():
            atomic_copy(copy, path)
            restored.append(path)
    return restored


def drop_resume_copies(out: Path, settings: Iterable[str]) -> list[Path]:
    """Delete the resume copies of `settings` (finished runs); returns the folders deleted."""
    dropped = []
    for setting in settings:
        folder = out / RESUME_DIR / setting
        if folder.is_dir():
            shutil.rmtree(folder)
            dropped.append(folder)
    resume = out / RESUME_DIR
    if resume.is_dir() and not any(resume.iterdir()):
        resume.rmdir()
    return dropped
