"""Hand-edited model cards (predict/card_schema.py, issue 65): every edit that would break a forecast is one
`error:` line naming the field, exit code 2 and no output; unknown fields are ignored and named in the log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exp.model_card import CARD_FILE
from predict.card_schema import TASK_DATA_KINDS
from predict.cli import main
from predict.load import TASK_MODELS
from tests.predict.checkpoints import checkpoint_folder, toy_argv, write_hourly_csv

MISSING = object()

#: id → (dotted field, new value or MISSING, the field the error line must name)
EDITS: dict[str, tuple[str, Any, str]] = {
    "missing-data.scaler": ("data.scaler", MISSING, "field data.scaler is missing"),
    "missing-data.input_columns": ("data.input_columns", MISSING, "field data.input_columns is missing"),
    "missing-checkpoint.sha256": ("checkpoint.sha256", MISSING, "field checkpoint.sha256 is missing"),
    "missing-args.model_id": ("args.model_id", MISSING, "field args.model_id is missing"),
    "missing-args.enc_in": ("args.enc_in", MISSING, "field args.enc_in is missing"),
    "missing-task_name": ("task_name", MISSING, "field task_name is missing"),
    "missing-format": ("format", MISSING, "field format is missing"),
    "text-args.seq_len": ("args.seq_len", "24", "field args.seq_len is '24'; it must be a whole number"),
    "text-args.batch_size": ("args.batch_size", "16", "field args.batch_size is '16'"),
    "text-args.dropout": ("args.dropout", "0.1", "field args.dropout is '0.1'; it must be a finite number"),
    "text-data.scaler.scale": ("data.scaler.scale", "1.0", "field data.scaler.scale is '1.0'"),
    "text-data.timeenc": ("data.timeenc", "1", "field data.timeenc is '1'"),
    "text-format": ("format", "1", "field format is '1'"),
    "zero-args.seq_len": ("args.seq_len", 0, "field args.seq_len is 0; it must be a whole number > 0"),
    "negative-args.d_model": ("args.d_model", -8, "field args.d_model is -8; it must be a whole number > 0"),
    "zero-args.batch_size": ("args.batch_size", 0, "field args.batch_size is 0"),
    "zero-args.pred_len": ("args.pred_len", 0, "field args.pred_len is 0"),
    "negative-args.label_len": ("args.label_len", -1, "field args.label_len is -1"),
    "too-long-args.label_len": ("args.label_len", 25, "from 0 to args.seq_len (24)"),
    "unknown-task_name": ("task_name", "forecasting", "field task_name is 'forecasting'; it must be one of "),
    "other-args.task_name": ("args.task_name", "imputation", "field args.task_name is 'imputation'"),
    "other-args.model": ("args.model", "PatchTST", "field args.model is 'PatchTST'"),
    "other-data.kind": ("data.kind", "m4", "field data.kind is 'm4'; it must be series"),
    "no-list-data.input_columns": ("data.input_columns", "x0,x1,OT", "field data.input_columns is 'x0,x1,OT'"),
    "no-list-data.forecast_columns": ("data.forecast_columns", "OT", "field data.forecast_columns is 'OT'"),
    "no-list-args.p_hidden_dims": ("args.p_hidden_dims", 128, "field args.p_hidden_dims is 128"),
    "no-object-data": ("data", ["x0", "x1", "OT"], "field data is ['x0', 'x1', 'OT']"),
    "no-object-checkpoint": ("checkpoint", "checkpoint.pth", "field checkpoint is 'checkpoint.pth'"),
    "short-data.scaler.mean": ("data.scaler.mean", [0.0, 0.0], "field data.scaler.mean is [0.0, 0.0]"),
    "zero-data.scaler.scale": ("data.scaler.scale", [1.0, 0.0, 1.0], "field data.scaler.scale is [1.0, 0.0, 1.0]"),
    "nan-data.scaler.scale": ("data.scaler.scale", [1.0, float("nan"), 1.0], "field data.scaler.scale is [1.0, nan"),
    "inf-data.scaler.mean": ("data.scaler.mean", [float("inf"), 0.0, 0.0], "field data.scaler.mean is [inf, 0.0"),
    "negative-data.scaler.scale": ("data.scaler.scale", [-1.0, 1.0, 1.0], "field data.scaler.scale is [-1.0"),
    "other-data.forecast_columns": ("data.forecast_columns", ["x0"], "field data.forecast_columns is ['x0']; it "
                                                                     "must be ['OT']"),
    "other-args.features": ("args.features", "M", "field args.features is 'M'; it must be 'MS', data.features"),
    "other-args.enc_in": ("args.enc_in", 5, "field args.enc_in is 5; it must be 3"),
    "bad-data.time_step": ("data.time_step", "hourly", "field data.time_step is 'hourly'"),
    "null-data.time_step": ("data.time_step", None, "field data.time_step is None"),
    "bad-data.freq": ("data.freq", "hourly", "field data.freq is 'hourly'"),
    "bad-args.embed": ("args.embed", "onehot", "field args.embed is 'onehot'"),
    "path-checkpoint.file": ("checkpoint.file", "../checkpoint.pth", "field checkpoint.file is '../checkpoint.pth'"),
}

#: id → the card file's text (given the valid card's JSON text)
TEXTS = {
    "truncated": lambda text: text[: len(text) // 2],
    "empty": lambda text: "",
    "not-an-object": lambda text: "[1, 2, 3]",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cards")
    write_hourly_csv(root / "toy.csv")
    pd.read_csv(root / "toy.csv").iloc[:80].to_csv(root / "in.csv", index=False)
    return root


@pytest.fixture(scope="module")
def folder(root) -> Path:
    return checkpoint_folder(toy_argv(root, "DLinear", "MS"))


def _copy(folder: Path, to: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copytree(folder, to)
    return to, json.loads((to / CARD_FILE).read_text())


def _edit(card: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, name = dotted.split(".")
    for part in parents:
        card = card[part]
    if value is MISSING:
        del card[name]
    else:
        card[name] = value


def _refused(folder: Path, root: Path, out: Path, capsys) -> str:
    """Run the shell command on `folder`; it must exit 2 with one `error:` line and write nothing."""
    assert main([str(folder), str(root / "in.csv"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    return err


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_hand_edited_field_is_one_line_naming_it(root, folder, tmp_path, capsys, edit):
    dotted, value, named = EDITS[edit]
    copy, card = _copy(folder, tmp_path / "edited")
    _edit(card, dotted, value)
    (copy / CARD_FILE).write_text(json.dumps(card))
    err = _refused(copy, root, tmp_path / "out", capsys)
    assert named in err and str(copy / CARD_FILE) in err


@pytest.mark.parametrize("case", list(TEXTS))
def test_a_card_that_is_not_a_json_object_is_one_line(root, folder, tmp_path, capsys, case):
    copy, _ = _copy(folder, tmp_path / "edited")
    (copy / CARD_FILE).write_text(TEXTS[case]((folder / CARD_FILE).read_text()))
    assert CARD_FILE in _refused(copy, root, tmp_path / "out", capsys)


def test_unknown_fields_are_ignored_and_named_in_the_log(root, folder, tmp_path, capsys):
    assert main([str(folder), str(root / "in.csv"), "--out", str(tmp_path / "plain")]) == 0
    copy, card = _copy(folder, tmp_path / "edited")
    card["notes"] = "trained on the toy file"
    card["data"]["units"] = "kW"
    card["args"]["num_class"] = 0  # a value the experiment derived: kept as it is, never named
    (copy / CARD_FILE).write_text(json.dumps(card))
    capsys.readouterr()
    assert main([str(copy), str(root / "in.csv"), "--out", str(tmp_path / "edited_out")]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "ignoring field(s) this checkout does not read: notes, data.units\n" in captured.out
    assert ((tmp_path / "edited_out" / "in_forecast.csv").read_bytes()
            == (tmp_path / "plain" / "in_forecast.csv").read_bytes())


def test_the_schema_covers_every_task_predict_serves():
    assert set(TASK_DATA_KINDS) == set(TASK_MODELS)
