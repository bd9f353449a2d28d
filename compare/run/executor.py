"""Where a comparison's runs execute, behind one interface: an executor starts, says how many runs it can hold
at once, takes runs (`submit`), reports the ones that ended (`poll`), cancels, and closes. `run_jobs` is the one
loop that drives any executor through a grid, so the time budget, a stop request, resume and the manifest are
one path whatever the executor.

Adding an executor (a SLURM one, say) is one new file with a class of this shape and one line in `EXECUTORS`;
`--executor NAME` then offers it, and the flags it names in `flags` are refused under every other executor.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Hashable
from typing import ClassVar, Protocol

from compare.grid.plan import PlannedRun
from compare.grid.run_state import has_last
from compare.run.local_process import RunOutcome
from compare.run.scheduler import Grid
from utils.errors import UserInputError

__all__ = ["EXECUTORS", "Ended", "Executor", "check_executor_flags", "executor_class", "run_jobs"]

#: --executor NAME -> "module:Class", imported only when chosen (Ray is heavy).
EXECUTORS: dict[str, str] = {
    "local": "compare.run.local_executor:LocalExecutor",
    "ray": "compare.run.ray_executor:RayExecutor",
}
#: (handle, outcome, resumed) of a run that ended
Ended = tuple[Hashable, RunOutcome, bool]


class Executor(Protocol):
    """Runs `python -u run.py` for planned runs somewhere, each leaving its files in `grid.runs_dir`."""

    #: runner flags (dest names) only this executor reads, with the value that means "not given"
    flags: ClassVar[dict[str, object]]

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Executor:
        """The executor the runner's flags describe; UserInputError (one line) for flags it cannot honour."""

    def start(self) -> None:
        """Connect to where runs execute; UserInputError (one line, nothing written yet) when it cannot."""

    def capacity(self) -> int:
        """Runs it can hold at once now (at least 1)."""

    def submit(self, run: PlannedRun, grid: Grid, resume: bool) -> Hashable:
        """Start `run` (with run.py's --resume when `resume`); a handle `poll` and `cancel` name it by."""

    def poll(self, timeout: float) -> list[Ended]:
        """The runs that ended, waiting up to `timeout` seconds for one."""

    def cancel(self, handle: Hashable) -> None:
        """Ask a submitted run to stop (it still ends through `poll`); calling it twice does no harm."""

    def close(self) -> None:
        """Leave (a Ray instance this executor started is shut down)."""


def executor_class(name: str) -> type[Executor]:
    """The class registered as --executor `name`."""
    if name not in EXECUTORS:
        raise UserInputError(f"--executor {name}: choose one of {', '.join(EXECUTORS)}")
    module, _, cls = EXECUTORS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def check_executor_flags(args: argparse.Namespace, owners: dict[str, dict[str, object]]) -> None:
    """Refuse a flag that belongs to another executor than --executor (`owners`: executor -> its `flags`)."""
    for name, flags in owners.items():
        if name == args.executor:
            continue
        for dest, unset in flags.items():
            if getattr(args, dest) != unset:
                raise UserInputError(f"--{dest} {getattr(args, dest)} is read by --executor {name} only: add "
                                     f"--executor {name} or drop it")


def run_jobs(executor: Executor, grid: Grid, jobs: list[tuple[int, PlannedRun]], poll_seconds: float = 0.5) -> None:
    """Every job of `jobs` ((k, run), k 1-based) through `executor`: `grid.begin` before a run starts (the time
    budget and a stop request are checked there), `grid.finish` when it ended; on a stop request the runs
    not started are counted as such and those in flight are cancelled. Returns when nothing is left."""
    queue, pending, cancelled = list(jobs), {}, set()
    while queue or pending:
        while queue and len(pending) < executor.capacity() and not grid.stopper.stop_requested():
            k, run = queue.pop(0)
            if grid.begin(k, run):
                resume = has_last(grid.runs_dir, run)
                pending[executor.submit(run, grid, resume)] = (run, time.time())
        if grid.stopper.stop_requested():
            for _, run in queue:
                grid.not_start(run)
            queue = []
            for handle in set(pending) - cancelled:
                executor.cancel(handle)
                cancelled.add(handle)
        if not pending:
            continue
        for handle, outcome, resumed in executor.poll(poll_seconds):
            run, start = pending.pop(handle)
            grid.finish(run, outcome, time.time() - start, resumed)
