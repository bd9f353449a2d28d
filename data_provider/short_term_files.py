"""The custom short-term forecasting formats, read into the structure M4 uses (`ShortTermSeries`), so the
short-term experiment, its sMAPE/MASE/OWA scores and the strict protocol's held-out horizon work unchanged.

`--data short_term_csv`: one long CSV (`--root_path` / `--data_path`) with a header row and one row per
observation:

    series_id   the series' name (text, not empty)
    timestamp   optional; per series strictly increasing numbers or ISO 8601 dates (checked, not otherwise used)
    value       the observation

The rows of one series are in time order (they need not be contiguous; series keep the order of their first row).

`--data tsf`: a Monash forecasting-archive ``.tsf`` file (``@attribute`` lines, ``@frequency``, ``@horizon``,
``@data``, ``?`` for a missing value), read with sktime's `load_tsf_to_dataframe`; a series' id is its
``series_name`` attribute, else T1, T2, ... in file order. A ``@horizon`` must equal --pred_len.

Per dataset (flags): the horizon H = --pred_len and the seasonality m = --seasonality (the lag of MASE's
seasonal differences and the period of the Naive2 benchmark: 12 for monthly data, 4 quarterly, 1 yearly, 24
hourly, ...). As for M4, the experiment sets seq_len = 2·H and label_len = H; training cuts lie in the last
int(k·H) steps of a series with k = `HISTORY_SIZE` (M4's value for its longer series).

Splits: the last H values of each series are its test values, the rest its training series:

    tslib   train = the training series; val = test = the test values (TSLib's M4 protocol)
    strict  train = the training series without their last H values, val = those H values; test = the test values

A series needs H + 2 values (tslib) or 2·H + 2 (strict), and more than m training values (MASE's scale); every
value a split reads must be a finite number float32 can square (empty, `?`, NaN, inf, 3e38: one line naming the
file, the series and the line or position). Under `--protocol strict` the train and val splits read the training
values only; the test values are read by the test split, after training. Text where a number belongs is refused
when the file is read (it is not a value, it is a broken file).
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.float32_range import unusable_mask, unusable_reason
from data_provider.protocol import is_strict
from data_provider.short_term_series import ShortTermSeries, check_univariate_and_loss
from data_provider.text_numbers import parse_numbers
from utils.errors import MissingDataError, UserInputError
from utils.flag_defaults import flag_default
from utils.path_names import check_path_component

__all__ = ["CSV_COLUMNS", "FILE_FORMATS", "HISTORY_SIZE", "Dataset_ShortTermFile", "SeriesTable",
           "check_short_term_file_args", "read_long_csv", "read_series_file", "read_tsf", "series_values_needed",
           "short_term_file_lengths"]

#: the --data value of each format
FILE_FORMATS = {"short_term_csv": "long CSV", "tsf": "Monash .tsf"}
#: the long CSV's columns: required, optional
CSV_COLUMNS = {"series_id": True, "timestamp": False, "value": True}
#: training cuts lie in the last int(HISTORY_SIZE · H) steps (M4's Weekly/Daily/Hourly value)
HISTORY_SIZE = 10.0
#: --seasonal_patterns' default; any other value is an M4 flag set for a custom file
_M4_DEFAULT_PATTERN = "Monthly"


def check_short_term_file_args(args: argparse.Namespace) -> None:
    """The flags of a run on a custom short-term file, one line each: --task_name short_term_forecast, a
    --seasonality of at least 1, no M4 --seasonal_patterns, univariate channels, a known --loss."""
    if getattr(args, "seasonality", flag_default("seasonality")) is not None and args.data not in FILE_FORMATS:
        raise UserInputError(f"--seasonality {args.seasonality} is read by --data {' and '.join(FILE_FORMATS)} only; "
                             "drop the flag")
    if args.data not in FILE_FORMATS:
        return
    if args.task_name != "short_term_forecast":
        raise UserInputError(f"--data {args.data} needs --task_name short_term_forecast, not {args.task_name}")
    if args.seasonality is None or args.seasonality < 1:
        raise UserInputError(f"--data {args.data} needs --seasonality m >= 1, the seasonal period of the series "
                             "(MASE's lag and Naive2's period: 12 monthly, 4 quarterly, 1 yearly, 24 hourly)"
                             + (f", got {args.seasonality}" if args.seasonality is not None else ""))
    if args.seasonal_patterns != _M4_DEFAULT_PATTERN:
        raise UserInputError(f"--seasonal_patterns {args.seasonal_patterns} names an M4 group; --data {args.data} "
                             "takes its horizon from --pred_len and its seasonality from --seasonality: drop it")
    check_path_component("--data_path", Path(args.data_path).stem, "the forecast file name")
    check_path_component("--model_id", args.model_id, "the ./m4_results folder")
    check_univariate_and_loss(args, f"--data {args.data}")


def short_term_file_lengths(args: argparse.Namespace) -> dict[str, int]:
    """`{pred_len: H, seq_len: 2·H, label_len: H, frequency_map: m}` of a custom file (H = --pred_len, m =
    --seasonality): M4's rule on the flags (idempotent)."""
    horizon = args.pred_len
    return {"pred_len": horizon, "seq_len": 2 * horizon, "label_len": horizon, "frequency_map": args.seasonality}


def series_values_needed(horizon: int, seasonality: int, strict: bool) -> int:
    """The values a series needs: H test values, H validation values under the strict protocol, two to train on,
    and more than m training values (MASE's scale)."""
    return max(2 * horizon + 2 if strict else horizon + 2, horizon + seasonality + 1)


@dataclass
class SeriesTable:
    """The series of one file: `ids`, their `values` (float64, NaN where a value is missing), and per series
    where each value sits in the file (`lines`: the CSV line numbers; None for .tsf, whose values are named by
    position). `horizon` / `frequency`: a .tsf file's @horizon and @frequency (None when absent)."""

    path: Path
    ids: list[str]
    values: list[np.ndarray]
    lines: list[np.ndarray] | None = None
    horizon: int | None = None
    frequency: str | None = None

    def check(self, index: int, part: slice) -> np.ndarray:
        """The values `part` of series `index`, after checking each is a number a float32 model can square
        (data_provider/float32_range.py)."""
        values = self.values[index]
        chosen = values[part]
        bad = np.flatnonzero(unusable_mask(chosen))
        if bad.size:
            k = int(np.arange(len(values))[part][bad[0]])
            if self.lines is not None:
                where = f"{self.path} line {int(self.lines[index][k])}, column 'value' (series {self.ids[index]})"
            else:
                where = f"{self.path}: series {self.ids[index]}, value {k + 1} of {len(values)}"
            if np.isnan(values[k]):
                raise UserInputError(f"{where} is missing (empty, ? or NaN): every value must be a number; fix or "
                                     "drop it in the file")
            raise UserInputError(f"{where} holds {float(values[k])!r}, {unusable_reason(float(values[k]), part='series')}")
        return chosen


def read_long_csv(path: str | Path) -> SeriesTable:
    """The series of a long CSV (module docstring); header, ids, text cells and timestamps are checked here,
    the values' finiteness by the split that reads them (`SeriesTable.check`)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            header = [name.strip() for name in next(csv.reader(f), [])]
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise UserInputError(f"{path}: cannot be read as a csv table ({str(err).strip().splitlines()[0]}); the long "
                             "CSV format is a header row (series_id, value, optional timestamp), then one row per "
                             "observation") from None
    frame.columns = header
    unknown = [name for name in header if name not in CSV_COLUMNS]
    missing = [name for name, required in CSV_COLUMNS.items() if required and name not in header]
    if unknown or missing or len(set(header)) != len(header):
        problem = (f"lacks {', '.join(missing)}" if missing else f"has the column(s) {', '.join(unknown)}"
                   if unknown else "names a column twice")
        raise UserInputError(f"{path}: the header ({', '.join(header)}) {problem}; the long CSV format has the "
                             "columns series_id, value and optionally timestamp")
    if frame.empty:
        raise UserInputError(f"{path}: holds a header but no rows")
    lines = np.arange(len(frame)) + 2  # the header is line 1
    ids = frame["series_id"]
    empty = np.flatnonzero(ids.isna().to_numpy() | (ids.fillna("").str.strip() == "").to_numpy())
    if empty.size:
        raise UserInputError(f"{path} line {lines[empty[0]]}: the series_id is empty; every row names its series")
    cells = frame["value"]
    values, text = parse_numbers(cells)
    if text.size:
        raise UserInputError(f"{path} line {lines[text[0]]}, column 'value' holds the text {cells.iloc[text[0]]!r} "
                             "where a number belongs; fix the file")
    groups = list(pd.Series(np.arange(len(frame))).groupby(ids.str.strip().to_numpy(), sort=False))
    if "timestamp" in header:
        _check_timestamps(path, frame["timestamp"], lines, groups)
    return SeriesTable(path, [str(name) for name, _ in groups], [values[rows.to_numpy()] for _, rows in groups],
                       [lines[rows.to_numpy()] for _, rows in groups])


def _check_timestamps(path: Path, cells: pd.Series, lines: np.ndarray, groups: list) -> None:
    """Every timestamp a number or an ISO 8601 date (all of one kind), strictly increasing within its series."""
    empty = np.flatnonzero(cells.isna().to_numpy())
    if empty.size:
        raise UserInputError(f"{path} line {lines[empty[0]]}, column 'timestamp' is empty; give every row its "
                             "timestamp or drop the column")
    numbers = pd.to_numeric(cells, errors="coerce")
    if numbers.notna().all():
        stamps = numbers.to_numpy(dtype=np.float64)
    else:
        dates = pd.to_datetime(cells, format="ISO8601", errors="coerce")
        bad = np.flatnonzero(dates.isna().to_numpy())
        if bad.size:
            raise UserInputError(f"{path} line {lines[bad[0]]}, column 'timestamp' holds {cells.iloc[bad[0]]!r}, "
                                 "neither a number nor an ISO 8601 date (2024-01, 2024-01-31 12:00); fix the file")
        stamps = dates.to_numpy().astype("datetime64[ns]").astype(np.int64).astype(np.float64)
    for name, rows in groups:
        order = stamps[rows.to_numpy()]
        back = np.flatnonzero(np.diff(order) <= 0)
        if back.size:
            row = rows.to_numpy()[back[0] + 1]
            raise UserInputError(f"{path} line {lines[row]}: series {name}'s timestamp {cells.iloc[row]!r} does not "
                                 "come after the one before it; a series' rows must be in time order")


def read_tsf(path: str | Path) -> SeriesTable:
    """The series of a Monash .tsf file, read with sktime's `load_tsf_to_dataframe` (missing `?` become NaN)."""
    from sktime.datasets import load_tsf_to_dataframe

    path = Path(path)
    try:
        frame, meta = load_tsf_to_dataframe(str(path), return_type="default_tsf")
    except Exception as err:  # sktime raises bare Exceptions (and ValueErrors from float()) for malformed files
        raise UserInputError(f"{path}: not a readable .tsf file ({str(err).strip().splitlines()[0]}); see the "
                             "Monash archive's format (@attribute, @frequency, @horizon, @data lines)") from None
    if "series_name" in frame.columns:
        ids = [str(name) for name in frame["series_name"]]
    else:
        ids = [f"T{k + 1}" for k in range(len(frame))]
    repeated = pd.Series(ids)[pd.Series(ids).duplicated()]
    if len(repeated):
        raise UserInputError(f"{path}: series_name {repeated.iloc[0]} names two series; every series needs its own")
    values = [np.asarray(list(series), dtype=np.float64) for series in frame["series_value"]]
    return SeriesTable(path, ids, values, None, meta.get("forecast_horizon"), meta.get("frequency"))


def read_series_file(path: str | Path, data: str) -> SeriesTable:
    """The series of `path` in the format of --data `data` (short_term_csv or tsf)."""
    return read_tsf(path) if data == "tsf" else read_long_csv(path)


class Dataset_ShortTermFile(ShortTermSeries):  # noqa: N801 - named like TSLib's Dataset_M4
    """`--data short_term_csv` / `--data tsf` for the short-term task (module docstring)."""

    def __init__(self, args: argparse.Namespace, root_path: str, flag: str = "train", size: list[int] | None = None,
                 data_path: str = "", **_: object) -> None:
        self.set_lengths(size, HISTORY_SIZE)
        self.flag = flag
        self.root_path = root_path
        path = Path(root_path) / data_path
        if not path.is_file():
            raise MissingDataError(f"--data {args.data}: {path} not found; pass --root_path DIR --data_path FILE of a "
                                   f"{FILE_FORMATS[args.data]} file (dataset/README.md, short-term formats)")
        self.data_path = str(path)
        table = read_series_file(path, args.data)
        horizon, strict = self.pred_len, is_strict(args)
        if table.horizon is not None and table.horizon != horizon:
            raise UserInputError(f"{path} sets @horizon {table.horizon} and --pred_len is {horizon}; pass --pred_len "
                                 f"{table.horizon}")
        self.seasonality = int(args.frequency_map)
        need = series_values_needed(horizon, self.seasonality, strict)
        validation = f" and the {horizon} before them validation" if strict else ""
        held = f"the last {horizon} test{validation} values"
        for series_id, values in zip(table.ids, table.values, strict=True):
            if len(values) < need:
                raise UserInputError(f"{path}: series {series_id} has {len(values)} values; --pred_len {horizon} "
                                     f"({held}) and --seasonality {self.seasonality} need {need}: drop the series "
                                     "from the file or shorten --pred_len")
        self.ids = np.array(table.ids)
        reads_test = flag == "test" or (flag == "val" and not strict)
        #: the whole training series (everything but the test values), which the test forecasts start from
        self.history = [table.check(i, slice(0, len(v) - horizon)) for i, v in enumerate(table.values)]
        self.timeseries = ([table.check(i, slice(len(v) - horizon, len(v))) for i, v in enumerate(table.values)]
                           if reads_test else self.history)
        if strict and not reads_test:
            self.history, self.timeseries = self.hold_out_last_horizon(flag, f"the horizon --pred_len {horizon}")
        if flag == "train":
            self.check_trainable()
