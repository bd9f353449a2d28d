"""What the comparison runner and report need to know about each of TSLib's tasks.

A comparison is a grid of runs, one per (seed, dataset, axis point, row). Long-term forecasting's axis
is the horizon (`--pred_lens`); the other tasks' recipes (`compare.recipes.tables.TASK_RECIPES`) run one or more
*blocks* per (model, dataset), and the axis is what tells a dataset's blocks apart:

- imputation: the mask rate (`--mask_rates`, TSLib's 0.125 0.25 0.375 0.5; block = its index in
  `MASK_RATES`), averaged per dataset like the horizons;
- anomaly detection, classification, short-term forecasting: the block number (`--blocks`, default every
  block of the model's recipe; one for all but TimesNet on SWaT, which runs eight widths).

Each task also names the metrics its `results.jsonl` records carry, with their direction (lower or
higher is better) and how two values are compared (relative difference for errors, difference in
points for accuracies and F1 scores that may be 0), and how a missing data folder is explained
(`python -m data_provider.fetch NAME`, or copy it by hand for sets that cannot be fetched).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compare.recipes.tables import MASK_RATES, TaskBook
from data_provider.m4 import missing_m4_files
from data_provider.registry import (
    ANOMALY_CSV_DATASETS,
    ANOMALY_DATASETS,
    SHORT_TERM_SETS,
    UEA_DATASETS,
    anomaly_files,
)
from utils.errors import UserInputError

__all__ = [
    "LONG_TERM",
    "TASK_CHOICES",
    "TASK_SPECS",
    "Metric",
    "TaskSpec",
    "axis_points",
    "check_task_data",
]

LONG_TERM = "long_term_forecast"
TASK_CHOICES = (LONG_TERM, "imputation", "anomaly_detection", "classification", "short_term_forecast")


@dataclass(frozen=True)
class Metric:
    """One number of a `results.jsonl` record shown in the report.

    key: the record's field; label: the column title; higher_is_better: direction of "best";
    relative: differences between models are (a − b) / b (errors) rather than a − b in points
    (accuracies and F1 scores, which may be 0)."""

    key: str
    label: str
    higher_is_better: bool = False
    relative: bool = True


@dataclass(frozen=True)
class TaskSpec:
    """How the runner and report treat one task.

    axis: the name of the axis (`mask rate`, `block`); axis_column: its column title in the tables;
    tables: (title, metrics) of each table, the first metric of the first table is the headline the ranks,
    the significance section and the bar chart use; average: add a per-dataset average line over the axis
    (imputation, like the horizon average)."""

    name: str
    axis: str
    axis_column: str
    tables: tuple[tuple[str, tuple[Metric, ...]], ...]
    average: bool = False

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return tuple(m for _, metrics in self.tables for m in metrics)

    @property
    def headline(self) -> Metric:
        return self.tables[0][1][0]


_ACC = dict(higher_is_better=True, relative=False)
TASK_SPECS: dict[str, TaskSpec] = {
    "imputation": TaskSpec("imputation", "mask rate", "Mask", (
        ("Imputation error (standardised MSE / MAE on the masked points, lower is better)",
         (Metric("mse", "MSE"), Metric("mae", "MAE"))),), average=True),
    "anomaly_detection": TaskSpec("anomaly_detection", "block", "Block", (
        ("Anomaly detection (higher is better): F1 without point adjustment, AP (average precision of the "
         "test energies over every threshold), and F1 (PA) point-adjusted as TSLib reports it",
         (Metric("unadjusted_f_score", "F1", **_ACC), Metric("average_precision", "AP", **_ACC),
          Metric("f_score", "F1 (PA)", **_ACC))),
        ("Precision and recall (higher is better), unadjusted and point-adjusted (PA)",
         (Metric("unadjusted_precision", "P", **_ACC), Metric("unadjusted_recall", "R", **_ACC),
          Metric("precision", "P (PA)", **_ACC), Metric("recall", "R (PA)", **_ACC))))),
    "classification": TaskSpec("classification", "block", "Block", (
        ("Classification accuracy (higher is better) and macro F1",
         (Metric("accuracy", "Acc", **_ACC), Metric("macro_f1", "Macro F1", **_ACC))),)),
    "short_term_forecast": TaskSpec("short_term_forecast", "block", "Block", (
        ("Short-term forecasting (SMAPE, MASE, OWA against Naive2; lower is better)",
         (Metric("smape", "SMAPE"), Metric("mase", "MASE"), Metric("owa", "OWA"))),)),
}


def axis_points(task: str, book: TaskBook, model: str, dataset: str, mask_rates: list[float] | None,
                blocks: list[int] | None) -> list[tuple[float | int, int]]:
    """(axis value, block of the recipe) of every run of `model` on `dataset`.

    mask_rates: imputation's rates (None: all of `MASK_RATES`); each must be one of them.
    blocks: the other tasks' block numbers (None: every block the recipe has); a block the recipe lacks is
    left out for this model (another row may have it, e.g. TimesNet's eight SWaT widths)."""
    if task == "imputation":
        rates = MASK_RATES if mask_rates is None else mask_rates
        for rate in rates:
            if rate not in MASK_RATES:
                raise UserInputError(f"--mask_rates {rate:g}: the imputation recipes have blocks for "
                                     f"{' '.join(f'{r:g}' for r in MASK_RATES)}")
        return [(rate, MASK_RATES.index(rate)) for rate in rates]
    count = book.blocks(task, model, dataset)
    return [(b, b) for b in (range(count) if blocks is None else blocks) if 0 <= b < count]


def _uea_hint(name: str) -> str:
    info = UEA_DATASETS.get(name)
    if info is not None and info.train_sha256:
        return (f"copy {name}_TRAIN.ts and {name}_TEST.ts from sktime's datasets/data/{name}/ (pip install "
                "sktime) by hand")
    return (f"{name} cannot be fetched here: copy {name}_TRAIN.ts and {name}_TEST.ts of the UEA archive "
            "(timeseriesclassification.com, or TSLib's dataset folder) by hand")


def check_task_data(task: str, dataset: str, root_path: str, data_path: str | None, fetch: str) -> None:
    """Raise a one-line UserInputError when the files a `task` run on `dataset` reads are missing under
    `root_path`, with the fetch command, or how to copy them by hand when they cannot be fetched.

    fetch: the registry name of `python -m data_provider.fetch` ("" when it cannot be fetched)."""
    root = Path(root_path)
    where = "pass --root DIR (a folder laid out like ./dataset)"
    if task == "imputation" or (task == "short_term_forecast" and dataset in SHORT_TERM_SETS):
        missing = [] if (root / str(data_path)).is_file() else [str(root / str(data_path))]
        hint = f"run `python -m data_provider.fetch {fetch} --root ./dataset` from the repository root, or {where}"
    elif task == "anomaly_detection":
        try:
            anomaly_files(dataset, root)
        except UserInputError as err:
            folder = {**ANOMALY_DATASETS, **ANOMALY_CSV_DATASETS}[dataset].folder
            raise UserInputError(f"{err} (or pass --root DIR holding {folder}/)") from None
        return
    elif task == "classification":
        missing = [str(root / f"{dataset}_{split}.ts") for split in ("TRAIN", "TEST")
                   if not (root / f"{dataset}_{split}.ts").is_file()]
        hint = f"{_uea_hint(dataset)} into {root}/, or {where}"
    else:
        # M4-info.csv and the group's two CSVs (the Naive2 forecasts are only needed for the OWA summary).
        missing = [str(path) for path in missing_m4_files(root, dataset)]
        hint = f"run `python -m data_provider.fetch {fetch} --root ./dataset` from the repository root, or {where}"
    if missing:
        raise UserInputError(f"{task} data {', '.join(missing)} missing: {hint}")
