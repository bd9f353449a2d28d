"""Ways a training run stops early on purpose: a termination signal (after saving `last.pth`) and a
non-finite loss (before anything is overwritten). `run.py` turns both into one stderr line."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import torch
import torch.nn as nn


class TrainingStopped(RuntimeError):
    """Training ended before its last epoch; `exit_code` is what run.py returns."""

    exit_code = 1
    prefix = "error"


class TrainingInterrupted(TrainingStopped):
    """SIGTERM/SIGINT arrived; `last.pth` was saved. Exit code 128 + signal number (shell convention)."""

    prefix = "interrupted"

    def __init__(self, signum: int, message: str) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


class NonFiniteLossError(TrainingStopped):
    """The training loss became NaN or inf; no checkpoint was written after the last good state."""


class StopSignals:
    """Context manager that turns SIGTERM/SIGINT into a request (`signum`) the loop polls between
    optimiser steps, so the state it saves is consistent. A second signal while one is pending goes to
    the previous handler (a second Ctrl-C still aborts at once). Outside the main thread (where Python
    cannot install handlers) it does nothing."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            previous = self._previous[signum]
            signal.signal(signum, previous)
            signal.raise_signal(signum)
            return
        self.signum = signum

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in self.SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}


def first_non_finite(model: nn.Module) -> str | None:
    """Name the first parameter, else the first gradient, holding NaN/inf; None when all are finite."""
    named = list(model.named_parameters())
    for name, param in named:
        if not torch.isfinite(param).all():
            return f"first non-finite parameter: {name}"
    for name, param in named:
        if param.grad is not None and not torch.isfinite(param.grad).all():
            return f"first non-finite gradient: {name}"
    return None
