"""compare.grid.own_files: what a user's file holds (variates, rows, run.py's --freq from pandas' frequency of the dates,
the M4 group of a short-term file's timestamps), whether windows fit its splits, and one-line refusals."""

from __future__ import annotations

import pandas as pd
import pytest

from compare.grid.own_files import read_anomaly_file, read_long_term_file, read_short_term_file
from data_provider.data_loader import Dataset_Custom
from tests.compare.own_csv import write_dated_csv, write_labelled_csv, write_series_csv
from utils.errors import UserInputError


@pytest.mark.parametrize(("pandas_freq", "freq", "step"), [
    ("h", "h", "1h"), ("15min", "15min", "15min"), ("2h", "2h", "2h"), ("D", "d", "1D"), ("B", "b", "1D"),
    ("W-TUE", "w", "7D"), ("MS", "m", "31D"), ("QS", "m", "91D"), ("YS", "a", "365D"),
], ids=lambda v: str(v))
def test_the_variates_rows_and_freq_are_read_from_the_file(tmp_path, pandas_freq, freq, step):
    path = write_dated_csv(tmp_path / "mine.csv", rows=40, freq=pandas_freq, variates=5)
    file = read_long_term_file(path)
    assert (file.columns, file.rows, file.freq) == (("v0", "v1", "v2", "v3", "OT"), 40, freq)
    assert file.step == pd.Timedelta(step) and file.freq_from.startswith("pandas infer_freq")


@pytest.mark.parametrize(("pandas_freq", "freq"), [("W-TUE", "w"), ("h", "h"), ("10min", "10min"), ("MS", "m")])
def test_irregular_dates_take_the_median_step(tmp_path, pandas_freq, freq):
    path = write_dated_csv(tmp_path / "gaps.csv", rows=60, freq=pandas_freq)
    frame = pd.read_csv(path).drop(index=[5, 17, 30])
    frame.to_csv(path, index=False)
    file = read_long_term_file(path)
    assert file.freq == freq and file.freq_from == "median step (irregular timestamps)"


def test_windows_must_fit_each_split(tmp_path):
    file = read_long_term_file(write_dated_csv(tmp_path / "mine.csv", rows=600))
    # The same splits as the loader's.
    assert file.splits() == Dataset_Custom._split_sizes(None, 600) == (420, 60, 120)
    assert file.window_problem(96, 24) is None and file.window_problem(96, 60) is None
    assert file.window_problem(96, 61) == ("600 rows split 420/60/120 (train/val/test): the val split's 60 rows hold no "
                                           "horizon of --pred_len 61")
    assert file.window_problem(400, 24) == ("600 rows split 420/60/120 (train/val/test): the train split holds no "
                                            "window of --seq_len 400 + --pred_len 24 = 424 rows")


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.rename(columns={"date": "when"}), "has no 'date' column (columns: when, v0, v1, v2, OT)"),
    (lambda f: f.assign(v1=["high"] + list(f["v1"][1:])), "line 2, column 'v1' has the non-numeric value 'high'"),
    (lambda f: f[["date"]], "has no variate beside its date column"),
    (lambda f: f.iloc[::-1], "the date column must increase from row to row"),
    (lambda f: f.assign(date=f["date"].iloc[0]), "the date column must increase from row to row"),
    (lambda f: f.assign(date=["2002-01-01", "then"] + list(f["date"][2:])), "line 3, column 'date' has the value 'then'"),
], ids=["no-date", "text", "dates-only", "decreasing", "repeated", "bad-date"])
def test_a_file_run_py_would_refuse_is_one_line(tmp_path, change, message):
    path = write_dated_csv(tmp_path / "mine.csv", rows=40)
    change(pd.read_csv(path)).to_csv(path, index=False)
    with pytest.raises(UserInputError) as err:
        read_long_term_file(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(UserInputError, match=r"^--data_path .*nothere.csv: no such file$"):
        read_long_term_file(tmp_path / "nothere.csv")


@pytest.mark.parametrize(("freq", "group", "horizon", "seasonality"), [
    ("MS", "Monthly", 18, 12), ("QS", "Quarterly", 8, 4), ("YS", "Yearly", 6, 1), ("D", "Daily", 14, 1),
    ("h", "Hourly", 48, 24), ("2h", None, None, None), (None, None, None, None),
], ids=lambda v: str(v))
def test_a_short_term_file_takes_the_m4_group_of_its_timestamps(tmp_path, freq, group, horizon, seasonality):
    file = read_short_term_file(write_series_csv(tmp_path / "sales.csv", (40, 30, 50), freq))
    assert (file.series, file.shortest, file.shortest_id) == (3, 30, "S1")
    assert (file.group, file.horizon, file.seasonality) == (group, horizon, seasonality)


def test_a_short_term_series_must_hold_its_horizon(tmp_path):
    file = read_short_term_file(write_series_csv(tmp_path / "sales.csv", (40, 30, 50)))
    assert file.series_problem(12, 12, strict=False) is None and file.series_problem(14, 12, strict=True) is None
    assert file.series_problem(15, 12, strict=True) == ("series S1 has 30 values and --pred_len 15 with --seasonality "
                                                        "12 needs 32 (strict protocol)")


def test_an_anomaly_window_must_fit_train_val_and_test(tmp_path):
    file = read_anomaly_file(write_labelled_csv(tmp_path / "machine.csv", rows=600, channels=3))
    assert (file.columns, file.rows) == (("c0", "c1", "c2"), 600)
    assert file.window_problem(60, 0.5) is None
    assert file.window_problem(61, 0.5) == ("600 rows split at --anomaly_train_ratio 0.5 leave the val series 60 rows, "
                                            "fewer than the window --seq_len 61")
    assert "the test series 60 rows" in file.window_problem(100, 0.9)


def test_an_anomaly_file_with_a_bad_label_is_one_line(tmp_path):
    path = write_labelled_csv(tmp_path / "machine.csv", rows=100)
    frame = pd.read_csv(path)
    frame.loc[4, "label"] = 2
    frame.to_csv(path, index=False)
    with pytest.raises(UserInputError, match="line 6, column 'label' holds '2'"):
        read_anomaly_file(path)
