"""The run's side of `--logger`: one object the experiment calls, which fans out to every chosen tracker.

The training loop calls `log_batch` after every micro-batch (its loss and the learning rate) and `log_epoch`
with each entry of the loss curve (train, validation and test losses, plus a task's own figures); the test
calls `log_forecast` for each forecast figure and run.py `log_result` with the results.jsonl record. Without
`--logger` every call returns at once. A tracker that raises while the run trains is dropped with one warning
line naming it, so a full disk under ./tracking never ends a day-long training.
"""

from __future__ import annotations

import argparse
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from exp.trackers.options import group_name, logger_dir
from exp.trackers.tracker import Tracker
from exp.training_guards import TrainingInterrupted
from utils.errors import UserInputError

logger = logging.getLogger(__name__)

#: curve entry key -> tracked name (other keys, e.g. classification's accuracies, keep theirs)
CURVE_NAMES = {"train": "train_loss", "vali": "vali_loss", "test": "test_loss"}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool) \
        and math.isfinite(float(value))


def final_metrics(record: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, float]:
    """`final/<name>` for every finite number of a results.jsonl record that is not a run flag (the metrics,
    epochs run, best epoch, training seconds, parameter count, ...)."""
    return {f"final/{key}": float(value) for key, value in record.items() if key not in config and _finite(value)}


class RunTrackers:
    """Every tracker of one run (none: every call returns at once)."""

    def __init__(self, trackers: Mapping[str, Tracker] | None = None) -> None:
        self._trackers = dict(trackers or {})

    @property
    def enabled(self) -> bool:
        return bool(self._trackers)

    def _each(self, call: str, *args: Any) -> None:
        for name, tracker in list(self._trackers.items()):
            try:
                getattr(tracker, call)(*args)
            except Exception as err:  # noqa: BLE001 - a tracker must not end the training; it is named below
                logger.warning("--logger %s stopped logging (%s: %s); the run goes on without it", name,
                               type(err).__name__, str(err).splitlines()[0] if str(err) else "")
                del self._trackers[name]

    def log_batch(self, batch: int, loss: float, lr: float) -> None:
        """Micro-batch `batch` (1-based over the run): its training loss and the learning rate it used."""
        if self._trackers:
            self._each("scalars", {"batch/train_loss": float(loss), "batch/lr": float(lr)}, "batch", batch)

    def log_epoch(self, entry: Mapping[str, Any], lr: float) -> None:
        """One entry of the loss curve (`epoch` plus losses; None values, e.g. a skipped test, are left out)."""
        if self._trackers:
            values = {f"epoch/{CURVE_NAMES.get(k, k)}": float(v) for k, v in entry.items()
                      if k != "epoch" and _finite(v)}
            self._each("scalars", {**values, "epoch/lr": float(lr)}, "epoch", int(entry["epoch"]))

    def log_forecast(self, name: str, true: np.ndarray, preds: np.ndarray, file: str | Path | None) -> None:
        """A forecast figure (`utils.tools.forecast_figure` of the series) and the file run.py saved it to."""
        if not self._trackers:
            return
        import matplotlib.pyplot as plt

        from utils.tools import forecast_figure

        figure = forecast_figure(true, preds)
        try:
            self._each("figure", name, figure, Path(file) if file is not None else None)
        finally:
            plt.close(figure)

    def log_result(self, record: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        """The final metrics of a results.jsonl record (`final_metrics`)."""
        if self._trackers and record:
            self._each("summary", final_metrics(record, config))

    def close(self, status: str = "finished") -> None:
        self._each("close", status)
        self._trackers.clear()

    def __enter__(self) -> RunTrackers:
        return self

    def __exit__(self, kind, error, tb) -> None:
        if kind is None:
            self.close("finished")
        else:
            killed = issubclass(kind, (TrainingInterrupted, KeyboardInterrupt))
            self.close("killed" if killed else "failed")


def open_trackers(args: argparse.Namespace, setting: str, config: Mapping[str, Any],
                  enabled: bool = True) -> RunTrackers:
    """The trackers of `--logger` for run `setting` (named so in every tracker, in group `group_name(args)`,
    under `logger_dir(args)`), given the resolved configuration; none when `enabled` is False (a rank other
    than 0) or without --logger. A tracker that cannot start is a UserInputError naming it."""
    from exp.trackers.mlflow_tracker import MlflowTracker
    from exp.trackers.tensorboard_tracker import TensorBoardTracker
    from exp.trackers.wandb_tracker import WandbTracker

    backends = {"tensorboard": TensorBoardTracker, "mlflow": MlflowTracker, "wandb": WandbTracker}
    if not enabled or not args.logger:
        return RunTrackers()
    root, group = Path(logger_dir(args)), group_name(args)
    opened: dict[str, Tracker] = {}
    for name in args.logger:
        try:
            opened[name] = backends[name](root, group, setting, config)
        except Exception as err:  # noqa: BLE001 - any backend failure becomes one line naming the tracker
            RunTrackers(opened).close("failed")
            first = str(err).splitlines()[0] if str(err) else ""
            raise UserInputError(f"--logger {name} could not start under {root} ({type(err).__name__}: {first}); "
                                 "check that folder, or drop that tracker") from None
    logger.info("tracking %s to %s (group %s)", ", ".join(opened), root, group)
    return RunTrackers(opened)
