"""exp/progress.py: the run's estimate and time lines, TSLib's progress lines without a bar, and progress
through evaluation passes."""

from __future__ import annotations

import logging
import re

import pytest

import run
from exp import progress
from exp.progress import EVAL_STEP_SHARE, RunShape, TrainClock, eval_progress, predicted_seconds


def test_predicted_seconds_is_the_documented_sum():
    shape = RunShape(steps_per_epoch=100, eval_batches=30, test_batches=20, epochs=4)
    s = 0.5
    e = s * EVAL_STEP_SHARE
    assert predicted_seconds(s, shape) == pytest.approx(4 * (100 * s + 30 * e) + 20 * e)


def test_the_estimate_comes_after_the_measured_steps_and_lines_are_due_by_time(monkeypatch, caplog):
    monkeypatch.setattr(progress, "ESTIMATE_AFTER_STEPS", 3)
    monkeypatch.setattr(progress, "LINE_EVERY_SECONDS", 0.0)
    clock = TrainClock(RunShape(steps_per_epoch=50, eval_batches=10, test_batches=5, epochs=2), total_epochs=2)
    clock.epoch_start(0)
    with caplog.at_level(logging.INFO, logger="exp.progress"):
        for i in range(4):
            clock.step_done(i, 0, 0.25, text_lines=i == 3)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("estimate: ") and "median of 3 steps" in lines[0] and "x 50 steps" in lines[0]
    assert re.search(r"this run: about \S+ \(\d+ s\) at 2 epochs", lines[0])
    assert lines[1:] == ["\titers: 4, epoch: 1 | loss: 0.2500000", lines[2]] and lines[2].startswith("\tspeed: ")


def test_an_evaluation_pass_prints_its_progress_when_it_is_slow(monkeypatch, caplog):
    monkeypatch.setattr(progress, "LINE_EVERY_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="exp.progress"):
        assert list(eval_progress(list(range(3)), "val", bar=False)) == [0, 1, 2]
    assert [r.getMessage().split(",")[0] for r in caplog.records] == ["\tval: 1/3 batches", "\tval: 2/3 batches",
                                                                       "\tval: 3/3 batches"]


def test_a_run_prints_its_estimate_and_epoch_times(in_tmp, toy, capsys):
    assert run.main(toy(in_tmp, "--model", "DLinear", "--train_epochs", "2")) == 0
    out = capsys.readouterr().out
    estimate = next(line for line in out.splitlines() if line.startswith("estimate: "))
    assert "s/train step" in estimate and re.search(r"this run: about \S+ \(\d+ s\) at 2 epochs", estimate)
    assert out.index("estimate: ") < out.index("Epoch: 1, Steps:")
    assert re.search(r"time: epoch 1 took \S+; 1 epochs left, about \S+; this run: about \S+ \(\d+ s\)", out)
    assert re.search(r"time: epoch 2 took \S+; training done after \S+", out)
