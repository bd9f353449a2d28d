"""Autoformer's encoder/decoder blocks: seasonal layer norm, progressive decomposition and the
decoder's trend accumulation, against direct recomputations (float64)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from numerics import assert_close

from layers.AutoCorrelation import AutoCorrelation, AutoCorrelationLayer
from layers.Autoformer_EncDec import Decoder, DecoderLayer, Encoder, EncoderLayer, my_Layernorm, series_decomp


def correlation(d_model: int = 8, n_heads: int = 2) -> AutoCorrelationLayer:
    return AutoCorrelationLayer(AutoCorrelation(False, factor=2, attention_dropout=0.0), d_model, n_heads)


def test_my_layernorm_is_layernorm_minus_its_time_mean() -> None:
    norm = my_Layernorm(6).double()
    with torch.no_grad():
        norm.layernorm.weight.uniform_(0.5, 2.0)
        norm.layernorm.bias.uniform_(-1.0, 1.0)
    x = torch.randn(2, 11, 6, dtype=torch.float64)
    ln = F.layer_norm(x, (6,), norm.layernorm.weight, norm.layernorm.bias)
    out = norm(x)
    assert_close(out, ln - ln.mean(dim=1, keepdim=True))
    assert_close(out.mean(dim=1), torch.zeros(2, 6, dtype=torch.float64), atol=1e-12)


def test_encoder_layer_is_progressive_decomposition() -> None:
    layer = EncoderLayer(correlation(), 8, 16, moving_avg=5, dropout=0.0, activation="gelu").double().eval()
    x = torch.randn(2, 20, 8, dtype=torch.float64)
    decomp = series_decomp(5)
    s, _ = decomp(x + layer.attention(x, x, x)[0])
    ffn = layer.conv2(F.gelu(layer.conv1(s.transpose(1, 2)))).transpose(1, 2)
    expected, _ = decomp(s + ffn)
    out, attn = layer(x)
    assert attn is None
    assert_close(out, expected)


def test_decoder_layer_sums_three_trends_and_projects_them() -> None:
    layer = DecoderLayer(correlation(), correlation(), 8, c_out=3, d_ff=16, moving_avg=4, dropout=0.0,
                         activation="relu").double().eval()
    x = torch.randn(2, 15, 8, dtype=torch.float64)
    cross = torch.randn(2, 9, 8, dtype=torch.float64)
    decomp = series_decomp(4)
    s1, t1 = decomp(x + layer.self_attention(x, x, x)[0])
    s2, t2 = decomp(s1 + layer.cross_attention(s1, cross, cross)[0])
    ffn = layer.conv2(F.relu(layer.conv1(s2.transpose(1, 2)))).transpose(1, 2)
    s3, t3 = decomp(s2 + ffn)
    # Circular kernel-3 projection of the summed trend, written out tap by tap.
    total = t1 + t2 + t3  # [B, L, D]
    w = layer.projection.weight  # [c_out, D, 3]
    taps = [torch.roll(total, 1, dims=1), total, torch.roll(total, -1, dims=1)]
    expected_trend = sum(tap @ w[:, :, j].T for j, tap in enumerate(taps))
    seasonal, trend = layer(x, cross)
    assert_close(seasonal, s3)
    assert_close(trend, expected_trend)
    assert trend.shape == (2, 15, 3)


def test_decoder_accumulates_trend_and_projects_seasonal() -> None:
    layers = [DecoderLayer(correlation(), correlation(), 8, 2, 16, moving_avg=3, dropout=0.0) for _ in range(2)]
    decoder = Decoder(layers, norm_layer=my_Layernorm(8), projection=torch.nn.Linear(8, 2)).double().eval()
    x = torch.randn(1, 12, 8, dtype=torch.float64)
    cross = torch.randn(1, 12, 8, dtype=torch.float64)
    trend0 = torch.randn(1, 12, 2, dtype=torch.float64)
    h, r1 = layers[0](x, cross)
    h, r2 = layers[1](h, cross)
    seasonal, trend = decoder(x, cross, trend=trend0)
    assert_close(trend, trend0 + r1 + r2)
    assert_close(seasonal, decoder.projection(decoder.norm(h)))


def test_encoder_applies_layers_then_norm() -> None:
    layers = [EncoderLayer(correlation(), 8, 16, moving_avg=3, dropout=0.0) for _ in range(2)]
    encoder = Encoder(layers, norm_layer=my_Layernorm(8)).double().eval()
    x = torch.randn(2, 10, 8, dtype=torch.float64)
    out, attns = encoder(x)
    assert_close(out, encoder.norm(layers[1](layers[0](x)[0])[0]))
    assert attns == [None, None]
