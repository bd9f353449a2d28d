"""`--executor local` (the default): `python -u run.py` subprocesses on this machine, `--jobs` at once, each
waited on by a thread of a pool; the grid's stopper (compare/run/local_process.py) ends them at the time
budget or on a signal to the runner."""

from __future__ import annotations

import argparse
import concurrent.futures
from typing import ClassVar

from compare.grid.plan import PlannedRun
from compare.run import local_process
from compare.run.local_process import RunOutcome
from compare.run.scheduler import Grid
from utils.errors import UserInputError

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """run.py subprocesses on this machine, `parallel` at once."""

    flags: ClassVar[dict[str, object]] = {}

    def __init__(self, parallel: int = 1) -> None:
        self.parallel = parallel
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._resumed: dict[concurrent.futures.Future, bool] = {}

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LocalExecutor:
        if args.cpus_per_run is not None and args.cpus_per_run != int(args.cpus_per_run):
            raise UserInputError(f"--cpus_per_run {args.cpus_per_run:g}: a local run's threads are a whole number")
        return cls(args.jobs)

    def start(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.parallel)

    def capacity(self) -> int:
        return self.parallel

    def submit(self, run: PlannedRun, grid: Grid, resume: bool) -> concurrent.futures.Future:
        # Looked up on the module at call time, so tests can stand in for the subprocess.
        future = self._pool.submit(local_process.execute_run, run, grid.runs_dir, grid.options.run_timeout,
                                   grid.options.threads, resume=resume, stopper=grid.stopper)
        self._resumed[future] = resume
        return future

    def poll(self, timeout: float) -> list[tuple[concurrent.futures.Future, RunOutcome, bool]]:
        done, _ = concurrent.futures.wait(list(self._resumed), timeout, concurrent.futures.FIRST_COMPLETED)
        return [(future, future.result(), self._resumed.pop(future)) for future in done]

    def cancel(self, future: concurrent.futures.Future) -> None:
        """Nothing to do: the grid's stopper stops every local run in flight (SIGTERM, then SIGKILL), and a run
        is submitted only when a thread is free for it."""

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
