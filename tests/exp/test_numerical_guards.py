"""A NaN/inf training loss stops the run with one line naming epoch, batch and the culprit, and leaves
checkpoint.pth and last.pth as they were after the last good epoch; --detect_anomaly names the op. A NaN
validation loss or test prediction stops the run too and records nothing; an undefined ratio metric is
recorded as null with its reason (issue 49)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

import run
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from utils.tools import EarlyStopping, append_jsonl

# DLinear on toy.csv: 22 training batches per epoch; the fault hits batch 3 of epoch 2.
FAULT_CALL = 22 + 3
TAIL = ("; checkpoint.pth and last.pth keep the last good state; lower --learning_rate or set "
        "--max_grad_norm, and use --detect_anomaly to find the op")


def inject(monkeypatch, fault: str, snapshot: dict, folder):
    """Patch training forwards so that call FAULT_CALL goes wrong; remember the checkpoint bytes then."""
    original = Exp_Long_Term_Forecast._predict
    calls = {"train": 0}

    def predict(self, batch, runner=None):
        if runner is None:
            calls["train"] += 1
            snapshot["anomaly_mode"] = torch.is_anomaly_enabled()
            if calls["train"] == FAULT_CALL:
                snapshot.update({p.name: p.read_bytes() for p in folder.glob("checkpoints/*/*.pth")})
                if fault == "inf-parameter":
                    with torch.no_grad():
                        self._bare_model().Linear_Trend.bias.fill_(float("inf"))
        out, y = original(self, batch, runner)
        if runner is None and calls["train"] == FAULT_CALL and fault == "nan-output":
            out = out * float("nan")
        return out, y

    monkeypatch.setattr(Exp_Long_Term_Forecast, "_predict", predict)


@pytest.mark.filterwarnings("ignore:Error detected in MseLossBackward0")
@pytest.mark.parametrize("fault, flags, loss, culprit", [
    ("nan-output", (), "nan", "first non-finite gradient: Linear_Seasonal.weight"),
    ("inf-parameter", (), "inf", "first non-finite parameter: Linear_Trend.bias"),
    ("nan-output", ("--detect_anomaly",), "nan",
     "autograd anomaly: Function 'MseLossBackward0' returned nan values in its 0th output."),
], ids=["nan-output", "inf-parameter", "nan-output-detect-anomaly"])
def test_non_finite_loss_stops_and_keeps_the_last_good_checkpoints(in_tmp, toy, results, monkeypatch, capsys,
                                                                   fault, flags, loss, culprit):
    snapshot: dict = {}
    inject(monkeypatch, fault, snapshot, in_tmp)
    assert run.main(toy(in_tmp, "--train_epochs", "3", "--save_every_steps", "0", *flags, model="DLinear")) == 1
    err = capsys.readouterr().err
    assert err == f"error: non-finite training loss ({loss}) at epoch 2, batch 3; {culprit}{TAIL}\n"
    assert snapshot["anomaly_mode"] is bool(flags) and not torch.is_anomaly_enabled()
    files = {p.name: p.read_bytes() for p in in_tmp.glob("checkpoints/*/*.pth")}
    assert set(files) == {"checkpoint.pth", "last.pth"}
    assert files == {name: snapshot[name] for name in files}
    assert results(in_tmp) == [] and not (in_tmp / "results").exists()


def nan_in_evaluation(monkeypatch, after_train_calls: int) -> None:
    """Evaluation forwards (validation and test) return NaN once `after_train_calls` training forwards ran."""
    original = Exp_Long_Term_Forecast._predict
    calls = {"train": 0}

    def predict(self, batch, runner=None):
        out, y = original(self, batch, runner)
        if runner is None:
            calls["train"] += 1
        elif calls["train"] >= after_train_calls:
            out = out * float("nan")
        return out, y

    monkeypatch.setattr(Exp_Long_Term_Forecast, "_predict", predict)


def test_nan_validation_loss_is_no_improvement_and_stops_the_run(in_tmp, toy, results, monkeypatch, capsys):
    nan_in_evaluation(monkeypatch, after_train_calls=FAULT_CALL)
    assert run.main(toy(in_tmp, "--train_epochs", "4", "--patience", "3", model="DLinear")) == 1
    err = capsys.readouterr().err
    assert err == ("error: non-finite validation loss (nan) after epoch 2: the model's outputs on the validation "
                   "split are not finite; checkpoint.pth keeps epoch 1; check the data file for extreme values "
                   "first, then lower --learning_rate or set --max_grad_norm\n")
    assert results(in_tmp) == [] and not (in_tmp / "results").exists()
    assert not (in_tmp / "result_long_term_forecast.txt").exists()


def test_nan_test_predictions_record_nothing(in_tmp, toy, results, monkeypatch, capsys):
    def nan_forecast(self, test_data, test_loader, naive=None):
        preds, trues = original(self, test_data, test_loader, naive)
        return preds * np.nan, trues

    original = Exp_Long_Term_Forecast._forecast
    monkeypatch.setattr(Exp_Long_Term_Forecast, "_forecast", nan_forecast)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="DLinear")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "of the test predictions are not finite" in err and "nothing was recorded" in err
    assert results(in_tmp) == []
    assert not (in_tmp / "results").exists() and not (in_tmp / "test_results").exists()


def test_infinite_mape_is_recorded_as_null_with_its_reason(in_tmp, toy, capsys):
    frame = pd.read_csv(in_tmp / "toy.csv")
    frame.loc[len(frame) - 5, "OT"] = 0.0  # a zero target in the test split makes MAPE/MSPE infinite
    frame.to_csv(in_tmp / "toy.csv", index=False)
    assert run.main(toy(in_tmp, "--train_epochs", "1", "--inverse", model="DLinear")) == 0
    out = capsys.readouterr().out

    def refuse(token):
        raise AssertionError(f"results.jsonl holds the non-standard JSON token {token}")

    record = json.loads((in_tmp / "results.jsonl").read_text(), parse_constant=refuse)
    assert record["mape"] is None and record["mspe"] is None and math.isfinite(record["mse"])
    assert set(record["undefined"]) == {"mape", "mspe"} and "divides by zero" in record["undefined"]["mape"]
    assert "mape is undefined and recorded as null" in out


def test_early_stopping_never_counts_nan_as_an_improvement(tmp_path):
    stopper = EarlyStopping(patience=2, save=False)
    model = torch.nn.Linear(1, 1)
    stopper(1.0, model, str(tmp_path), epoch=1)
    stopper(float("nan"), model, str(tmp_path), epoch=2)
    stopper(float("nan"), model, str(tmp_path), epoch=3)
    assert stopper.best_epoch == 1 and stopper.early_stop
    first = EarlyStopping(patience=2, save=False)
    first(float("nan"), model, str(tmp_path), epoch=1)
    assert first.best_score is None and first.counter == 1


def test_append_jsonl_refuses_nan_instead_of_writing_it(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        append_jsonl(path, {"mse": float("nan")})
    assert not path.exists() or path.read_text() == ""
