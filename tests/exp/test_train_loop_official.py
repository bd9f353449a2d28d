"""--train_loop official (exp/train_step.py): the official CAPS code's loop, quirks included, against
values worked out by hand (docs: caps_reference.md §5, §8 items 11-13); --train_loop ours keeps ours."""

from __future__ import annotations

import math
import os
import signal

import pytest
import torch
import torch.nn as nn
from torch.optim.optimizer import register_optimizer_step_post_hook

import run
from exp.arguments import build_parser, make_setting, validate_args
from exp.train_options import TRAIN_LOOP_HELP, TRAIN_LOOPS
from exp.train_step import (
    CLIP_AND_STEP,
    ForecastStep,
    make_onecycle,
    official_optimizer_steps,
    official_steps_optimizer,
    onecycle_steps_per_epoch,
)
from tests.numerics import assert_close
from utils.errors import UserInputError

CPU = torch.device("cpu")


def onecycle(make_configs, train_loop: str, pct_start: float, steps_per_epoch: int):
    configs = make_configs(train_loop=train_loop, lradj="onecycle", pct_start=pct_start, train_epochs=1,
                           optimizer="adamw", learning_rate=1e-3)
    param = nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=configs.learning_rate, betas=(0.9, 0.999))
    return optimizer, make_onecycle(optimizer, configs, steps_per_epoch)


def walk(optimizer: torch.optim.Optimizer, scheduler, steps: int) -> list[tuple[float, float]]:
    """(lr, beta1) after 0, 1, ..., steps - 1 scheduler steps."""
    seen = []
    for _ in range(steps):
        group = optimizer.param_groups[0]
        seen.append((group["lr"], group["betas"][0]))
        optimizer.step()  # no gradient: changes nothing, keeps the scheduler's order check quiet
        scheduler.step()
    return seen


# 2 epochs of 5 steps (train_epochs + 1 = 2): total 10. max_lr 1e-3, initial 1e-4, final 1e-3 * 1e-5.
# pct_start 0 (the official scripts): one phase over steps -1..9, pct = (n + 1) / 10;
#   beta1 = 0.85 + 0.1 * pct, lr = 1e-3 + pct * (1e-8 - 1e-3).
# pct_start 0.3: warm-up over steps 0..2 (end 0.3 * 10 - 1 = 2), pct = n / 2, beta1 = 0.95 - 0.1 * pct,
#   lr = 1e-4 + pct * 9e-4; then steps 2..9, pct = (n - 2) / 7, beta1 = 0.85 + 0.1 * pct,
#   lr = 1e-3 + pct * (1e-8 - 1e-3).
HAND = {
    0.0: {n: (1e-3 + (n + 1) / 10 * (1e-8 - 1e-3), 0.85 + 0.1 * (n + 1) / 10) for n in (0, 1, 4, 8, 9)},
    0.3: {0: (1e-4, 0.95), 1: (5.5e-4, 0.90), 2: (1e-3, 0.85),
          3: (1e-3 + (1 / 7) * (1e-8 - 1e-3), 0.85 + 0.1 / 7),
          9: (1e-8, 0.95)},
}


@pytest.mark.parametrize("pct_start", [0.0, 0.3], ids=["pct0", "pct0.3"])
def test_official_onecycle_cycles_beta1_as_worked_out_by_hand(make_configs, pct_start):
    seen = walk(*onecycle(make_configs, "official", pct_start, steps_per_epoch=5), steps=10)
    for n, (lr, beta1) in HAND[pct_start].items():
        assert seen[n][0] == pytest.approx(lr, rel=1e-9, abs=1e-15), f"lr after {n} steps"
        assert seen[n][1] == pytest.approx(beta1, rel=1e-12), f"beta1 after {n} steps"


@pytest.mark.parametrize("pct_start", [0.0, 0.3], ids=["pct0", "pct0.3"])
def test_ours_keeps_beta1_and_the_same_learning_rates(make_configs, pct_start):
    ours = walk(*onecycle(make_configs, "ours", pct_start, steps_per_epoch=5), steps=10)
    official = walk(*onecycle(make_configs, "official", pct_start, steps_per_epoch=5), steps=10)
    assert [beta1 for _, beta1 in ours] == [0.9] * 10
    assert [lr for lr, _ in ours] == [lr for lr, _ in official]


def test_scheduler_length_counts_micro_batches_only_for_official(make_configs):
    assert onecycle_steps_per_epoch(make_configs(train_loop="official", grad_accum=4), 10) == 10
    assert onecycle_steps_per_epoch(make_configs(train_loop="ours", grad_accum=4), 10) == 3


def official_counter_steps(batches: int, group_size: int) -> list[bool]:
    """The official Exp_Main.train counter, statement by statement, for one epoch."""
    iter_count, steps = 0, []
    for i in range(batches):
        iter_count += 1
        if (i + 1) % 100 == 0:
            iter_count = 0  # reset with the speed log, before the accumulation check
        steps.append((iter_count + 1) % group_size == 0)
    return steps


@pytest.mark.parametrize("group_size", [1, 2, 3, 4, 16, 100])
def test_official_step_batches_follow_its_counter(group_size):
    literal = official_counter_steps(350, group_size)
    assert [official_steps_optimizer(i, group_size) for i in range(350)] == literal
    assert [official_optimizer_steps(n, group_size) for n in range(351)] == [sum(literal[:n]) for n in range(351)]


def test_official_accumulation_of_16_steps_6_times_per_100_batches():
    assert official_optimizer_steps(100, 16) == official_optimizer_steps(200, 16) - 6 == 6


def scaled_gradients(scale: float, loop: str, max_grad_norm: float) -> tuple[list[nn.Parameter], torch.amp.GradScaler]:
    """Two zero parameters after an SGD(lr=1) clip-and-step of the gradient g = ([3, 0], [[0, 4]]) (‖g‖ = 5),
    back-propagated through a CPU GradScaler at `scale`: the parameters end as minus the applied gradient."""
    params = [nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1, 2))]
    optimizer = torch.optim.SGD(params, lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    loss = (torch.tensor([3.0, 0.0]) * params[0]).sum() + (torch.tensor([[0.0, 4.0]]) * params[1]).sum()
    scaler.scale(loss).backward()
    CLIP_AND_STEP[loop](params, optimizer, scaler, max_grad_norm)
    return params, scaler


G = torch.tensor([3.0, 0.0, 0.0, 4.0], dtype=torch.float64)


def applied(params: list[nn.Parameter]) -> torch.Tensor:
    return -torch.cat([p.detach().flatten() for p in params])


# Official: clip coefficient 1 / (s‖g‖ + 1e-6) on s·g, then unscaled: g / (5 s + 1e-6), norm ≈ 1 / s.
# Ours: unscaled first, coefficient 1 / (‖g‖ + 1e-6): g / (5 + 1e-6), norm ≈ 1.
@pytest.mark.parametrize("loop,expected", [
    ("official", G / (5 * 65536 + 1e-6)),
    ("ours", G / (5 + 1e-6)),
], ids=["official", "ours"])
def test_clip_and_step_at_scale_65536_as_worked_out_by_hand(loop, expected):
    params, scaler = scaled_gradients(65536.0, loop, max_grad_norm=1.0)
    assert_close(applied(params), expected, rtol=1e-6, atol=0.0)
    assert scaler.get_scale() == 65536.0  # a finite step leaves the scale (growth comes after 2000 of them)


def test_official_applied_norm_is_max_norm_over_scale_in_the_same_direction():
    official, ours = (applied(scaled_gradients(65536.0, loop, max_grad_norm=1.0)[0]) for loop in ("official", "ours"))
    assert official.norm().item() == pytest.approx(1 / 65536, rel=1e-6)  # 1.5e-5
    assert ours.norm().item() == pytest.approx(1.0, rel=1e-6)
    assert_close(official * 65536, ours, rtol=1e-6, atol=0.0)  # same direction, 1 / scale the length


@pytest.mark.parametrize("loop", TRAIN_LOOPS)
def test_without_loss_scaling_both_orders_clip_the_true_gradient(loop):
    # Scale 1 is the CPU case (AMP off): clipping before or after unscaling is the same.
    assert_close(applied(scaled_gradients(1.0, loop, max_grad_norm=1.0)[0]), G / (5 + 1e-6), rtol=1e-6, atol=0.0)
    # A bound above ‖g‖ leaves g as it is.
    assert_close(applied(scaled_gradients(1.0, loop, max_grad_norm=10.0)[0]), G, rtol=1e-6, atol=0.0)


@pytest.mark.parametrize("loop", TRAIN_LOOPS)
def test_overflowing_scaled_gradient_skips_the_step_and_halves_the_scale(loop):
    params, scaler = scaled_gradients(2.0**126, loop, max_grad_norm=1.0)  # 4 · 2^126 overflows float32
    assert not applied(params).any()
    assert scaler.get_scale() == 2.0**125


class Linear1(nn.Module):
    """out[b, t, c] = w · x_mean[b, c] + dec[b, t, c] with one weight."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(0.5))

    def forward(self, x, x_mark, dec, y_mark):  # noqa: ANN001, ANN201
        return self.w * x.mean(dim=1, keepdim=True) + dec


def toy_batch(seed: int) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 6, 3, generator=gen), torch.randn(2, 6, 3, generator=gen),
            torch.rand(2, 6, 4, generator=gen), torch.rand(2, 6, 4, generator=gen))


def gradient_of(seed: int, configs, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    model = Linear1().to(dtype)
    step = ForecastStep(model, configs, CPU)
    step.loss(*step.predict(toy_batch(seed))).backward()
    return model.w.grad.detach()


@pytest.mark.parametrize("loop", TRAIN_LOOPS)
def test_accumulation_official_applies_only_the_last_micro_batch(make_configs, loop):
    configs = make_configs(train_loop=loop, label_len=2, pred_len=4, max_grad_norm=0.0, grad_accum=2)
    model = Linear1()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda n: 1.0)
    step = ForecastStep(model, configs, CPU, optimizer=optimizer, scheduler=scheduler)
    for seed, last in ((0, False), (1, True)):
        step.backward(step.loss(*step.predict(toy_batch(seed))), group_size=2)
        step.update() if last else step.skip_update()
    first, second = gradient_of(0, configs), gradient_of(1, configs)
    expected = second if loop == "official" else (first + second) / 2  # official: undivided, last only
    assert_close(0.5 - model.w.detach(), expected, rtol=1e-6, atol=0.0)
    # The official OneCycle steps every micro-batch; ours once per optimiser step.
    assert scheduler.last_epoch == (2 if loop == "official" else 1)


@pytest.mark.parametrize("loop", TRAIN_LOOPS)
def test_step_with_an_explicit_scale_clips_in_the_documented_order(make_configs, loop):
    configs = make_configs(train_loop=loop, label_len=2, pred_len=4, max_grad_norm=0.01)
    model = Linear1().double()  # so that 0.5 - w keeps the ~1e-5 update exact
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    step = ForecastStep(model, configs, CPU, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), scaler=scaler)
    step(toy_batch(0))
    g = gradient_of(0, configs, torch.float64)
    scale = 1024.0 if loop == "official" else 1.0  # ours unscales before clipping
    expected = g * min(1.0, 0.01 / (scale * g.abs().item() + 1e-6))
    assert g.abs().item() > 0.01  # the clip binds in both orders
    assert_close(0.5 - model.w.detach(), expected, rtol=1e-5, atol=0.0)


def test_cpu_official_has_no_loss_scaling_even_with_use_amp(make_configs):
    configs = make_configs(train_loop="official", use_amp=True, amp_dtype="bf16", lradj="onecycle")
    model = Linear1()
    step = ForecastStep(model, configs, CPU, optimizer=torch.optim.SGD(model.parameters(), lr=1.0))
    assert not step.amp_enabled and not step.scaler.is_enabled()


@pytest.mark.parametrize("value", ["paper", "OFFICIAL", ""])
def test_unknown_train_loop_is_rejected_with_the_choices(make_configs, value):
    with pytest.raises(UserInputError) as err:
        validate_args(make_configs(train_loop=value))
    assert str(err.value) == f"--train_loop {value!r} is not supported; valid choices: ours, official"
    with pytest.raises(ValueError, match="valid choices: ours, official"):
        ForecastStep(Linear1(), make_configs(train_loop=value), CPU)


@pytest.mark.parametrize("flags,message", [
    (dict(lradj="type1"), "pass --lradj onecycle instead of --lradj type1"),
    (dict(lradj="onecycle", use_amp=True, amp_dtype="fp16"), "pass --amp_dtype bf16 with --use_amp"),
    (dict(lradj="onecycle", grad_accum=101), "use --grad_accum <= 100"),
], ids=["lradj", "fp16", "accum"])
def test_official_rejects_flags_it_cannot_reproduce(make_configs, flags, message):
    with pytest.raises(UserInputError, match=message) as err:
        validate_args(make_configs(train_loop="official", **flags))
    assert "\n" not in str(err.value)


def test_official_accepts_the_caps_recipe_flags(make_configs):
    validate_args(make_configs(train_loop="official", lradj="onecycle", pct_start=0.0, optimizer="adamw",
                               use_amp=True, amp_dtype="bf16", grad_accum=16, max_grad_norm=1.0))


def test_run_py_reports_an_unknown_loop_in_one_line(in_tmp, toy, capsys):
    assert run.main(toy(in_tmp, "--train_loop", "fast", model="DLinear")) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --train_loop 'fast' is not supported; valid choices: ours, official"
    assert not (in_tmp / "checkpoints").exists()


@pytest.mark.parametrize("loop", TRAIN_LOOPS)
def test_experiment_steps_where_each_loop_says(in_tmp, toy, loop):
    """One epoch of 175 batches of one window (the counter restarts at batch 100), accumulation 3."""
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

    argv = toy(in_tmp, "--train_loop", loop, "--lradj", "onecycle", "--pct_start", "0", "--optimizer", "adamw",
               "--grad_accum", "3", "--batch_size", "1", "--train_epochs", "1", "--save_every_steps", "0",
               model="DLinear")
    args = build_parser().parse_args(argv)
    validate_args(args)
    exp = Exp_Long_Term_Forecast(args)
    optimizer_steps = []
    handle = register_optimizer_step_post_hook(lambda *_: optimizer_steps.append(1))
    try:
        exp.train("loop")
    finally:
        handle.remove()
    batches = 175
    beta1 = exp.step.optimizer.param_groups[0]["betas"][0]
    if loop == "official":
        assert len(optimizer_steps) == official_optimizer_steps(batches, 3) == 58
        assert exp.step.scheduler.last_epoch == batches
        assert beta1 == pytest.approx(0.85 + 0.1 * (batches + 1) / (2 * batches))
    else:
        assert len(optimizer_steps) == exp.step.scheduler.last_epoch == math.ceil(batches / 3)
        assert beta1 == 0.9


def test_official_run_stopped_by_a_signal_resumes_to_the_same_weights(tmp_path, monkeypatch, toy, toy_csv, results):
    """--resume under the official loop: a run stopped mid-epoch ends as an uninterrupted one. With
    --grad_accum 2 the official counter steps after 0-based batches 0, 2, 4, ..., so a signal during batch 8
    (0-based 7) is acted on after batch 9, the next save point."""
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

    flags = ("--train_loop", "official", "--train_epochs", "2", "--optimizer", "adamw", "--lradj", "onecycle",
             "--pct_start", "0", "--grad_accum", "2", "--max_grad_norm", "0.5", "--learning_rate", "0.003")
    runs = {}
    for name in ("reference", "stopped"):
        folder = tmp_path / name
        folder.mkdir()
        toy_csv(folder / "toy.csv")
        runs[name] = (folder, toy(folder, *flags))
    monkeypatch.chdir(runs["reference"][0])
    assert run.main(runs["reference"][1]) == 0

    folder, argv = runs["stopped"]
    monkeypatch.chdir(folder)
    calls = {"train": 0}
    original = Exp_Long_Term_Forecast._predict

    def predict(self, batch, runner=None):  # noqa: ANN001, ANN202
        if runner is None:
            calls["train"] += 1
            if calls["train"] == 22 + 8:
                os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, runner)

    with monkeypatch.context() as patch:
        patch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
        assert run.main(argv) == 128 + signal.SIGTERM
    setting = make_setting(build_parser().parse_args(argv), 0)
    progress = torch.load(folder / "checkpoints" / setting / "last.pth")["progress"]
    assert (progress["epoch"], progress["step"]) == (1, 9)
    assert run.main([*argv, "--resume"]) == 0

    reference, resumed = results(runs["reference"][0])[0], results(folder)[0]
    assert (resumed["mse"], resumed["mae"]) == (reference["mse"], reference["mae"])
    weights = [torch.load(f / "checkpoints" / setting / "checkpoint.pth") for f in (runs["reference"][0], folder)]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_train_loop_flag_takes_its_choices_and_help_from_the_step():
    action = next(a for a in build_parser()._actions if a.dest == "train_loop")
    assert (action.default, action.help, action.metavar) == ("ours", TRAIN_LOOP_HELP, "{ours,official}")
