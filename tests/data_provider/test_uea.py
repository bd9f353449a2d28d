"""UEA `.ts` loader: sktime's reader on the real files sktime ships, TSLib's per-sample preprocessing
(subsampling, interpolation), train-statistics standardisation and the padding collate against slow
pandas / loop references, and one-line errors."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest
import torch

from data_provider.uea import UEAloader, interpolate_missing, pad_batch, read_ts, subsample
from tests.data_provider.uea_files import sktime_data_folder, toy_dataset, write_ts
from utils.errors import MissingDataError, UserInputError


def uea_args(name: str, seq_len: int = 96, task_name: str = "classification") -> argparse.Namespace:
    return argparse.Namespace(model_id=name, seq_len=seq_len, task_name=task_name)


@pytest.mark.parametrize("name,split,n,channels,lengths,classes", [
    ("JapaneseVowels", "TRAIN", 270, 12, (7, 26), 9),
    ("JapaneseVowels", "TEST", 370, 12, (7, 29), 9),
    ("BasicMotions", "TRAIN", 40, 6, (100, 100), 4),
    ("BasicMotions", "TEST", 40, 6, (100, 100), 4),
], ids=lambda v: str(v))
def test_read_ts_on_the_files_sktime_ships(name, split, n, channels, lengths, classes):
    samples, labels = read_ts(sktime_data_folder(name) / f"{name}_{split}.ts")
    assert len(samples) == len(labels) == n
    assert {s.shape[1] for s in samples} == {channels}
    assert (min(len(s) for s in samples), max(len(s) for s in samples)) == lengths
    assert len(set(labels)) == classes


def test_loader_on_japanese_vowels_matches_pandas_reference():
    folder = sktime_data_folder("JapaneseVowels")
    train = UEAloader(uea_args("JapaneseVowels"), str(folder), flag="train")
    test = UEAloader(uea_args("JapaneseVowels"), str(folder), flag="test")
    assert (len(train), len(test), train.n_channels, train.max_seq_len, test.max_seq_len) == (270, 370, 12, 26, 29)
    assert train.class_names == [str(k) for k in range(1, 10)]
    # Slow reference: TSLib's long frame of every step of every TRAIN sample, pandas mean/std per column.
    raw_train, _ = read_ts(folder / "JapaneseVowels_TRAIN.ts")
    raw_test, test_labels = read_ts(folder / "JapaneseVowels_TEST.ts")
    frame = pd.DataFrame(np.concatenate(raw_train))
    mean, std = frame.mean().to_numpy(), frame.std().to_numpy()
    for i in (0, 7, 369):
        x, y = test[i]
        expected = (raw_test[i] - mean) / (std + np.finfo(float).eps)
        torch.testing.assert_close(x, torch.from_numpy(expected).float())
        assert y.tolist() == [int(test_labels[i]) - 1]


def test_val_reads_the_test_file(tmp_path):
    _, _, test, test_labels = toy_dataset(tmp_path)
    val = UEAloader(uea_args("Toy"), str(tmp_path), flag="val")
    assert val.data_path.endswith("Toy_TEST.ts") and len(val) == len(test)
    assert [val.class_names[int(val[i][1])] for i in range(len(val))] == test_labels


def test_interpolate_missing_matches_pandas_linear_both_directions():
    rng = np.random.default_rng(1)
    for _ in range(20):
        series = rng.normal(size=int(rng.integers(2, 30)))
        series[rng.random(len(series)) < 0.4] = np.nan
        if np.isnan(series).all():
            continue
        expected = pd.Series(series).interpolate(method="linear", limit_direction="both").to_numpy()
        np.testing.assert_allclose(interpolate_missing(series), expected)


def test_missing_values_and_unequal_dimensions_in_a_file(tmp_path):
    long = np.stack([np.arange(300.0), np.arange(300.0)], axis=1)
    long[5, 0] = np.nan
    short = np.arange(20.0).reshape(10, 2)
    path = write_ts(tmp_path / "Odd_TRAIN.ts", [long, short], ["x", "y"], ["x", "y"], "Odd")
    samples, _ = read_ts(path)
    assert samples[0][5, 0] == 5.0  # interpolated between 4 and 6
    # A sample whose dimensions differ in length: each dimension longer than 256 steps keeps every 2nd.
    ragged = (tmp_path / "Rag_TRAIN.ts")
    ragged.write_text("@problemName Rag\n@timeStamps false\n@missing false\n@univariate false\n@dimensions 2\n"
                      "@equalLength false\n@classLabel true x\n@data\n"
                      + ",".join(map(str, range(300))) + ":" + ",".join(map(str, range(150))) + ":x\n")
    (sample,), _ = read_ts(ragged)
    np.testing.assert_array_equal(sample[:, 0], np.arange(0, 300, 2))
    np.testing.assert_array_equal(sample[:, 1], np.arange(150))
    np.testing.assert_array_equal(subsample(np.arange(256)), np.arange(256))


def test_pad_batch_matches_a_loop_reference():
    rng = np.random.default_rng(0)
    series = [torch.from_numpy(rng.normal(size=(n, 3))).float() for n in (1, 7, 12, 9)]
    for max_len in (12, 8):
        x, mask = pad_batch(series, max_len)
        assert x.shape == (4, max_len, 3) and mask.shape == (4, max_len)
        for i, s in enumerate(series):
            for t in range(max_len):
                observed = t < len(s)
                assert mask[i, t].item() == float(observed)
                expected = s[t] if observed else torch.zeros(3)
                torch.testing.assert_close(x[i, t], expected)


def test_collate_pads_to_seq_len_in_tslib_batch_order(tmp_path):
    toy_dataset(tmp_path)
    data = UEAloader(uea_args("Toy", seq_len=25), str(tmp_path), flag="train")
    x, labels, mask = data.collate_fn([data[0], data[1]])
    assert x.shape == (2, 25, 3) and labels.shape == (2, 1) and labels.dtype == torch.long
    assert mask.sum(1).tolist() == [len(data[0][0]), len(data[1][0])]


def test_missing_file_is_one_line_naming_where_to_put_it(tmp_path):
    with pytest.raises(MissingDataError, match=r"Nope_TRAIN\.ts not found: put Nope_TRAIN\.ts and Nope_TEST\.ts"):
        UEAloader(uea_args("Nope"), str(tmp_path), flag="train")


def test_uea_with_a_forecasting_task_is_refused(tmp_path):
    toy_dataset(tmp_path)
    with pytest.raises(UserInputError, match="--task_name classification"):
        UEAloader(uea_args("Toy", task_name="long_term_forecast"), str(tmp_path), flag="train")


def test_test_labels_unknown_to_train_are_refused(tmp_path):
    one = [np.zeros((4, 1))]
    write_ts(tmp_path / "L_TRAIN.ts", one, ["a"], ["a", "b"], "L")
    write_ts(tmp_path / "L_TEST.ts", one, ["b"], ["a", "b"], "L")
    with pytest.raises(UserInputError, match=r"labels \['b'\] that the TRAIN file never uses"):
        UEAloader(uea_args("L"), str(tmp_path), flag="test")


@pytest.mark.parametrize("name", ["JapaneseVowels", "BasicMotions"])
def test_registry_facts_match_the_shipped_files(name):
    import hashlib

    from data_provider.registry import UEA_DATASETS

    info, folder = UEA_DATASETS[name], sktime_data_folder(name)
    for split, digest in (("TRAIN", info.train_sha256), ("TEST", info.test_sha256)):
        assert hashlib.sha256((folder / f"{name}_{split}.ts").read_bytes()).hexdigest() == digest
    train = UEAloader(uea_args(name), str(folder), flag="train")
    test = UEAloader(uea_args(name), str(folder), flag="test")
    assert (len(train), len(test), train.n_channels, max(train.max_seq_len, test.max_seq_len),
            len(train.class_names)) == (info.n_train, info.n_test, info.dimensions, info.max_len, info.classes)
