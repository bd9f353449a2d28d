"""Calendar time features for the `x_mark` / `y_mark` inputs (TSLib contract §3.6).

Two encodings, chosen by `--embed`:

- timeenc=1 (``--embed timeF``): :func:`time_marks` gives real-valued columns ``[N, F]``, each a calendar
  position mapped linearly into [-0.5, 0.5], e.g. ``hour / 23 - 0.5``; :func:`time_features`, TSLib's
  name, gives the same numbers in TSLib's shape ``[F, N]`` (a TSLib model or loader that calls it and
  transposes keeps working). The columns depend on the base
  unit of `--freq` (h: hour, weekday, day-of-month, day-of-year; finer units prepend minute and
  second). :func:`num_time_features` is the width, which `TimeFeatureEmbedding` needs up front.
- timeenc=0 (``--embed fixed|learned``): :func:`calendar_features` gives integer columns
  [month, day, weekday, hour] (+ minute // 15 for minute and second data) that index embedding tables.

`--freq` is parsed here rather than by ``pandas.tseries.frequencies.to_offset`` because pandas 3
rejects the aliases TSLib users pass (``t``, ``m``, ``H``, ``T``); every spelling is resolved to one
base unit of :data:`FREQ_UNITS` (``15min`` and ``10min`` → minute, ``2h`` → hour, ``ME`` → month).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from utils.errors import UserInputError

__all__ = ["FREQ_UNITS", "base_unit", "calendar_features", "num_calendar_features", "num_time_features",
           "time_feature_names", "time_features", "time_marks"]

#: Base units and the number of timeF columns each gives (TimeFeatureEmbedding's widths).
FREQ_UNITS: dict[str, int] = {"s": 6, "t": 5, "h": 4, "d": 3, "b": 3, "w": 2, "m": 1, "a": 1}

# Accepted spellings (lower-cased) of each base unit; includes the pandas ≥ 2.2 names (min, ME, YE)
# and the legacy single letters TSLib scripts use.
_UNIT_ALIASES: dict[str, str] = {
    "s": "s", "sec": "s", "second": "s",
    "t": "t", "min": "t", "minute": "t",
    "h": "h", "hour": "h",
    "d": "d", "day": "d",
    "b": "b", "bd": "b",
    "w": "w", "week": "w",
    "m": "m", "me": "m", "ms": "m", "month": "m",
    "a": "a", "y": "a", "ye": "a", "ys": "a", "year": "a",
}

# An optional positive multiple, a unit, and an optional pandas anchor such as "-SUN" in "W-SUN".
_FREQ_PATTERN = re.compile(r"^\s*(\d*)\s*([A-Za-z]+)(?:-[A-Za-z]+)?\s*$")


def base_unit(freq: str) -> str:
    """Resolve a `--freq` string to its base unit, one of the keys of :data:`FREQ_UNITS`.

    ``'15min'``, ``'10T'`` and ``'t'`` all give ``'t'``; ``'2h'`` gives ``'h'``; ``'ME'`` gives ``'m'``.
    Raises UserInputError naming ``--freq`` and the valid spellings for anything else.
    """
    match = _FREQ_PATTERN.match(freq) if isinstance(freq, str) else None
    unit = _UNIT_ALIASES.get(match.group(2).lower()) if match else None
    if unit is None or (match.group(1) and int(match.group(1)) == 0):
        raise UserInputError(
            f"--freq {freq!r} is not a known frequency; use one of s, t (or min), h, d, b, w, m, a, "
            "optionally with a multiple such as 15min, 10min, 30s or 2h")
    return unit


def num_time_features(freq: str) -> int:
    """Width F of the timeF marks for `freq` (h:4, t/min:5, s:6, d:3, b:3, w:2, m:1, a:1)."""
    return FREQ_UNITS[base_unit(freq)]


def _second_of_minute(d: pd.DatetimeIndex) -> np.ndarray:
    return d.second.to_numpy() / 59.0 - 0.5


def _minute_of_hour(d: pd.DatetimeIndex) -> np.ndarray:
    return d.minute.to_numpy() / 59.0 - 0.5


def _hour_of_day(d: pd.DatetimeIndex) -> np.ndarray:
    return d.hour.to_numpy() / 23.0 - 0.5


def _day_of_week(d: pd.DatetimeIndex) -> np.ndarray:
    return d.dayofweek.to_numpy() / 6.0 - 0.5


def _day_of_month(d: pd.DatetimeIndex) -> np.ndarray:
    return (d.day.to_numpy() - 1) / 30.0 - 0.5


def _day_of_year(d: pd.DatetimeIndex) -> np.ndarray:
    return (d.dayofyear.to_numpy() - 1) / 365.0 - 0.5


def _month_of_year(d: pd.DatetimeIndex) -> np.ndarray:
    return (d.month.to_numpy() - 1) / 11.0 - 0.5


def _week_of_year(d: pd.DatetimeIndex) -> np.ndarray:
    # ISO weeks run 1..53; TSLib divides by 52, so week 53 lands exactly on +0.5.
    return (d.isocalendar().week.to_numpy().astype(np.float64) - 1) / 52.0 - 0.5


def _constant(d: pd.DatetimeIndex) -> np.ndarray:
    return np.zeros(len(d))


_DAILY = [_day_of_week, _day_of_month, _day_of_year]
_HOURLY = [_hour_of_day, *_DAILY]
_MINUTELY = [_minute_of_hour, *_HOURLY]
_FEATURES: dict[str, list[Callable[[pd.DatetimeIndex], np.ndarray]]] = {
    "s": [_second_of_minute, *_MINUTELY],
    "t": _MINUTELY,
    "h": _HOURLY,
    "d": _DAILY,
    "b": _DAILY,
    "w": [_day_of_month, _week_of_year],
    "m": [_month_of_year],
    # Yearly steps have no position inside a year to encode; one zero column keeps the width equal to
    # TimeFeatureEmbedding's a:1 (TSLib itself returns zero columns here, which breaks the embedding).
    "a": [_constant],
}


def time_feature_names(freq: str) -> list[str]:
    """Names of the timeF mark columns of `freq`, in `time_marks`' order (h: hour_of_day, day_of_week,
    day_of_month, day_of_year)."""
    return [f.__name__.lstrip("_") for f in _FEATURES[base_unit(freq)]]


def _as_index(dates: pd.DatetimeIndex | pd.Series | np.ndarray) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(dates)


def time_marks(dates: pd.DatetimeIndex | pd.Series, freq: str = "h") -> np.ndarray:
    """timeF marks (timeenc=1), one line per date: ``[N, F]`` float32 with F = num_time_features(freq), values
    in [-0.5, 0.5] (the layout of `x_mark`; `time_features` is the same transposed, TSLib's ``[F, N]``).

    Columns, in TSLib's order, by base unit: s → second/59, minute/59, then the t columns;
    t → minute/59, then the h columns; h → hour/23, weekday/6, (day−1)/30, (dayofyear−1)/365;
    d, b → weekday, day-of-month, day-of-year; w → day-of-month, (isoweek−1)/52; m → (month−1)/11;
    a → a zero column. Each column is shifted by −0.5.
    """
    index = _as_index(dates)
    columns = [f(index) for f in _FEATURES[base_unit(freq)]]
    return np.stack(columns, axis=1).astype(np.float32)  # [N, F]


def time_features(dates: pd.DatetimeIndex | pd.Series, freq: str = "h") -> np.ndarray:
    """TSLib's `time_features`: the timeF marks of `time_marks` one feature per line, ``[F, N]`` float32, as
    TSLib's loaders expect it before their ``.transpose(1, 0)``."""
    return time_marks(dates, freq).T  # [F, N]


def num_calendar_features(freq: str) -> int:
    """Width of :func:`calendar_features` for `freq`: 5 for minute/second data, else 4."""
    return 5 if base_unit(freq) in ("t", "s") else 4


def calendar_features(dates: pd.DatetimeIndex | pd.Series, freq: str = "h") -> np.ndarray:
    """Integer calendar marks (timeenc=0): ``[N, 4]`` [month 1-12, day 1-31, weekday 0-6, hour 0-23],
    plus a fifth column minute // 15 (0-3) when `freq` is minutely or finer. Returned as float32 so
    both encodings stack into the same batch dtype; embeddings cast back to long.
    """
    index = _as_index(dates)
    columns = [index.month, index.day, index.dayofweek, index.hour]
    if num_calendar_features(freq) == 5:
        columns.append(index.minute // 15)
    return np.stack([np.asarray(c) for c in columns], axis=1).astype(np.float32)  # [N, 4 or 5]
