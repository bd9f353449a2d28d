"""--deterministic: torch's deterministic algorithms and the cuDNN flags are on while the run trains (and
restored afterwards), and two seeded runs write bit-identical checkpoints."""

from __future__ import annotations

import shutil

import torch

import run
from exp.arguments import build_parser, make_setting
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast


def test_deterministic_runs_write_bit_identical_checkpoints(in_tmp, toy, monkeypatch):
    seen = []
    original = Exp_Long_Term_Forecast._predict

    def predict(self, batch, runner=None):
        seen.append((torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
                     torch.backends.cudnn.benchmark))
        return original(self, batch, runner)

    monkeypatch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
    argv = toy(in_tmp, "--train_epochs", "2", "--deterministic")
    setting = make_setting(build_parser().parse_args(argv), 0)
    folder = in_tmp / "checkpoints" / setting
    states = []
    for _ in range(2):
        assert run.main(argv) == 0
        states.append(torch.load(folder / "checkpoint.pth"))
        shutil.rmtree(in_tmp / "checkpoints")
    assert set(seen) == {(True, True, False)}
    assert not torch.are_deterministic_algorithms_enabled()
    first, second = states
    assert first.keys() == second.keys() and len(first) > 0
    assert all(torch.equal(first[k], second[k]) for k in first)
