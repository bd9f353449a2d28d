"""Waiting on real processes in tests: poll a condition, and find run.py processes by their command line."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path


def wait_for(condition: Callable[[], object], timeout: float = 120.0, what: str = "") -> None:
    """Poll `condition` every 0.1 s; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s waiting for {what or condition}")
        time.sleep(0.1)


def run_py_pids(marker: str) -> list[int]:
    """Pids of live (not zombie) run.py processes whose command line holds `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "stat").read_text().split(") ")[-1].startswith("Z"):
                    continue
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
                if any(part.endswith(b"run.py") for part in cmdline) and marker.encode() in b" ".join(cmdline):
                    found.append(int(entry.name))
    return found
