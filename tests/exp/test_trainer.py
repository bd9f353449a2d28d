"""The shared training loop (exp/trainer.py) against the hooks an experiment gives it: the figure
`evaluate_epoch` names drives early stopping, `epoch_lr_schedule` switches --lradj's per-epoch step,
`before_train_batch` sees every micro-batch in order, and `build_optimizer` is what the step updates with."""

from __future__ import annotations

import pytest
import torch

from exp.arguments import build_parser
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.trainer import Trainer


class Scripted(Exp_Long_Term_Forecast):
    """A forecasting experiment whose epoch evaluation returns scripted figures and which records the hooks."""

    figures: list[float] = []

    def __init__(self, args) -> None:
        super().__init__(args)
        self.batches_seen: list[tuple[int, int]] = []

    def before_train_batch(self, epoch: int, batch: int) -> None:
        self.batches_seen.append((epoch, batch))

    def evaluate_epoch(self, epoch: int, steps: int, train_loss: float, data: dict) -> tuple[dict, float]:
        figure = self.figures[epoch - 1]
        return {"epoch": epoch, "train": train_loss, "vali": 0.5, "test": None, "figure": figure}, figure


def build(in_tmp, toy, *extra: str, figures: list[float], cls: type = Scripted) -> Scripted:
    args = build_parser().parse_args(toy(in_tmp, "--model", "DLinear", "--batch_size", "64", *extra))
    cls.figures = figures
    return cls(args)


def test_early_stopping_watches_the_figure_evaluate_epoch_names(in_tmp, toy):
    # Better, then worse twice: patience 2 stops after epoch 3 with epoch 1 the best.
    exp = build(in_tmp, toy, "--train_epochs", "6", "--patience", "2", figures=[1.0, 2.0, 3.0, 0.1, 0.1, 0.1])
    trainer = Trainer(exp, "scripted", exp._load_datasets())
    stats = trainer.run()
    assert (stats["epochs_run"], stats["best_epoch"]) == (3, 1)
    assert [entry["figure"] for entry in stats["curve"]] == [1.0, 2.0, 3.0]
    assert (trainer.path / "checkpoint.pth").is_file() and (trainer.path / "last.pth").is_file()


def test_before_train_batch_sees_every_micro_batch_in_order(in_tmp, toy):
    exp = build(in_tmp, toy, "--train_epochs", "2", figures=[1.0, 0.5])
    trainer = Trainer(exp, "scripted", exp._load_datasets())
    trainer.run()
    steps = trainer.steps_per_epoch
    assert steps > 1
    assert exp.batches_seen == [(epoch, i) for epoch in range(2) for i in range(steps)]


class KeepsRate(Scripted):
    epoch_lr_schedule = False


@pytest.mark.parametrize("cls,halved", [(Scripted, True), (KeepsRate, False)], ids=["schedule", "constant"])
def test_epoch_lr_schedule_switches_lradj(in_tmp, toy, cls, halved):
    exp = build(in_tmp, toy, "--train_epochs", "2", "--lradj", "type1", "--learning_rate", "0.01",
                figures=[1.0, 0.5], cls=cls)
    trainer = Trainer(exp, "scripted", exp._load_datasets())
    trainer.run()
    # type1 sets lr * 0.5^(e - 1) after epoch e: 0.01 after epoch 1, 0.005 after epoch 2
    assert trainer.optimizer.param_groups[0]["lr"] == (0.005 if halved else 0.01)


class SgdExperiment(Scripted):
    def build_optimizer(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.model.parameters(), lr=self.args.learning_rate, momentum=0.9)


def test_the_step_updates_with_the_optimiser_build_optimizer_returns(in_tmp, toy):
    exp = build(in_tmp, toy, "--train_epochs", "1", "--lradj", "onecycle", figures=[1.0], cls=SgdExperiment)
    trainer = Trainer(exp, "scripted", exp._load_datasets())
    assert isinstance(trainer.optimizer, torch.optim.SGD)
    assert exp.step.optimizer is trainer.optimizer and trainer.scheduler.optimizer is trainer.optimizer
    assert exp.step.scaler is trainer.scaler
    before = [p.detach().clone() for p in exp.model.parameters()]
    trainer.run()
    assert any(not torch.equal(a, b) for a, b in zip(before, exp.model.parameters(), strict=True))
    assert "momentum_buffer" in trainer.optimizer.state_dict()["state"][0]
