"""What else loads the machine while a benchmark runs: the load average and the busy processes, for the
header of a measured table (on a shared machine the ratios, not the milliseconds, carry)."""

from __future__ import annotations

import os
import subprocess


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, e.g. '6.18 5.81 6.06'."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def busy_processes(threshold: float = 20.0) -> str:
    """Other processes above `threshold` % CPU (ps's lifetime average), as 'pid %cpu command' items."""
    out = subprocess.run(["ps", "-eo", "pid=,pcpu=,args="], capture_output=True, text=True, check=False).stdout
    busy = []
    for line in out.splitlines():
        pid, cpu, *cmd = line.split(None, 2)
        if int(pid) != os.getpid() and float(cpu) >= threshold:
            busy.append(f"{pid} {cpu}% {' '.join(cmd)[:90]}")
    return "; ".join(busy) or "none"
