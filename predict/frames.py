"""New data in the training file's format, checked before a model sees it: every problem is one line naming the
column and the row and saying how to fix it, raised before anything is written.

Rules (docs/predict.md): the columns the model was trained on must be there, in any order; other columns are
ignored (named once in the log); a table may hold more rows than a window needs. Only the rows the model reads
are checked: each must hold a number in every read column (no text, no missing value, nothing whose square overflows
float32), and its timestamp must follow the one before by the training file's step (`time_step` of the card).
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.float32_range import first_beyond_float32, unusable_reason
from utils.errors import UserInputError

__all__ = ["Table", "as_table", "future_dates", "read_table"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Table:
    """A pandas table of new data and how to name its rows in messages: a CSV file's rows by line number (the
    header is line 1), a DataFrame's by position from 0."""

    frame: pd.DataFrame
    name: str = "the DataFrame"
    from_csv: bool = False

    def row(self, position: int) -> str:
        return f"line {position + 2}" if self.from_csv else f"row {position} (from 0)"

    def require_columns(self, columns: list[str], date_column: str | None) -> None:
        """Every column of `columns` (and the date column) present; a missing one is one line listing them all."""
        needed = ([date_column] if date_column else []) + list(columns)
        present = [str(c) for c in self.frame.columns]
        missing = [c for c in needed if c not in present]
        if missing:
            raise UserInputError(f"{self.name} has no column {missing[0]!r} ({len(missing)} of the model's columns "
                                 f"missing); the model reads {', '.join(needed)} (the training file's columns, any "
                                 "order): add it")
        extra = [c for c in present if c not in needed]
        if extra:
            logger.info("%s: ignoring column(s) the model does not read: %s", self.name, ", ".join(extra))

    def require_rows(self, needed: int, why: str) -> None:
        if len(self.frame) < needed:
            raise UserInputError(f"{self.name} has {len(self.frame)} rows; {why}, so give at least {needed} rows")

    def numbers(self, columns: list[str], start: int, stop: int, allow_missing: bool = False) -> np.ndarray:
        """Rows start..stop-1 of `columns` as float64 `[rows, C]`. Text cells, infinite values and values whose
        square overflows float32 are errors; so are missing cells unless `allow_missing` (they stay NaN then)."""
        block = self.frame.iloc[start:stop]
        values = np.empty((len(block), len(columns)), dtype=np.float64)
        for j, name in enumerate(columns):
            column = block[name]
            numeric = pd.to_numeric(column, errors="coerce")
            text = np.flatnonzero((numeric.isna() & column.notna()).to_numpy())
            if text.size:
                i = int(text[0])
                raise UserInputError(f"{self.name}: {self.row(start + i)}, column {name!r} holds {column.iloc[i]!r}, "
                                     "which is not a number; fix that cell")
            values[:, j] = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        if missing.any() and not allow_missing:
            rows, cols = np.nonzero(missing)
            raise UserInputError(f"{self.name}: {self.row(start + int(rows[0]))}, column {columns[cols[0]]!r} is "
                                 f"missing or NaN ({int(missing.sum())} such cells in the rows the model reads); fill "
                                 "them (the imputation task's models can)")
        found = first_beyond_float32(np.where(missing, 0.0, values))
        if found is not None:
            row, col, count = found
            value = float(values[row, col])
            raise UserInputError(f"{self.name}: {self.row(start + row)}, column {columns[col]!r} holds {value!r}, "
                                 f"{unusable_reason(value, count)}")
        return values

    def dates(self, column: str, start: int, stop: int, step: str | None) -> pd.DatetimeIndex:
        """Timestamps of rows start..stop-1; each must follow the one before by `step` (the card's `time_step`;
        None: not checked). A cell that is not a date, or a row at another step, is one line."""
        cells = self.frame[column].iloc[start:stop]
        try:
            dates = pd.DatetimeIndex(pd.to_datetime(cells))
        except (ValueError, TypeError):
            dates = pd.DatetimeIndex(pd.to_datetime(cells, errors="coerce", format="mixed"))
        if dates.isna().any():
            i = int(np.flatnonzero(dates.isna())[0])
            raise UserInputError(f"{self.name}: {self.row(start + i)}, column {column!r} holds {cells.iloc[i]!r}, "
                                 "which is not a date/time; fix that cell")
        if step is not None and len(dates) > 1:
            offset = pd.tseries.frequencies.to_offset(step)
            with warnings.catch_warnings():
                # Calendar offsets (MS, W-SUN) are added date by date; pandas warns that this is not vectorised.
                warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
                expected = dates[:-1] + offset
            wrong = np.flatnonzero(dates[1:] != expected)
            if wrong.size:
                i = int(wrong[0]) + 1
                raise UserInputError(
                    f"{self.name}: {self.row(start + i)}, column {column!r} is {dates[i]}, "
                    f"{_duration(dates[i] - dates[i - 1])} after the row before; the model was trained on rows "
                    f"{_step_name(offset)} apart (the training file's step, pandas frequency {step!r}): give rows at "
                    "that step, without gaps (resample the file)")
        return dates


def _duration(delta: pd.Timedelta) -> str:
    """A time difference as days and hh:mm:ss ("02:00:00", "1 days 00:00:00")."""
    text = str(delta)
    return text[len("0 days "):] if text.startswith("0 days ") else text


def _step_name(offset: pd.DateOffset) -> str:
    """A fixed step as a duration ("01:00:00"); a calendar step (month start, week) by its pandas name."""
    try:
        return _duration(pd.Timedelta(offset))
    except ValueError:
        return offset.freqstr


def as_table(frame: pd.DataFrame | Table) -> Table:
    """A DataFrame as a `Table` (a Table unchanged)."""
    return frame if isinstance(frame, Table) else Table(frame)


def read_table(path: str | Path) -> Table:
    """A CSV file as a `Table` (cells kept as read; column names stripped of spaces); one line when it is absent,
    empty or not a CSV."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"input file {path} not found")
    try:
        frame = pd.read_csv(path, encoding="utf-8", encoding_errors="replace")
    except pd.errors.EmptyDataError:
        raise UserInputError(f"input file {path} is empty") from None
    except pd.errors.ParserError as err:
        raise UserInputError(f"input file {path} is not a valid CSV file ({str(err).splitlines()[0]})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return Table(frame, name=str(path), from_csv=True)


def future_dates(last: pd.Timestamp, step: str, count: int) -> pd.DatetimeIndex:
    """The `count` timestamps after `last`, `step` apart (the file's frequency continued)."""
    return pd.date_range(start=last, periods=count + 1, freq=step)[1:]
