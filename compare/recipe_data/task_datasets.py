"""The datasets of TSLib's other tasks' scripts: the imputation sets from the long-term table, the anomaly
and UEA sets and the M4 groups from `data_provider.registry`'s names."""

from __future__ import annotations

from compare.recipe_data.datasets import DATASETS
from compare.task_book import TaskData
from data_provider.registry import ANOMALY_DATASETS, DATASET_GROUPS, UEA_DATASETS

__all__ = ["ETT4", "M4_DAILY_FIRST", "M4_FETCH", "M4_PATTERNS", "TASKS", "TASK_DATASETS", "UEA_SCRIPT_SETS"]

TASKS = ("imputation", "anomaly_detection", "classification", "short_term_forecast")
M4_PATTERNS = ("Monthly", "Yearly", "Quarterly", "Weekly", "Daily", "Hourly")  # most M4 scripts' order
M4_DAILY_FIRST = ("Monthly", "Yearly", "Quarterly", "Daily", "Weekly", "Hourly")  # TimesNet's, MICN's ... order
# TSLib's classification scripts run the first ten; the registry also lists BasicMotions (a small test set).
UEA_SCRIPT_SETS = tuple(name for name in UEA_DATASETS if name != "BasicMotions")
# The registry's group name that fetches the M4 files (`python -m data_provider.fetch m4`).
M4_FETCH = next(name for name in DATASET_GROUPS if name == "m4")


def _task_datasets() -> dict[str, dict[str, TaskData]]:
    """Each task's datasets, from the long-term table (imputation) and data_provider.registry's names."""
    imputation = {}
    for name in ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "ECL", "Weather"):
        d = DATASETS[name]
        imputation[name] = TaskData(name, {"root_path": d.root_path, "data_path": d.data_path, "data": d.data,
                                           "channels": d.channels, "id": d.tslib_id or d.name},
                                    d.folder, d.tslib_file, d.fetch)
    # TSLib's anomaly scripts lie in scripts/anomaly_detection/<data>/ and read ./dataset/<folder>.
    anomaly = {info.name: TaskData(info.name, {"root_path": f"./dataset/{info.folder}", "data": info.name,
                                               "channels": info.channels, "id": info.name}, info.name, "{model}.sh")
               for info in ANOMALY_DATASETS.values()}
    uea = {name: TaskData(name, {"root_path": f"./dataset/{name}/", "id": name}, "", "{model}.sh")
           for name in UEA_SCRIPT_SETS}
    m4 = {p: TaskData(p, {"root_path": "./dataset/m4", "pattern": p, "id": f"m4_{p}"}, "", "{model}_M4.sh",
                      M4_FETCH) for p in M4_PATTERNS}
    return {"imputation": imputation, "anomaly_detection": anomaly, "classification": uea,
            "short_term_forecast": m4}


TASK_DATASETS = _task_datasets()
ETT4 = ("ETTh1", "ETTh2", "ETTm1", "ETTm2")
