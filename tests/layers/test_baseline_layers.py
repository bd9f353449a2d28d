"""Shared baseline layers against slow, obviously-correct references (float64 where it matters)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from numerics import assert_close

from layers.Autoformer_EncDec import DFT_series_decomp, moving_avg, series_decomp
from layers.config_checks import check_heads, check_positive
from layers.Conv_Blocks import Inception_Block_V1, inception_reference
from layers.Embed import (
    DataEmbedding,
    DataEmbedding_inverted,
    PatchEmbedding,
    PositionalEmbedding,
    TemporalEmbedding,
    TimeFeatureEmbedding,
    TokenEmbedding,
)
from layers.SelfAttention_Family import AttentionLayer, FullAttention, triangular_causal_mask
from layers.StandardNorm import Normalize
from layers.Transformer_EncDec import EncoderLayer


@pytest.mark.parametrize("subtract_last", [False, True], ids=["mean", "last"])
@pytest.mark.parametrize("affine", [False, True], ids=["plain", "affine"])
def test_revin_round_trip(affine: bool, subtract_last: bool) -> None:
    x = 4.0 * torch.randn(3, 37, 5, dtype=torch.float64) + 2.0
    norm = Normalize(5, affine=affine, subtract_last=subtract_last).double()
    if affine:
        with torch.no_grad():
            norm.affine_weight.uniform_(0.5, 2.0)
            norm.affine_bias.uniform_(-1.0, 1.0)
    z = norm(x, "norm")
    # Affine denorm divides by γ + eps² (RevIN's guard against γ = 0), a relative shift of ~1e-10.
    tol = 1e-8 if affine else 1e-12
    assert_close(norm(z, "denorm"), x, atol=tol, rtol=tol)
    # The target of features MS is the last variate: a 1-channel output uses the last channel's stats.
    assert_close(norm(z[..., -1:], "denorm"), x[..., -1:], atol=tol, rtol=tol)


def test_revin_statistics() -> None:
    x = 3.0 * torch.randn(2, 50, 4, dtype=torch.float64) - 1.0
    z = Normalize(4)(x, "norm")
    expected = (x - x.mean(1, keepdim=True)) / torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
    assert_close(z, expected)
    z_last = Normalize(4, subtract_last=True)(x, "norm")
    assert (z_last[:, -1] == 0).all()


def test_revin_non_norm_is_identity_and_order_is_checked() -> None:
    x = torch.randn(2, 10, 3)
    norm = Normalize(3, non_norm=True)
    assert torch.equal(norm(norm(x, "norm"), "denorm"), x)
    with pytest.raises(RuntimeError, match="norm"):
        Normalize(3)(x, "denorm")


def slow_moving_average(x: torch.Tensor, k: int) -> torch.Tensor:
    """Loop reference: mean of x over [t − ⌊(k−1)/2⌋, t + k − 1 − ⌊(k−1)/2⌋], indices clamped to the edges."""
    length = x.shape[1]
    front = (k - 1) // 2
    out = torch.empty_like(x)
    for t in range(length):
        idx = [min(max(t + j, 0), length - 1) for j in range(-front, k - front)]
        out[:, t] = x[:, idx].mean(dim=1)
    return out


@pytest.mark.parametrize(("length", "k"), [(96, 25), (7, 25), (33, 4), (1, 3), (10, 1)],
                         ids=["L96-k25", "L7-k25", "L33-k4", "L1-k3", "L10-k1"])
def test_moving_average_matches_edge_replicated_reference(length: int, k: int) -> None:
    x = torch.randn(2, length, 3, dtype=torch.float64)
    assert_close(moving_avg(k)(x), slow_moving_average(x, k))
    seasonal, trend = series_decomp(k)(x)
    assert_close(trend, slow_moving_average(x, k))
    assert_close(seasonal + trend, x)


def test_causal_mask() -> None:
    mask = triangular_causal_mask(4, 4)
    expected = torch.tensor([[j > i for j in range(4)] for i in range(4)])
    assert mask.shape == (1, 1, 4, 4)
    assert torch.equal(mask[0, 0], expected)


def test_causal_attention_ignores_the_future() -> None:
    q, k, v = (torch.randn(2, 9, 2, 4, dtype=torch.float64) for _ in range(3))
    attention = FullAttention(mask_flag=True, attention_dropout=0.0)
    base, _ = attention(q, k, v, None)
    k2, v2 = k.clone(), v.clone()
    k2[:, 5:] = torch.randn_like(k2[:, 5:])
    v2[:, 5:] = torch.randn_like(v2[:, 5:])
    edited, _ = attention(q, k2, v2, None)
    assert_close(edited[:, :5], base[:, :5])
    assert not torch.allclose(edited[:, 5:], base[:, 5:])


def manual_multi_head(layer: AttentionLayer, x: torch.Tensor, memory: torch.Tensor, causal: bool) -> torch.Tensor:
    """Per-head loop: softmax(q kᵀ / √E (+ causal −∞)) v, heads concatenated, output projection."""
    heads = layer.n_heads
    q = layer.query_projection(x)
    k = layer.key_projection(memory)
    v = layer.value_projection(memory)
    e = q.shape[-1] // heads
    outs = []
    for h in range(heads):
        sl = slice(h * e, (h + 1) * e)
        scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(e)  # [B, L, S]
        if causal:
            scores = scores + torch.full_like(scores, float("-inf")).triu(1)
        outs.append(torch.softmax(scores, dim=-1) @ v[..., sl])
    return layer.out_projection(torch.cat(outs, dim=-1))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_layer_matches_manual_softmax(causal: bool) -> None:
    layer = AttentionLayer(FullAttention(causal, attention_dropout=0.0, output_attention=True), 12, 3).double()
    x = torch.randn(2, 7, 12, dtype=torch.float64, requires_grad=True)
    memory = x if causal else torch.randn(2, 5, 12, dtype=torch.float64)
    out, weights = layer(x, memory, memory, None)
    expected = manual_multi_head(layer, x, memory, causal)
    assert_close(out, expected)
    assert weights.shape == (2, 3, 7, memory.shape[1])
    assert_close(weights.sum(-1), torch.ones(2, 3, 7, dtype=torch.float64))
    grad_out = torch.randn_like(out)
    (g_fast,) = torch.autograd.grad(out, x, grad_out)
    (g_ref,) = torch.autograd.grad(expected, x, grad_out)
    assert_close(g_fast, g_ref)


def test_encoder_layer_is_post_norm() -> None:
    attention = AttentionLayer(FullAttention(False, attention_dropout=0.0), 8, 2)
    layer = EncoderLayer(attention, 8, 16, dropout=0.0, activation="gelu").double().eval()
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    h = layer.norm1(x + attention(x, x, x, None)[0])
    ffn = F.linear(F.gelu(F.linear(h, layer.conv1.weight[..., 0], layer.conv1.bias)),
                   layer.conv2.weight[..., 0], layer.conv2.bias)
    assert_close(layer(x)[0], layer.norm2(h + ffn))


@pytest.mark.parametrize("d_model", [16, 7], ids=["D16", "D7-odd"])
def test_positional_embedding_values(d_model: int) -> None:
    pe = PositionalEmbedding(d_model)(torch.zeros(1, 50, 3))[0].double()  # [50, D]
    assert pe.shape == (50, d_model)
    for p in (0, 1, 17, 49):
        for i in range(d_model):
            angle = p / 10000 ** ((i - i % 2) / d_model)
            expected = math.sin(angle) if i % 2 == 0 else math.cos(angle)
            assert abs(pe[p, i].item() - expected) < 1e-5


def test_token_embedding_is_a_circular_bias_free_convolution() -> None:
    emb = TokenEmbedding(3, 8).double()
    assert emb.tokenConv.bias is None
    x = torch.randn(2, 10, 3, dtype=torch.float64)
    padded = torch.cat([x[:, -1:], x, x[:, :1]], dim=1).transpose(1, 2)  # wrap one step each side
    expected = F.conv1d(padded, emb.tokenConv.weight).transpose(1, 2)
    assert_close(emb(x), expected)


@pytest.mark.parametrize(("freq", "width"), [("h", 4), ("t", 5), ("15min", 5), ("s", 6), ("d", 3), ("w", 2), ("m", 1)])
def test_time_feature_embedding_width(freq: str, width: int) -> None:
    emb = TimeFeatureEmbedding(8, freq=freq)
    assert emb.embed.in_features == width and emb.embed.bias is None


def test_temporal_embedding_tables() -> None:
    marks = torch.tensor([[[12, 31, 6, 23, 3], [1, 1, 0, 0, 0]]], dtype=torch.float32)  # [1, 2, 5]
    fixed = TemporalEmbedding(8, "fixed", "t")
    assert not any(p.requires_grad for p in fixed.parameters())
    expected = sum(table.emb.weight[marks[0, :, col].long()] for table, col in [
        (fixed.month_embed, 0), (fixed.day_embed, 1), (fixed.weekday_embed, 2), (fixed.hour_embed, 3),
        (fixed.minute_embed, 4)])
    assert_close(fixed(marks)[0], expected, atol=1e-6, rtol=1e-6)
    learned = TemporalEmbedding(8, "learned", "h")
    assert not hasattr(learned, "minute_embed")
    assert sum(p.numel() for p in learned.parameters() if p.requires_grad) == (13 + 32 + 7 + 24) * 8


def test_data_embedding_without_marks_drops_the_temporal_term() -> None:
    emb = DataEmbedding(3, 8, "timeF", "h", dropout=0.0)
    x, marks = torch.randn(2, 5, 3), torch.rand(2, 5, 4)
    assert_close(emb(x, None), emb.value_embedding(x) + emb.position_embedding(x), atol=1e-6, rtol=1e-6)
    assert_close(emb(x, marks) - emb(x, None), emb.temporal_embedding(marks), atol=1e-6, rtol=1e-6)


def test_inverted_embedding_tokens() -> None:
    emb = DataEmbedding_inverted(20, 8, dropout=0.0)
    x, marks = torch.randn(2, 20, 3), torch.rand(2, 20, 4)
    tokens = emb(x, marks)
    assert tokens.shape == (2, 7, 8)
    assert_close(tokens[:, 3:], emb.value_embedding(marks.transpose(1, 2)), atol=1e-6, rtol=1e-6)
    assert emb(x, None).shape == (2, 3, 8)


def test_patch_embedding_cuts_replicate_padded_patches() -> None:
    emb = PatchEmbedding(d_model=2, patch_len=16, stride=8, padding=8, dropout=0.0).double()
    with torch.no_grad():
        emb.value_embedding.weight.zero_()
        emb.value_embedding.weight[0, 0] = 1.0  # feature 0 = first step of the patch
        emb.value_embedding.weight[1, 15] = 1.0  # feature 1 = last step of the patch
    x = torch.arange(2 * 3 * 40, dtype=torch.float64).reshape(2, 3, 40)  # [B, N, L]
    tokens, n_vars = emb(x)
    assert n_vars == 3 and tokens.shape == (6, 5, 2)  # P = (40 + 8 − 16) // 8 + 1
    content = tokens - emb.position_embedding(tokens)
    padded = torch.cat([x, x[..., -1:].expand(-1, -1, 8)], dim=-1).reshape(6, 48)
    assert_close(content[..., 0], padded[:, 0:40:8])
    assert_close(content[..., 1], padded[:, 15:48:8])


def test_inception_block_is_the_mean_of_same_padded_convolutions() -> None:
    block = Inception_Block_V1(2, 3, num_kernels=3).double()
    assert [conv.kernel_size for conv in block.kernels] == [(1, 1), (3, 3), (5, 5)]
    assert all((conv.bias == 0).all() for conv in block.kernels)
    x = torch.randn(2, 2, 4, 6, dtype=torch.float64)
    expected = sum(F.conv2d(x, c.weight, c.bias, padding=i) for i, c in enumerate(block.kernels)) / 3
    assert_close(block(x), expected)


# Grids wider than the kernel's reach (5) and narrower ones, where the merged kernel is cropped.
@pytest.mark.parametrize("rows, cols", [(7, 9), (1, 12), (12, 1), (2, 3), (5, 6), (1, 1)])
def test_merged_inception_kernel_matches_branches_outputs_and_gradients(rows: int, cols: int) -> None:
    block = Inception_Block_V1(4, 5, num_kernels=6)
    for conv in block.kernels:
        torch.nn.init.normal_(conv.bias)
    x = torch.randn(3, 4, rows, cols, requires_grad=True)
    fast, slow = block(x), inception_reference(block, x)
    assert_close(fast, slow, rtol=1e-5, atol=1e-6)
    grads_fast = torch.autograd.grad(fast.square().sum(), [x, *block.parameters()])
    grads_slow = torch.autograd.grad(slow.square().sum(), [x, *block.parameters()])
    for a, b in zip(grads_fast, grads_slow, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_config_checks_name_the_flag(make_configs) -> None:
    with pytest.raises(ValueError, match=r"--d_model 30 is not divisible by --n_heads 4"):
        check_heads(make_configs(d_model=30, n_heads=4))
    with pytest.raises(ValueError, match=r"--e_layers -1 must be a positive integer"):
        check_positive(make_configs(e_layers=-1), "e_layers")


def test_data_embedding_without_position_is_value_plus_marks():
    from layers.Embed import DataEmbedding_wo_pos

    emb = DataEmbedding_wo_pos(7, 16, "timeF", "h", dropout=0.0)
    x, marks = torch.randn(2, 9, 7), torch.randn(2, 9, 4)
    expected = emb.value_embedding(x) + emb.temporal_embedding.embed(marks)
    torch.testing.assert_close(emb(x, marks), expected)
    torch.testing.assert_close(emb(x, None), emb.value_embedding(x))
    assert sum(p.numel() for p in emb.parameters()) == 7 * 16 * 3 + 4 * 16


def test_dft_decomposition_keeps_the_top_k_frequencies_per_series() -> None:
    """Per series, seasonal = the k strongest non-zero frequencies; trend = mean + everything weaker."""
    t = torch.arange(48, dtype=torch.float64)

    def wave(f: int, amp: float) -> torch.Tensor:
        return amp * torch.cos(2 * math.pi * f * t / 48 + 0.3 * f)

    # Series 0: strong 3, 5; weak 11. Series 1: strong 7, 2; weak 4. Both carry a mean the top-k never takes.
    strong = torch.stack([wave(3, 2.0) + wave(5, 1.5), wave(7, 3.0) + wave(2, 1.0)], dim=-1)  # [48, 2]
    weak = torch.stack([wave(11, 0.4), wave(4, 0.2)], dim=-1) + torch.tensor([9.0, -4.0], dtype=torch.float64)
    x = (strong + weak)[None]  # [1, 48, 2]
    seasonal, trend = DFT_series_decomp(top_k=2)(x)
    assert_close(seasonal[0], strong)
    assert_close(trend[0], weak)
    assert_close(seasonal + trend, x)


def test_dft_decomposition_short_series_keeps_every_non_zero_frequency() -> None:
    x = torch.randn(2, 5, 3, dtype=torch.float64)  # 2 non-zero rfft frequencies < top_k 5
    seasonal, trend = DFT_series_decomp(top_k=5)(x)
    assert_close(trend, x.mean(dim=1, keepdim=True).expand_as(x))
    assert_close(seasonal + trend, x)


def test_conv_layer_distils_to_half_length() -> None:
    from layers.Transformer_EncDec import ConvLayer

    layer = ConvLayer(6).double()
    with torch.no_grad():
        layer.norm.running_mean.uniform_(-1, 1)
        layer.norm.running_var.uniform_(0.5, 2)
    layer.eval()
    for length, expected_len in ((96, 49), (97, 50), (5, 4)):
        x = torch.randn(2, length, 6, dtype=torch.float64)
        padded = torch.cat([x[:, -2:], x, x[:, :2]], dim=1)  # circular padding 2
        y = F.conv1d(padded.transpose(1, 2), layer.downConv.weight, layer.downConv.bias)  # [B, D, L + 2]
        y = F.batch_norm(y, layer.norm.running_mean, layer.norm.running_var, layer.norm.weight, layer.norm.bias)
        y = F.max_pool1d(F.elu(y), 3, stride=2, padding=1).transpose(1, 2)
        out = layer(x)
        assert out.shape == (2, expected_len, 6)
        assert_close(out, y)


def test_encoder_distils_between_attention_layers() -> None:
    from layers.Transformer_EncDec import ConvLayer, Encoder

    def layer() -> EncoderLayer:
        return EncoderLayer(AttentionLayer(FullAttention(False, attention_dropout=0.0), 8, 2), 8, 16, dropout=0.0)

    seen = []
    encoder = Encoder([layer() for _ in range(3)], [ConvLayer(8) for _ in range(2)]).eval()
    for attn_layer in encoder.attn_layers:
        attn_layer.register_forward_hook(lambda _m, args, _out: seen.append(args[0].shape[1]))
    out, attns = encoder(torch.randn(2, 96, 8))
    assert seen == [96, 49, 26] and out.shape == (2, 26, 8) and len(attns) == 3
    with pytest.raises(ValueError, match="one fewer conv layer"):
        Encoder([layer() for _ in range(2)], [ConvLayer(8) for _ in range(2)])
