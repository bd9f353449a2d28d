"""The grid's scheduler: which planned run starts when, what each attempt ended as, the manifest line it
leaves, a live progress line, and the summary. Where a run executes is an executor's only job
(compare/run/executor.py): `run_jobs` calls `Grid.begin` before a run starts (the time budget and a stop
request are checked there) and `Grid.finish` when it has ended and its files are in `<out>/runs/`, so
planning, recording, resume and the report are one path whatever the executor.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from compare.grid.plan import PlannedRun
from compare.grid.records import copy_records, finished_settings
from compare.grid.run_state import append_manifest, has_last, last_files, result_line, saved_progress
from compare.run.eta import RunTimes
from compare.run.local_process import INTERRUPTED_CODES, RunOutcome, RunStopper
from compare.run.resume_copies import drop_resume_copies, keep_resume_copies
from exp.progress import duration

__all__ = ["Grid", "GridOptions", "duration"]

logger = logging.getLogger("compare")


@dataclass(frozen=True)
class GridOptions:
    """The runner flags the scheduler reads."""

    out: Path
    min_start: float = 0.0
    resume_copies: float = 0.0
    run_timeout: float | None = None
    #: OMP_NUM_THREADS of each run (None: the environment's, or cpu_count // jobs)
    threads: int | None = None
    parallel: int = 1


@dataclass
class Grid:
    """The runs to do and what became of them; `begin`/`finish` are the executors' callbacks (thread-safe)."""

    todo: list[PlannedRun]
    options: GridOptions
    stopper: RunStopper
    durations: list[float] = field(default_factory=list)
    finished: list[PlannedRun] = field(default_factory=list)
    stopped: list[PlannedRun] = field(default_factory=list)
    not_started: list[PlannedRun] = field(default_factory=list)
    failures: list[tuple[PlannedRun, str]] = field(default_factory=list)
    running: int = 0
    #: predicted and measured run times (compare/run/eta.py); None: the ETA is the mean of finished runs
    times: RunTimes | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def runs_dir(self) -> Path:
        return self.options.out / "runs"

    def begin(self, k: int, run: PlannedRun) -> bool:
        """True when run k (1-based) may start now; False (counted as not started) once the runs are being
        stopped or less than --min-start seconds remain before the stop time."""
        with self._lock:
            if self.stopper.stop_requested() or self.stopper.seconds_left() < self.options.min_start:
                self.not_started.append(run)
                return False
            self.running += 1
            if self.times is not None:
                self.times.started(run)
            resuming = "  resuming from last.pth" if has_last(self.runs_dir, run) else ""
            logger.info("[%d/%d] %s  (%s)%s", k, len(self.todo), run.label, self._eta(), resuming)
            return True

    def not_start(self, run: PlannedRun) -> None:
        """Count `run` as not started (the runs are being stopped)."""
        with self._lock:
            self.not_started.append(run)

    def _eta(self) -> str:
        if self.times is not None and self.times.known():
            return f"ETA {duration(self.times.seconds_left(self.todo, time.monotonic(), self.not_started))}"
        if not self.durations:
            return "ETA ?"
        left = len(self.todo) - len(self.durations) - len(self.not_started)
        return f"ETA {duration(sum(self.durations) / len(self.durations) * left / self.options.parallel)}"

    def progress_line(self) -> str:
        """`grid: F finished, R running, X failed, N remaining (ETA ...)` over this invocation's runs."""
        done = len(self.durations)
        remaining = len(self.todo) - done - len(self.not_started) - self.running
        return (f"grid: {len(self.finished)} finished, {self.running} running, {len(self.failures)} failed, "
                f"{len(self.stopped)} interrupted, {remaining} waiting ({self._eta()})")

    def report_every(self, seconds: float, stop: threading.Event) -> None:
        """Log the progress line every `seconds` while runs are in flight, until `stop` is set (a thread of its
        own: a long run's ETA, which follows its own estimate, shows between run ends)."""
        while not stop.wait(seconds):
            with self._lock:
                if self.running:
                    logger.info("%s", self.progress_line())

    def finish(self, run: PlannedRun, outcome: RunOutcome, seconds: float, resumed: bool) -> None:
        """Classify an ended attempt (its files are in runs/ already), write its manifest line and log it."""
        status, error = self._status(run, outcome, resumed)
        entry = {**run.where(), "status": status, "error": error, "settings": run.settings, "argv": run.argv,
                 "resumed": resumed, "seconds": round(seconds, 3),
                 "log": str(outcome.log_path.relative_to(self.options.out)) if outcome.log_path else None,
                 "script": run.recipe.script if run.recipe else None, "node": outcome.node,
                 "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        if status == "interrupted":
            entry["progress"] = saved_progress(self.runs_dir, run)
            if self.options.resume_copies:
                keep_resume_copies(self.options.out, last_files(self.runs_dir, run), self.options.resume_copies)
        elif status == "ok" and self.options.resume_copies:
            drop_resume_copies(self.options.out, run.settings)
        append_manifest(self.runs_dir, entry)
        if self.options.resume_copies:
            # runs/ is git-ignored: the committed copies of its records follow every ended attempt, so a finished
            # run whose resume copy was just dropped is never known only to runs/.
            with self._lock:
                copy_records(self.runs_dir, self.options.out)
        if self.times is not None:
            self.times.ended(run, seconds if status == "ok" else None)
        with self._lock:
            self.running -= 1
            self.durations.append(seconds)
            self._log_end(run, status, error, seconds, outcome)
            logger.info("%s", self.progress_line())

    def _status(self, run: PlannedRun, outcome: RunOutcome, resumed: bool) -> tuple[str, str | None]:
        if outcome.code == 0 and set(run.settings) <= finished_settings(self.runs_dir):
            return "ok", None
        if outcome.stopped or outcome.code in INTERRUPTED_CODES:
            saved = has_last(self.runs_dir, run)
            return "interrupted", (f"interrupted by {self.stopper.reason or 'a signal'}"
                                   + ("; killed after the grace period" if outcome.killed else "")
                                   + ("; the next invocation resumes from last.pth" if saved
                                      else "; no last.pth yet: the next invocation starts it from scratch"))
        error = outcome.error_line or f"run.py exited with code {outcome.code}"
        if resumed and "--resume" in error:
            error += f"; to start this run over, delete its last.pth under {self.runs_dir / 'checkpoints'}"
        return "failed", error

    def _log_end(self, run: PlannedRun, status: str, error: str | None, seconds: float, outcome: RunOutcome) -> None:
        if status == "ok":
            self.finished.append(run)
            logger.info("      done in %s: %s: %s", duration(seconds), run.label,
                        result_line(self.runs_dir, run.settings, run.task))
        elif status == "interrupted":
            self.stopped.append(run)
            logger.info("      stopped after %s: %s: %s", duration(seconds), run.label, error)
        else:
            logger.info("      FAILED after %s: %s: %s (log: %s)", duration(seconds), run.label, error,
                        outcome.log_path)
            self.failures.append((run, error or "failed"))
