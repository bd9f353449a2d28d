"""The model card beside a checkpoint (exp/model_card.py): written by every run.py training and test run, holding
the resolved flags, the training split's scaler, the columns and the time step, without the machine's paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import run
from data_provider.data_factory import build_dataset
from exp.arguments import build_parser, make_setting
from exp.model_card import CARD_FILE, file_sha256, forecast_columns, read_model_card, time_step
from utils.errors import UserInputError


def _train(in_tmp: Path, toy, *extra: str, model: str = "DLinear") -> tuple[list[str], Path]:
    argv = toy(in_tmp, "--train_epochs", "1", *extra, model=model)
    assert run.main(argv) == 0
    return argv, in_tmp / "checkpoints" / make_setting(build_parser().parse_args(argv), 0)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *_strings(item)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_training_writes_a_card_and_a_test_only_run_recreates_it(in_tmp, toy):
    argv, folder = _train(in_tmp, toy, "--features", "MS", "--c_out", "1")
    card = read_model_card(folder)
    data = card["data"]
    assert card["task_name"] == "long_term_forecast" and card["model"] == "DLinear"
    assert data["input_columns"] == ["x0", "x1", "OT"] and data["forecast_columns"] == ["OT"]
    assert data["date_column"] == "date" and data["time_step"] == "h" and data["timeenc"] == 1
    # The scaler is the training split's, to the last bit.
    train = build_dataset(build_parser().parse_args(argv), "train")
    assert data["scaler"]["mean"] == train.scaler.mean_.tolist()
    assert data["scaler"]["scale"] == train.scaler.scale_.tolist()
    assert card["checkpoint"]["sha256"] == file_sha256(folder / "checkpoint.pth")
    assert card["args"]["seq_len"] == 24 and card["args"]["data_path"] == "toy.csv"
    assert "root_path" not in card["args"] and "checkpoints" not in card["args"]
    record = json.loads((in_tmp / "results.jsonl").read_text())
    assert card["config_hash"] == record["config_hash"] and card["code_version"] == record["code_version"]
    leaked = [s for s in _strings(card) if os.path.isabs(s) or str(in_tmp) in s]
    assert not leaked
    # A folder without its card (trained before cards existed): one line saying how to recreate it, which works.
    (folder / CARD_FILE).unlink()
    with pytest.raises(UserInputError, match=r"--is_training 0") as err:
        read_model_card(folder)
    assert "\n" not in str(err.value)
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 0
    again = read_model_card(folder)
    assert again["data"] == card["data"] and again["checkpoint"] == card["checkpoint"]
    assert again["args"]["is_training"] == 0


@pytest.mark.parametrize("text", ["{not json", json.dumps({"kind": "something else"}),
                                  json.dumps({"kind": "caps-tslib model card", "format": 99})])
def test_a_foreign_or_newer_card_is_one_line(tmp_path, text):
    (tmp_path / CARD_FILE).write_text(text)
    with pytest.raises(UserInputError) as err:
        read_model_card(tmp_path)
    assert "\n" not in str(err.value) and CARD_FILE in str(err.value)


def test_forecast_columns_follow_the_features_flag():
    columns = ["a", "b", "OT"]
    assert forecast_columns("M", columns) == columns
    assert forecast_columns("MS", columns) == ["OT"]
    assert forecast_columns("S", ["OT"]) == ["OT"]


def test_time_step_is_inferred_or_the_most_common_difference():
    import pandas as pd

    hourly = pd.date_range("2021-01-01", periods=10, freq="h")
    assert time_step(hourly) == "h"
    assert time_step(pd.date_range("2021-01-01", periods=10, freq="15min")) == "15min"
    # A file with a gap: the most common step.
    assert time_step(hourly.delete(4)) == "h"
    assert time_step(pd.date_range("2021-01-01", periods=10, freq="90min").delete(4)) == "90min"
    assert time_step(pd.date_range("2021-01-01", periods=10, freq="MS")) == "MS"
    assert time_step(None) is None
