"""utils/cpu_denormals.py: the flag's setting reaches torch's arithmetic, is undone on exit, and flushing
subnormals changes a TimesNet block's forward and gradients only below float32's resolution."""

from __future__ import annotations

import math

import pytest
import torch

import utils.cpu_denormals as cpu_denormals_module
from layers.Periods import fft_periods
from models.TimesNet import TimesBlock
from utils.cpu_denormals import cpu_denormals, flushing_share

TINY = torch.finfo(torch.float32).tiny  # smallest normal float32, 1.18e-38


@pytest.fixture
def one_thread():
    """Torch on the calling thread only: the pool's threads keep whatever MXCSR they started with."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_flush_and_keep_reach_torch_and_the_previous_setting_comes_back(one_thread):
    before = flushing_share(1)
    with cpu_denormals(flush=True):
        assert flushing_share() == 1.0
    assert flushing_share(1) == before
    with cpu_denormals(flush=True), cpu_denormals(flush=False):
        assert flushing_share() == 0.0
    assert flushing_share(1) == before


def test_threads_the_setting_does_not_reach_are_named_in_one_line(monkeypatch, caplog, one_thread):
    monkeypatch.setattr(cpu_denormals_module, "flushing_share", lambda elements=0: 0.5)
    with cpu_denormals(flush=True):
        pass
    assert len(caplog.records) == 1 and "only some of them flush" in caplog.text and "python run.py" in caplog.text


def _two_period_input(gap: float) -> torch.Tensor:
    """`[2, 24, 4]`: two sinusoids whose rfft amplitudes (summed over nothing: every channel equal) differ by
    `gap`, so the period softmax gives the weaker one the weight e^-gap."""
    steps, channels = 24, 4
    t = torch.arange(steps, dtype=torch.float32)
    weak = 1.0
    strong = weak + 2 * gap / steps  # an amplitude-a sinusoid has |rfft| = a·T/2 at its bin
    wave = strong * torch.sin(2 * math.pi * 2 * t / steps) + weak * torch.sin(2 * math.pi * 3 * t / steps)
    return wave[None, :, None].repeat(2, 1, channels)


def _forward_backward(block: TimesBlock, x: torch.Tensor, flush: bool):
    """The block's output, input gradient and parameter gradients, and the gradients reaching the output of its
    Inception pair, one tensor per period."""
    reaching: list[torch.Tensor] = []
    hook = block.conv.register_full_backward_hook(lambda module, grad_in, grad_out: reaching.append(grad_out[0]))
    try:
        with cpu_denormals(flush):
            x = x.clone().requires_grad_(True)
            out = block(x)
            out.square().sum().backward()
    finally:
        hook.remove()
    grads = [p.grad.clone() for p in block.parameters()]
    block.zero_grad()
    return (out.detach(), x.grad, *grads), reaching


def _subnormal(t: torch.Tensor) -> torch.Tensor:
    return (t != 0) & (t.abs() < TINY)


def test_flushing_changes_a_timesnet_block_only_below_float32_resolution(one_thread):
    torch.manual_seed(0)
    block = TimesBlock(total_len=24, d_model=4, d_ff=8, top_k=2, num_kernels=2)
    x = _two_period_input(gap=95.0)  # e^-95 ≈ 5.5e-42: subnormal when kept, zero when flushed
    with cpu_denormals(flush=False):
        _, period_weight = fft_periods(x, 2)
        assert _subnormal(torch.softmax(period_weight, dim=1)).any(), "the input must make a period weight subnormal"

    kept, kept_reaching = _forward_backward(block, x, flush=False)
    flushed, flushed_reaching = _forward_backward(block, x, flush=True)
    # The weak period's convolutions are differentiated on subnormal gradients when kept (the slow case) and on
    # zeros when flushed.
    assert any(_subnormal(g).any() for g in kept_reaching)
    assert not any(_subnormal(g).any() for g in flushed_reaching)
    for reference, fast in zip(kept, flushed, strict=True):
        torch.testing.assert_close(fast, reference, rtol=1e-6, atol=TINY)
