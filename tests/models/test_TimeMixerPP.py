"""TimeMixer++: shapes, the FFT periods and the 1D→2D folding against loops, the dual-axis attention and
a whole MixerBlock against slow float64 references, the parameter count from the paper's blocks, and
one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch

from layers.TimeMixerPP_Blocks import (
    MixerBlock,
    TimeImageDecomposition,
    fold_to_image,
    top_k_periods,
    unfold_from_image,
)
from models.TimeMixerPP import Model

B, N, F = 2, 3, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="TimeMixerPP", seq_len=32, label_len=8, pred_len=12, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, d_ff=12, n_heads=2, e_layers=1, top_k=2, dropout=0.0, embed="timeF", freq="h",
                 down_sampling_layers=2, down_sampling_window=2, down_sampling_method="avg",
                 channel_independence=1, use_norm=1)
    return make_configs(**{**flags, **overrides})


@pytest.mark.parametrize(("features", "channels", "ci", "method", "marks"), [
    ("M", (3, 3), 1, "avg", True), ("M", (3, 3), 0, "conv", True), ("S", (1, 1), 1, "max", False),
    ("MS", (3, 1), 0, "avg", False), ("MS", (3, 1), 1, "conv", True)],
    ids=["M-ci1-avg", "M-ci0-conv", "S-ci1-max-nomarks", "MS-ci0-avg-nomarks", "MS-ci1-conv"])
def test_forecast_shape(make_configs, features, channels, ci, method, marks):
    enc_in, c_out = channels
    configs = configs_for(make_configs, features=features, enc_in=enc_in, dec_in=enc_in, c_out=c_out,
                          channel_independence=ci, down_sampling_method=method)
    model = Model(configs).eval()
    x = torch.randn(B, configs.seq_len, enc_in)
    x_mark = torch.rand(B, configs.seq_len, F) - 0.5 if marks else None
    out = model(x, x_mark, None, None)
    assert out.shape == (B, configs.pred_len, c_out)
    assert torch.isfinite(out).all()


def test_samples_do_not_mix_when_they_share_their_periods(make_configs):
    """Each sample's forecast depends on that sample only (the batch merely picks the periods)."""
    configs = configs_for(make_configs, enc_in=1, dec_in=1, c_out=1)
    model = Model(configs).eval()
    x = torch.randn(B, configs.seq_len, 1, dtype=torch.float64)
    model = model.double()
    # The periods are chosen on the batch, so compare against each sample fed on its own with the same
    # dominant frequencies: a pure sine of 4 cycles dominates both samples.
    t = torch.arange(configs.seq_len, dtype=torch.float64)
    x = x * 0.01 + torch.sin(2 * math.pi * 4 * t / configs.seq_len)[None, :, None]
    together = model(x, None, None, None)
    alone = torch.cat([model(x[i:i + 1], None, None, None) for i in range(B)])
    torch.testing.assert_close(together, alone)


def dft_amplitude(x: torch.Tensor) -> torch.Tensor:
    """|DFT| by the direct sum, float64: `[B, T, D]` → `[B, T // 2 + 1, D]`."""
    length = x.shape[1]
    out = torch.zeros(x.shape[0], length // 2 + 1, x.shape[2], dtype=torch.float64)
    for f in range(length // 2 + 1):
        angle = torch.tensor([2 * math.pi * f * t / length for t in range(length)], dtype=torch.float64)
        re = (x * torch.cos(angle)[None, :, None]).sum(1)
        im = (x * torch.sin(angle)[None, :, None]).sum(1)
        out[:, f] = torch.sqrt(re**2 + im**2)
    return out


@pytest.mark.parametrize(("coarse_len", "full_len", "top_k"), [(12, 96, 3), (7, 7, 3), (9, 36, 1)],
                         ids=["T12-of96-K3", "T7-K3", "T9-of36-K1"])
def test_periods_and_amplitudes_against_direct_dft(coarse_len, full_len, top_k):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(B, coarse_len, 5, generator=gen, dtype=torch.float64)
    periods, amplitudes = top_k_periods(x, top_k, full_len)
    amp = dft_amplitude(x).mean(-1)  # [B, T_M // 2 + 1]
    score = amp.mean(0)
    ranked = sorted(range(1, coarse_len // 2 + 1), key=lambda f: -score[f].item())[:top_k]
    assert periods == [math.ceil(full_len / f) for f in ranked]
    torch.testing.assert_close(amplitudes, amp[:, ranked])


@pytest.mark.parametrize(("length", "period"), [(24, 6), (24, 7), (5, 8), (1, 1), (97, 10)],
                         ids=["T24-p6", "T24-p7", "T5-p8", "T1-p1", "T97-p10"])
def test_folding_against_a_loop(length, period):
    x = torch.randn(B, length, 3)
    z = fold_to_image(x, period)
    cols = math.ceil(length / period)
    assert z.shape == (B, 3, period, cols)
    for i in range(period):
        for j in range(cols):
            t = j * period + i
            expected = x[:, t, :] if t < length else torch.zeros(B, 3)
            assert torch.equal(z[:, :, i, j], expected)
    assert torch.equal(unfold_from_image(z, length), x)


def slow_attention(layer, seq: torch.Tensor) -> torch.Tensor:
    """softmax(Q Kᵀ / √E) V per head, then the output projection, for one sequence `[S, D]` (float64)."""
    heads = layer.n_heads
    q = seq @ layer.query_projection.weight.T + layer.query_projection.bias
    k = seq @ layer.key_projection.weight.T + layer.key_projection.bias
    v = seq @ layer.value_projection.weight.T + layer.value_projection.bias
    e = q.shape[-1] // heads
    out = []
    for h in range(heads):
        sl = slice(h * e, (h + 1) * e)
        scores = q[:, sl] @ k[:, sl].T / math.sqrt(e)
        weights = torch.exp(scores - scores.max(-1, keepdim=True).values)
        out.append(weights / weights.sum(-1, keepdim=True) @ v[:, sl])
    return torch.cat(out, -1) @ layer.out_projection.weight.T + layer.out_projection.bias


def test_time_image_decomposition_against_per_column_and_per_row_loops():
    torch.manual_seed(1)
    tid = TimeImageDecomposition(d_model=8, n_heads=2, dropout=0.0).double().eval()
    z = torch.randn(B, 8, 5, 3, dtype=torch.float64)  # [B, D, p=5, c=3]
    season, trend = tid(z)
    for b in range(B):
        for j in range(3):  # column j: the 5 phases of period j
            ref = slow_attention(tid.column_attention, z[b, :, :, j].T)  # [p, D]
            torch.testing.assert_close(season[b, :, :, j], ref.T)
        for i in range(5):  # row i: phase i across the 3 periods
            ref = slow_attention(tid.row_attention, z[b, :, i, :].T)  # [c, D]
            torch.testing.assert_close(trend[b, :, i, :], ref.T)


def slow_mixer_block(block: MixerBlock, xs: list[torch.Tensor], top_k: int) -> list[torch.Tensor]:
    """The block's equations with explicit loops: direct DFT, index-by-index folding, per-scale mixing,
    softmax by exp / sum, residual and LayerNorm by its formula."""
    full_len = xs[0].shape[1]
    amp = dft_amplitude(xs[-1]).mean(-1)  # [B, T_M // 2 + 1]
    freqs = sorted(range(1, xs[-1].shape[1] // 2 + 1), key=lambda f: -amp.mean(0)[f].item())[:top_k]
    exp = torch.exp(amp[:, freqs])
    weights = exp / exp.sum(-1, keepdim=True)  # [B, K]
    mixed = [torch.zeros_like(x) for x in xs]
    for k, f in enumerate(freqs):
        p = math.ceil(full_len / f)
        seasons, trends = [], []
        for x in xs:
            cols = math.ceil(x.shape[1] / p)
            img = torch.zeros(x.shape[0], x.shape[2], p, cols, dtype=x.dtype)
            for t in range(x.shape[1]):
                img[:, :, t % p, t // p] = x[:, t, :]
            s, tr = block.decomposition(img)
            seasons.append(s)
            trends.append(tr)
        mcm = block.multi_scale_mixing
        for m in range(1, len(xs)):
            seasons[m] = seasons[m] + mcm.down_mixing[m - 1](seasons[m - 1])
        for m in range(len(xs) - 2, -1, -1):
            trends[m] = trends[m] + mcm.up_mixing[m](trends[m + 1], trends[m].shape[-1])
        for m, x in enumerate(xs):
            img = seasons[m] + trends[m]
            for t in range(x.shape[1]):
                mixed[m][:, t, :] += weights[:, k, None] * img[:, :, t % p, t // p]
    out = []
    ln = block.layer_norm
    for x, y in zip(xs, mixed, strict=True):
        h = x + y
        mean, var = h.mean(-1, keepdim=True), h.var(-1, unbiased=False, keepdim=True)
        out.append((h - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias)
    return out


@pytest.mark.parametrize("window", [2, 3], ids=["w2", "w3"])
def test_mixer_block_against_slow_reference(window):
    torch.manual_seed(2)
    lengths = [36 // window**m for m in range(3)] if window == 3 else [36, 18, 9]
    block = MixerBlock(lengths, d_model=4, d_ff=6, n_heads=2, top_k=2, window=window, dropout=0.0).double().eval()
    xs = [torch.randn(B, t, 4, dtype=torch.float64, requires_grad=True) for t in lengths]
    got, ref = block(xs), slow_mixer_block(block, xs, top_k=2)
    for mine, theirs in zip(got, ref, strict=True):
        torch.testing.assert_close(mine, theirs)
    # Gradients too, into the inputs (through the amplitude weights as well) and into the parameters.
    probes = [torch.randn_like(y) for y in got]
    wrt = [*xs, *block.parameters()]
    grads = torch.autograd.grad(sum((y * g).sum() for y, g in zip(got, probes, strict=True)), wrt)
    ref_grads = torch.autograd.grad(sum((y * g).sum() for y, g in zip(ref, probes, strict=True)), wrt)
    for mine, theirs in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(mine, theirs)


def paper_parameter_count(seq_len, pred_len, n, d, d_ff, layers, scales, window, conv_pool, ci) -> int:
    """Trainable parameters from the paper's blocks, counted by hand (timeF marks of freq h: 4 features)."""
    lengths = [seq_len // window**m for m in range(scales + 1)]
    t_m = lengths[-1]
    revin = 2 * n
    pool = 3 * n * n if conv_pool else 0  # Conv1d(N → N, 3), no bias
    channel_attention = 4 * (t_m * t_m + t_m)  # Q, K, V, out: T_M → T_M
    c_in = 1 if ci else n
    embedding = 3 * c_in * d + 4 * d  # token Conv1d(c_in → D, 3), no bias; timeF Linear(4 → D), no bias
    attention = 4 * (d * d + d)
    conv_pair = (d * d_ff * 3 * window + d_ff) + (d_ff * d * 9 + d)  # (3, w) strided, then 3 × 3
    block = 2 * attention + 2 * scales * conv_pair + 2 * d  # col/row attention, down + up mixing, LayerNorm
    heads = sum(length * pred_len + pred_len for length in lengths)
    projection = d * (1 if ci else n) + (1 if ci else n)
    return revin + pool + channel_attention + embedding + layers * block + heads + projection


def test_parameter_count_from_the_paper_blocks(make_configs):
    configs = configs_for(make_configs, seq_len=96, pred_len=96, enc_in=7, dec_in=7, c_out=7, d_model=16,
                          d_ff=32, n_heads=4, e_layers=2, top_k=3, down_sampling_layers=3,
                          down_sampling_method="conv")
    count = sum(p.numel() for p in Model(configs).parameters() if p.requires_grad)
    assert count == paper_parameter_count(96, 96, 7, 16, 32, 2, 3, 2, True, True) == 115_730
    configs.channel_independence, configs.down_sampling_method = 0, "avg"
    count = sum(p.numel() for p in Model(configs).parameters() if p.requires_grad)
    assert count == paper_parameter_count(96, 96, 7, 16, 32, 2, 3, 2, False, False)


@pytest.mark.parametrize(("overrides", "message"), [
    (dict(seq_len=30), r"--seq_len 30 is not divisible by --down_sampling_window 2 \*\* --down_sampling_layers 2"),
    (dict(top_k=5), r"--top_k 5 exceeds the 4 non-constant frequencies"),
    (dict(d_model=9), r"--d_model 9 is not divisible by --n_heads 2"),
    (dict(down_sampling_method=None), r"--down_sampling_method None is not supported"),
    (dict(channel_independence=2), r"--channel_independence 2 is not supported"),
    (dict(top_k=0), r"--top_k 0 must be a positive integer"),
    (dict(c_out=4), r"--c_out 4 exceeds --enc_in 3"),
    (dict(task_name="classification"), r"--task_name 'classification' is not supported"),
], ids=["seq_len", "top_k-large", "heads", "method", "ci", "top_k-zero", "c_out", "task"])
def test_one_line_errors_name_the_flag(make_configs, overrides, message):
    with pytest.raises(ValueError, match=message) as info:
        Model(configs_for(make_configs, **overrides))
    assert "\n" not in str(info.value)
