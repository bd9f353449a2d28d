"""TSLib's short-term losses (utils/losses.py): hand-checked values, divide-no-nan, masking, gradients,
and agreement with slow per-element loops."""

from __future__ import annotations

import math

import pytest
import torch

from utils.losses import LOSSES, divide_no_nan, mape_loss, mase_loss, mse_loss, smape_loss


def t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def test_divide_no_nan_zeroes_nan_and_positive_inf_only():
    out = divide_no_nan(t([1.0, 0.0, -1.0, 6.0]), t([0.0, 0.0, 0.0, 3.0]))
    assert out.tolist() == [0.0, 0.0, -math.inf, 2.0]


def test_hand_checked_values():
    # sMAPE: 200 · mean(2/4, 0/0 → 0) = 50.
    assert smape_loss(None, 1, t([[1.0, 0.0]]), t([[3.0, 0.0]]), t([[1.0, 1.0]])).item() == pytest.approx(50.0)
    # MAPE: mean(|(2 − 4)/4|, |5 · (1/0 → 0)|) = 0.25.
    assert mape_loss(None, 1, t([[2.0, 5.0]]), t([[4.0, 0.0]]), t([[1.0, 1.0]])).item() == pytest.approx(0.25)
    # MASE: seasonal differences of [1, 2, 4, 7] at lag 1 average 2; errors 1 and 1 → 0.5.
    insample = t([[1.0, 2.0, 4.0, 7.0]])
    assert mase_loss(insample, 1, t([[8.0, 10.0]]), t([[9.0, 9.0]]), t([[1.0, 1.0]])).item() == pytest.approx(0.5)
    # MASE at lag 2: |4 − 1|, |7 − 2| average 4 → 2 / 4 / 2 steps = 0.25 each.
    assert mase_loss(insample, 2, t([[8.0, 10.0]]), t([[9.0, 9.0]]), t([[1.0, 1.0]])).item() == pytest.approx(0.25)
    # MSE with the second step masked: (1² + 0) / 2.
    assert mse_loss(None, 1, t([[1.0, 2.0]]), t([[0.0, 0.0]]), t([[1.0, 0.0]])).item() == pytest.approx(0.5)


def test_constant_insample_gives_zero_mase_not_nan():
    loss = mase_loss(t([[5.0, 5.0, 5.0]]), 1, t([[1.0]]), t([[9.0]]), t([[1.0]]))
    assert loss.item() == 0.0


def test_masked_steps_add_nothing():
    forecast, target = t([[1.0, 2.0, 3.0]]), t([[2.0, 100.0, -7.0]])
    mask = t([[1.0, 0.0, 0.0]])
    insample = t([[1.0, 3.0, 2.0, 5.0]])
    for name, loss in LOSSES.items():
        full = loss(insample, 1, forecast[:, :1], target[:, :1], mask[:, :1]).item()
        # Three steps, two masked: the mean is over three, so the value is a third of the one-step loss.
        assert loss(insample, 1, forecast, target, mask).item() == pytest.approx(full / 3), name


def slow(name: str, insample, freq, forecast, target, mask) -> float:
    """Per-element loops over [B, H] lists, straight from the definitions."""
    total, count = 0.0, 0
    for b in range(len(forecast)):
        x = insample[b]
        scale = sum(abs(x[i + freq] - x[i]) for i in range(len(x) - freq)) / (len(x) - freq)
        for h in range(len(forecast[b])):
            f, y, m = forecast[b][h], target[b][h], mask[b][h]
            if name == "SMAPE":
                d = abs(f) + abs(y)
                term = 200 * (abs(f - y) / d if d else 0.0) * m
            elif name == "MAPE":
                term = abs((f - y) * (m / y if y else 0.0))
            elif name == "MASE":
                term = abs(y - f) * (m / scale if scale else 0.0)
            else:
                term = (f - y) ** 2 * m
            total += term
            count += 1
    return total / count


@pytest.mark.parametrize("name", list(LOSSES))
def test_matches_slow_loops(name):
    g = torch.Generator().manual_seed(3)
    insample = torch.randn(5, 12, generator=g, dtype=torch.float64)
    insample[1] = 2.0  # a constant window: MASE scale 0
    forecast = torch.randn(5, 6, generator=g, dtype=torch.float64)
    target = torch.randn(5, 6, generator=g, dtype=torch.float64)
    target[2, 3] = 0.0
    forecast[2, 3] = 0.0  # a 0/0 sMAPE term
    mask = (torch.rand(5, 6, generator=g) > 0.2).double()
    for freq in (1, 4):
        fast = LOSSES[name](insample, freq, forecast, target, mask).item()
        ref = slow(name, insample.tolist(), freq, forecast.tolist(), target.tolist(), mask.tolist())
        assert fast == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_channel_dimension_as_the_experiment_passes_it():
    # The experiment passes insample [B, L, 1] and forecast/target/mask [B, H, 1].
    g = torch.Generator().manual_seed(0)
    insample = torch.randn(3, 8, generator=g)
    forecast, target = torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)
    mask = torch.ones(3, 4)
    for name, loss in LOSSES.items():
        flat = loss(insample, 2, forecast, target, mask)
        channel = loss(insample[..., None], 2, forecast[..., None], target[..., None], mask[..., None])
        torch.testing.assert_close(channel, flat, msg=name)


def test_smape_gradient_treats_the_denominator_as_constant():
    forecast = t([[2.0, -1.0]]).requires_grad_()
    target = t([[1.0, 3.0]])
    smape_loss(None, 1, forecast, target, torch.ones_like(target)).backward()
    # d/df 200/N · |f − y| / (|f| + |y|) with the denominator held: 100 · sign(f − y) / (|f| + |y|).
    expected = [100 * 1 / 3, 100 * -1 / 4]
    assert forecast.grad[0].tolist() == pytest.approx(expected)
