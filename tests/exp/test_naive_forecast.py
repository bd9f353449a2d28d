"""The naive forecasters of exp/naive_forecast.py: their periods, the scores a run records checked against a
slow loop over the test windows of the CSV itself, and `naive_test_scores` giving a run's recorded fields from its
flags alone, bit for bit."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

import run
from data_provider.data_loader import Dataset_ETT_minute
from exp.arguments import build_parser
from exp.naive_forecast import NAIVE_METHODS, NaiveScores, naive_test_scores, period_of_step, seasonal_period
from tests.exp.conftest import write_toy_csv

L, H = 24, 12


@pytest.mark.parametrize(("freq", "period"), [("h", 24), ("15min", 96), ("t", 1440), ("10min", 144), ("2h", 12),
                                              ("d", 7), ("b", 5), ("w", 52), ("m", 12), ("7min", None)])
def test_period_from_freq(freq, period):
    assert seasonal_period(None, freq) == (period, f"--freq {freq}")


def test_the_data_step_comes_before_freq():
    assert seasonal_period(pd.Timedelta("15min"), "h") == (96, "data step 15min")
    assert period_of_step(pd.Timedelta(days=30)) == 12 and period_of_step(pd.Timedelta(days=3)) is None


def test_ettm1_gets_its_daily_period_although_freq_says_h(data_mirror):
    """TSLib's ETTm scripts leave --freq at h; the 15-minute timestamps decide."""
    test = Dataset_ETT_minute(None, str(data_mirror / "ETT-small"), "test", [96, 48, 96], "M", "ETTm1.csv")
    args = argparse.Namespace(freq="h", seq_len=96, pred_len=96)
    scores = NaiveScores.for_test(test, args)
    assert (scores.period, scores.skipped) == (96, None)
    args.seq_len = 48
    assert "--seq_len 48 is shorter than the seasonal period 96" in NaiveScores.for_test(test, args).skipped


def test_shards_merge_to_the_whole():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(10, L, 3)), rng.normal(size=(10, H, 3))
    whole = NaiveScores(H, 24, "--freq h")
    whole.add(x, y)
    parts = [NaiveScores(H, 24, "--freq h") for _ in range(3)]
    for part, rows in zip(parts, np.array_split(np.arange(10), 3), strict=True):
        part.add(x[rows], y[rows])
    merged, expected = NaiveScores.merge(parts).record(), whole.record()
    for method in ("naive", "seasonal_naive"):
        for key in ("mse", "mae"):
            assert merged[method][key] == pytest.approx(expected[method][key], rel=1e-12)


def test_a_period_longer_than_the_input_is_skipped_and_said():
    scores = NaiveScores(H, 24, "--freq h", skipped="--seq_len 12 is shorter than the seasonal period 24")
    scores.add(np.zeros((2, 12, 1)), np.ones((2, H, 1)))
    record = scores.record()
    assert record["naive"] == {"mse": 1.0, "mae": 1.0}
    assert record["seasonal_naive"]["mse"] is None and "shorter" in record["seasonal_naive"]["skipped"]


def reference_naive(csv, features: str, inverse: bool) -> dict[str, tuple[float, float]]:
    """Slow and plain: standardise with the train rows' mean and population std, walk every test window of
    the custom 70/10/20 split, and average the naive forecasters' squared and absolute errors."""
    frame = pd.read_csv(csv)
    values = frame[[c for c in frame.columns if c != "date"]].to_numpy(dtype=np.float64)
    n = len(values)
    n_train, n_test = int(0.7 * n), int(0.2 * n)
    mean, std = values[:n_train].mean(axis=0), values[:n_train].std(axis=0)
    data = values if inverse else (values - mean) / std
    test = data[n - n_test - L:]
    channels = [data.shape[1] - 1] if features == "MS" else list(range(data.shape[1]))
    errors: dict[str, list[float]] = {"naive": [], "seasonal_naive": []}
    for start in range(len(test) - L - H + 1):
        for c in channels:
            for t in range(H):
                truth = test[start + L + t, c]
                errors["naive"].append(test[start + L - 1, c] - truth)
                errors["seasonal_naive"].append(test[start + L - 24 + t % 24, c] - truth)
    return {m: (float(np.mean(np.square(e))), float(np.mean(np.abs(e)))) for m, e in errors.items()}


@pytest.mark.parametrize(("features", "inverse"), [("M", False), ("MS", True)])
def test_recorded_naive_scores_equal_a_slow_loop_over_the_csv(tmp_path, monkeypatch, toy, features, inverse):
    monkeypatch.chdir(tmp_path)
    csv = write_toy_csv(tmp_path / "toy.csv")
    argv = toy(tmp_path, "--train_epochs", "1", "--features", features,
               *(["--c_out", "1", "--inverse"] if inverse else []), model="DLinear")
    assert run.main(argv) == 0
    record = json.loads((tmp_path / "results.jsonl").read_text())
    expected = reference_naive(csv, features, inverse)
    assert record["seasonal_naive"]["period"] == 24 and "skipped" not in record["seasonal_naive"]
    for method, (mse, mae) in expected.items():
        assert record[method]["mse"] == pytest.approx(mse, rel=1e-5)
        assert record[method]["mae"] == pytest.approx(mae, rel=1e-5)
    # From the flags alone, without the model: the recorded fields exactly.
    assert naive_test_scores(build_parser().parse_args(argv)) == {m: record[m] for m in NAIVE_METHODS}


def test_naive_test_scores_of_shards_add_up_to_the_whole(tmp_path, toy):
    write_toy_csv(tmp_path / "toy.csv")
    args = build_parser().parse_args(toy(tmp_path, model="DLinear"))
    whole = naive_test_scores(args)
    for world_size in (2, 3, 60):
        shards = naive_test_scores(args, world_size)
        for method in NAIVE_METHODS:
            assert shards[method] == pytest.approx(whole[method], rel=1e-12)


def test_naive_test_scores_of_every_kth_window(tmp_path, toy):
    """A zero-shot run scored on every k-th window (--test_every) gets the naive scores of those windows only."""
    write_toy_csv(tmp_path / "toy.csv")
    args = build_parser().parse_args(toy(tmp_path, model="DLinear"))
    whole = naive_test_scores(args)
    args.test_every = 5
    every = naive_test_scores(args)
    assert every["seasonal_naive"]["period"] == whole["seasonal_naive"]["period"] == 24
    assert every["naive"]["mse"] != pytest.approx(whole["naive"]["mse"], rel=1e-3)
