"""`python -m compare tune` refuses a zero-shot row (a pretrained model has nothing to tune) in one line, writing
nothing."""

from __future__ import annotations

import pytest

from compare.tune import equal_budget as tune
from tests.compare.run.test_runner import TOY, write_toy_csv


@pytest.fixture(autouse=True)
def _no_ray_auth(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


def test_a_zero_shot_row_is_refused_by_the_tuner(tmp_path, capsys):
    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    out = tmp_path / "out"
    argv = ["--data", "toy", "--models", "DLinear", "Fracast", "--pred_lens", "12", "--root", str(tmp_path / "data"),
            "--out", str(out), "--trials", "2", "--epochs", "1"]
    assert tune.main(argv, TOY) == 2
    assert capsys.readouterr().err.strip() == ("error: Fracast is a zero-shot row (a pretrained model, not trained): "
                                               "nothing to tune; drop it from --models and compare it with `python "
                                               "-m compare` instead")
    assert not out.exists()
