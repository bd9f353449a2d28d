"""TensorBoard: one event-file folder per run, `<logger_dir>/tensorboard/<group>/<run>/`, written by
`torch.utils.tensorboard.SummaryWriter`; `tensorboard --logdir <logger_dir>/tensorboard` shows every run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exp.trackers.tracker import config_table


class TensorBoardTracker:
    """Scalars per tag (each tag its own step axis), the configuration as a text table, figures as images."""

    def __init__(self, root: Path, group: str, name: str, config: Mapping[str, Any]) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.folder = root / "tensorboard" / group / name
        self.writer = SummaryWriter(log_dir=str(self.folder))
        self.writer.add_text("config", config_table(config))

    def scalars(self, values: Mapping[str, float], axis: str, x: int) -> None:
        for key, value in values.items():
            self.writer.add_scalar(key, value, x)

    def figure(self, name: str, figure: Any, file: Path | None) -> None:
        self.writer.add_figure(name, figure, global_step=0, close=False)

    def summary(self, values: Mapping[str, float]) -> None:
        for key, value in values.items():
            self.writer.add_scalar(key, value, 0)

    def close(self, status: str) -> None:
        self.writer.add_text("status", status)
        self.writer.close()
