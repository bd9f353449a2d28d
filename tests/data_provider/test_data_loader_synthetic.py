"""Loaders on small generated files in the real formats (custom CSV, ECL-like CSV, Solar text, PEMS npz)
and the one-line UserInputError for every kind of bad input."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data_provider.data_loader import (
    Dataset_Custom,
    Dataset_ETT_hour,
    Dataset_PEMS,
    Dataset_Solar,
)
from utils.errors import MissingDataError, UserInputError

SIZE = [24, 12, 12]


def write_custom(path: Path, n: int = 200, columns: tuple[str, ...] = ("a", "OT", "b"), crlf: bool = False,
                 freq: str = "h") -> pd.DataFrame:
    """A dated CSV whose column j holds 1000·j + row + 0.5·sin(row), so every cell identifies its row."""
    rows = np.arange(n, dtype=np.float64)
    frame = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=n, freq=freq).strftime("%Y-%m-%d %H:%M:%S")})
    for j, name in enumerate(columns):
        frame[name] = 1000.0 * j + rows + 0.5 * np.sin(rows)
    path.write_bytes(frame.to_csv(index=False, lineterminator="\r\n" if crlf else "\n").encode())
    return frame


def custom(path: Path, flag: str = "train", args: argparse.Namespace | None = None, **kwargs) -> Dataset_Custom:
    options = {"size": SIZE, "features": "M", "timeenc": 1} | kwargs
    return Dataset_Custom(args, str(path.parent), flag=flag, data_path=path.name, **options)


def test_custom_moves_target_last_and_ms_keeps_all_columns(tmp_path):
    frame = write_custom(tmp_path / "data.csv", crlf=True)
    dataset = custom(tmp_path / "data.csv", features="MS", target="a")
    assert dataset.columns == ["OT", "b", "a"]
    x, _, _, _ = dataset[0]
    np.testing.assert_allclose(dataset.inverse_transform(x), frame[["OT", "b", "a"]].to_numpy()[:24], atol=1e-4)


def test_custom_univariate_serves_only_the_target(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    dataset = custom(tmp_path / "data.csv", features="S", target="b")
    assert dataset.used_columns == ["b"] and dataset.n_channels == 3
    x, y, _, _ = dataset[3]
    assert x.shape == (24, 1) and y.shape == (24, 1)
    np.testing.assert_allclose(dataset.inverse_transform(y)[:, 0], frame["b"].to_numpy()[3 + 12:3 + 36], atol=1e-4)


def test_ecl_like_custom_split_borders(tmp_path):
    # Electricity layout: date, "0".."N-2", OT. n=200: ntr=140, nte=40, nva=20.
    write_custom(tmp_path / "electricity.csv", columns=tuple(str(i) for i in range(5)) + ("OT",))
    counts = []
    for flag in ("train", "val", "test"):
        dataset = custom(tmp_path / "electricity.csv", flag)
        assert dataset.border1s == [0, 140 - 24, 200 - 40 - 24] and dataset.border2s == [140, 160, 200]
        counts.append(len(dataset))
    assert counts == [140 - 36 + 1, 20 - 12 + 1, 40 - 12 + 1]
    assert dataset.columns == ["0", "1", "2", "3", "4", "OT"]


@pytest.mark.parametrize("kind, rows, counts", [("ECL", 26304, [18221, 2537, 5165]),
                                                 ("Solar", 52560, [36601, 5161, 10417])], ids=["ECL", "Solar"])
def test_full_size_sample_counts_from_the_contract(tmp_path, kind, rows, counts):
    # Real row counts with two channels: the split arithmetic only depends on the number of rows.
    if kind == "ECL":
        write_custom(tmp_path / "electricity.csv", n=rows, columns=("0", "OT"))
    else:
        np.savetxt(tmp_path / "solar_AL.txt", np.ones((rows, 2)), delimiter=",", fmt="%.1f")

    def build(flag: str) -> Dataset_Custom:
        if kind == "ECL":
            return custom(tmp_path / "electricity.csv", flag, size=[96, 48, 96])
        return Dataset_Solar(None, str(tmp_path), flag=flag, size=[96, 48, 96], features="M",
                             data_path="solar_AL.txt")

    assert [len(build(flag)) for flag in ("train", "val", "test")] == counts


def test_val_window_input_reaches_back_into_train(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    dataset = custom(tmp_path / "data.csv", "val")
    x, _, _, _ = dataset[0]
    np.testing.assert_allclose(dataset.inverse_transform(x), frame[["a", "b", "OT"]].to_numpy()[116:140], atol=1e-4)


def test_scale_false_keeps_raw_values_and_inverse_is_identity(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    dataset = custom(tmp_path / "data.csv", scale=False)
    x, _, _, _ = dataset[0]
    np.testing.assert_allclose(x, frame[["a", "b", "OT"]].to_numpy()[:24], atol=1e-4)
    assert dataset.inverse_transform(x) is x


def test_index_out_of_range_raises_index_error(tmp_path):
    write_custom(tmp_path / "data.csv")
    dataset = custom(tmp_path / "data.csv")
    np.testing.assert_array_equal(dataset[-1][0], dataset[len(dataset) - 1][0])
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def write_solar(path: Path, n: int = 300, channels: int = 5) -> np.ndarray:
    values = np.round(np.random.default_rng(0).uniform(0, 50, size=(n, channels)), 2)
    np.savetxt(path, values, delimiter=",", fmt="%.2f")
    return values


@pytest.mark.parametrize("timeenc, freq, width", [(1, "h", 4), (1, "10min", 5), (0, "h", 4)],
                         ids=["timeF-h", "timeF-10min", "fixed-h"])
def test_solar_headerless_splits_and_zero_marks(tmp_path, timeenc, freq, width):
    values = write_solar(tmp_path / "solar_AL.txt")
    # n=300: ntr=210, nva=int(0.1n)=30, nte=60; val/test start L rows early.
    datasets = [Dataset_Solar(None, str(tmp_path), flag=flag, size=SIZE, features="M", data_path="solar_AL.txt",
                              timeenc=timeenc, freq=freq) for flag in ("train", "val", "test")]
    assert datasets[0].border1s == [0, 186, 216] and datasets[0].border2s == [210, 240, 300]
    assert [len(d) for d in datasets] == [175, 19, 49]
    x, _, x_mark, y_mark = datasets[2][0]
    assert x_mark.shape == (24, width) and y_mark.shape == (24, width)
    assert not x_mark.any() and not y_mark.any()
    np.testing.assert_allclose(datasets[2].inverse_transform(x), values[216:240], atol=1e-3)
    np.testing.assert_allclose(datasets[2].scaler.mean_, values[:210].mean(axis=0), rtol=1e-9)


def test_solar_univariate_uses_last_column_for_default_target(tmp_path):
    values = write_solar(tmp_path / "solar_AL.txt")
    dataset = Dataset_Solar(None, str(tmp_path), size=SIZE, features="S", data_path="solar_AL.txt", timeenc=1)
    assert dataset.used_columns == ["4"]
    np.testing.assert_allclose(dataset.inverse_transform(dataset[0][0])[:, 0], values[:24, 4], atol=1e-3)


def write_pems(path: Path, steps: int = 200, nodes: int = 6) -> np.ndarray:
    data = np.random.default_rng(1).uniform(0, 300, size=(steps, nodes, 3))
    data[0, 0, 0] = np.nan  # leading gap: back-filled
    data[50:53, 2, 0] = np.nan  # inner gap: forward-filled
    np.savez(path, data=data)
    return data


def test_pems_feature_zero_contiguous_splits_and_nan_fill(tmp_path, caplog):
    data = write_pems(tmp_path / "PEMS08.npz")
    with caplog.at_level(logging.WARNING, logger="data_provider.data_loader"):
        datasets = [Dataset_PEMS(None, str(tmp_path), flag=flag, size=SIZE, features="M", data_path="PEMS08.npz",
                                 timeenc=1) for flag in ("train", "val", "test")]
    assert "filled 4 missing value(s)" in caplog.text
    assert datasets[0].border1s == [0, 120, 160] and datasets[0].border2s == [120, 160, 200]
    assert [len(d) for d in datasets] == [120 - 35, 40 - 35, 40 - 35]

    expected = pd.DataFrame(data[:, :, 0]).ffill().bfill().to_numpy()
    assert expected[0, 0] == data[1, 0, 0] and expected[51, 2] == data[49, 2, 0]
    np.testing.assert_allclose(datasets[0].scaler.mean_, expected[:120].mean(axis=0), rtol=1e-9)
    x, y, x_mark, _ = datasets[1][0]
    # No look-back: the first val window starts at the val border.
    np.testing.assert_allclose(datasets[1].inverse_transform(x), expected[120:144], rtol=1e-5)
    np.testing.assert_allclose(datasets[1].inverse_transform(y), expected[132:156], rtol=1e-5)
    assert x_mark.shape == (24, 4) and not x_mark.any()


def test_pems_without_data_key(tmp_path):
    np.savez(tmp_path / "PEMS04.npz", flow=np.zeros((10, 2, 1)))
    with pytest.raises(UserInputError, match=r"has no array 'data' \(arrays: flow\)"):
        Dataset_PEMS(None, str(tmp_path), size=SIZE, features="M", data_path="PEMS04.npz")


def test_unsorted_timestamps_warn_with_count(tmp_path, caplog):
    frame = write_custom(tmp_path / "data.csv")
    frame.iloc[[10, 11]] = frame.iloc[[11, 10]].to_numpy()
    frame.iloc[[50, 51]] = frame.iloc[[51, 50]].to_numpy()
    frame.to_csv(tmp_path / "data.csv", index=False)
    with caplog.at_level(logging.WARNING, logger="data_provider.data_loader"):
        custom(tmp_path / "data.csv")
    assert "timestamps go backwards 2 time(s)" in caplog.text


def fill_args(policy: str) -> argparse.Namespace:
    return argparse.Namespace(fillna=policy, augmentation_ratio=0)


@pytest.mark.parametrize("policy, expected", [("ffill", 10.0), ("interpolate", 12.0)], ids=["ffill", "interpolate"])
def test_fillna_policies(tmp_path, policy, expected):
    frame = write_custom(tmp_path / "data.csv", columns=("OT",))
    frame["OT"] = np.arange(200, dtype=float)
    frame.loc[11:13, "OT"] = np.nan
    frame.to_csv(tmp_path / "data.csv", index=False)
    dataset = custom(tmp_path / "data.csv", args=fill_args(policy), scale=False)
    assert dataset.data_x[12, 0] == expected


# Every bad input gives one UserInputError line naming the problem and the fix.

def test_missing_known_file_names_path_and_fetch_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MissingDataError) as info:
        Dataset_ETT_hour(None, "./dataset/ETT-small/", size=SIZE, data_path="ETTh1.csv")
    message = str(info.value)
    assert "dataset/ETT-small/ETTh1.csv" in message
    assert "python -m data_provider.fetch ETTh1 --root ./dataset" in message
    assert "\n" not in message
    assert isinstance(info.value, FileNotFoundError)


def test_missing_known_file_in_other_folder_says_which_root_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MissingDataError, match=r"fetch ETTh1 --root ./dataset and pass --root_path "
                                                r"./dataset/ETT-small/"):
        Dataset_ETT_hour(None, "./data/ETT/", size=SIZE, data_path="ETTh1.csv")


def test_missing_unknown_file(tmp_path):
    with pytest.raises(MissingDataError, match=r"mine.csv not found; check --root_path and --data_path"):
        custom(tmp_path / "mine.csv")


def test_target_not_a_column_lists_columns(tmp_path):
    write_custom(tmp_path / "data.csv")
    with pytest.raises(UserInputError, match=r"--target 'price' is not a column of .*data.csv; columns: a, OT, b"):
        custom(tmp_path / "data.csv", target="price", features="MS")


def test_nan_names_line_and_column_and_suggests_fillna(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    frame.loc[7, "b"] = np.nan
    frame.loc[9, "a"] = np.nan
    frame.to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(UserInputError, match=r"line 9, column 'b' is missing or NaN \(2 such values in total\); "
                                             r"pass --fillna ffill\|interpolate"):
        custom(tmp_path / "data.csv")


def test_non_numeric_value_names_line_and_column(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    frame["a"] = frame["a"].astype(str)
    frame.loc[4, "a"] = "n/a?"
    frame.to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(UserInputError, match=r"line 6, column 'a' has the non-numeric value 'n/a\?'; .*--fillna"):
        custom(tmp_path / "data.csv")


def test_nan_in_headerless_solar_names_the_line(tmp_path):
    (tmp_path / "solar_AL.txt").write_text("1,2\n3,\n" + "5,6\n" * 100)
    with pytest.raises(UserInputError, match=r"line 2, column '1' is missing"):
        Dataset_Solar(None, str(tmp_path), size=SIZE, features="M", data_path="solar_AL.txt")


@pytest.mark.parametrize("content, message", [("", "is empty"), ("date,OT\n", "has no data rows")],
                         ids=["empty", "header-only"])
def test_empty_and_header_only_csv(tmp_path, content, message):
    (tmp_path / "data.csv").write_text(content)
    with pytest.raises(UserInputError, match=message):
        custom(tmp_path / "data.csv")


def test_missing_date_column(tmp_path):
    pd.DataFrame({"time": ["2020-01-01"] * 3, "OT": [1.0, 2.0, 3.0]}).to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(UserInputError, match=r"has no 'date' column \(columns: time, OT\)"):
        custom(tmp_path / "data.csv")


def test_bad_date_value_names_the_line(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    frame.loc[3, "date"] = "yesterday"
    frame.to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(UserInputError, match=r"line 5, column 'date' has the value 'yesterday'"):
        custom(tmp_path / "data.csv")


def test_train_split_too_short_for_window(tmp_path):
    write_custom(tmp_path / "data.csv")
    with pytest.raises(UserInputError, match=r"--seq_len 96 \+ --pred_len 48 = 144 is longer than the train split "
                                             r"of .* \(140 rows\); the sum must be at most 140"):
        custom(tmp_path / "data.csv", size=[96, 48, 48])


def test_val_split_too_short_for_horizon(tmp_path):
    write_custom(tmp_path / "data.csv")
    with pytest.raises(UserInputError, match=r"--pred_len 30 is longer than the val split of .* \(20 rows\); "
                                             r"use --pred_len 20 or less"):
        custom(tmp_path / "data.csv", "val", size=[24, 12, 30])


def test_pems_split_too_short(tmp_path):
    write_pems(tmp_path / "PEMS08.npz")
    with pytest.raises(UserInputError, match=r"= 48 is longer than the test split .* \(40 rows\)"):
        Dataset_PEMS(None, str(tmp_path), flag="test", size=[24, 12, 24], features="M", data_path="PEMS08.npz")


def test_ett_file_too_short_for_fixed_borders(tmp_path):
    write_custom(tmp_path / "ETTh1.csv")
    with pytest.raises(UserInputError, match=r"has 200 rows but the ETT layout needs 14400; use --data custom"):
        Dataset_ETT_hour(None, str(tmp_path), size=SIZE, data_path="ETTh1.csv")


def test_augmentation_changes_train_inputs_only(tmp_path):
    write_custom(tmp_path / "data.csv")
    clean = {flag: custom(tmp_path / "data.csv", flag=flag) for flag in ("train", "val", "test")}
    args = argparse.Namespace(augmentation_ratio=1, fillna="none", jitter=True, seed=2)
    noisy = {flag: custom(tmp_path / "data.csv", flag=flag, args=args) for flag in ("train", "val", "test")}
    assert noisy["train"].augmentation_tags == "1_jitter"
    assert noisy["train"].data_x.dtype == np.float32
    assert not np.array_equal(noisy["train"].data_x, clean["train"].data_x)
    np.testing.assert_array_equal(noisy["train"].data_y, clean["train"].data_y)
    for flag in ("val", "test"):
        np.testing.assert_array_equal(noisy[flag].data_x, clean[flag].data_x)
    # A preset that moves values in time serves the targets from the same augmented series.
    warped = custom(tmp_path / "data.csv", args=argparse.Namespace(augmentation_ratio=1, fillna="none",
                                                                   timewarp=True, seed=2))
    assert warped.data_y is warped.data_x


def test_augmentation_label_preset_is_rejected(tmp_path):
    write_custom(tmp_path / "data.csv")
    args = argparse.Namespace(augmentation_ratio=1, fillna="none", spawner=True, seed=2)
    with pytest.raises(UserInputError, match=r"^--spawner needs class labels"):
        custom(tmp_path / "data.csv", args=args)


@pytest.mark.parametrize("kwargs, message", [
    ({"features": "X"}, r"--features 'X' is not one of M, S, MS"),
    ({"size": [24, 12, -1]}, r"--pred_len -1 at least 0"),
    ({"freq": "fortnight"}, r"--freq 'fortnight' is not a known frequency"),
], ids=["features", "pred_len", "freq"])
def test_bad_window_arguments(tmp_path, kwargs, message):
    write_custom(tmp_path / "data.csv")
    with pytest.raises(UserInputError, match=message):
        custom(tmp_path / "data.csv", **kwargs)


def test_pred_len_zero_serves_input_windows_only(tmp_path):
    """TSLib's imputation scripts pass --label_len 0 --pred_len 0: every window of L rows, empty targets."""
    write_custom(tmp_path / "data.csv")
    for flag in ("train", "val", "test"):
        dataset = custom(tmp_path / "data.csv", flag=flag, size=[24, 0, 0])
        assert len(dataset) == len(dataset.data_x) - 24 + 1
        x, y, x_mark, y_mark = dataset[len(dataset) - 1]
        assert x.shape == (24, 3) and y.shape == (0, 3) and x_mark.shape[0] == 24 and y_mark.shape[0] == 0
        np.testing.assert_array_equal(x, dataset.data_x[-24:])


@pytest.mark.parametrize("label_len", [-1, 25])
def test_label_len_outside_the_window_is_refused_before_reading(tmp_path, label_len):
    # A dataset built directly in Python (no run.py) keeps the rule: label_len 25 > seq_len 24 would start the
    # decoder slice one step before the window, and a negative index would wrap around silently.
    write_custom(tmp_path / "data.csv")
    with pytest.raises(UserInputError, match=rf"--label_len must lie in \[0, --seq_len=24\], got {label_len}"):
        custom(tmp_path / "data.csv", size=[24, label_len, 12])


def test_label_len_equal_to_seq_len_starts_the_decoder_at_the_window_start(tmp_path):
    frame = write_custom(tmp_path / "data.csv")
    dataset = custom(tmp_path / "data.csv", size=[24, 24, 12])
    x, y, _, _ = dataset[0]
    assert y.shape == (36, 3)
    np.testing.assert_allclose(dataset.inverse_transform(y)[:24], frame[["a", "b", "OT"]].to_numpy()[:24], atol=1e-4)
    np.testing.assert_allclose(y[:24], x)
