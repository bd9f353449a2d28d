"""What a running search of `python -m compare tune` says and keeps while Ray Tune runs its trials: a line per
trial event (started, each epoch's validation loss, finished, stopped, failed) and the seconds spent so far,
written into the study as they pass, so a driver killed mid-search (kill -9) leaves a study whose next
invocation runs only what is left of `--budget_minutes`.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from compare.grid.run_args import shown_flags
from compare.grid.tune_budget import Spent
from exp.progress import duration

__all__ = ["PERSIST_EVERY_SECONDS", "TRIAL_FAILED", "SearchProgress", "error_line"]

logger = logging.getLogger("compare")

#: how often the seconds spent are written into the study while a search runs
PERSIST_EVERY_SECONDS = 5.0
#: how `compare.tune.equal_budget.trial` starts the error it raises when run.py fails
TRIAL_FAILED = "run.py exited with code"


def _read(path: str | None) -> str:
    try:
        return Path(path).read_text(errors="replace") if path else ""
    except OSError:
        return ""


def error_line(text: str) -> str:
    """The line of a failed trial's error report that says why: the trial's own `run.py exited with code ...`
    (its last lines), else the last line of the report."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    own = [line for line in lines if TRIAL_FAILED in line]
    if own:
        return own[-1][own[-1].index(TRIAL_FAILED):]
    return lines[-1] if lines else "no error text"


def _callback_base():
    from ray.tune import Callback

    return Callback


class SearchProgress(_callback_base()):
    """A Ray Tune callback for one cell's search. `spent`: what earlier invocations spent; `study`: the cell's
    Optuna study (its user attributes receive the running total); `label`: the cell's name in the lines."""

    def __init__(self, label: str, study, spent: Spent, epochs: int) -> None:
        self.label, self.study, self.before, self.epochs = label, study, spent, epochs
        self.start = time.monotonic()
        self.last_persist = 0.0
        self.numbers: dict[str, int] = {}
        self.epochs_run: dict[str, int] = {}
        self.errors: list[str] = []

    def seconds(self) -> float:
        """Seconds this invocation's search has run."""
        return time.monotonic() - self.start

    def _number(self, trial) -> int:
        return self.numbers.setdefault(trial.trial_id, len(self.numbers) + 1)

    def _persist(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_persist >= PERSIST_EVERY_SECONDS:
            self.last_persist = now
            self.before.plus(0, self.seconds(), list(self.epochs_run.values())).record(self.study)

    def on_trial_start(self, iteration, trials, trial, **info) -> None:
        logger.info("  trial %d of %s started (%s)", self._number(trial), self.label, shown_flags(trial.config))
        self._persist()

    def on_trial_result(self, iteration, trials, trial, result, **info) -> None:
        epoch = int(result.get("epoch", 0))
        self.epochs_run[trial.trial_id] = epoch
        logger.info("  trial %d of %s: epoch %d/%d, vali %.4f (search %s)", self._number(trial), self.label,
                    epoch, self.epochs, result.get("vali_loss", float("nan")), duration(self.seconds()))
        self._persist()

    def on_trial_complete(self, iteration, trials, trial, **info) -> None:
        epochs = self.epochs_run.setdefault(trial.trial_id, 0)
        how = "finished" if epochs >= self.epochs else f"stopped after {epochs} epoch(s)"
        logger.info("  trial %d of %s %s (search %s)", self._number(trial), self.label, how,
                    duration(self.seconds()))
        self._persist(force=True)

    def on_trial_error(self, iteration, trials, trial, **info) -> None:
        self.epochs_run.setdefault(trial.trial_id, 0)
        line = error_line(_read(trial.error_file))
        self.errors.append(line)
        logger.info("  trial %d of %s failed: %s", self._number(trial), self.label, line)
        self._persist(force=True)

    def on_step_end(self, iteration, trials, **info) -> None:
        self._persist()

    def epochs_per_trial(self) -> list[int]:
        """Epochs each trial of this invocation ran, in start order."""
        return [self.epochs_run.get(tid, 0) for tid in self.numbers]
