"""`--task_name` → the experiment class that runs it (TSLib's `exp/exp_<task>.py`), imported on first use.

A task lands by adding its entry here: run.py, the argument checks and `--help` read this table.
"""

from __future__ import annotations

import importlib

from utils.errors import UserInputError

# task name -> (module, class), in TSLib's order.
TASK_EXPERIMENTS: dict[str, tuple[str, str]] = {
    "long_term_forecast": ("exp.exp_long_term_forecasting", "Exp_Long_Term_Forecast"),
    "short_term_forecast": ("exp.exp_short_term_forecasting", "Exp_Short_Term_Forecast"),
    "imputation": ("exp.exp_imputation", "Exp_Imputation"),
    "anomaly_detection": ("exp.exp_anomaly_detection", "Exp_Anomaly_Detection"),
    "classification": ("exp.exp_classification", "Exp_Classification"),
    "zero_shot_forecast": ("exp.exp_zero_shot_forecasting", "Exp_Zero_Shot_Forecast"),
}
TASK_NAMES = tuple(TASK_EXPERIMENTS)


def experiment_class(task_name: str) -> type:
    """The experiment class of `task_name` (a one-line error naming the valid tasks otherwise)."""
    if task_name not in TASK_EXPERIMENTS:
        raise UserInputError(f"--task_name {task_name!r} is not supported; valid choices: {', '.join(TASK_NAMES)}")
    module, name = TASK_EXPERIMENTS[task_name]
    return getattr(importlib.import_module(module), name)
