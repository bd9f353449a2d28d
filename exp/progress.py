"""Time and progress of a run: an estimate from the first measured training steps, TSLib's progress lines
(every 100 batches, and now at least once a minute, so a slow model shows life within its first minute), and
progress through the validation and test passes.

The estimate, printed once per invocation as soon as `ESTIMATE_AFTER_STEPS` steps after the first (which
pays for warm-up) are timed, or `ESTIMATE_AFTER_SECONDS` have passed, or the epoch ends:

    train step time s (the median of the timed steps), evaluation batch time e = s * EVAL_STEP_SHARE (predicted: a forward pass
    without backward is about a third of a training step), per epoch: S * s + V * e (S train steps, V
    validation and test batches), this run: epochs * (S * s + V * e) + T * e (T final test batches).

After each epoch the run prints that epoch's measured time and the rest of the run at that pace. Both lines
end with `this run: about <duration> (<seconds> s)`, from the start of training of this invocation to the end
of its final test, at the configured epochs (early stopping can only make it shorter); the comparison runner
reads that number from the run's log (compare/run/eta.py).
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from tqdm import tqdm

logger = logging.getLogger(__name__)

#: a forward-only evaluation batch, as a share of a training step (forward + backward ~ 3 forwards)
EVAL_STEP_SHARE = 1 / 3
ESTIMATE_AFTER_STEPS = 5
ESTIMATE_AFTER_SECONDS = 20.0
#: TSLib prints its progress lines every 100 batches; a line is also due once this many seconds passed
LINE_EVERY_STEPS = 100
LINE_EVERY_SECONDS = 60.0
#: the token the runner reads: `this run: about 4m07s (247 s)`
RUN_TOTAL_FORMAT = "this run: about {duration} ({seconds:d} s)"

T = TypeVar("T")


def duration(seconds: float) -> str:
    """`1h05m`, `4m07s`."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


@dataclass(frozen=True)
class RunShape:
    """How much work a run is: train steps per epoch, evaluation batches at each epoch end (validation, and
    test unless --vali_only), batches of the final test, epochs to train."""

    steps_per_epoch: int
    eval_batches: int
    test_batches: int
    epochs: int


def predicted_seconds(step_seconds: float, shape: RunShape) -> float:
    """The run's time at `step_seconds` per training step: epochs * (S * s + V * e) + T * e, e = s * share."""
    eval_seconds = step_seconds * EVAL_STEP_SHARE
    per_epoch = shape.steps_per_epoch * step_seconds + shape.eval_batches * eval_seconds
    return shape.epochs * per_epoch + shape.test_batches * eval_seconds


def run_total(seconds: float) -> str:
    return RUN_TOTAL_FORMAT.format(duration=duration(seconds), seconds=int(round(seconds)))


class TrainClock:
    """Times one invocation's training: the estimate, TSLib's progress lines and the per-epoch time lines.

    shape.epochs counts the epochs this invocation trains (a resumed run: those left)."""

    def __init__(self, shape: RunShape, total_epochs: int) -> None:
        self.shape = shape
        self.total_epochs = total_epochs
        self.start = time.monotonic()
        self.first_step_end: float | None = None
        self.measured = 0
        self._step_times: list[float] = []
        self._last_step_end = self.start
        self.estimated = False
        self.epochs_done = 0
        self._line_time = self._epoch_start = self.start
        self._line_step = 0

    def epoch_start(self, step: int) -> None:
        self._epoch_start = self._line_time = time.monotonic()
        self._line_step = step

    def step_done(self, i: int, epoch: int, loss: float, text_lines: bool) -> None:
        """After micro-batch i (0-based) of epoch `epoch` (0-based): the estimate when due, and with
        `text_lines` (no progress bar) TSLib's two progress lines when due."""
        now = time.monotonic()
        if self.first_step_end is None:
            self.first_step_end = now
        else:
            self.measured += 1
            if not self.estimated:
                self._step_times.append(now - self._last_step_end)
        self._last_step_end = now
        if not self.estimated and (self.measured >= ESTIMATE_AFTER_STEPS or i + 1 >= self.shape.steps_per_epoch
                                   or (self.measured and now - self.first_step_end >= ESTIMATE_AFTER_SECONDS)):
            self._log_estimate(now)
        steps = i + 1 - self._line_step
        if text_lines and steps and ((i + 1) % LINE_EVERY_STEPS == 0 or now - self._line_time >= LINE_EVERY_SECONDS):
            speed = (now - self._line_time) / steps
            left = speed * ((self.total_epochs - epoch) * self.shape.steps_per_epoch - i)
            logger.info("\titers: %d, epoch: %d | loss: %.7f", i + 1, epoch + 1, loss)
            logger.info("\tspeed: %.4fs/iter; left time: %.4fs", speed, left)
            self._line_time, self._line_step = now, i + 1

    def _log_estimate(self, now: float) -> None:
        self.estimated = True
        if self.measured:
            # The median: one slow step (a page fault, another process) does not set the whole run's figure.
            step_seconds, how = statistics.median(self._step_times), f"median of {self.measured} steps"
        else:
            step_seconds, how = now - self.start, "the first step, warm-up included"
        eval_seconds = self.shape.eval_batches * step_seconds * EVAL_STEP_SHARE
        logger.info("estimate: %.3f s/train step (%s) x %d steps = %s per epoch, + validation/test about %s "
                    "(predicted); %s at %d epochs, less if early stopping ends it",
                    step_seconds, how, self.shape.steps_per_epoch, duration(step_seconds * self.shape.steps_per_epoch),
                    duration(eval_seconds), run_total(predicted_seconds(step_seconds, self.shape)),
                    self.shape.epochs)

    def epoch_end(self, epoch: int, finished: bool) -> None:
        """After epoch `epoch` (1-based) was trained, validated and saved: its time, and the rest at that pace."""
        now = time.monotonic()
        self.epochs_done += 1
        took = now - self._epoch_start
        if finished:
            logger.info("time: epoch %d took %s; training done after %s", epoch, duration(took),
                        duration(now - self.start))
            return
        left_epochs = self.shape.epochs - self.epochs_done
        # The epoch's time is S * s + V * s * share: the final test's T * s * share at that pace.
        step_seconds = took / max(self.shape.steps_per_epoch + self.shape.eval_batches * EVAL_STEP_SHARE, 1)
        left = left_epochs * took + self.shape.test_batches * step_seconds * EVAL_STEP_SHARE
        logger.info("time: epoch %d took %s; %d epochs left, about %s; %s", epoch, duration(took), left_epochs,
                    duration(left), run_total(now - self.start + left))


def bars_wanted(no_progress: bool, is_main: bool) -> bool:
    """A tqdm bar on an interactive terminal (not with --no_progress, and only on rank 0)."""
    import sys

    return not no_progress and sys.stdout.isatty() and is_main


def eval_progress(batches: Iterable[T], label: str, bar: bool) -> Iterator[T]:
    """Yield `batches` while showing progress: a tqdm bar when `bar`, else a text line (`\\tvali: 120/300
    batches, 45s, about 1m07s left`) once LINE_EVERY_SECONDS have passed since the last, so a short pass prints
    nothing."""
    total = len(batches) if hasattr(batches, "__len__") else None
    if bar:
        yield from tqdm(batches, desc=label, total=total, leave=False, dynamic_ncols=True)
        return
    start = last = time.monotonic()
    for k, batch in enumerate(batches, start=1):
        yield batch
        now = time.monotonic()
        if now - last >= LINE_EVERY_SECONDS:
            left = f", about {duration((now - start) / k * (total - k))} left" if total else ""
            logger.info("\t%s: %d/%s batches, %s%s", label, k, total if total else "?", duration(now - start), left)
            last = now
