"""Make a child process die with the process that started it (Linux's parent-death signal).

The comparison runner and its Ray tasks start each `run.py` with ``CAPS_TSLIB_PARENT_PID`` set to their own
pid; `run.py` calls `die_with_parent()` first thing, so a SIGKILLed runner or a lost Ray worker leaves no
orphan training on (and writing to the run's folder while a rerun resumes it). Where prctl does not exist
(macOS, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

__all__ = ["PARENT_ENV", "die_with_parent"]

PARENT_ENV = "CAPS_TSLIB_PARENT_PID"
#: prctl option: the signal the kernel sends this process when the thread that started it exits.
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask for SIGKILL when the parent named by ``$CAPS_TSLIB_PARENT_PID`` exits; exit at once when it has
    already gone (it died between starting us and this call). No-op when the variable is unset."""
    expected = os.environ.get(PARENT_ENV)
    if not expected or not sys.platform.startswith("linux"):
        return
    libc = ctypes.util.find_library("c")
    if libc is None:
        return
    ctypes.CDLL(libc, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != int(expected):
        os._exit(1)
