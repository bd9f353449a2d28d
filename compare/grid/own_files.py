"""What a user's own data file holds, read once when a comparison is planned (`compare.grid.own_data`): its variates,
rows and time step, and whether each planned run's windows fit its splits. Every problem is one line naming the
file and the numbers, so nothing is written and no run starts on a file run.py would refuse.

The three formats are the ones `run.py` reads already, checked by the loaders' own functions:

- long-term forecasting (`--data custom`, `data_provider.data_loader`): a `date` column and numeric variates; the
  time step is pandas' `infer_freq` of the dates (their median step when irregular), as a `--freq`;
- short-term forecasting (`--data short_term_csv`, `data_provider.short_term_files`): series_id, value and an
  optional timestamp; the timestamps' frequency names the M4 group whose horizon and seasonality it takes;
- anomaly detection (`--data anomaly_csv`, `data_provider.anomaly_csv`): value columns and a 0/1 `label`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from pandas.tseries.frequencies import to_offset

from data_provider.anomaly_csv import read_anomaly_csv, train_rows
from data_provider.anomaly_loader import VAL_START
from data_provider.data_loader import custom_split_sizes, parse_dates, read_csv, to_float_matrix
from data_provider.m4 import FREQUENCIES, HORIZONS
from data_provider.short_term_files import read_long_csv, series_values_needed
from utils.errors import UserInputError

__all__ = ["AnomalyFile", "LongTermFile", "ShortTermFile", "read_anomaly_file", "read_long_term_file",
           "read_short_term_file", "run_freq"]

#: the `--freq` unit of each pandas offset rule (its code before any anchor such as -TUE); quarters read as months
_RULE_UNITS = {"s": "s", "min": "min", "h": "h", "D": "d", "B": "b", "C": "b", "W": "w", "MS": "m", "ME": "m",
               "BMS": "m", "BME": "m", "SMS": "m", "SME": "m", "QS": "m", "QE": "m", "BQS": "m", "BQE": "m",
               "YS": "a", "YE": "a", "BYS": "a", "BYE": "a"}
#: the M4 group of each pandas offset rule of one step (a short-term file takes that group's block, horizon and
#: seasonality)
_M4_GROUPS = {"YS": "Yearly", "YE": "Yearly", "QS": "Quarterly", "QE": "Quarterly", "MS": "Monthly", "ME": "Monthly",
              "W": "Weekly", "D": "Daily", "B": "Daily", "h": "Hourly"}
_DAY = pd.Timedelta(days=1)


def _unit_of_days(days: int) -> str:
    """The `--freq` of an irregular series' median step of whole days (a month's 28-31 days are a month)."""
    if days == 7:
        return "w"
    if 28 <= days <= 31 or 89 <= days <= 92:
        return "m"
    if days in (365, 366):
        return "a"
    return "d" if days == 1 else f"{days}d"


def run_freq(dates: pd.DatetimeIndex) -> tuple[str, pd.Timedelta, str]:
    """(run.py's `--freq`, the median step, where the freq came from) of increasing timestamps: pandas'
    `infer_freq` (`W-TUE` -> w, `MS` -> m, `15min` -> 15min), else the median step's offset (irregular dates)."""
    step = pd.Series(dates).diff().median()
    try:
        alias = pd.infer_freq(dates) if len(dates) >= 3 else None
    except (TypeError, ValueError):
        alias = None
    if alias is not None:
        offset = to_offset(alias)
        unit = _RULE_UNITS.get(offset.rule_code.split("-")[0])
        if unit is not None:
            multiple = offset.n if unit in ("s", "min", "h", "d") and offset.n > 1 else ""
            return f"{multiple}{unit}", step, f"pandas infer_freq {alias}"
    if step >= _DAY and step % _DAY == pd.Timedelta(0):
        return _unit_of_days(step // _DAY), step, "median step (irregular timestamps)"
    offset = to_offset(step)
    unit = _RULE_UNITS.get(offset.rule_code, "s")
    return f"{offset.n if offset.n > 1 else ''}{unit}", step, "median step (irregular timestamps)"


@dataclass(frozen=True)
class LongTermFile:
    """A long-term forecasting CSV: its variates in file order (the date column aside), rows and time step."""

    path: Path
    columns: tuple[str, ...]
    rows: int
    freq: str  # run.py's --freq
    step: pd.Timedelta  # the median step of the dates
    freq_from: str

    def splits(self) -> tuple[int, int, int]:
        """(train, val, test) rows as `--data custom` splits the file."""
        return custom_split_sizes(self.rows)

    def window_problem(self, seq_len: int, pred_len: int) -> str | None:
        """Why windows of `seq_len` + `pred_len` do not fit each split (val and test read seq_len rows of the
        split before them), or None when they do."""
        train, val, test = self.splits()
        where = f"{self.rows} rows split {train}/{val}/{test} (train/val/test)"
        if train < seq_len + pred_len:
            return (f"{where}: the train split holds no window of --seq_len {seq_len} + --pred_len {pred_len} = "
                    f"{seq_len + pred_len} rows")
        for split, rows in (("val", val), ("test", test)):
            if rows < pred_len:
                return f"{where}: the {split} split's {rows} rows hold no horizon of --pred_len {pred_len}"
        return None


def _checked_file(path: Path, flag: str) -> Path:
    if not path.is_file():
        raise UserInputError(f"{flag} {path}: no such file")
    return path


def read_long_term_file(path: Path, fillna: str = "none") -> LongTermFile:
    """Read and check a long-term CSV as `--data custom` reads it: a `date` column of increasing timestamps and
    numeric variates (with `fillna` as run.py's --fillna)."""
    frame = read_csv(_checked_file(path, "--data_path"))
    if "date" not in frame.columns:
        raise UserInputError(f"{path} has no 'date' column (columns: {', '.join(frame.columns)}): the long-term "
                             "loader (--data custom) reads the timestamps from a column named date; rename yours")
    columns = [c for c in frame.columns if c != "date"]
    if not columns:
        raise UserInputError(f"{path} has no variate beside its date column: add at least one numeric column")
    dates = parse_dates(frame["date"], path)
    to_float_matrix(frame[columns], path, lambda i: f"line {i + 2}", fillna)
    if len(dates) < 2 or not dates.is_monotonic_increasing or dates.has_duplicates:
        raise UserInputError(f"{path}: the date column must increase from row to row (the time step is read from "
                             "it); sort the file by date and drop repeated timestamps")
    freq, step, freq_from = run_freq(dates)
    return LongTermFile(path, tuple(columns), len(frame), freq, step, freq_from)


@dataclass(frozen=True)
class ShortTermFile:
    """A short-term long CSV: its series, the shortest one, and the M4 group its timestamps' frequency names (None
    without timestamps, or with numbers or a step M4 has no group for)."""

    path: Path
    series: int
    shortest: int
    shortest_id: str
    group: str | None
    freq_from: str

    @property
    def horizon(self) -> int | None:
        """M4's horizon of the file's group (None without one)."""
        return HORIZONS.get(self.group or "")

    @property
    def seasonality(self) -> int | None:
        """M4's seasonality of the file's group (None without one)."""
        return FREQUENCIES.get(self.group or "")

    def series_problem(self, horizon: int, seasonality: int, strict: bool) -> str | None:
        """Why the shortest series cannot hold `horizon` test values (and validation values under the strict
        protocol) beside its training values, or None."""
        need = series_values_needed(horizon, seasonality, strict)
        if self.shortest >= need:
            return None
        return (f"series {self.shortest_id} has {self.shortest} values and --pred_len {horizon} with --seasonality "
                f"{seasonality} needs {need}{' (strict protocol)' if strict else ''}")


def _series_group(path: Path) -> tuple[str | None, str]:
    """(the M4 group of the first series' timestamps, how it was found)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.columns = [str(c).strip() for c in frame.columns]
    if "timestamp" not in frame.columns:
        return None, "no timestamp column"
    first = frame[frame["series_id"].str.strip() == frame["series_id"].iloc[0].strip()]["timestamp"]
    if pd.to_numeric(first, errors="coerce").notna().all():
        return None, "numeric timestamps"
    name = frame["series_id"].iloc[0].strip()
    dates = pd.DatetimeIndex(pd.to_datetime(first, format="ISO8601"))
    alias = pd.infer_freq(dates) if len(dates) >= 3 else None
    if alias is None:
        return None, f"no regular step in series {name}'s timestamps"
    offset = to_offset(alias)
    group = _M4_GROUPS.get(offset.rule_code.split("-")[0]) if offset.n == 1 else None
    return group, f"pandas infer_freq {alias} of series {name}"


def read_short_term_file(path: Path) -> ShortTermFile:
    """Read and check a short-term long CSV as `--data short_term_csv` reads it (header, ids, values, timestamps)."""
    table = read_long_csv(_checked_file(path, "--data_path"))
    lengths = [len(v) for v in table.values]
    shortest = min(range(len(lengths)), key=lengths.__getitem__)
    group, freq_from = _series_group(path)
    return ShortTermFile(path, len(lengths), lengths[shortest], table.ids[shortest], group, freq_from)


@dataclass(frozen=True)
class AnomalyFile:
    """An anomaly CSV: its value columns (the channels) and rows."""

    path: Path
    columns: tuple[str, ...]
    rows: int

    def window_problem(self, seq_len: int, train_ratio: float) -> str | None:
        """Why a window of `seq_len` does not fit the training, validation (its last 20 %) or test rows, or None."""
        train = train_rows(self.rows, train_ratio)
        val = train - int(train * VAL_START)
        for split, rows in (("train", train), ("val", val), ("test", self.rows - train)):
            if rows < seq_len:
                return (f"{self.rows} rows split at --anomaly_train_ratio {train_ratio:g} leave the {split} series "
                        f"{rows} rows, fewer than the window --seq_len {seq_len}")
        return None


def read_anomaly_file(path: Path) -> AnomalyFile:
    """Read and check an anomaly CSV as `--data anomaly_csv` reads it: every value a number, every label 0 or 1."""
    table = read_anomaly_csv(_checked_file(path, "--data_path"))
    everything = slice(0, len(table))
    table.values(everything)
    table.labels(everything)
    return AnomalyFile(path, tuple(table.columns), len(table))
