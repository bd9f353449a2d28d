"""The executor interface: the registry, flag ownership, and `run_jobs` driving a stand-in executor through a
grid (begin before submit, finish after poll, capacity respected, not-started and cancelled runs on a stop)."""

from __future__ import annotations

import argparse
import threading

import pytest

from compare.run.executor import EXECUTORS, check_executor_flags, executor_class, run_jobs
from compare.run.local_process import RunOutcome
from utils.errors import UserInputError


def test_every_registered_executor_has_the_interface():
    for name in EXECUTORS:
        cls = executor_class(name)
        for method in ("from_args", "start", "capacity", "submit", "poll", "cancel", "close"):
            assert callable(getattr(cls, method)), (name, method)
        assert isinstance(cls.flags, dict)


def test_an_unknown_executor_is_one_line():
    with pytest.raises(UserInputError, match="--executor slurm: choose one of local, ray"):
        executor_class("slurm")


def test_a_flag_of_another_executor_is_refused():
    owners = {"local": {}, "ray": {"address": None, "gpus_per_run": 0.0}}
    check_executor_flags(argparse.Namespace(executor="ray", address="auto", gpus_per_run=1.0), owners)
    with pytest.raises(UserInputError, match="--address auto is read by --executor ray only"):
        check_executor_flags(argparse.Namespace(executor="local", address="auto", gpus_per_run=0.0), owners)


class StandIn:
    """Ends each run at the next poll, in submission order; records what it was asked."""

    flags: dict = {}

    def __init__(self, capacity: int) -> None:
        self.cap, self.submitted, self.cancelled, self.in_flight, self.most = capacity, [], [], [], 0

    def capacity(self) -> int:
        return self.cap

    def submit(self, run, grid, resume):
        self.submitted.append(run)
        self.in_flight.append(run)
        self.most = max(self.most, len(self.in_flight))
        return run

    def poll(self, timeout):
        ended, self.in_flight = self.in_flight[:1], self.in_flight[1:]
        return [(run, RunOutcome(0, None, None, False, False, "here"), False) for run in ended]

    def cancel(self, handle):
        self.cancelled.append(handle)


class StandInGrid:
    def __init__(self, stop_after: int | None = None) -> None:
        self.began, self.finished, self.not_started, self.stop_after = [], [], [], stop_after
        self.runs_dir = None
        self.stopper = self

    def stop_requested(self) -> bool:
        return self.stop_after is not None and len(self.began) >= self.stop_after

    def begin(self, k, run) -> bool:
        if self.stop_requested():
            self.not_started.append(run)
            return False
        self.began.append(run)
        return True

    def not_start(self, run) -> None:
        self.not_started.append(run)

    def finish(self, run, outcome, seconds, resumed) -> None:
        self.finished.append(run)


@pytest.fixture
def no_last(monkeypatch):
    monkeypatch.setattr("compare.run.executor.has_last", lambda runs_dir, run: False)


def test_run_jobs_runs_every_job_within_capacity(no_last):
    executor, grid = StandIn(capacity=2), StandInGrid()
    run_jobs(executor, grid, list(enumerate("abcde", start=1)), poll_seconds=0.0)
    assert executor.submitted == list("abcde") and grid.finished == list("abcde")
    assert executor.most == 2


def test_a_stop_leaves_the_queue_not_started_and_cancels_the_runs_in_flight(no_last):
    executor, grid = StandIn(capacity=2), StandInGrid(stop_after=2)
    run_jobs(executor, grid, list(enumerate("abcde", start=1)), poll_seconds=0.0)
    assert grid.began == ["a", "b"] and grid.not_started == list("cde")
    assert sorted(executor.cancelled) == ["a", "b"] and sorted(grid.finished) == ["a", "b"]


def test_the_local_executor_returns_each_run_with_its_outcome(monkeypatch, tmp_path):
    from compare.run.local_executor import LocalExecutor

    seen = []

    def fake_execute(run, runs_dir, timeout, threads, *, resume, stopper):
        seen.append((run, threading.current_thread() is not threading.main_thread()))
        return RunOutcome(0, None, tmp_path / f"{run}.log", False, False, "here")

    monkeypatch.setattr("compare.run.local_process.execute_run", fake_execute)
    grid = argparse.Namespace(runs_dir=tmp_path, options=argparse.Namespace(run_timeout=None, threads=1), stopper=None)
    executor = LocalExecutor(parallel=2)
    executor.start()
    try:
        handles = {executor.submit(run, grid, resume=run == "b"): run for run in "ab"}
        ended = []
        while len(ended) < 2:
            ended += executor.poll(1.0)
    finally:
        executor.close()
    assert sorted((handles[h], o.code, resumed) for h, o, resumed in ended) == [("a", 0, False), ("b", 0, True)]
    assert sorted(seen) == [("a", True), ("b", True)]
