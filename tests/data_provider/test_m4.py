"""Dataset_M4 (data_provider/m4.py) on small files in the published M4 format: group selection, the
training windows against a slow reference, TSLib's sampling range, the last input windows, the
registry/fetch entries and one-line errors for missing or wrong files."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from data_provider import fetch
from data_provider.data_factory import DATA_DICT, build_dataset
from data_provider.m4 import HISTORY_SIZE, HORIZONS, Dataset_M4, check_m4_args, load_m4, load_naive2
from data_provider.registry import DATASETS, expand_names
from tests.conftest import build_configs
from tests.data_provider.m4_synthetic import write_m4
from utils.errors import MissingDataError, UserInputError


@pytest.fixture
def m4_root(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root)
    return root, written


def dataset(root, group: str, flag: str = "train") -> Dataset_M4:
    h = HORIZONS[group]
    return Dataset_M4(None, root_path=str(root), flag=flag, size=[2 * h, h, h], seasonal_patterns=group)


def slow_window(series: list[float], cut: int, seq_len: int, label_len: int, pred_len: int):
    """Training item from the definition: insample[i] = series[cut − L + i], outsample[j] =
    series[cut − Ll + j], zero (mask 0) where that index does not exist."""
    insample, in_mask = [0.0] * seq_len, [0.0] * seq_len
    for i in range(seq_len):
        k = cut - seq_len + i
        if 0 <= k < cut:
            insample[i], in_mask[i] = series[k], 1.0
    outsample, out_mask = [0.0] * (label_len + pred_len), [0.0] * (label_len + pred_len)
    for j in range(label_len + pred_len):
        k = cut - label_len + j
        if 0 <= k < len(series):
            outsample[j], out_mask[j] = series[k], 1.0
    return [insample, outsample, in_mask, out_mask]


def test_groups_in_file_order_and_test_split(m4_root):
    root, written = m4_root
    monthly = dataset(root, "Monthly")
    assert list(monthly.ids) == ["M1", "M2", "M3"]
    assert len(monthly) == 3
    for got, want in zip(monthly.timeseries, written["training"][6:9], strict=True):
        np.testing.assert_array_equal(got, want)
    test = dataset(root, "Monthly", flag="test")
    assert [len(ts) for ts in test.timeseries] == [18, 18, 18]
    np.testing.assert_array_equal(test.timeseries[2], written["test"][8])
    # 'val' reads the test values too (M4 has no validation split).
    np.testing.assert_array_equal(dataset(root, "Monthly", flag="val").timeseries[0], written["test"][6])


@pytest.mark.parametrize("group", list(HORIZONS))
def test_windows_match_the_slow_reference_for_every_cut(m4_root, group):
    root, _ = m4_root
    ds = dataset(root, group)
    h = HORIZONS[group]
    for series in ds.timeseries:
        for cut in range(1, len(series) + 1):
            got = [a[:, 0].tolist() for a in ds.window(series, cut)]
            assert got == slow_window(series.tolist(), cut, 2 * h, h, h), (group, cut)


def test_window_agrees_with_tslib_slicing_when_the_cut_is_past_label_len():
    series = np.arange(1.0, 31.0)  # 30 values
    ds = Dataset_M4.__new__(Dataset_M4)
    ds.seq_len, ds.label_len, ds.pred_len = 12, 6, 6
    for cut in range(6, 30):
        insample, outsample, in_mask, out_mask = ds.window(series, cut)
        # TSLib: insample[-len(w):] = series[max(0, cut − L):cut]; outsample[:len(w)] = series[cut − Ll:cut + H].
        w = series[max(0, cut - 12):cut]
        assert insample[-len(w):, 0].tolist() == w.tolist() and in_mask.sum() == len(w)
        w = series[cut - 6:min(30, cut + 6)]
        assert outsample[:len(w), 0].tolist() == w.tolist() and out_mask.sum() == len(w)


def test_cut_points_follow_numpys_global_rng_in_tslibs_range(m4_root):
    root, _ = m4_root
    ds = dataset(root, "Quarterly")
    limit = int(HISTORY_SIZE["Quarterly"] * 8)
    for index, series in enumerate(ds.timeseries):
        np.random.seed(index)
        item = ds[index]
        np.random.seed(index)
        cut = np.random.randint(low=max(1, len(series) - limit), high=len(series), size=1)[0]
        for got, want in zip(item, ds.window(series, cut), strict=True):
            np.testing.assert_array_equal(got, want)
        assert max(1, len(series) - limit) <= cut < len(series)
    assert item[0].shape == (16, 1) and item[1].shape == (16, 1) and item[0].dtype == np.float64


def test_last_insample_window_pads_short_series_on_the_left():
    ds = Dataset_M4.__new__(Dataset_M4)
    ds.seq_len = 4
    ds.timeseries = [np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]
    windows, mask = ds.last_insample_window()
    assert windows.tolist() == [[0, 0, 1, 2], [3, 4, 5, 6]]
    assert mask.tolist() == [[0, 0, 1, 1], [1, 1, 1, 1]]


def test_nan_padding_in_the_value_files_is_stripped(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root, counts={"Yearly": 2})
    padded = np.empty(2, dtype=object)
    padded[:] = [np.append(written["training"][0], [np.nan, np.nan]), written["training"][1]]
    padded.dump(root / "training.npz")
    np.testing.assert_array_equal(dataset(root, "Yearly").timeseries[0], written["training"][0])


def test_plain_npy_and_npz_files_are_read_too(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root, counts={"Yearly": 2})
    array = np.empty(2, dtype=object)
    array[:] = written["test"]
    with open(root / "test.npz", "wb") as f:
        np.save(f, array, allow_pickle=True)
    np.testing.assert_array_equal(load_m4(root, training=False).values[1], written["test"][1])
    np.savez(root / "test.npz", array)
    np.testing.assert_array_equal(load_m4(root, training=False).values[0], written["test"][0])


def test_naive2_rows_are_found_by_id(m4_root):
    root, written = m4_root
    picked = load_naive2(root, np.array(["D2", "D1"]))
    assert picked.shape == (2, 14)  # the NaN cells past the horizon are dropped
    np.testing.assert_allclose(picked[0], written["naive2"][13], rtol=1e-15)
    np.testing.assert_allclose(picked[1], written["naive2"][12], rtol=1e-15)


def test_build_dataset_through_the_factory(m4_root):
    root, _ = m4_root
    assert DATA_DICT["m4"] is Dataset_M4
    args = build_configs(task_name="short_term_forecast", data="m4", root_path=str(root), seasonal_patterns="Hourly",
                         seq_len=96, label_len=48, pred_len=48, enc_in=1, c_out=1)
    ds = build_dataset(args, "train")
    assert len(ds) == 3 and ds.seq_len == 96 and ds.window_sampling_limit == 480


def test_missing_files_name_the_folder_and_the_fetch_command(tmp_path):
    with pytest.raises(MissingDataError) as err:
        dataset(tmp_path / "m4", "Yearly")
    message = str(err.value)
    assert "\n" not in message
    assert str(tmp_path / "m4" / "M4-info.csv") in message
    assert "training.npz, test.npz" in message and "submission-Naive2.csv" in message
    assert f"python -m data_provider.fetch m4 --root {tmp_path}" in message


def test_bad_files_and_flags_are_one_line_errors(m4_root, tmp_path):
    root, _ = m4_root
    with pytest.raises(UserInputError, match="not an M4 group; valid choices: Yearly, Quarterly"):
        Dataset_M4(None, root_path=str(root), flag="train", size=[12, 6, 6], seasonal_patterns="Annual")
    info = pd.read_csv(root / "M4-info.csv")
    info.iloc[:-1].to_csv(root / "M4-info.csv", index=False)
    with pytest.raises(UserInputError, match="has 18 series but .* lists 17"):
        dataset(root, "Yearly")
    (root / "training.npz").write_text("not numpy")
    with pytest.raises(UserInputError, match="is not a numpy array file"):
        dataset(root, "Yearly")


def flags(**overrides) -> argparse.Namespace:
    base = dict(task_name="short_term_forecast", data="m4", seasonal_patterns="Monthly", loss="SMAPE", enc_in=1,
                c_out=1)
    return build_configs(**{**base, **overrides})


def test_check_m4_args():
    check_m4_args(flags())
    check_m4_args(build_configs())  # long-term on ETTh1: nothing to check
    for overrides, pattern in [({"data": "ETTh1"}, "runs on M4 only"),
                               ({"task_name": "long_term_forecast"}, "needs --task_name short_term_forecast"),
                               ({"loss": "MAE"}, "--loss 'MAE' is not supported; valid choices: MSE, MAPE"),
                               ({"enc_in": 7}, "univariate: pass --enc_in 1 --c_out 1"),
                               ({"seasonal_patterns": "yearly"}, "not an M4 group")]:
        with pytest.raises(UserInputError, match=pattern):
            check_m4_args(flags(**overrides))


def test_registry_lists_the_m4_files_and_fetch_expands_m4(tmp_path):
    assert {DATASETS[n].relpath for n in expand_names(["M4"])} == {
        "m4/M4-info.csv", "m4/training.npz", "m4/test.npz", "m4/submission-Naive2.csv"}
    assert all(DATASETS[n].data_flag == "m4" for n in expand_names(["m4"]))
    mirror = tmp_path / "mirror"
    write_m4(mirror / "m4")
    assert fetch.main(["m4", "--root", str(tmp_path / "dataset"), "--mirror", str(mirror), "--offline"]) == 0
    for name in ("M4-info.csv", "training.npz", "test.npz", "submission-Naive2.csv"):
        assert (tmp_path / "dataset" / "m4" / name).read_bytes() == (mirror / "m4" / name).read_bytes()
