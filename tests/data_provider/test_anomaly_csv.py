"""The custom anomaly format (`--data anomaly_csv`) and the sets registered in it (Yahoo, MITDB, read from the
installed sktime through `python -m data_provider.fetch`): splits, one-line format errors, the strict protocol."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest
from anomaly_files import write_anomaly_csv

from data_provider import fetch as fetch_module
from data_provider.anomaly_csv import read_anomaly_csv
from data_provider.data_factory import build_dataset
from data_provider.fetch import ChecksumError, fetch, package_source
from data_provider.registry import ANOMALY_CSV_DATASETS, DATASETS
from exp.arguments import build_parser, validate_args
from utils.errors import UserInputError

WIN = 10


def configs(root, *extra: str, data: str = "anomaly_csv", data_path: str = "toy.csv") -> argparse.Namespace:
    return build_parser().parse_args([
        "--task_name", "anomaly_detection", "--is_training", "1", "--model_id", "t", "--model", "DLinear",
        "--data", data, "--root_path", str(root), "--data_path", data_path, "--seq_len", str(WIN),
        "--label_len", "0", "--pred_len", "0", *extra])


def test_splits_are_the_first_rows_and_the_rest(tmp_path):
    values, labels = write_anomaly_csv(tmp_path / "toy.csv", steps=300, channels=3)
    args = configs(tmp_path, "--anomaly_train_ratio", "0.6")
    n_train = 180
    mean, std = values[:n_train].mean(axis=0), values[:n_train].std(axis=0)
    standard = (values - mean) / std
    expected = {"train": (standard[:n_train], 1), "val": (standard[int(n_train * 0.8):n_train], 1),
                "test": (standard[n_train:], 1), "thre": (standard[n_train:], WIN)}
    for flag, (series, stride) in expected.items():
        dataset = build_dataset(args, flag)
        assert dataset.columns == ["v0", "v1", "v2"] and dataset.n_channels == 3  # the timestamp is no channel
        assert len(dataset) == (len(series) - WIN) // stride + 1
        last = len(dataset) - 1
        x, y = dataset[last]
        np.testing.assert_allclose(x, series[last * stride:last * stride + WIN], rtol=1e-5, atol=1e-5)
        if flag in ("test", "thre"):
            np.testing.assert_array_equal(y, labels[n_train:][last * stride:last * stride + WIN])
    assert build_dataset(configs(tmp_path), "test").test.shape == (150, 3)  # the default ratio 0.5


def test_a_file_without_index_column_uses_every_other_column(tmp_path):
    write_anomaly_csv(tmp_path / "toy.csv", channels=2, index=None)
    assert read_anomaly_csv(tmp_path / "toy.csv").columns == ["v0", "v1"]


def _rewrite(path, edit) -> None:
    frame = pd.read_csv(path, dtype=str)
    edit(frame)
    frame.to_csv(path, index=False)


def _set(row: int, column: str, value: str):
    return lambda frame: frame.loc.__setitem__((row, column), value)


def _second_label(frame: pd.DataFrame) -> None:
    frame.insert(2, "label_copy", frame["label"])


BAD = {
    # (how the file is broken, what the one-line error says); line = data row + 2 (the header is line 1)
    "label-missing": (lambda f: f.drop(columns="label", inplace=True), r"no column named 'label' \(columns: "
                      r"timestamp, v0, v1, v2\)"),
    "label-two-columns": (None, r"2 columns are named 'label' \(columns 3, 5\); the labels must be one column"),
    "label-two": (_set(7, "label", "2"), r"toy.csv line 9, column 'label' holds '2'; every label must be 0"),
    "label-text": (_set(3, "label", "yes"), r"toy.csv line 5, column 'label' holds 'yes'"),
    "label-empty": (_set(4, "label", ""), r"toy.csv line 6, column 'label' is empty"),
    "value-nan": (_set(5, "v1", ""), r"toy.csv line 7, column 'v1' is empty: every value must be a finite number"),
    "value-inf": (_set(6, "v0", "inf"), r"toy.csv line 8, column 'v0' holds inf"),
    "value-beyond-float32": (_set(8, "v2", "1e40"), r"toy.csv line 10, column 'v2' holds 1e40, whose square "
                                                    r"overflows float32"),
    "value-square-overflows": (_set(8, "v2", "3e38"), r"toy.csv line 10, column 'v2' holds 3e38, whose square "
                                                      r"overflows float32 .*; rescale the column \(e.g. other units\) "
                                                      r"or fix the file$"),
    "value-text": (_set(9, "v2", "broken"), r"toy.csv line 11, column 'v2' holds the text 'broken'"),
    "header-only": (lambda f: f.drop(index=f.index, inplace=True), r"toy.csv: holds a header but no rows"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_format_errors_are_one_line(tmp_path, case):
    edit, message = BAD[case]
    write_anomaly_csv(tmp_path / "toy.csv", steps=100, channels=3)
    if case == "label-two-columns":  # the header names `label` twice (pandas would rename the second)
        lines = (tmp_path / "toy.csv").read_text().splitlines()
        text = [lines[0].replace("v1,", "label,", 1)] + lines[1:]
        (tmp_path / "toy.csv").write_text("\n".join(text) + "\n")
    else:
        _rewrite(tmp_path / "toy.csv", edit)
    with pytest.raises(UserInputError, match=message) as err:
        build_dataset(configs(tmp_path), "train")
    assert "\n" not in str(err.value)


def test_a_missing_file_names_the_flags(tmp_path):
    with pytest.raises(UserInputError, match=r"toy.csv not found; pass --root_path DIR --data_path FILE.csv"):
        build_dataset(configs(tmp_path), "train")


@pytest.mark.parametrize(("extra", "message"), [
    (["--anomaly_train_ratio", "1.0"], r"must lie in \(0, 1\)"),
    (["--anomaly_train_ratio", "0"], r"must lie in \(0, 1\)"),
    (["--anomaly_train_ratio", "0.5", "--data", "PSM"], r"splits the file of .* --data anomaly_csv only; drop"),
    (["--anomaly_train_ratio", "0.5", "--data", "Yahoo"], r"--data Yahoo has the fixed split 0.4 .* --data_path "
                                                           r"yahoo.csv"),
])
def test_the_train_ratio_flag_is_checked(tmp_path, extra, message):
    with pytest.raises(UserInputError, match=message):
        validate_args(configs(tmp_path, *extra))


def test_a_ratio_leaving_no_training_row_is_an_error(tmp_path):
    write_anomaly_csv(tmp_path / "toy.csv", steps=20)
    with pytest.raises(UserInputError, match=r"train ratio 0.01 of the 20 rows .* leaves 0 training and 20 test"):
        build_dataset(configs(tmp_path, "--anomaly_train_ratio", "0.01"), "test")


def test_strict_train_and_val_never_read_the_test_rows(tmp_path):
    """A test row poisoned with NaN: the strict train and val splits build; the test split and every tslib split
    (which read the test rows while training) stop on it."""
    write_anomaly_csv(tmp_path / "toy.csv", steps=200)
    _rewrite(tmp_path / "toy.csv", _set(150, "v0", ""))
    for flag in ("train", "val"):
        assert len(build_dataset(configs(tmp_path, "--protocol", "strict"), flag)) > 0
        with pytest.raises(UserInputError, match="line 152, column 'v0' is empty"):
            build_dataset(configs(tmp_path), flag)
    with pytest.raises(UserInputError, match="line 152, column 'v0' is empty"):
        build_dataset(configs(tmp_path, "--protocol", "strict"), "test")


@pytest.fixture(scope="module")
def sktime_sets(tmp_path_factory):
    """Yahoo and MITDB fetched from the installed sktime (no mirror) into a dataset root."""
    root = tmp_path_factory.mktemp("dataset")
    for name in ANOMALY_CSV_DATASETS:
        fetch(name, root, mirror="", download=False)
    return root


@pytest.mark.parametrize("name", list(ANOMALY_CSV_DATASETS))
def test_registered_sets_load_with_their_shapes_and_labels(sktime_sets, name):
    info = ANOMALY_CSV_DATASETS[name]
    args = configs(sktime_sets / info.folder, data=name, data_path="ignored.csv")
    n_train = int(info.train_ratio * info.rows)
    test = build_dataset(args, "test")
    assert test.train.shape == (n_train, 1) and test.test.shape == (info.rows - n_train, 1)
    # Every anomaly lies in the test rows: the training rows are normal.
    assert int(test.test_labels.sum()) == info.anomalies
    raw = pd.read_csv(sktime_sets / info.relpath)
    assert list(raw.columns) == ["data", "label"] and int(raw["label"].sum()) == info.anomalies
    assert len(build_dataset(args, "train")) == n_train - WIN + 1


def test_registered_sets_are_copies_of_the_package_files_with_their_checksums(sktime_sets, tmp_path, monkeypatch):
    for name in ANOMALY_CSV_DATASETS:
        info = DATASETS[name]
        assert (sktime_sets / info.relpath).read_bytes() == package_source(info.package_file).read_bytes()
    # A package file that differs from the registered sha256 is refused and nothing is written.
    altered = tmp_path / "yahoo.csv"
    altered.write_text(package_source(DATASETS["Yahoo"].package_file).read_text().replace(",0\n", ",1\n", 1))
    monkeypatch.setattr(fetch_module, "package_source", lambda package_file: altered)
    with pytest.raises(ChecksumError, match=r"Yahoo: sha256 of the file from installed package file .* does "
                                            r"not match the registry; nothing was written"):
        fetch("Yahoo", tmp_path / "root", mirror="", download=False)
    assert not (tmp_path / "root").exists()


def test_a_registered_set_not_fetched_names_the_fetch_command(tmp_path):
    with pytest.raises(UserInputError, match=r"mitdb.csv not found .*python -m data_provider.fetch MITDB --root "
                                             r"./dataset` and pass --root_path ./dataset/MITDB"):
        build_dataset(configs(tmp_path, data="MITDB"), "train")
