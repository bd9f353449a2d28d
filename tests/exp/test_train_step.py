"""exp/train_step.py: the one training step — decoder input, scored channels, clipping after the
update maths written out by hand, and the efficiency report running this very step."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

from compare.grid import efficiency
from exp.train_step import ForecastStep, compiled_runner, make_optimizer, model_inputs

B, L, LL, H, C = 3, 6, 2, 4, 3


class Recorder(nn.Module):
    """out[b, t, c] = w[c] · x_mean[b, c] + dec[b, t, c]; remembers what it was called with."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
        self.calls: list[tuple[torch.Tensor, ...]] = []

    def forward(self, x, x_mark, dec, y_mark):  # noqa: ANN001, ANN201
        self.calls.append((x, x_mark, dec, y_mark))
        return self.w * x.mean(dim=1, keepdim=True) + dec


def batch(seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(B, L, C, generator=gen), torch.randn(B, LL + H, C, generator=gen),
            torch.rand(B, L, 4, generator=gen), torch.rand(B, LL + H, 4, generator=gen))


def test_decoder_input_is_label_steps_then_zeros(make_configs):
    x, y, _, _ = batch()
    dec = model_inputs(batch(), LL, H, torch.device("cpu"))[2]
    assert dec.shape == (B, LL + H, C)
    assert torch.equal(dec[:, :LL], y[:, :LL]) and not dec[:, LL:].any()


@pytest.mark.parametrize("features", ["M", "MS"])
def test_step_equals_the_update_written_out(make_configs, features):
    configs = make_configs(label_len=LL, pred_len=H, features=features, max_grad_norm=0.05,
                           optimizer="adamw", learning_rate=0.1, weight_decay=0.01)
    model = Recorder()
    reference = copy.deepcopy(model)
    step = ForecastStep(model, configs, torch.device("cpu"), optimizer=make_optimizer(model, configs))
    loss = step(batch())

    x, y, _, _ = batch()
    dec = torch.cat([y[:, :LL], torch.zeros(B, H, C)], dim=1)
    scored = slice(-1, None) if features == "MS" else slice(0, None)
    out = (reference.w * x.mean(dim=1, keepdim=True) + dec)[:, -H:, scored]
    expected = ((out - y[:, -H:, scored]) ** 2).mean()
    torch.testing.assert_close(loss, expected.detach())
    expected.backward()
    grad = reference.w.grad
    clipped = grad * min(1.0, 0.05 / (grad.norm() + 1e-6))
    # AdamW's first step moves each coordinate by lr * sign-like m / (sqrt(v) + eps) after the decay.
    m, v = 0.1 * clipped, 0.001 * clipped**2
    m_hat, v_hat = m / 0.1, v / 0.001
    w = reference.w.detach() * (1 - 0.1 * 0.01) - 0.1 * m_hat / (v_hat.sqrt() + 1e-8)
    torch.testing.assert_close(model.w.detach(), w)
    assert model.w.grad is None  # zeroed after the step


def test_efficiency_times_the_experiment_step(make_configs, monkeypatch):
    """The efficiency report's step is a ForecastStep call on a loader-shaped batch."""
    configs = make_configs(model="DLinear", seq_len=8, label_len=4, pred_len=4, enc_in=2, dec_in=2, c_out=2,
                           batch_size=2)
    calls = []
    original = ForecastStep.__call__

    def spy(self, batch):  # noqa: ANN001, ANN202
        calls.append(tuple(t.shape for t in batch))
        return original(self, batch)

    monkeypatch.setattr(ForecastStep, "__call__", spy)
    result = efficiency.measure(configs, steps=2, warmup=1)
    assert result.step_ms is not None and result.step_ms > 0
    assert calls and set(calls) == {((2, 8, 2), (2, 8, 2), (2, 8, 4), (2, 8, 4))}


@pytest.mark.parametrize(("compile_flag", "mode", "expected"), [
    (False, None, None), (True, None, {"mode": None}), (True, "reduce-overhead", {"mode": "reduce-overhead"})])
def test_compiled_runner_passes_the_mode(make_configs, monkeypatch, compile_flag, mode, expected):
    """--compile wraps the model in torch.compile with --compile_mode (None: torch's default); without it the
    step calls the model itself."""
    calls = []
    monkeypatch.setattr(torch, "compile", lambda model, **kw: calls.append(kw) or model)
    model = nn.Linear(2, 2)
    runner = compiled_runner(model, make_configs(compile=compile_flag, compile_mode=mode))
    assert runner is model and calls == ([] if expected is None else [expected])
