"""TSLib's anomaly segment loaders on small files written in the published formats."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from anomaly_files import CHANNELS, write_anomaly_files

from data_provider.anomaly_loader import SegmentDataset
from data_provider.data_factory import DATA_DICT, build_dataset
from data_provider.registry import ANOMALY_DATASETS
from utils.errors import UserInputError

NAMES = tuple(CHANNELS)
WIN = 20


def configs(name: str, root, seq_len: int = WIN) -> argparse.Namespace:
    from exp.arguments import build_parser

    return build_parser().parse_args([
        "--task_name", "anomaly_detection", "--is_training", "1", "--model_id", "t", "--model", "DLinear",
        "--data", name, "--root_path", str(root), "--seq_len", str(seq_len), "--label_len", "0", "--pred_len", "0"])


def standardise_reference(train: np.ndarray, series: np.ndarray) -> np.ndarray:
    """(x − mean_train) / std_train per channel, population std (sklearn's StandardScaler)."""
    return (series - train.mean(axis=0)) / train.std(axis=0)


@pytest.mark.parametrize("name", NAMES)
def test_every_split_matches_tslib_windows(name, tmp_path):
    train, test, labels = write_anomaly_files(name, tmp_path / name)
    args = configs(name, tmp_path / name)
    step = 100 if name == "SMD" else 1
    train_std, test_std = standardise_reference(train, train), standardise_reference(train, test)
    val_std = train_std[int(len(train) * 0.8):]
    expected = {"train": (train_std, step), "val": (val_std, step), "test": (test_std, step), "thre": (test_std, WIN)}
    for flag, (series, stride) in expected.items():
        dataset = build_dataset(args, flag)
        assert isinstance(dataset, DATA_DICT[name]) and dataset.n_channels == CHANNELS[name]
        assert len(dataset) == (len(series) - WIN) // stride + 1
        for index in (0, len(dataset) // 2, len(dataset) - 1):
            x, y = dataset[index]
            start = index * stride
            assert x.dtype == np.float32 and x.shape == (WIN, CHANNELS[name])
            np.testing.assert_allclose(x, series[start:start + WIN], rtol=1e-4, atol=1e-4)
            want = labels[:WIN] if flag in ("train", "val") else labels[start:start + WIN]
            np.testing.assert_array_equal(y, want)


def test_psm_nans_become_zero_before_scaling(tmp_path):
    import pandas as pd

    write_anomaly_files("PSM", tmp_path)
    frame = pd.read_csv(tmp_path / "test.csv")
    frame.iloc[3, 2] = np.nan
    frame.to_csv(tmp_path / "test.csv", index=False)
    dataset = build_dataset(configs("PSM", tmp_path), "test")
    train = pd.read_csv(tmp_path / "train.csv").to_numpy()[:, 1:]
    expected = (0.0 - train[:, 1].mean()) / train[:, 1].std()
    assert dataset[0][0][3, 1] == pytest.approx(expected, rel=1e-5)


def test_registry_lists_every_anomaly_loader():
    assert set(ANOMALY_DATASETS) == {key for key, cls in DATA_DICT.items() if issubclass(cls, SegmentDataset)}
    assert {name: info.channels for name, info in ANOMALY_DATASETS.items()} == CHANNELS


@pytest.mark.parametrize("name", NAMES)
def test_missing_files_say_where_to_put_them(name, tmp_path):
    with pytest.raises(UserInputError) as err:
        build_dataset(configs(name, tmp_path), "train")
    message = str(err.value)
    assert "\n" not in message
    folder = ANOMALY_DATASETS[name].folder
    assert f"./dataset/{folder}/" in message and ANOMALY_DATASETS[name].files[0] in message


def test_label_count_mismatch_is_an_error(tmp_path):
    write_anomaly_files("MSL", tmp_path, channels=3)
    np.save(tmp_path / "MSL_test_label.npy", np.zeros(10))
    with pytest.raises(UserInputError, match="one row per test step"):
        build_dataset(configs("MSL", tmp_path), "test")


def test_window_longer_than_the_series_is_an_error(tmp_path):
    write_anomaly_files("SMAP", tmp_path, channels=3, train_steps=50)
    with pytest.raises(UserInputError, match="--seq_len 60 is longer than the val series"):
        build_dataset(configs("SMAP", tmp_path, seq_len=60), "val")
