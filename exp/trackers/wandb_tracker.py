"""Weights & Biases, offline: `<logger_dir>/wandb/wandb/offline-run-<time>-<id>/run-<id>.wandb`, project
CAPS-TSLib, group = the runs' group, run name = the setting. Nothing is sent anywhere; `wandb sync
<logger_dir>/wandb/wandb/offline-run-*` uploads the runs later from a machine that may. Every folder W&B
writes to (its cache, config and data folders too) is set inside `<logger_dir>/wandb/`.

The batch and epoch curves get their own x axes (`define_metric(..., step_metric=...)`), as W&B recommends
for curves logged at different rates.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exp.trackers.tracker import PROJECT

#: W&B's environment variables for the folders it writes to, each set to a sub-folder of <logger_dir>/wandb
_FOLDERS = {"WANDB_DIR": ".", "WANDB_CACHE_DIR": "cache", "WANDB_CONFIG_DIR": "config",
            "WANDB_DATA_DIR": "data", "WANDB_ARTIFACT_DIR": "artifacts"}


class WandbTracker:
    """The configuration as the run's config, curves with their axis as a logged value, figures as images."""

    def __init__(self, root: Path, group: str, name: str, config: Mapping[str, Any]) -> None:
        folder = (root / "wandb").resolve()
        settings = {variable: str(folder / sub) for variable, sub in _FOLDERS.items()}
        settings.update(WANDB_MODE="offline", WANDB_SILENT="true")
        # Restored by close(), so a process that goes on (a test, a notebook) keeps its own environment.
        self._environment = {variable: os.environ.get(variable) for variable in settings}
        for sub in _FOLDERS.values():
            (folder / sub).mkdir(parents=True, exist_ok=True)
        os.environ.update(settings)
        import wandb

        self.wandb = wandb
        self.run = wandb.init(mode="offline", dir=str(folder), project=PROJECT, group=group, name=name,
                              config=dict(config), settings=wandb.Settings(console="off", silent=True))
        for axis in ("batch", "epoch"):
            self.run.define_metric(axis)
            self.run.define_metric(f"{axis}/*", step_metric=axis)

    def scalars(self, values: Mapping[str, float], axis: str, x: int) -> None:
        self.run.log({**values, axis: x})

    def figure(self, name: str, figure: Any, file: Path | None) -> None:
        self.run.log({name: self.wandb.Image(figure)})

    def summary(self, values: Mapping[str, float]) -> None:
        self.run.summary.update(dict(values))

    def close(self, status: str) -> None:
        try:
            self.run.finish(exit_code=0 if status == "finished" else 1)
        finally:
            for variable, value in self._environment.items():
                if value is None:
                    os.environ.pop(variable, None)
                else:
                    os.environ[variable] = value
