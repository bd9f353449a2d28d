"""One run.py subprocess on this machine, and the stopper that ends the runs in flight at a time budget or
when the runner is signalled. The local executor and each Ray task start runs through `execute_run`.

A run is started in a session of its own (a terminal's Ctrl-C reaches only the runner, which forwards one
SIGTERM: a second would make run.py abort without saving), and dies with the process that started it
(`utils.process_guard`): a SIGKILLed runner or Ray worker leaves no orphan training on.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from compare.grid.plan import PlannedRun, run_py
from compare.grid.run_args import flag_value
from exp.training_guards import StopSignals
from utils.process_guard import PARENT_ENV

__all__ = ["EPOCH_LINE", "INTERRUPTED_CODES", "RunOutcome", "RunStopper", "execute_run", "follow_output", "run_command",
           "start_process"]

logger = logging.getLogger("compare")

# How run.py ends after it saved last.pth on SIGTERM / SIGINT: killed by that signal (Popen's -signal, what a
# shell sees as 128 + signal), or returning 128 + signal where it runs without re-raising (run.main()).
INTERRUPTED_CODES = frozenset({-signal.SIGTERM, -signal.SIGINT, 128 + signal.SIGTERM, 128 + signal.SIGINT})


EPOCH_LINE = re.compile(r"Epoch: (\d+), Steps: \d+ \| Train Loss: (\S+) Vali Loss: (\S+) Test Loss: (\S+)")


class RunStopper:
    """Ends the runs in flight at the stop time of --time_budget or when the runner receives
    SIGTERM/SIGINT: one SIGTERM to each run (run.py saves last.pth and exits 128 + 15), then SIGKILL to
    the run's process group when it is still alive `grace` seconds later. A thread of its own polls
    `clock` (injectable, so tests decide when time is up) and the runner's signals."""

    POLL_SECONDS = 0.1

    def __init__(self, stop_at: float | None, grace: float, clock: Callable[[], float],
                 signals: StopSignals) -> None:
        self.stop_at = stop_at
        self.grace = grace
        self.clock = clock
        self.signals = signals
        #: why the runs are being stopped ("the time budget", "signal 15"); None while they are not
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._procs: dict[int, subprocess.Popen] = {}
        # pid -> time.monotonic() of its SIGTERM; the grace period is real time whatever `clock` says
        self._terminated: dict[int, float] = {}
        self._killed: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="compare-stopper", daemon=True)

    def __enter__(self) -> RunStopper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def stop_requested(self) -> bool:
        """True once the runs are being stopped, or a signal to the runner awaits the next poll."""
        return self.reason is not None or self.signals.signum is not None

    def seconds_left(self) -> float:
        """Seconds until the stop time (infinite without a budget)."""
        return float("inf") if self.stop_at is None else self.stop_at - self.clock()

    def register(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs[proc.pid] = proc
        # A run started just as the stop came is stopped by the next poll.

    def unregister(self, proc: subprocess.Popen) -> tuple[bool, bool]:
        """Forget a finished run; returns (it was sent SIGTERM, it was killed after the grace period)."""
        with self._lock:
            self._procs.pop(proc.pid, None)
            return proc.pid in self._terminated, proc.pid in self._killed

    def kill_all(self) -> None:
        """SIGKILL every run in flight at once (the runner is aborting)."""
        with self._lock:
            for proc in self._procs.values():
                self._kill(proc)

    def _kill(self, proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            try:
                # The whole group: DataLoader workers die with the run.
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._killed.add(proc.pid)

    def _watch(self) -> None:
        while not self._done.wait(self.POLL_SECONDS):
            self.poll()

    def poll(self) -> None:
        """Decide whether to stop, then SIGTERM new runs and SIGKILL those past their grace period."""
        if self.reason is None:
            if self.signals.signum is not None:
                self.reason = f"signal {self.signals.signum} to the runner"
            elif self.stop_at is not None and self.clock() >= self.stop_at:
                self.reason = "the time budget"
            if self.reason is None:
                return
            logger.info("stopping the runs in flight (%s): SIGTERM, then SIGKILL after %gs", self.reason, self.grace)
        now = time.monotonic()
        with self._lock:
            for pid, proc in self._procs.items():
                if pid not in self._terminated:
                    # send_signal does nothing once the run has exited.
                    proc.send_signal(signal.SIGTERM)
                    self._terminated[pid] = now
                elif pid not in self._killed and now - self._terminated[pid] >= self.grace:
                    self._kill(proc)


@dataclass
class RunOutcome:
    """How one run.py subprocess ended."""

    code: int
    error_line: str | None
    log_path: Path
    #: the runner sent it SIGTERM (time budget or a signal to the runner)
    stopped: bool = False
    #: it was still alive after the grace period and got SIGKILL
    killed: bool = False
    #: the machine that ran it (host name; Ray adds its node id)
    node: str | None = None


def run_command(run: PlannedRun, resume: bool, threads: int | None) -> tuple[list[str], dict[str, str]]:
    """(command, environment) of the run's `python -u run.py` process (`--resume` appended when resuming)."""
    env = {**os.environ, **(run.recipe.env if run.recipe else {}), "PYTHONUNBUFFERED": "1",
           PARENT_ENV: str(os.getpid())}
    if threads is not None:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    return [sys.executable, "-u", str(run_py()), *run.argv, *(["--resume"] if resume else [])], env


def start_process(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start run.py in a session of its own, its stdout and stderr merged into one text pipe: a terminal's
    Ctrl-C or `timeout` signals only the runner, which forwards one SIGTERM (a second signal would make
    run.py abort without saving last.pth)."""
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1, start_new_session=True)


def follow_output(proc: subprocess.Popen, log: TextIO, run: PlannedRun) -> str | None:
    """Copy the run's output into `log` while echoing its epoch lines; returns its error line (run.py's
    `error:`/`interrupted:` line, or the last line of a traceback), None when it printed none."""
    epochs = flag_value(run.argv, "train_epochs") or "?"
    error_line = None
    assert proc.stdout is not None  # PIPE was requested
    for line in proc.stdout:
        log.write(line)
        match = EPOCH_LINE.search(line)
        if match:
            logger.info("    %s  epoch %s/%s  train %.4f  vali %.4f  test %s", run.label, match[1],
                        epochs, float(match[2]), float(match[3]), match[4])
        elif line.startswith(("error:", "interrupted:")):
            error_line = line.strip()
        elif "Traceback" in line and error_line is None:
            error_line = "crashed with a traceback"
        elif error_line == "crashed with a traceback" and line.strip() and not line.startswith(" "):
            error_line = line.strip()
    return error_line


def execute_run(run: PlannedRun, runs_dir: Path, timeout: float | None, threads: int | None = None, *,
                resume: bool = False, stopper: RunStopper | None = None) -> RunOutcome:
    """Run one `python -u run.py` subprocess in `runs_dir`, echoing epoch progress.

    threads: OMP_NUM_THREADS for the subprocess when the environment does not set it already.
    resume: add run.py's --resume (continue from last.pth) and append to the run's log.
    stopper: stops the run at the time budget or when the runner is signalled.
    """
    log_dir = runs_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{run.settings[0]}.log"
    command, env = run_command(run, resume, threads)
    stopped = killed = False
    # Line-buffered: `tail -f` on a run's log follows it while it trains (a block buffer held an hour of
    # a slow run's output back).
    with log_path.open("a" if resume else "w", buffering=1) as log:
        log.write(" ".join(shlex.quote(c) for c in command) + "\n")
        proc = start_process(command, runs_dir, env)
        if stopper is not None:
            stopper.register(proc)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        try:
            error_line = follow_output(proc, log, run)
            code = proc.wait()
        finally:
            if timer:
                timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if stopper is not None:
                stopped, killed = stopper.unregister(proc)
    if timer and code < 0 and error_line is None and not stopped:
        error_line = f"killed after the --run-timeout of {timeout:g} s"
    return RunOutcome(code, error_line, log_path, stopped, killed, socket.gethostname())
