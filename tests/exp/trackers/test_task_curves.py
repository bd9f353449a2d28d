"""Every task's training loop logs its curves (`--logger tensorboard`, read back with TensorBoard's reader):
the epoch curves equal the run's results.jsonl record, and every trained micro-batch has its loss."""

from __future__ import annotations

import numpy as np
import pytest
from anomaly_files import write_anomaly_files
from tracker_readers import tensorboard_runs

import run
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.uea_files import toy_dataset
from tests.exp.conftest import toy_argv, write_toy_csv
from tests.exp.test_exp_anomaly_detection import C as ANOMALY_CHANNELS
from tests.exp.test_exp_anomaly_detection import argv as anomaly_argv
from tests.exp.test_exp_classification import toy_argv as classification_argv
from tests.exp.test_exp_short_term_forecasting import argv as m4_argv


def imputation(folder):
    write_toy_csv(folder / "toy.csv")
    return toy_argv(folder, "--task_name", "imputation", "--model", "DLinear", "--label_len", "0", "--pred_len", "0",
                    "--train_epochs", "2")


def anomaly_detection(folder):
    write_anomaly_files("PSM", folder / "PSM", channels=ANOMALY_CHANNELS)
    return anomaly_argv(folder / "PSM")


def classification(folder):
    toy_dataset(folder / "Toy")
    return classification_argv(folder / "Toy", "--model", "DLinear")


def short_term_forecast(folder):
    write_m4(folder / "dataset" / "m4", counts={"Yearly": 3})
    return m4_argv("Yearly", "DLinear", "--train_epochs", "2")


@pytest.mark.slow
@pytest.mark.parametrize("task", [imputation, anomaly_detection, classification, short_term_forecast],
                         ids=lambda f: f.__name__)
def test_each_task_logs_its_loss_curves(tmp_path, monkeypatch, results, task):
    monkeypatch.chdir(tmp_path)
    assert run.main([*task(tmp_path), "--logger", "tensorboard"]) == 0
    [record] = results(tmp_path)
    [found] = tensorboard_runs(tmp_path / "tracking").values()
    assert found.group == task.__name__
    for key, field in (("train_loss", "train"), ("vali_loss", "vali"), ("test_loss", "test")):
        np.testing.assert_allclose([v for _, v in found.curves[f"epoch/{key}"]],
                                   [e[field] for e in record["curve"]], rtol=1e-6)
    batches = [x for x, _ in found.curves["batch/train_loss"]]
    assert batches == list(range(1, len(batches) + 1)) and len(batches) % record["epochs_run"] == 0
