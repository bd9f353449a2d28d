"""Issue 49 §2-§4: the run folder `<checkpoints>/<setting>/` belongs to one process at a time, records the
configuration it was made with, refuses another configuration in one line, and is not left behind empty by a
run that fails before training wrote anything."""

from __future__ import annotations

import run
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from utils.errors import UserInputError


def fail_in_training(self, t) -> None:
    raise UserInputError("the first training batch found something wrong")


def test_a_run_failing_before_training_wrote_anything_leaves_no_folder(in_tmp, toy, capsys, monkeypatch):
    monkeypatch.setattr(Exp_Long_Term_Forecast, "_train_epoch", fail_in_training)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="DLinear")) == 2
    assert capsys.readouterr().err == "error: the first training batch found something wrong\n"
    assert sorted(p.name for p in in_tmp.iterdir()) == ["toy.csv"]
