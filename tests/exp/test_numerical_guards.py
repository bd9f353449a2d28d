"""A NaN/inf training loss stops the run with one line naming epoch, batch and the culprit, and leaves
checkpoint.pth and last.pth as they were after the last good epoch; --detect_anomaly names the op."""

from __future__ import annotations

import pytest
import torch

import run
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

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
