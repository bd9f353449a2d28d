"""utils.timefeatures: timeF columns, widths and calendar marks for every --freq spelling (pandas 2 and 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from utils.errors import UserInputError
from utils.timefeatures import (
    FREQ_UNITS,
    base_unit,
    calendar_features,
    num_calendar_features,
    num_time_features,
    time_feature_names,
    time_features,
    time_marks,
)

# 2021-03-14 15:09:26 is a Sunday (weekday 6), day-of-year 73, ISO week 10.
STAMP = pd.Timestamp("2021-03-14 15:09:26")
SECOND, MINUTE, HOUR = 26 / 59 - 0.5, 9 / 59 - 0.5, 15 / 23 - 0.5
WEEKDAY, DAY, DOY = 6 / 6 - 0.5, 13 / 30 - 0.5, 72 / 365 - 0.5
MONTH, WEEK = 2 / 11 - 0.5, 9 / 52 - 0.5

EXPECTED_ROW = {
    "s": [SECOND, MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "t": [MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "min": [MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "10min": [MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "15min": [MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "30s": [SECOND, MINUTE, HOUR, WEEKDAY, DAY, DOY],
    "h": [HOUR, WEEKDAY, DAY, DOY],
    "2h": [HOUR, WEEKDAY, DAY, DOY],
    "d": [WEEKDAY, DAY, DOY],
    "b": [WEEKDAY, DAY, DOY],
    "w": [DAY, WEEK],
    "W-SUN": [DAY, WEEK],
    "m": [MONTH],
    "ME": [MONTH],
    "a": [0.0],
}


@pytest.mark.parametrize("freq", list(EXPECTED_ROW), ids=lambda f: f"freq-{f}")
def test_time_marks_values_for_one_timestamp(freq):
    out = time_marks(pd.DatetimeIndex([STAMP]), freq)
    assert out.dtype == np.float32
    assert out.shape == (1, num_time_features(freq))
    np.testing.assert_allclose(out[0], EXPECTED_ROW[freq], rtol=0, atol=1e-6)


@pytest.mark.parametrize(("freq", "names"), [
    ("h", ["hour_of_day", "day_of_week", "day_of_month", "day_of_year"]),
    ("t", ["minute_of_hour", "hour_of_day", "day_of_week", "day_of_month", "day_of_year"]),
    ("w", ["day_of_month", "week_of_year"]), ("m", ["month_of_year"])])
def test_time_feature_names_follow_the_columns(freq, names):
    """One name per timeF column, in column order (the values above: hour first for h, ...)."""
    assert time_feature_names(freq) == names
    assert len(names) == num_time_features(freq)


@pytest.mark.parametrize("freq, width", [("h", 4), ("t", 5), ("min", 5), ("s", 6), ("m", 1), ("a", 1), ("w", 2),
                                         ("d", 3), ("b", 3), ("15min", 5), ("10min", 5), ("30s", 6), ("2h", 4),
                                         ("H", 4), ("T", 5), ("10T", 5), ("ME", 1), ("MS", 1), ("YE", 1)],
                         ids=lambda v: str(v))
def test_num_time_features_matches_embedding_widths(freq, width):
    assert num_time_features(freq) == width


def test_widths_table_is_tslib_time_feature_embedding():
    assert FREQ_UNITS == {"h": 4, "t": 5, "s": 6, "m": 1, "a": 1, "w": 2, "d": 3, "b": 3}


@pytest.mark.parametrize("freq", ["q", "foo", "0h", "", "15", "h2"], ids=lambda f: f"bad-{f or 'empty'}")
def test_unknown_freq_names_the_flag_and_the_choices(freq):
    with pytest.raises(UserInputError, match=r"--freq .* use one of s, t \(or min\), h, d, b, w, m, a"):
        num_time_features(freq)
    with pytest.raises(ValueError, match="--freq"):
        time_marks(pd.DatetimeIndex([STAMP]), freq)


@pytest.mark.parametrize("freq, unit", [("15min", "t"), ("10min", "t"), ("t", "t"), ("30s", "s"), ("2h", "h"),
                                        ("m", "m"), ("M", "m"), ("b", "b"), ("W-MON", "w"), ("y", "a")],
                         ids=lambda v: str(v))
def test_base_unit_resolves_multiples_and_aliases(freq, unit):
    assert base_unit(freq) == unit


@pytest.mark.parametrize("freq, step", [("h", "h"), ("t", "min"), ("s", "s"), ("d", "D")], ids=["h", "t", "s", "d"])
def test_columns_span_exactly_minus_half_to_half_over_a_leap_year(freq, step):
    # A whole leap year hits every calendar extreme at hourly resolution; finer steps use fewer periods.
    periods = {"h": 366 * 24, "t": 3 * 24 * 60, "s": 2 * 3600, "d": 366}[freq]
    dates = pd.date_range("2016-01-01", periods=periods, freq=step)
    out = time_marks(dates, freq)
    assert out.min() >= -0.5 and out.max() <= 0.5 + 1e-6
    # The first column (the finest unit) sweeps its full range.
    assert out[:, 0].min() == pytest.approx(-0.5) and out[:, 0].max() == pytest.approx(0.5)


def test_accepts_a_series_of_datetimes():
    series = pd.Series(pd.date_range("2020-01-01", periods=3, freq="h"))
    np.testing.assert_array_equal(time_marks(series, "h"), time_marks(pd.DatetimeIndex(series), "h"))


@pytest.mark.parametrize("freq, expected", [
    ("h", [3, 14, 6, 15]),
    ("d", [3, 14, 6, 15]),
    ("t", [3, 14, 6, 15, 0]),
    ("15min", [3, 14, 6, 15, 0]),
    ("s", [3, 14, 6, 15, 0]),
], ids=lambda v: str(v))
def test_calendar_features_integer_columns(freq, expected):
    out = calendar_features(pd.DatetimeIndex([STAMP]), freq)
    assert out.dtype == np.float32
    assert out.shape == (1, num_calendar_features(freq))
    np.testing.assert_array_equal(out[0], expected)


def test_calendar_minute_column_is_quarter_hour_index():
    dates = pd.date_range("2016-07-01 00:00", periods=8, freq="15min")
    np.testing.assert_array_equal(calendar_features(dates, "15min")[:, 4], [0, 1, 2, 3, 0, 1, 2, 3])


@pytest.mark.parametrize("freq", ["h", "t", "d", "w", "m"])
def test_time_features_has_tslibs_shape_features_by_steps(freq):
    """TSLib's `time_features` returns [F, N] (its loaders transpose it); `time_marks` is the [N, F] of x_mark."""
    dates = pd.date_range("2021-01-01", periods=7, freq="h")
    features = time_features(dates, freq)
    assert features.shape == (num_time_features(freq), 7)
    np.testing.assert_array_equal(features, time_marks(dates, freq).T)
    # What a TSLib loader does with it: one line of marks per date.
    np.testing.assert_array_equal(features.transpose(1, 0)[3], time_marks(dates[3:4], freq)[0])
