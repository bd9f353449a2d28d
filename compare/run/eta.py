"""The grid's ETA from each planned run's own time, not from the mean of the runs finished so far.

- Before the first run starts, each distinct planned configuration is probed in the runner's process
  (`exp.cost_probe`: its model on its data, a warm-up step and two timed training steps, at the run's thread
  count) and its run time is predicted at its configured epochs (`exp.progress.predicted_seconds`, plus the
  measured set-up and `PROCESS_START_SECONDS` for the process to import its libraries).
- While a run trains, its own estimate replaces the prediction: run.py prints `this run: about ... (N s)`
  after its first steps and again after every epoch (exp/progress.py), read from the run's log.
- The ETA is (the in-flight runs' time left + the waiting runs' predicted times) / the runs at once. A run
  whose probe failed counts at the mean prediction of the others (named in the probe's line).
- Once runs have finished, the waiting runs' predictions are scaled by the finished runs' measured / predicted
  time, both less the fixed part (process start and set-up), bounded to [1/5, 5], and only once at least
  `SCALE_AFTER_SECONDS` of predicted training lie behind it: a machine busier or idler than during the probe, or
  early stopping, corrects the rest, while a few tiny runs (mostly process start) do not.

Predictions are at the configured epochs: early stopping makes a run shorter, never longer.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from pathlib import Path

from compare.grid.plan import PlannedRun
from compare.grid.run_args import flag_value, parse_run_args
from compare.grid.zero_shot import ZERO_SHOT_TASK
from exp.cost_probe import RunCost, probe_run
from exp.progress import duration

__all__ = ["PROCESS_START_SECONDS", "RunTimes", "logged_estimate", "probe_key"]

logger = logging.getLogger("compare")

#: a run.py process's own start (Python, torch and the library imported) before its set-up begins (from
#: bench_eta.py: DLinear on ETTh1 took 10 s in all, 1-2 s of them set-up and training)
PROCESS_START_SECONDS = 7.0
#: predicted training seconds of finished runs needed before their measured times scale the predictions
SCALE_AFTER_SECONDS = 30.0
_ESTIMATE = re.compile(r"this run: about \S+ \((\d+) s\)")
#: flags that do not change a run's cost: runs differing only in them share one probe
_COST_FREE = ("model_id", "des", "seed", "root_path", "checkpoints", "logger", "logger_group", "logger_dir")


def probe_key(run: PlannedRun) -> tuple:
    """The run's configuration without the flags that do not change its cost (seeds, names)."""
    return tuple(sorted((k, str(v)) for k, v in run.config.items() if k not in _COST_FREE))


def logged_estimate(log: Path, offset: int) -> float | None:
    """The last `this run: about ... (N s)` of a run's log after byte `offset` (this attempt's lines), or None."""
    try:
        with log.open("rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    found = _ESTIMATE.findall(text)
    return float(found[-1]) if found else None


class RunTimes:
    """Predicted and measured times of the grid's runs; thread-safe (executors call from several threads)."""

    def __init__(self, parallel: int, runs_dir: Path) -> None:
        self.parallel = max(parallel, 1)
        self.runs_dir = runs_dir
        self.predicted: dict[int, float] = {}
        self.setup: dict[int, float] = {}
        self._started: dict[int, tuple[float, int, PlannedRun]] = {}
        self._ended: set[int] = set()
        #: (measured, predicted) seconds of the finished runs that had a prediction
        self._finished: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def probe(self, runs: list[PlannedRun], threads: int | None) -> None:
        """Probe each distinct configuration of `runs` and log its prediction, then the grid's total."""
        costs: dict[tuple, RunCost | None] = {}
        for run in runs:
            key = probe_key(run)
            if flag_value(run.argv, "task_name") == ZERO_SHOT_TASK:
                # Nothing to probe: the run only forecasts its test windows; its time counts at the mean.
                logger.info("  probe %s: zero-shot, not trained (no training step to probe, no epochs); its time "
                            "comes from its own run", run.label)
                continue
            if key not in costs:
                try:
                    costs[key] = probe_run(parse_run_args(run.argv), threads)
                except Exception as err:  # noqa: BLE001 - any failure only costs this run its prediction
                    costs[key] = None
                    logger.info("  probe %s: failed (%s: %s); its time comes from its own log once it runs",
                                run.label, type(err).__name__, str(err).splitlines()[0] if str(err) else "")
                    continue
                cost = costs[key]
                logger.info("  probe %s: %.3f s/step x %d steps/epoch, %d epochs: about %s", run.label,
                            cost.step_seconds, cost.shape.steps_per_epoch, cost.shape.epochs,
                            duration(cost.predicted_seconds() + PROCESS_START_SECONDS))
            if costs[key] is not None:
                self.predicted[id(run)] = costs[key].predicted_seconds() + PROCESS_START_SECONDS
                self.setup[id(run)] = costs[key].setup_seconds
        if self.predicted:
            total = self.seconds_left(runs, time.monotonic(), [])
            logger.info("estimate: the %d runs take about %s at their configured epochs (%d at once; early "
                        "stopping only shortens it)", len(runs), duration(total), self.parallel)

    def started(self, run: PlannedRun) -> None:
        log = self.runs_dir / "logs" / f"{run.settings[0]}.log"
        offset = log.stat().st_size if log.is_file() else 0
        with self._lock:
            self._started[id(run)] = (time.monotonic(), offset, run)

    def ended(self, run: PlannedRun, seconds: float | None = None) -> None:
        """`run` has ended; `seconds` is its measured time when it finished (None: it failed or was stopped)."""
        with self._lock:
            self._started.pop(id(run), None)
            self._ended.add(id(run))
            if seconds is not None and id(run) in self.predicted:
                fixed = PROCESS_START_SECONDS + self.setup.get(id(run), 0.0)
                self._finished.append((seconds - fixed, self.predicted[id(run)] - fixed))

    def _scale(self) -> float:
        """Measured / predicted training time of the finished runs, in [1/5, 5]; 1 until SCALE_AFTER_SECONDS of
        predicted training have finished."""
        predicted = sum(p for _, p in self._finished)
        if predicted < SCALE_AFTER_SECONDS:
            return 1.0
        ratio = max(sum(m for m, _ in self._finished), 0.0) / predicted
        return min(max(ratio, 0.2), 5.0)

    def _left(self, run: PlannedRun, since: float, offset: int, now: float) -> float:
        own = logged_estimate(self.runs_dir / "logs" / f"{run.settings[0]}.log", offset)
        if own is not None:
            # The run's own figure counts from its training start, after the process start and its set-up.
            total = own + PROCESS_START_SECONDS + self.setup.get(id(run), 0.0)
        else:
            total = self.predicted.get(id(run), self._mean()) * self._scale()
        return max(total - (now - since), 0.0)

    def _mean(self) -> float:
        return sum(self.predicted.values()) / len(self.predicted) if self.predicted else 0.0

    def seconds_left(self, todo: list[PlannedRun], now: float, not_started: list[PlannedRun]) -> float:
        """(Time left to the in-flight runs + predicted times of the waiting ones) / runs at once; runs in
        `not_started` (the time budget left them out) count for nothing."""
        with self._lock:
            started = dict(self._started)
            gone = self._ended | {id(r) for r in not_started}
        in_flight = sum(self._left(run, since, offset, now) for since, offset, run in started.values())
        waiting = [r for r in todo if id(r) not in started and id(r) not in gone]
        predicted = sum(self.predicted.get(id(r), self._mean()) for r in waiting) * self._scale()
        return (in_flight + predicted) / self.parallel

    def known(self) -> bool:
        """Whether any run has a prediction or has logged its own estimate."""
        with self._lock:
            started = list(self._started.values())
        return bool(self.predicted) or any(
            logged_estimate(self.runs_dir / "logs" / f"{run.settings[0]}.log", offset) is not None
            for _, offset, run in started)
