"""What a planned run will cost, measured before it starts: build its experiment (model and data, as run.py
would), time a few of its real training steps, and read its shape (steps per epoch, evaluation batches). The
comparison runner predicts each planned run's time from it (compare/run/eta.py, with
`exp.progress.predicted_seconds`). Nothing is written: no checkpoint folder is created and no step is saved.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from exp.arguments import validate_args
from exp.progress import RunShape, predicted_seconds
from exp.tasks import experiment_class
from exp.trainer import Trainer

#: timed training steps after one untimed warm-up step
PROBE_STEPS = 2


@dataclass(frozen=True)
class RunCost:
    """A planned run's measured step time, its shape, the seconds its set-up took (model and data) and its
    --itr count."""

    step_seconds: float
    shape: RunShape
    setup_seconds: float
    iterations: int

    def predicted_seconds(self) -> float:
        """Set-up plus training and evaluation at the configured epochs, for every --itr iteration."""
        return self.iterations * (self.setup_seconds + predicted_seconds(self.step_seconds, self.shape))


@contextlib.contextmanager
def _quiet_threads(threads: int | None) -> Iterator[None]:
    """The run's thread count, and none of the experiment's lines (data sizes, device, ignored flags: the run
    itself prints them) in the caller's log."""
    before = torch.get_num_threads()
    logging.disable(logging.WARNING)
    try:
        if threads:
            torch.set_num_threads(threads)
        yield
    finally:
        logging.disable(logging.NOTSET)
        torch.set_num_threads(before)


def probe_run(args: argparse.Namespace, threads: int | None = None, steps: int = PROBE_STEPS) -> RunCost:
    """Time `steps` training steps (after one warm-up step) of the run `args` describes, on its real data with
    `threads` torch threads. Raises what run.py would raise for these flags (UserInputError, ...)."""
    args = argparse.Namespace(**{**vars(args), "save_every_steps": 0, "no_progress": True, "resume": False,
                                 "logger": []})
    validate_args(args)
    with _quiet_threads(threads):
        start = time.perf_counter()
        exp = experiment_class(args.task_name)(args)
        trainer = Trainer(exp, "cost-probe", exp._load_datasets())
        loader = trainer.data["train"][1]
        loader.sampler.set_epoch(0)
        exp.model.train()
        trainer.optimizer.zero_grad(set_to_none=True)
        setup = time.perf_counter() - start
        times = []
        tick = time.perf_counter()
        for i, batch in enumerate(loader):
            trainer.train_batch(i, batch)
            now = time.perf_counter()
            times.append(now - tick)
            tick = now
            if len(times) > steps:
                break
    timed = times[1:] or times
    return RunCost(statistics.median(timed), trainer.run_shape(), setup, args.itr)
