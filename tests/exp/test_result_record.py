"""The results.jsonl record (exp/result_record.py): one shape for every task, appended as one sorted line."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
import torch

from exp.distributed import DistContext
from exp.result_record import RESULTS_JSONL, result_record, save_result_arrays, write_result_record
from exp.run_config import config_hash


class RecordedRun:
    """The attributes a record reads of an experiment."""

    def __init__(self, train_stats: dict) -> None:
        self.args = argparse.Namespace(model="DLinear", model_id="toy", data="custom", protocol="strict")
        self.dist = DistContext()
        self.config = {"model": "DLinear", "seed": 7}
        self.run_seed = 9
        self.train_stats = train_stats
        self._model = torch.nn.Linear(3, 2)

    def _bare_model(self) -> torch.nn.Module:
        return self._model


def test_identity_then_task_fields_in_order_then_shared_fields():
    curve = [{"epoch": 1, "train": 0.5, "vali": 0.4, "test": 0.3}]
    exp = RecordedRun({"epochs_run": 1, "best_epoch": 1, "train_seconds": 2.5, "curve": curve})
    record = result_record(exp, "setting_0", {"task_name": "x", "mse": 0.25, "mae": 0.5})
    keys = list(record)
    assert keys[:7] == ["setting", "model", "model_id", "data", "task_name", "mse", "mae"]
    assert (record["setting"], record["model"], record["model_id"], record["data"]) == (
        "setting_0", "DLinear", "toy", "custom")
    assert (record["seed"], record["epochs_run"], record["best_epoch"], record["train_seconds"]) == (9, 1, 1, 2.5)
    assert record["curve"] == curve
    assert record["params"] == 3 * 2 + 2 and record["world_size"] == 1 and record["protocol"] == "strict"
    assert record["config"] == exp.config and record["config_hash"] == config_hash(exp.config)


def test_a_test_only_run_records_no_training_statistics():
    record = result_record(RecordedRun({}), "s", {})
    assert [record[k] for k in ("epochs_run", "best_epoch", "train_seconds", "curve")] == [None] * 4


def test_written_as_one_sorted_json_line_per_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = write_result_record(RecordedRun({}), "a", {"mse": 1.0})
    write_result_record(RecordedRun({}), "b", {"mse": 2.0})
    lines = (tmp_path / RESULTS_JSONL).read_text().splitlines()
    assert [json.loads(line)["setting"] for line in lines] == ["a", "b"]
    assert lines[0] == json.dumps(first, sort_keys=True)


def test_a_non_finite_score_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        write_result_record(RecordedRun({}), "a", {"mse": math.nan})
    assert not (tmp_path / RESULTS_JSONL).exists()


def test_result_arrays_land_in_the_settings_results_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    metrics, pred = np.array([0.1, 0.2]), np.arange(6.0).reshape(1, 3, 2)
    save_result_arrays("s_0", {"metrics": metrics, "pred": pred})
    folder = tmp_path / "results" / "s_0"
    assert sorted(p.name for p in folder.iterdir()) == ["metrics.npy", "pred.npy"]
    assert np.array_equal(np.load(folder / "metrics.npy"), metrics) and np.array_equal(np.load(folder / "pred.npy"), pred)
