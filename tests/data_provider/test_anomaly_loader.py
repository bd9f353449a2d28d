"""TSLib's anomaly segment loaders on small files written in the published formats."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from anomaly_files import CHANNELS, write_anomaly_files

from data_provider.anomaly_loader import SegmentDataset
from data_provider.data_factory import DATA_DICT, build_dataset
from data_provider.registry import ANOMALY_CSV_DATASETS, ANOMALY_DATASETS
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
    """TSLib's five benchmarks, the sets registered in the custom format, and that format itself."""
    loaders = {key for key, cls in DATA_DICT.items() if issubclass(cls, SegmentDataset)}
    assert loaders == set(ANOMALY_DATASETS) | set(ANOMALY_CSV_DATASETS) | {"anomaly_csv"}
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


def _edit_csv(path, edit) -> None:
    import pandas as pd

    frame = pd.read_csv(path, dtype=object)
    edit(frame)
    frame.to_csv(path, index=False)


def _psm_extra_label_column(root) -> None:
    _edit_csv(root / "test_label.csv", lambda f: f.insert(2, "extra", "0"))


def _psm_label_column_missing(root) -> None:
    _edit_csv(root / "test_label.csv", lambda f: f.drop(columns="label", inplace=True))


def _psm_text_label(root) -> None:
    _edit_csv(root / "test_label.csv", lambda f: f.__setitem__("label", ["normal"] * len(f)))


def _psm_label_two(root) -> None:
    _edit_csv(root / "test_label.csv", lambda f: f.loc.__setitem__((5, "label"), "2"))


def _psm_text_cell(root) -> None:
    _edit_csv(root / "train.csv", lambda f: f.loc.__setitem__((4, "feature_1"), "broken"))


def _psm_inf_cell(root) -> None:
    _edit_csv(root / "test.csv", lambda f: f.loc.__setitem__((6, "feature_0"), "inf"))


def _psm_empty_csv(root) -> None:
    (root / "train.csv").write_text("")


def _psm_header_only(root) -> None:
    (root / "test.csv").write_text((root / "test.csv").read_text().splitlines()[0] + "\n")


def _msl_one_dimensional(root) -> None:
    np.save(root / "MSL_train.npy", np.zeros(200, dtype=np.float32))


def _msl_object_array(root) -> None:
    np.save(root / "MSL_train.npy", np.array([[1.0, "a", None]] * 200, dtype=object), allow_pickle=True)


def _msl_nan(root) -> None:
    test = np.load(root / "MSL_test.npy")
    test[7, 2] = np.nan
    np.save(root / "MSL_test.npy", test)


def _msl_channel_mismatch(root) -> None:
    np.save(root / "MSL_test.npy", np.zeros((150, 4), dtype=np.float32))


# (dataset, edit, what the one-line error says): issue 49's anomaly-file cases.
BAD_FILES = {
    "labels-extra-column": ("PSM", _psm_extra_label_column,
                            r"have shape \(150, 2\); they must be one column of 0/1, one row per test step"),
    "labels-missing": ("PSM", _psm_label_column_missing,
                       r"have shape \(150, 0\); they must be one column of 0/1, one row per test step"),
    "labels-text": ("PSM", _psm_text_label, r"row 0 holds 'normal'; every label must be 0 \(normal\) or 1"),
    "labels-not-0-1": ("PSM", _psm_label_two, r"row 5 holds .*2.*; every label must be 0 \(normal\) or 1"),
    "text-cell": ("PSM", _psm_text_cell, r"train.csv: row 6, column 'feature_1' holds the text 'broken'"),
    "inf-cell": ("PSM", _psm_inf_cell, r"the test series in .*: time step 6 \(from 0\), channel 0 holds inf"),
    "empty-csv": ("PSM", _psm_empty_csv, r"train.csv: cannot be read as a csv table"),
    "header-only-csv": ("PSM", _psm_header_only, r"test.csv: holds a header but no rows"),
    "npy-1d": ("MSL", _msl_one_dimensional, r"the train series in .* has shape \(200,\); it must be 2-D"),
    "npy-object": ("MSL", _msl_object_array, r"MSL_train.npy: not a numeric numpy array file"),
    "npy-nan": ("MSL", _msl_nan, r"the test series in .*: time step 7 \(from 0\), channel 2 holds nan"),
    "channel-mismatch": ("MSL", _msl_channel_mismatch, r"train series in .* has 3 channels and the test series 4"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_anomaly_files_are_one_line_errors(tmp_path, case):
    name, edit, message = BAD_FILES[case]
    write_anomaly_files(name, tmp_path, channels=3)
    edit(tmp_path)
    with pytest.raises(UserInputError, match=message) as err:
        build_dataset(configs(name, tmp_path), "test")
    assert "\n" not in str(err.value)


def test_psm_labels_keep_their_values_after_the_check(tmp_path):
    _, _, labels = write_anomaly_files("PSM", tmp_path, channels=3)
    dataset = build_dataset(configs("PSM", tmp_path), "test")
    np.testing.assert_array_equal(dataset.test_labels, labels.astype(np.float32))
