"""Shared fixtures: `make_configs(**overrides)` builds a run.py namespace for model tests,
`data_mirror` locates the real benchmark files (TSLIB_DATA_MIRROR), and every test leaves the SIGINT/SIGTERM
handlers as it found them (`_signal_handlers_restored`)."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

import pytest
import torch

from exp.arguments import build_parser
from utils import report_files

REQUIRED = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "test",
            "--model", "DLinear", "--data", "ETTh1"]


def build_configs(**overrides) -> argparse.Namespace:
    """run.py defaults with `overrides` applied (unknown names are an error, to catch typos)."""
    args = build_parser().parse_args(REQUIRED)
    for key, value in overrides.items():
        if not hasattr(args, key):
            raise AttributeError(f"make_configs: unknown flag {key!r}")
        setattr(args, key, value)
    return args


# `make test` runs two pytest-xdist workers: each computes on one thread, so that two workers do not
# oversubscribe a 2-core machine (tests that start run.py set the thread count of their own process).
if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


@pytest.fixture
def make_configs():
    return build_configs


@pytest.fixture(autouse=True)
def _seed_torch():
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _screen_resolution_figures(monkeypatch):
    """Report PNGs at 120 dpi in tests, as fast as before print resolution: the tests check what a figure
    draws; tests/utils/test_report_files.py checks the print resolution itself."""
    monkeypatch.setattr(report_files, "PRINT_DPI", 120)


def _absolute_mirror() -> str | None:
    """TSLIB_DATA_MIRROR made absolute against the directory pytest started in, once, and written back to the
    environment: a relative value given by hand stays right in tests (and their subprocesses) that change
    directory."""
    value = os.environ.get("TSLIB_DATA_MIRROR")
    if not value:
        return None
    os.environ["TSLIB_DATA_MIRROR"] = os.path.abspath(value)
    return os.environ["TSLIB_DATA_MIRROR"]


MIRROR = _absolute_mirror()


def mirror_root() -> Path | None:
    """The dataset mirror (absolute), or None. Under CI=true a missing mirror fails instead of skipping."""
    value = MIRROR
    if value and Path(value, "ETT-small", "ETTh1.csv").is_file():
        return Path(value)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the dataset mirror is missing (TSLIB_DATA_MIRROR={value!r}); "
                    "CI must run with ../shared/datasets beside the clone")
    return None


@pytest.fixture
def data_mirror() -> Path:
    root = mirror_root()
    if root is None:
        pytest.skip("real dataset files not found: set TSLIB_DATA_MIRROR to the mirror folder "
                    "(the Makefile uses ../shared/datasets)")
    return root


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _signal_handlers_restored():
    """A test leaves SIGINT/SIGTERM as it found them: a handler left behind (an ignored SIGINT, say) leaks into
    the later tests of the same worker and the processes they start (a non-interactive bash inherits an ignored
    SIGINT and cannot undo it). The handlers are put back either way, and the test that changed them fails, named."""
    before = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    yield
    changed = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS if signal.getsignal(signum) != before[signum]}
    for signum in changed:
        signal.signal(signum, before[signum])
    if changed:
        pytest.fail("the test left signal handlers changed: " + ", ".join(
            f"{signal.Signals(signum).name} {before[signum]!r} -> {handler!r}" for signum, handler in changed.items()))
