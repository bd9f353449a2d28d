"""Ways a training run stops early on purpose: a termination signal (after saving `last.pth`), a
non-finite loss (before anything is overwritten) and a non-finite validation loss or test score (before
anything is recorded). `run.py` turns each into one stderr line."""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import numpy as np
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


def non_finite_inputs(batch: Sequence[object]) -> str | None:
    """Describe the first floating-point tensor of a loader batch that holds NaN/inf (its position in the batch,
    how many such values, the first window `[B, ...]` row holding one); None when every input is finite."""
    for position, item in enumerate(batch):
        if isinstance(item, torch.Tensor) and item.is_floating_point() and item.ndim > 0 and len(item):
            bad = ~torch.isfinite(item)
            if bad.any():
                window = int(bad.reshape(len(item), -1).any(dim=1).nonzero()[0, 0])
                return f"batch tensor {position}: {int(bad.sum())} values, first in window {window}"
    return None


def data_source(dataset: object) -> str:
    """The file (or folder) a dataset reads: `data_path`, under `root_path` when it is a bare file name."""
    path = Path(str(getattr(dataset, "data_path", "") or ""))
    root = getattr(dataset, "root_path", None)
    if root is not None and (Path(root) / path).exists():
        path = Path(root) / path
    return str(path) if str(path) != "." else "the data"


class NonFiniteResultError(TrainingStopped):
    """A test score or validation loss came out NaN or inf: nothing is recorded as a finished result."""


#: Why a ratio metric (MAPE, MSPE) is undefined when it comes out infinite or NaN.
UNDEFINED_RATIO = "a target value is 0, so the relative error divides by zero (TSLib writes inf)"


def check_validation_loss(value: float, epoch: int, best_epoch: int) -> None:
    """Stop on a NaN/inf validation loss (early stopping counted it as no improvement), naming the data first:
    the model's validation outputs are not finite."""
    if math.isfinite(value):
        return
    kept = f"checkpoint.pth keeps epoch {best_epoch}" if best_epoch else "no checkpoint was kept"
    raise NonFiniteResultError(
        f"non-finite validation loss ({value}) after epoch {epoch}: the model's outputs on the validation split are "
        f"not finite; {kept}; check the data file for extreme values first, then lower --learning_rate or set "
        "--max_grad_norm")


def _non_finite_result(setting: str, what: str) -> NonFiniteResultError:
    return NonFiniteResultError(
        f"{setting}: {what}: the model's test outputs hold NaN or inf; nothing was recorded; check the data file "
        "for extreme values, then lower --learning_rate or set --max_grad_norm")


def check_finite_outputs(values: np.ndarray, what: str, setting: str) -> None:
    """Raise NonFiniteResultError when `values` (test forecasts, reconstruction energies) hold NaN or inf."""
    if not np.isfinite(values).all():
        raise _non_finite_result(setting, f"{int((~np.isfinite(values)).sum())} of the {what} are not finite")


def checked_scores(required: dict[str, float], optional: dict[str, float], setting: str) -> tuple[dict, dict]:
    """(scores, undefined): `required` must all be finite (else NonFiniteResultError, before anything is
    written); a non-finite `optional` ratio metric becomes None, with its reason in `undefined`."""
    bad = {name: value for name, value in required.items() if not math.isfinite(value)}
    if bad:
        shown = ", ".join(f"{name}={value}" for name, value in bad.items())
        raise _non_finite_result(setting, f"the test scores are not finite ({shown})")
    scores: dict[str, float | None] = dict(required)
    undefined = {}
    for name, value in optional.items():
        if math.isfinite(value):
            scores[name] = value
        else:
            scores[name] = None
            undefined[name] = UNDEFINED_RATIO
    return scores, undefined
