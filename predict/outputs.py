"""A trained model used on one file, as the shell commands do it: read the file, compute every output in memory,
then write them into one folder, all of them or none (utils.tools.atomic_write_files). A file the model cannot use
raises before anything is written, so bad input leaves no output behind; so does a folder that cannot be written.

Files, `<prefix>` being the input's name + "_" for `python -m predict` and empty for run.py's --do_predict:

=====================  ====================================================================================
long_term_forecast     <prefix>forecast.csv, <prefix>forecast.png; with --rolling <prefix>rolling.csv,
                       <prefix>rolling.png and <prefix>rolling_metrics.json (when the file holds the truth)
short_term_forecast    <prefix>forecast.csv (id, V1..VH) of a CSV in M4's per-group layout
imputation             <prefix>imputed.csv (the input with its missing cells filled), <prefix>imputed.png
anomaly_detection      <prefix>anomalies.csv (row, score, anomaly), <prefix>anomalies.png
classification         <prefix>labels.csv (sample, label, prob_<class>..., true_label), and
                       <prefix>labels_metrics.json when the .ts file holds labels
=====================  ====================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from predict.figures import forecast_figure, imputation_figure, rolling_figure, scores_figure
from predict.frames import read_table
from predict.trained import TrainedModel
from utils.errors import UserInputError
from utils.tools import atomic_write_files

__all__ = ["TASK_OUTPUTS", "Outputs", "compute_outputs", "forecast_files", "write_outputs"]

#: file name suffix → contents
Outputs = dict[str, bytes]


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")


def _time_column(trained: TrainedModel) -> str:
    return trained.data["date_column"] or "row"


def _history(trained: TrainedModel, frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the forecast read, with their time column as the figure draws it."""
    rows = frame.iloc[-trained.args.seq_len:]
    column = trained.data["date_column"]
    if column is None:
        return rows.assign(row=range(len(frame) - len(rows), len(frame)))
    return rows.assign(**{column: pd.to_datetime(rows[column])})


def forecast_outputs(trained: TrainedModel, path: Path, rolling: str | None) -> Outputs:
    """The forecast past the file's end, or with `rolling` (a split of `Forecaster.rolling`) its back-test."""
    table = read_table(path)
    columns, time = trained.forecast_columns, _time_column(trained)
    if rolling is not None:
        result = trained.rolling(table, rolling)
        outputs = {"rolling.csv": _csv(result.frame), "rolling.png": rolling_figure(result.frame, time, columns)}
        if result.metrics is not None:
            outputs["rolling_metrics.json"] = _json(result.metrics)
        return outputs
    return forecast_files(trained, table.frame, trained.forecast(table))


def forecast_files(trained: TrainedModel, frame: pd.DataFrame, forecast: pd.DataFrame) -> Outputs:
    """forecast.csv and forecast.png of a `forecast` made from the table `frame`."""
    columns, time = trained.forecast_columns, _time_column(trained)
    return {"forecast.csv": _csv(forecast),
            "forecast.png": forecast_figure(_history(trained, frame), forecast, time, columns)}


def series_outputs(trained: TrainedModel, path: Path, rolling: str | None) -> Outputs:
    return {"forecast.csv": _csv(trained.forecast(path))}


def imputation_outputs(trained: TrainedModel, path: Path, rolling: str | None) -> Outputs:
    table = read_table(path)
    filled = trained.filled_cells(table)
    result = trained.impute(table)
    column = trained.data["date_column"]
    shown = result.assign(**{column: pd.to_datetime(result[column])}) if column else result
    return {"imputed.csv": _csv(result),
            "imputed.png": imputation_figure(shown, filled, column, trained.filled_columns)}


def anomaly_outputs(trained: TrainedModel, path: Path, rolling: str | None) -> Outputs:
    result = trained.detect(read_table(path))
    return {"anomalies.csv": _csv(result),
            "anomalies.png": scores_figure(result["score"].to_numpy(), trained.threshold,
                                           result["anomaly"].to_numpy().astype(bool))}


def classification_outputs(trained: TrainedModel, path: Path, rolling: str | None) -> Outputs:
    result = trained.classify(path)
    outputs = {"labels.csv": _csv(result.frame)}
    if result.metrics is not None:
        outputs["labels_metrics.json"] = _json(result.metrics)
    return outputs


#: --task_name → what its model writes for one input file, given the --rolling_split of --rolling or None (and whether
#: it accepts --rolling)
TASK_OUTPUTS: dict[str, tuple[Callable[[TrainedModel, Path, str | None], Outputs], bool]] = {
    "long_term_forecast": (forecast_outputs, True),
    "short_term_forecast": (series_outputs, False),
    "imputation": (imputation_outputs, False),
    "anomaly_detection": (anomaly_outputs, False),
    "classification": (classification_outputs, False),
}


def compute_outputs(trained: TrainedModel, path: str | Path, rolling: bool = False,
                    rolling_split: str = "all") -> Outputs:
    """Every output of `trained` on the file at `path`, in memory (nothing is written); with `rolling`, the back-test
    of the windows of `rolling_split` (`predict.forecaster.ROLLING_SPLITS`)."""
    task = trained.task_name
    if task not in TASK_OUTPUTS:
        raise UserInputError(f"{trained.folder} holds a {task} model, which the shell commands do not serve")
    compute, takes_rolling = TASK_OUTPUTS[task]
    if rolling and not takes_rolling:
        raise UserInputError(f"--rolling back-tests forecasting models; {trained.folder} holds a {task} model: "
                             "drop --rolling")
    return compute(trained, Path(path), rolling_split if rolling else None)


def write_outputs(folder: Path, prefix: str, outputs: Outputs, fix: str = "choose another folder") -> list[Path]:
    """Write every output to `folder`/<prefix><name> (the folder is created), all of them or none; returns the paths
    written. A folder that cannot be created or written is one UserInputError line ending in `fix`, and leaves
    nothing behind (not even the folder)."""
    files = {folder / f"{prefix}{name}": data for name, data in outputs.items()}
    try:
        atomic_write_files(files)
    except OSError as err:
        detail = err.strerror or str(err)
        if err.filename is not None and Path(err.filename) != folder:
            detail = f"{err.filename}: {detail}"
        raise UserInputError(f"cannot write the outputs into {folder} ({detail}); nothing was written: {fix}") from None
    return list(files)
