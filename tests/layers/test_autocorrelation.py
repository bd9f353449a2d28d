"""Auto-Correlation's FFT path against its direct O(L²) references (float64, outputs and gradients),
and the time-delay aggregation on hand-built periodic signals."""

from __future__ import annotations

import math

import pytest
import torch
from numerics import assert_close

from layers.AutoCorrelation import (
    AutoCorrelation,
    AutoCorrelationLayer,
    autocorrelation_fft,
    autocorrelation_reference,
    num_delays,
    select_delays,
    time_delay_aggregation,
    time_delay_aggregation_reference,
)

SHAPES = [(2, 1, 2, 3), (2, 63, 2, 4), (1, 97, 3, 2), (1, 2048, 1, 2)]
SHAPE_IDS = [f"B{b}-L{n}-H{h}-E{e}" for b, n, h, e in SHAPES]


@pytest.mark.parametrize(("b", "length", "h", "e"), SHAPES, ids=SHAPE_IDS)
def test_fft_autocorrelation_equals_direct_sum(b: int, length: int, h: int, e: int) -> None:
    if length > 1000:
        # The direct sum is O(L²): check a few lags of the long series by hand instead of all of them.
        q = torch.randn(b, length, h, e, dtype=torch.float64)
        k = torch.randn(b, length, h, e, dtype=torch.float64)
        corr = autocorrelation_fft(q, k)
        for tau in (0, 1, 777, length - 1):
            expected = (q * torch.roll(k, tau, dims=1)).sum(dim=1)  # [B, H, E]
            assert_close(corr[..., tau], expected, atol=1e-9, rtol=1e-9)
        return
    q = torch.randn(b, length, h, e, dtype=torch.float64, requires_grad=True)
    k = torch.randn(b, length, h, e, dtype=torch.float64, requires_grad=True)
    fast = autocorrelation_fft(q, k)
    slow = autocorrelation_reference(q, k)
    assert fast.shape == (b, h, e, length)
    assert_close(fast, slow)
    g = torch.randn_like(fast)
    grads_fast = torch.autograd.grad(fast, (q, k), g)
    grads_slow = torch.autograd.grad(slow, (q, k), g)
    for mine, ref in zip(grads_fast, grads_slow, strict=True):
        assert_close(mine, ref)


def test_autocorrelation_is_the_literal_definition() -> None:
    """R(τ) = Σ_t q_t k_{t−τ mod L}, checked element by element for one tiny series."""
    q = torch.tensor([1.0, 2.0, 0.0, -1.0], dtype=torch.float64).view(1, 4, 1, 1)
    k = torch.tensor([0.5, 0.0, 3.0, 1.0], dtype=torch.float64).view(1, 4, 1, 1)
    expected = [sum(q[0, t, 0, 0] * k[0, (t - tau) % 4, 0, 0] for t in range(4)) for tau in range(4)]
    assert_close(autocorrelation_fft(q, k)[0, 0, 0], torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("shared", [False, True], ids=["per-sample", "shared"])
@pytest.mark.parametrize(("b", "length", "h", "e"), SHAPES[:3], ids=SHAPE_IDS[:3])
def test_aggregation_equals_roll_reference(b: int, length: int, h: int, e: int, shared: bool) -> None:
    values = torch.randn(b, h, e, length, dtype=torch.float64, requires_grad=True)
    corr = torch.randn(b, h, e, length, dtype=torch.float64, requires_grad=True)
    delays, weights = select_delays(corr, num_delays(3, length), shared=shared)
    fast = time_delay_aggregation(values, delays, weights)
    slow = time_delay_aggregation_reference(values, delays, weights)
    assert_close(fast, slow)
    g = torch.randn_like(fast)
    grads_fast = torch.autograd.grad(fast, (values, corr), g, retain_graph=True)  # the weights' graph is shared
    for mine, ref in zip(grads_fast, torch.autograd.grad(slow, (values, corr), g), strict=True):
        assert_close(mine, ref)


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize(("q_len", "kv_len"), [(40, 40), (40, 23), (23, 40), (1, 5)],
                         ids=["L40-S40", "L40-S23-padded", "L23-S40-cut", "L1-S5"])
def test_mechanism_fft_equals_reference(q_len: int, kv_len: int, training: bool) -> None:
    b, h, e = 3, 2, 4
    q = torch.randn(b, q_len, h, e, dtype=torch.float64, requires_grad=True)
    k = torch.randn(b, kv_len, h, e, dtype=torch.float64, requires_grad=True)
    v = torch.randn(b, kv_len, h, e, dtype=torch.float64, requires_grad=True)
    outs = {}
    for name in ("fft", "reference"):
        mech = AutoCorrelation(False, factor=3, output_attention=True, implementation=name).train(training)
        out, corr = mech(q, k, v)
        assert out.shape == (b, q_len, h, e) and corr.shape == (b, q_len, h, e)
        outs[name] = (out, torch.autograd.grad(out, (q, k, v), torch.ones_like(out)))
    assert_close(outs["fft"][0], outs["reference"][0])
    for mine, ref in zip(outs["fft"][1], outs["reference"][1], strict=True):
        assert_close(mine, ref)


def test_aggregation_recovers_the_period_of_a_periodic_signal() -> None:
    """q = k = v = a period-8 pattern over L = 64: R peaks, with equal height, at every multiple of 8,
    and rolling v by a multiple of the period leaves it unchanged, so the aggregation returns v itself."""
    length, period = 64, 8
    t = torch.arange(length, dtype=torch.float64)
    pattern = torch.sin(2 * math.pi * t / period) + 0.5 * torch.cos(4 * math.pi * t / period)
    x = pattern.view(1, length, 1, 1).expand(2, -1, 2, 3).contiguous()  # [B, L, H, E]
    corr = autocorrelation_fft(x, x)
    top_k = num_delays(1, length)  # ⌊ln 64⌋ = 4
    assert top_k == 4
    delays, weights = select_delays(corr, top_k, shared=False)
    for row in delays.tolist():
        assert len(set(row)) == top_k and all(d % period == 0 for d in row)
    assert_close(corr[..., 8], corr[..., 0])
    assert (corr[..., 1:8] < corr[..., :1] - 1.0).all()
    torch.testing.assert_close(weights, torch.full((2, 4), 0.25, dtype=torch.float64))
    out, _ = AutoCorrelation(False, factor=1).eval()(x, x, x)
    assert_close(out, x)


def test_aggregation_shifts_values_by_the_chosen_delay() -> None:
    """A single delay τ with weight 1 returns v rolled back by τ: out_t = v_{t+τ mod L}."""
    values = torch.arange(10, dtype=torch.float64).view(1, 1, 1, 10)
    out = time_delay_aggregation(values, torch.tensor([[3]]), torch.tensor([[1.0]], dtype=torch.float64))
    assert out.view(-1).tolist() == [3, 4, 5, 6, 7, 8, 9, 0, 1, 2]


def test_shared_delays_follow_the_batch_mean() -> None:
    corr = torch.zeros(2, 1, 1, 6)
    corr[0, ..., 2] = 5.0
    corr[1, ..., 4] = 1.0
    per_sample, _ = select_delays(corr, 1, shared=False)
    shared, weights = select_delays(corr, 1, shared=True)
    assert per_sample.view(-1).tolist() == [2, 4]
    assert shared.view(-1).tolist() == [2, 2]
    assert torch.equal(weights, torch.ones(2, 1))


@pytest.mark.parametrize(("factor", "length", "expected"),
                         [(3, 96, 13), (3, 144, 14), (1, 1, 1), (3, 2, 2), (10, 5, 5)])
def test_number_of_delays(factor: int, length: int, expected: int) -> None:
    assert num_delays(factor, length) == expected


def test_layer_shapes_and_projection_names() -> None:
    layer = AutoCorrelationLayer(AutoCorrelation(False, 2), d_model=12, n_heads=3)
    out, corr = layer(torch.randn(2, 17, 12), torch.randn(2, 9, 12), torch.randn(2, 9, 12))
    assert out.shape == (2, 17, 12) and corr is None
    names = [name for name, _ in layer.named_parameters()]
    assert names == [f"{p}_projection.{w}" for p in ("query", "key", "value", "out") for w in ("weight", "bias")]


def test_unknown_implementation_is_rejected() -> None:
    with pytest.raises(ValueError, match="fft, reference"):
        AutoCorrelation(implementation="naive")
