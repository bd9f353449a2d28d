"""What every tracker backend offers the run (`exp.trackers.run_trackers.RunTrackers` fans out to them).

Curves live on two axes: `batch` (x = the global micro-batch number, 1-based over the whole run) and `epoch`
(x = the epoch number); their keys start with the axis name (`batch/train_loss`, `epoch/vali_loss`). The final
metrics are a summary (`final/mse`); the resolved configuration is given when the tracker is opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

#: how a tracked run ended
STATUSES = ("finished", "failed", "killed")
#: W&B project of every run (MLflow's experiment and W&B's group are the runs' group)
PROJECT = "CAPS-TSLib"


class Tracker(Protocol):
    """One backend's handle on one run, created with the run's name, group and configuration."""

    def scalars(self, values: Mapping[str, float], axis: str, x: int) -> None:
        """Log `values` (keys `<axis>/<name>`) at position `x` of `axis` ("batch" or "epoch")."""

    def figure(self, name: str, figure: Any, file: Path | None) -> None:
        """Log a matplotlib figure as an image named `name`, and the file run.py wrote it to (PDF), if any."""

    def summary(self, values: Mapping[str, float]) -> None:
        """Log the run's final metrics (keys `final/<name>`)."""

    def close(self, status: str) -> None:
        """Flush and end the run with one of STATUSES."""


def config_table(config: Mapping[str, Any]) -> str:
    """The configuration as a markdown table (TensorBoard's text plugin renders it)."""
    rows = "\n".join(f"| {key} | {value} |" for key, value in sorted(config.items()))
    return "| flag | value |\n|---|---|\n" + rows
