"""data_factory: --data dispatch, TSLib loader settings (contract §3.1) and the channel check."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.data import RandomSampler, SequentialSampler

from data_provider import data_factory
from data_provider.anomaly_csv import AnomalyCSVLoader, MITDBSegLoader, YahooSegLoader
from data_provider.anomaly_loader import (
    MSLSegLoader,
    PSMSegLoader,
    SMAPSegLoader,
    SMDSegLoader,
    SWATSegLoader,
)
from data_provider.data_factory import DATA_DICT, check_channels, data_provider
from data_provider.data_loader import (
    Dataset_Custom,
    Dataset_ETT_hour,
    Dataset_ETT_minute,
    Dataset_PEMS,
    Dataset_Solar,
)
from data_provider.m4 import Dataset_M4
from data_provider.short_term_files import Dataset_ShortTermFile
from data_provider.uea import UEAloader
from utils.errors import UserInputError


@pytest.fixture
def custom_args(tmp_path, make_configs):
    """--data custom on a 3-channel file of 200 hourly rows (L=24, Ll=12, H=12)."""
    n = 200
    frame = pd.DataFrame({"date": pd.date_range("2021-01-01", periods=n, freq="h"),
                          "x": np.sin(np.arange(n)), "OT": np.cos(np.arange(n)), "y": np.arange(n, dtype=float)})
    frame.to_csv(tmp_path / "toy.csv", index=False)
    return make_configs(data="custom", root_path=str(tmp_path), data_path="toy.csv", seq_len=24, label_len=12,
                        pred_len=12, batch_size=16, num_workers=0, features="M", enc_in=3, dec_in=3, c_out=3)


def test_data_dict_covers_tslib_names_plus_solar_and_pems():
    """TSLib's names, Solar and PEMS, and the custom anomaly and short-term formats with the real sets in them."""
    assert DATA_DICT == {"ETTh1": Dataset_ETT_hour, "ETTh2": Dataset_ETT_hour, "ETTm1": Dataset_ETT_minute,
                         "ETTm2": Dataset_ETT_minute, "custom": Dataset_Custom, "Solar": Dataset_Solar,
                         "PEMS": Dataset_PEMS, "m4": Dataset_M4, "short_term_csv": Dataset_ShortTermFile,
                         "tsf": Dataset_ShortTermFile, "PSM": PSMSegLoader, "MSL": MSLSegLoader,
                         "SMAP": SMAPSegLoader, "SMD": SMDSegLoader, "SWAT": SWATSegLoader,
                         "anomaly_csv": AnomalyCSVLoader, "Yahoo": YahooSegLoader, "MITDB": MITDBSegLoader,
                         "UEA": UEAloader}


@pytest.mark.parametrize("flag, shuffled", [("train", True), ("val", True), ("test", False)])
def test_loader_settings_per_split(custom_args, flag, shuffled, caplog):
    with caplog.at_level(logging.INFO, logger="data_provider.data_factory"):
        dataset, loader = data_provider(custom_args, flag)
    assert f"{flag} {len(dataset)}" in caplog.messages
    assert isinstance(loader.sampler, RandomSampler if shuffled else SequentialSampler)
    assert loader.drop_last is False and loader.batch_size == 16 and loader.num_workers == 0


def test_test_loader_serves_every_window_in_order(custom_args):
    dataset, loader = data_provider(custom_args, "test")
    batches = list(loader)
    x, y, x_mark, y_mark = batches[0]
    assert x.shape == (16, 24, 3) and y.shape == (16, 24, 3) and x_mark.shape == (16, 24, 4)
    assert x.dtype == y.dtype == x_mark.dtype == y_mark.dtype == torch.float32
    assert sum(b[0].shape[0] for b in batches) == len(dataset) == 40 - 12 + 1
    last = torch.cat([b[0] for b in batches])[-1].numpy()
    np.testing.assert_array_equal(last, dataset[len(dataset) - 1][0])


@pytest.mark.parametrize("embed, width, integer", [("timeF", 4, False), ("fixed", 4, True), ("learned", 4, True)])
def test_timeenc_follows_embed(custom_args, embed, width, integer):
    custom_args.embed = embed
    dataset, _ = data_provider(custom_args, "train")
    marks = dataset[0][2]
    assert marks.shape == (24, width)
    assert np.array_equal(marks, np.round(marks)) == integer


def test_num_workers_capped_by_cpu_count(custom_args, monkeypatch):
    monkeypatch.setattr(data_factory.os, "cpu_count", lambda: 2)
    custom_args.num_workers = 10
    _, loader = data_provider(custom_args, "val")
    assert loader.num_workers == 2 and loader.persistent_workers is True


def test_unknown_data_lists_choices(custom_args):
    custom_args.data = "ETTh3"
    with pytest.raises(UserInputError, match=r"--data 'ETTh3' is not supported; choose one of ETTh1, ETTh2, "
                                             r"ETTm1, ETTm2, custom, Solar, PEMS"):
        data_provider(custom_args, "train")


@pytest.mark.parametrize("features, enc_in, dec_in, c_out", [
    ("M", 3, 3, 3), ("S", 1, 1, 1), ("MS", 3, 3, 1), ("MS", 3, 3, 3)], ids=["M", "S", "MS-c1", "MS-call"])
def test_check_channels_accepts(custom_args, features, enc_in, dec_in, c_out):
    custom_args.features = features
    dataset, _ = data_provider(custom_args, "train")
    custom_args.enc_in, custom_args.dec_in, custom_args.c_out = enc_in, dec_in, c_out
    check_channels(custom_args, dataset)


@pytest.mark.parametrize("features, enc_in, dec_in, c_out, message", [
    ("M", 7, 3, 3, r"--enc_in 7 does not match the data: --features M on toy.csv \(3 channels\) needs "
                   r"--enc_in 3 --dec_in 3 --c_out 3"),
    ("M", 3, 3, 1, r"--c_out 1 does not match"),
    ("S", 1, 3, 1, r"--dec_in 3 .* needs --enc_in 1 --dec_in 1 --c_out 1"),
    ("MS", 3, 3, 2, r"--c_out 2 .* needs --enc_in 3 --dec_in 3 --c_out 1 \(or 3\)"),
    ("MS", 1, 1, 1, r"--enc_in 1 does not match"),
], ids=["M-enc", "M-cout", "S-dec", "MS-cout", "MS-enc"])
def test_check_channels_rejects(custom_args, features, enc_in, dec_in, c_out, message):
    custom_args.features = features
    dataset, _ = data_provider(custom_args, "train")
    custom_args.enc_in, custom_args.dec_in, custom_args.c_out = enc_in, dec_in, c_out
    with pytest.raises(UserInputError, match=message):
        check_channels(custom_args, dataset)


def test_fillna_flag_reaches_the_dataset(custom_args, tmp_path):
    frame = pd.read_csv(tmp_path / "toy.csv")
    frame.loc[5, "y"] = np.nan
    frame.to_csv(tmp_path / "toy.csv", index=False)
    with pytest.raises(UserInputError, match="--fillna"):
        data_provider(custom_args, "train")
    custom_args.fillna = "interpolate"
    dataset, _ = data_provider(custom_args, "train")
    assert dataset.columns == ["x", "y", "OT"]
    assert dataset.inverse_transform(dataset.data_x[5:6])[0, 1] == pytest.approx(5.0, abs=1e-4)
