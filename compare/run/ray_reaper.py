"""Ray's helper processes of a local instance end with the driver that started it, even a SIGKILLed one.

`ray.shutdown` stops a local instance's processes, but a driver killed with SIGKILL never calls it: Ray's
gcs_server and raylet notice and exit, yet the raylet's agents (`ray::DashboardAgent`,
`ray::RuntimeEnvAgent`) were seen to live on. `start(driver_pid)` starts this module as a small process of its
own session: while the driver lives it notes, once a second, every process below it (from /proc), with its
start time; when the driver is gone it SIGKILLs those still alive with the same start time (so a reused pid is
never hit) and exits. `stop()` ends it after a normal `ray.shutdown`. Linux only (/proc); elsewhere a no-op.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from utils.record_paths import REPO_ROOT

__all__ = ["descendants", "start", "stop"]

POLL_SECONDS = 1.0
_PROC = Path("/proc")
_reaper: subprocess.Popen | None = None


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of `pid`, or None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """{pid: start time} of every process below `root` now."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            found = _stat(int(entry.name))
            if found is not None:
                children.setdefault(found[0], []).append(int(entry.name))
                starts[int(entry.name)] = found[1]
    below, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in starts and pid not in below:
            below[pid] = starts[pid]
            todo += children.get(pid, [])
    return below


def watch(driver: int) -> None:
    """Note the driver's descendants while it lives; then kill the ones left."""
    seen: dict[int, int] = {}
    me = os.getpid()
    while _stat(driver) is not None:
        seen.update({pid: start for pid, start in descendants(driver).items() if pid != me})
        time.sleep(POLL_SECONDS)
    for pid, start in seen.items():
        now = _stat(pid)
        if now is not None and now[1] == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def start(driver: int) -> None:
    """Start the reaper of `driver`'s local Ray instance (Linux; elsewhere nothing)."""
    global _reaper
    if not sys.platform.startswith("linux") or not _PROC.is_dir() or _reaper is not None:
        return
    _reaper = subprocess.Popen([sys.executable, "-m", "compare.run.ray_reaper", str(driver)], start_new_session=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               cwd=REPO_ROOT)


def stop() -> None:
    """End the reaper (after a normal shutdown there is nothing left for it)."""
    global _reaper
    if _reaper is not None:
        _reaper.kill()
        _reaper.wait()
        _reaper = None


if __name__ == "__main__":
    watch(int(sys.argv[1]))
