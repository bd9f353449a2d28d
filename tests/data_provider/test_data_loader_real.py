"""Loaders on the real benchmark files (mirror): TSLib's exact borders and sample counts (contract §3.3),
scaling fit on train rows only, inverse round trip, window contents and time marks."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import StandardScaler

from data_provider.data_loader import Dataset_Custom, Dataset_ETT_hour, Dataset_ETT_minute
from utils.timefeatures import calendar_features, time_marks

FILES = {
    "ETTh1": (Dataset_ETT_hour, "ETT-small", "ETTh1.csv"),
    "ETTm1": (Dataset_ETT_minute, "ETT-small", "ETTm1.csv"),
    "weather": (Dataset_Custom, "weather", "weather.csv"),
}


@functools.cache
def load(mirror: Path, name: str, flag: str, pred_len: int = 96, features: str = "M", timeenc: int = 1,
         freq: str = "h") -> Dataset_Custom:
    """Each dataset is built once per test session (the big files take ~0.1 s each)."""
    cls, folder, file = FILES[name]
    return cls(None, str(mirror / folder), flag=flag, size=[96, 48, pred_len], features=features,
               data_path=file, timeenc=timeenc, freq=freq)


@functools.cache
def raw(mirror: Path, name: str) -> pd.DataFrame:
    _, folder, file = FILES[name]
    return pd.read_csv(mirror / folder / file, encoding_errors="replace")


CASES = [
    # name, H, border1s, border2s, counts (contract §3.3)
    ("ETTh1", 96, [0, 8544, 11424], [8640, 11520, 14400], [8449, 2785, 2785]),
    ("ETTh1", 720, [0, 8544, 11424], [8640, 11520, 14400], [7825, 2161, 2161]),
    ("ETTm1", 96, [0, 34464, 45984], [34560, 46080, 57600], [34369, 11425, 11425]),
    ("weather", 96, [0, 36887 - 96, 52696 - 10539 - 96], [36887, 36887 + 5270, 52696], [36696, 5175, 10444]),
]


@pytest.mark.parametrize("name, pred_len, border1s, border2s, counts", CASES,
                         ids=[f"{c[0]}-L96-H{c[1]}" for c in CASES])
def test_borders_and_sample_counts(data_mirror, name, pred_len, border1s, border2s, counts):
    for flag, count in zip(("train", "val", "test"), counts, strict=True):
        dataset = load(data_mirror, name, flag, pred_len)
        assert dataset.border1s == border1s and dataset.border2s == border2s
        assert len(dataset) == count, flag
        split = ("train", "val", "test").index(flag)
        assert dataset.data_x.shape[0] == border2s[split] - border1s[split]


@pytest.mark.parametrize("name", list(FILES))
def test_scaler_is_fit_on_train_rows_only(data_mirror, name):
    dataset = load(data_mirror, name, "test")
    values = raw(data_mirror, name).drop(columns="date")
    values = values[[c for c in values.columns if c != "OT"] + ["OT"]].to_numpy(np.float64)
    reference = StandardScaler().fit(values[: dataset.border2s[0]])
    np.testing.assert_allclose(dataset.scaler.mean_, reference.mean_, rtol=1e-12)
    np.testing.assert_allclose(dataset.scaler.scale_, reference.scale_, rtol=1e-12)
    # Fitting on the whole file would give visibly different statistics.
    assert not np.allclose(dataset.scaler.mean_, values.mean(axis=0), rtol=1e-3)


@pytest.mark.parametrize("name", list(FILES))
def test_first_test_window_is_the_file_rows_and_inverts_back(data_mirror, name):
    dataset = load(data_mirror, name, "test")
    frame = raw(data_mirror, name)
    b1 = dataset.border1s[2]
    file_rows = frame[dataset.columns].to_numpy(np.float64)  # [T, C]
    x, y, x_mark, y_mark = dataset[0]
    assert x.dtype == y.dtype == x_mark.dtype == y_mark.dtype == np.float32
    assert x.shape == (96, len(dataset.columns)) and y.shape == (48 + 96, len(dataset.columns))
    np.testing.assert_allclose(dataset.inverse_transform(x), file_rows[b1:b1 + 96], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(dataset.inverse_transform(y), file_rows[b1 + 48:b1 + 192], rtol=1e-5, atol=1e-3)
    # Round trip over the whole split, in float64 so the comparison is tight.
    np.testing.assert_allclose(
        dataset.inverse_transform(dataset.scaler.transform(file_rows[b1:])), file_rows[b1:], atol=1e-9)


@pytest.mark.parametrize("name", list(FILES))
def test_marks_are_time_marks_of_the_window_dates(data_mirror, name):
    dataset = load(data_mirror, name, "val")
    dates = pd.DatetimeIndex(pd.to_datetime(raw(data_mirror, name)["date"]))
    b1 = dataset.border1s[1]
    _, _, x_mark, y_mark = dataset[5]
    np.testing.assert_array_equal(x_mark, time_marks(dates[b1 + 5:b1 + 101], "h"))
    np.testing.assert_array_equal(y_mark, time_marks(dates[b1 + 53:b1 + 197], "h"))


def test_ettm1_calendar_marks_with_minute_freq(data_mirror):
    dataset = load(data_mirror, "ETTm1", "train", timeenc=0, freq="15min")
    dates = pd.DatetimeIndex(pd.to_datetime(raw(data_mirror, "ETTm1")["date"]))
    _, _, x_mark, _ = dataset[3]
    assert x_mark.shape == (96, 5)
    np.testing.assert_array_equal(x_mark, calendar_features(dates[3:99], "15min"))
    np.testing.assert_array_equal(x_mark[:4, 4], [3, 0, 1, 2])


def test_etth1_first_train_row_and_univariate_target(data_mirror):
    dataset = load(data_mirror, "ETTh1", "train", features="S")
    assert dataset.used_columns == ["OT"] and dataset.data_x.shape[1] == 1
    x, _, _, _ = dataset[0]
    # SOURCES.md: the first row of ETTh1 has OT 30.531.
    assert dataset.inverse_transform(x[:1])[0, 0] == pytest.approx(30.531, abs=1e-4)


def test_weather_quirks_crlf_replacement_chars_and_duplicate(data_mirror, caplog):
    cls, folder, file = FILES["weather"]
    with caplog.at_level(logging.WARNING, logger="data_provider.data_loader"):
        dataset = cls(None, str(data_mirror / folder), flag="train", size=[96, 48, 96], features="M",
                      data_path=file, timeenc=1)
    assert "1 duplicated timestamp(s)" in caplog.text
    assert "SWDR (W/m\ufffd)" in dataset.columns and "PAR (\ufffdmol/m\ufffd/s)" in dataset.columns
    assert dataset.columns[0] == "p (mbar)" and dataset.columns[-1] == "OT" and dataset.n_channels == 21
    first = dataset.inverse_transform(dataset.data_x[:1])[0]
    assert first[0] == pytest.approx(1008.89, abs=1e-3) and first[-1] == pytest.approx(428.1, abs=1e-3)
