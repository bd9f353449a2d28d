"""`--protocol strict`: no TEST sample reaches training, early stopping or threshold selection, for every task.

The proof for the tasks with a TEST file of their own (classification, anomaly detection, M4): the TEST file is
poisoned with a value the loaders refuse in one line. A strict run trains to the end (its early-stopping
checkpoint is written, the anomaly threshold is logged) and only then fails, on reading TEST for the final
evaluation; the same command under `--protocol tslib` fails before training (it reads TEST while training).
Long-term forecasting and imputation read one file split by rows: changing every test-only row leaves the
training curve, the early-stopping choice and the weights unchanged, bit for bit.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from anomaly_files import write_anomaly_csv, write_anomaly_files

import run
from data_provider.m4 import Dataset_M4
from data_provider.protocol import changes_results, setting_tag
from data_provider.uea import validation_split
from exp.arguments import build_parser, make_setting
from exp.exp_short_term_forecasting import m4_results_folder
from exp.run_config import config_hash, differing_flags, run_config
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.uea_files import toy_dataset, write_ts
from tests.exp.conftest import write_toy_csv
from utils.errors import UserInputError

TINY = ["--is_training", "1", "--train_epochs", "2", "--patience", "5", "--num_workers", "0", "--no_progress",
        "--no_use_gpu", "--des", "Exp", "--e_layers", "1", "--d_model", "8", "--d_ff", "8", "--n_heads", "2"]


def classification_argv(root: Path, *extra: str) -> list[str]:
    return ["--task_name", "classification", "--root_path", str(root), "--model_id", "Toy", "--model", "DLinear",
            "--data", "UEA", "--batch_size", "8", "--learning_rate", "0.01", *TINY, *extra]


def anomaly_argv(root: Path, *extra: str) -> list[str]:
    return ["--task_name", "anomaly_detection", "--root_path", str(root), "--model_id", "MSL", "--model", "DLinear",
            "--data", "MSL", "--features", "M", "--seq_len", "20", "--pred_len", "0", "--enc_in", "4", "--c_out", "4",
            "--anomaly_ratio", "5", "--batch_size", "32", *TINY, *extra]


def m4_argv(*extra: str) -> list[str]:
    return ["--task_name", "short_term_forecast", "--root_path", "./dataset/m4", "--seasonal_patterns", "Yearly",
            "--model_id", "m4_Yearly", "--model", "DLinear", "--data", "m4", "--features", "M", "--enc_in", "1",
            "--dec_in", "1", "--c_out", "1", "--batch_size", "2", "--loss", "SMAPE", *TINY, *extra]


def forecast_argv(task: str, *extra: str) -> list[str]:
    lengths = ["--label_len", "0", "--pred_len", "0"] if task == "imputation" else ["--label_len", "12",
                                                                                    "--pred_len", "12"]
    return ["--task_name", task, "--root_path", ".", "--data_path", "toy.csv", "--model_id", "toy", "--model",
            "DLinear", "--data", "custom", "--features", "M", "--seq_len", "24", *lengths, "--enc_in", "3",
            "--dec_in", "3", "--c_out", "3", "--batch_size", "16", "--learning_rate", "0.01", *TINY, *extra]


@pytest.fixture(autouse=True)
def quick_plots(monkeypatch):
    """The test-window pdf plots (a second each here) as empty files of the same names."""
    import exp.exp_imputation as imputation
    import exp.exp_long_term_forecasting as long_term
    import exp.exp_short_term_forecasting as short_term

    for module in (long_term, short_term, imputation):
        monkeypatch.setattr(module, "visual", lambda true, preds, name: Path(name).touch())


def checkpoints(folder: Path) -> list[str]:
    return sorted(p.parent.name for p in (folder / "checkpoints").glob("*/checkpoint.pth"))


def assert_fails_after_training(argv: list[str], folder: Path, capsys, test_file: str) -> str:
    """Strict: training ends (checkpoint written), then reading the poisoned TEST file is the one-line error;
    returns the run's log."""
    assert run.main([*argv, "--protocol", "strict"]) == 2
    out, err = capsys.readouterr()
    err = err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and test_file in err, err
    (setting,) = checkpoints(folder)
    assert setting.endswith("_strict")
    assert not (folder / "results.jsonl").exists()
    return out


def assert_fails_before_training(argv: list[str], folder: Path, capsys, test_file: str) -> None:
    """TSLib's protocol reads the TEST file while training: the same poison stops it before any checkpoint."""
    assert run.main([*argv, "--protocol", "tslib"]) == 2
    assert test_file in capsys.readouterr().err
    assert checkpoints(folder) == []


def test_classification_strict_reads_test_only_after_training(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _, _, test, labels = toy_dataset(tmp_path / "Toy")
    test[3][:, 1] = np.nan  # a dimension without any value: read_ts refuses the file
    write_ts(tmp_path / "Toy" / "Toy_TEST.ts", test, labels, ["a", "b", "c"])
    assert_fails_before_training(classification_argv(tmp_path / "Toy"), tmp_path, capsys, "Toy_TEST.ts")
    assert_fails_after_training(classification_argv(tmp_path / "Toy"), tmp_path, capsys, "Toy_TEST.ts")


def test_stratified_validation_split_is_seeded_and_keeps_every_class():
    labels = ["a"] * 10 + ["b"] * 6 + ["c"] * 4
    train, val = validation_split(labels, 7, Path("X_TRAIN.ts"))
    assert sorted([*train, *val]) == list(range(20)) and len(val) == 4
    assert Counter(labels[i] for i in val) == {"a": 2, "b": 1, "c": 1}
    assert np.array_equal(val, validation_split(labels, 7, Path("X_TRAIN.ts"))[1])
    assert any(not np.array_equal(val, validation_split(labels, s, Path("X_TRAIN.ts"))[1]) for s in range(8, 12))
    with pytest.raises(UserInputError, match="class 'c' has 1.*--protocol tslib"):
        validation_split(["a", "a", "b", "b", "c"], 0, Path("X_TRAIN.ts"))


def test_anomaly_strict_threshold_and_training_never_read_test(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _, test, _ = write_anomaly_files("MSL", tmp_path / "MSL", channels=4)
    test[70, 2] = np.nan  # the loader refuses NaN in an .npy
    np.save(tmp_path / "MSL" / "MSL_test.npy", test.astype(np.float32))
    assert_fails_before_training(anomaly_argv(tmp_path / "MSL"), tmp_path, capsys, "test series")
    log = assert_fails_after_training(anomaly_argv(tmp_path / "MSL"), tmp_path, capsys, "test series")
    # The threshold was set before the test series was read at all.
    assert "Threshold : " in log and "(from the train and val energies)" in log


def test_anomaly_csv_strict_threshold_and_training_never_read_the_test_rows(tmp_path, monkeypatch, capsys):
    """One file holds both series (data_provider/anomaly_csv.py): a NaN in a test row stops a tslib run before
    training; a strict run trains, sets its threshold from train and validation, and stops only at the test."""
    monkeypatch.chdir(tmp_path)
    write_anomaly_csv(tmp_path / "csv" / "toy.csv", steps=300, channels=4)
    frame = pd.read_csv(tmp_path / "csv" / "toy.csv", dtype=str)
    frame.loc[250, "v2"] = ""
    frame.to_csv(tmp_path / "csv" / "toy.csv", index=False)
    argv = anomaly_argv(tmp_path / "csv", "--data", "anomaly_csv", "--data_path", "toy.csv", "--model_id", "toy")
    assert_fails_before_training(argv, tmp_path, capsys, "toy.csv line 252, column 'v2' is empty")
    log = assert_fails_after_training(argv, tmp_path, capsys, "toy.csv line 252, column 'v2' is empty")
    assert "Threshold : " in log and "(from the train and val energies)" in log


def test_m4_strict_validates_on_held_out_horizons_and_reads_test_after_training(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    written = write_m4(tmp_path / "dataset" / "m4", counts={"Yearly": 3})
    args = build_parser().parse_args([*m4_argv(), "--protocol", "strict"])
    size = [12, 6, 6]
    train = Dataset_M4(args, "./dataset/m4", flag="train", size=size, seasonal_patterns="Yearly")
    val = Dataset_M4(args, "./dataset/m4", flag="val", size=size, seasonal_patterns="Yearly")
    for whole, part, held in zip(written["training"], train.timeseries, val.timeseries, strict=True):
        assert np.array_equal(part, whole[:-6]) and np.array_equal(held, whole[-6:])
    assert all(np.array_equal(a, b) for a, b in zip(train.history, written["training"], strict=True))
    # Its forecasts never meet a tslib run's in the M4 summary folder.
    assert m4_results_folder(args) == Path("m4_results/strict/DLinear")

    csv = tmp_path / "dataset" / "m4" / "Yearly-test.csv"
    csv.write_text(csv.read_text().replace(repr(float(written["test"][1][2])), "inf", 1))
    assert_fails_before_training(m4_argv(), tmp_path, capsys, "Yearly-test.csv")
    assert_fails_after_training(m4_argv(), tmp_path, capsys, "Yearly-test.csv")


def test_short_term_file_strict_validates_on_held_out_horizons_and_reads_test_after_training(tmp_path, monkeypatch,
                                                                                             capsys):
    """A custom short-term file (data_provider/short_term_files.py) holds the test values as each series' last H: a
    NaN among them stops a tslib run before training (it validates on them) and a strict run only at the test."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    rows = [(name, t, 10 + float(v)) for name in ("a", "b", "c") for t, v in enumerate(rng.random(30))]
    frame = pd.DataFrame(rows, columns=["series_id", "timestamp", "value"]).astype({"value": str})
    frame.loc[30 + 27, "value"] = "nan"  # series b, among its last 6 (the test values)
    frame.to_csv(tmp_path / "toy.csv", index=False)
    argv = [*m4_argv("--data", "short_term_csv", "--root_path", ".", "--data_path", "toy.csv", "--pred_len", "6",
                     "--seasonality", "1", "--model_id", "toy", "--seasonal_patterns", "Monthly")]
    message = "toy.csv line 59, column 'value' (series b) is missing"
    assert_fails_before_training(argv, tmp_path, capsys, message)
    assert_fails_after_training(argv, tmp_path, capsys, message)


@pytest.mark.parametrize("task", ["long_term_forecast", "imputation"])
def test_forecasting_training_is_blind_to_the_test_rows(tmp_path, monkeypatch, task):
    """Rows 240.. of the 300 are the test split's alone (70/10/20 borders): changing them changes nothing that
    training, validation or early stopping computed."""
    monkeypatch.chdir(tmp_path)
    trained = []
    for shift in (0.0, 100.0):
        folder = tmp_path / f"shift{shift:g}"
        folder.mkdir()
        frame = pd.read_csv(write_toy_csv(folder / "toy.csv"))
        frame.iloc[240:, 1:] += shift
        frame.to_csv(folder / "toy.csv", index=False)
        monkeypatch.chdir(folder)
        assert run.main(forecast_argv(task, "--protocol", "strict")) == 0
        record = pd.read_json(folder / "results.jsonl", lines=True).iloc[0]
        weights = torch.load(folder / "checkpoints" / record["setting"] / "checkpoint.pth", weights_only=True)
        trained.append(([(e["train"], e["vali"]) for e in record["curve"]], record["best_epoch"], weights, record))
    (curve, best, weights, record), (curve2, best2, weights2, record2) = trained
    assert curve == curve2 and best == best2
    assert all(torch.equal(weights[k], weights2[k]) for k in weights)
    # Only the test scores moved; the record names the protocol, the setting is TSLib's (same results).
    assert record["mse"] != record2["mse"] and record["protocol"] == "strict"
    assert not record["setting"].endswith("_strict")


def test_setting_and_hash_differ_only_where_the_protocol_changes_results():
    parser = build_parser()
    for task in ("long_term_forecast", "imputation", "classification", "anomaly_detection", "short_term_forecast"):
        base = ["--task_name", task, "--is_training", "1", "--model_id", "x", "--model", "DLinear", "--data", "UEA"]
        tslib, strict = parser.parse_args(base), parser.parse_args([*base, "--protocol", "strict"])
        assert tslib.protocol == "tslib" and setting_tag(tslib) == ""
        differs = changes_results(task)
        assert (make_setting(strict, 0) != make_setting(tslib, 0)) == differs
        assert (config_hash(run_config(strict)) != config_hash(run_config(tslib))) == differs
        assert differing_flags(run_config(tslib), run_config(strict)) == (["protocol"] if differs else [])


def test_unknown_protocol_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        run.main([*forecast_argv("long_term_forecast"), "--protocol", "fair"])
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--protocol" in err and "strict" in err
    assert list(tmp_path.iterdir()) == []
