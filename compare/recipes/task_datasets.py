"""The datasets of TSLib's other tasks' scripts: the imputation sets from the long-term table, the anomaly
and UEA sets and the M4 groups from `data_provider.registry`'s names; and the real labelled series the installed
packages ship, each standing in for one of TSLib's sets (`compare.recipes.task_book`): Yahoo and MITDB run each model's MSL
block, sktime_monthly its M4 Monthly block."""

from __future__ import annotations

from compare.recipes.datasets import DATASETS
from compare.recipes.recipe_book import DEFAULT
from compare.recipes.task_book import TaskData
from data_provider.registry import (
    ANOMALY_CSV_DATASETS,
    ANOMALY_DATASETS,
    DATASET_GROUPS,
    SHORT_TERM_SETS,
    UEA_DATASETS,
)

__all__ = ["ETT4", "M4_DAILY_FIRST", "M4_FETCH", "M4_PATTERNS", "MAMBASL_SETS", "REAL_SET_WINDOWS", "TASKS",
           "TASK_DATASETS", "UEA_SCRIPT_SETS"]

TASKS = ("imputation", "anomaly_detection", "classification", "short_term_forecast")
M4_PATTERNS = ("Monthly", "Yearly", "Quarterly", "Weekly", "Daily", "Hourly")  # most M4 scripts' order
M4_DAILY_FIRST = ("Monthly", "Yearly", "Quarterly", "Daily", "Weekly", "Hourly")  # TimesNet's, MICN's ... order
# The ten UEA sets of TSLib's per-model classification scripts (TimesNet.sh, DLinear.sh, ...).
UEA_SCRIPT_SETS = ("EthanolConcentration", "FaceDetection", "Handwriting", "Heartbeat", "JapaneseVowels", "PEMS-SF",
                   "SelfRegulationSCP1", "SelfRegulationSCP2", "SpokenArabicDigits", "UWaveGestureLibrary")
# The 30 of TSLib's MambaSL.sh (the ten above among them), in its order; the other 20 only MambaSingleLayer runs.
MAMBASL_SETS = ("ArticularyWordRecognition", "AtrialFibrillation", "BasicMotions", "CharacterTrajectories", "Cricket",
                "DuckDuckGeese", "EigenWorms", "Epilepsy", "ERing", "EthanolConcentration", "FaceDetection",
                "FingerMovements", "HandMovementDirection", "Handwriting", "Heartbeat", "InsectWingbeat",
                "JapaneseVowels", "Libras", "LSST", "MotorImagery", "NATOPS", "PEMS-SF", "PenDigits", "PhonemeSpectra",
                "RacketSports", "SelfRegulationSCP1", "SelfRegulationSCP2", "SpokenArabicDigits", "StandWalkJump",
                "UWaveGestureLibrary")
# The registry's group name that fetches the M4 files (`python -m data_provider.fetch m4`).
M4_FETCH = next(name for name in DATASET_GROUPS if name == "m4")
#: the window (--seq_len) of a real anomaly set whose validation split (the last 20% of its training rows) is
#: shorter than the MSL block's 100: Yahoo trains on 400 rows, so validates on 80.
REAL_SET_WINDOWS = {"Yahoo": 50}


def _real_sets() -> tuple[dict[str, TaskData], dict[str, TaskData]]:
    """The anomaly and short-term sets the installed packages ship (`python -m data_provider.fetch NAME`)."""
    anomaly = {}
    for info in ANOMALY_CSV_DATASETS.values():
        window = {"seq_len": REAL_SET_WINDOWS[info.name]} if info.name in REAL_SET_WINDOWS else {}
        anomaly[info.name] = TaskData(info.name, {"root_path": f"./dataset/{info.folder}", "data": info.name,
                                                  "channels": info.channels, "id": info.name}, "", "", info.name,
                                      stands_in="MSL", flags=window)
    short = {}
    for info in SHORT_TERM_SETS.values():
        flags = {"data": info.data, "data_path": info.file, "seasonal_patterns": DEFAULT,
                 "pred_len": info.horizon, "seasonality": info.seasonality}
        short[info.name] = TaskData(info.name, {"root_path": f"./dataset/{info.folder}", "id": info.name}, "", "",
                                    info.name, stands_in="Monthly", flags=flags)
    return anomaly, short


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
    uea = {name: TaskData(name, {"root_path": f"./dataset/{name}/", "id": name}, "", "{model}.sh",
                          only="" if name in UEA_SCRIPT_SETS else "MambaSingleLayer")
           for name in UEA_DATASETS}
    m4 = {p: TaskData(p, {"root_path": "./dataset/m4", "pattern": p, "id": f"m4_{p}"}, "", "{model}_M4.sh",
                      M4_FETCH) for p in M4_PATTERNS}
    real_anomaly, real_short = _real_sets()
    return {"imputation": imputation, "anomaly_detection": {**anomaly, **real_anomaly}, "classification": uea,
            "short_term_forecast": {**m4, **real_short}}


TASK_DATASETS = _task_datasets()
ETT4 = ("ETTh1", "ETTh2", "ETTm1", "ETTm2")
