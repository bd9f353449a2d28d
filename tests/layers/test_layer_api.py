"""TSLib's layer API: constructor argument order and defaults, `tau`/`delta` routing through the
Transformer blocks, DSAttention against a direct formula, and one-line errors for bad arguments."""

from __future__ import annotations

import inspect
import math

import pytest
import torch
import torch.nn as nn
from numerics import assert_close

from layers.AutoCorrelation import AutoCorrelation, AutoCorrelationLayer
from layers.Embed import (
    DataEmbedding,
    DataEmbedding_cls,
    DataEmbedding_inverted,
    PatchEmbedding,
    TimeFeatureEmbedding,
    TokenEmbedding,
    TokenEmbedding_cls,
)
from layers.MambaBlock import Mamba_TimeVariant
from layers.SelfAttention_Family import AttentionLayer, DSAttention, FullAttention, ProbAttention
from layers.Transformer_EncDec import ConvLayer, Decoder, DecoderLayer, Encoder, EncoderLayer


def parameters(cls: type) -> list[tuple[str, object]]:
    """(name, default) of the constructor's positional-or-keyword parameters, in order."""
    return [(p.name, p.default) for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD]


EMPTY = inspect.Parameter.empty
ATTENTION = [("mask_flag", True), ("factor", 5), ("scale", None), ("attention_dropout", 0.1),
             ("output_attention", False)]


@pytest.mark.parametrize(("cls", "expected"), [
    (FullAttention, ATTENTION),
    (ProbAttention, ATTENTION),
    (DSAttention, ATTENTION),
    (AutoCorrelation, [("mask_flag", True), ("factor", 1), ("scale", None), ("attention_dropout", 0.1),
                       ("output_attention", False)]),
    (AttentionLayer, [("attention", EMPTY), ("d_model", EMPTY), ("n_heads", EMPTY), ("d_keys", None),
                      ("d_values", None)]),
    (AutoCorrelationLayer, [("correlation", EMPTY), ("d_model", EMPTY), ("n_heads", EMPTY), ("d_keys", None),
                            ("d_values", None)]),
    (EncoderLayer, [("attention", EMPTY), ("d_model", EMPTY), ("d_ff", None), ("dropout", 0.1),
                    ("activation", "relu")]),
    (Encoder, [("attn_layers", EMPTY), ("conv_layers", None), ("norm_layer", None)]),
    (DecoderLayer, [("self_attention", EMPTY), ("cross_attention", EMPTY), ("d_model", EMPTY), ("d_ff", None),
                    ("dropout", 0.1), ("activation", "relu")]),
    (Decoder, [("layers", EMPTY), ("norm_layer", None), ("projection", None)]),
    (DataEmbedding, [("c_in", EMPTY), ("d_model", EMPTY), ("embed_type", "fixed"), ("freq", "h"),
                     ("dropout", 0.1)]),
    (DataEmbedding_inverted, [("c_in", EMPTY), ("d_model", EMPTY), ("embed_type", "fixed"), ("freq", "h"),
                              ("dropout", 0.1)]),
    (TimeFeatureEmbedding, [("d_model", EMPTY), ("embed_type", "timeF"), ("freq", "h")]),
    (PatchEmbedding, [("d_model", EMPTY), ("patch_len", EMPTY), ("stride", EMPTY), ("padding", EMPTY),
                      ("dropout", EMPTY)]),
    (TokenEmbedding, [("c_in", EMPTY), ("d_model", EMPTY)]),
    (TokenEmbedding_cls, [("c_in", EMPTY), ("d_model", EMPTY), ("d_kernel", 3)]),
    (DataEmbedding_cls, [("c_in", EMPTY), ("d_model", EMPTY), ("embed_type", "fixed"), ("freq", "h"),
                         ("dropout", 0.1), ("d_kernel", 3), ("seq_len", 5000)]),
    (Mamba_TimeVariant, [("d_model", EMPTY), ("d_input", None), ("d_output", None), ("d_state", 16), ("d_conv", 4),
                         ("expand", 2), ("dt_rank", "auto"), ("dt_min", 0.001), ("dt_max", 0.1), ("dt_init", "random"),
                         ("dt_scale", 1.0), ("dt_init_floor", 1e-4), ("conv_bias", True), ("bias", False),
                         ("use_fast_path", False), ("layer_idx", None), ("device", None), ("dtype", None),
                         ("timevariant_dt", True), ("timevariant_B", True), ("timevariant_C", True), ("use_D", True)]),
], ids=lambda v: v.__name__ if isinstance(v, type) else "tslib")
def test_constructor_signature_is_tslibs(cls: type, expected: list) -> None:
    """TSLib's parameters first, in order, with TSLib's defaults; our additions only after, with defaults."""
    ours = parameters(cls)
    assert ours[: len(expected)] == expected
    assert all(default is not EMPTY for _, default in ours[len(expected):])


def test_ds_attention_matches_formula_and_reduces_to_full() -> None:
    q, k, v = torch.randn(2, 5, 2, 4, dtype=torch.float64), torch.randn(2, 7, 2, 4, dtype=torch.float64), \
        torch.randn(2, 7, 2, 3, dtype=torch.float64)
    tau, delta = torch.rand(2, 1, dtype=torch.float64) + 0.5, torch.randn(2, 7, dtype=torch.float64)
    attention = DSAttention(False, attention_dropout=0.0, output_attention=True)
    out, weights = attention(q, k, v, None, tau=tau, delta=delta)
    for b in range(2):
        for h in range(2):
            scores = (tau[b] * q[b, :, h] @ k[b, :, h].T + delta[b]) / math.sqrt(4)  # [L, S]
            expected = torch.softmax(scores, dim=-1)
            assert_close(weights[b, h], expected)
            assert_close(out[b, :, h], expected @ v[b, :, h])
    full = FullAttention(False, attention_dropout=0.0)(q, k, v, None)[0]
    assert_close(attention(q, k, v, None)[0], full)


class Recorder(nn.Module):
    """An identity 'attention' that records the tau/delta/attn_mask it was called with."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[object, object, object]] = []

    def forward(self, queries, keys, values, attn_mask, tau=None, delta=None):
        self.calls.append((attn_mask, tau, delta))
        return queries, None


def test_tau_and_delta_reach_the_attention_as_in_tslib() -> None:
    tau, delta = torch.ones(2, 1), torch.zeros(2, 6)
    recorders = [Recorder() for _ in range(3)]
    distilled = Encoder([EncoderLayer(r, 8, 8) for r in recorders], [ConvLayer(8), ConvLayer(8)]).eval()
    distilled(torch.randn(2, 6, 8), tau=tau, delta=delta)
    assert [call[1] is tau for r in recorders for call in r.calls] == [True] * 3
    assert [call[2] is delta for r in recorders for call in r.calls] == [True, False, False]

    self_attn, cross_attn = Recorder(), Recorder()
    decoder = Decoder([DecoderLayer(self_attn, cross_attn, 8, 8)]).eval()
    decoder(torch.randn(2, 4, 8), torch.randn(2, 6, 8), tau=tau, delta=delta)
    assert self_attn.calls[0][1:] == (tau, None)
    assert cross_attn.calls[0][1] is tau and cross_attn.calls[0][2] is delta


def test_attention_layer_parameter_names_are_tslibs() -> None:
    layer = EncoderLayer(AttentionLayer(FullAttention(False, 3), 8, 2), 8, 16)
    names = {name for name, _ in layer.named_parameters()}
    assert names == {f"attention.{p}_projection.{w}" for p in ("query", "key", "value", "out")
                     for w in ("weight", "bias")} | {f"{m}.{w}" for m in ("conv1", "conv2", "norm1", "norm2")
                                                     for w in ("weight", "bias")}
    assert [name for name, _ in TokenEmbedding(3, 8).named_parameters()] == ["tokenConv.weight"]


@pytest.mark.parametrize(("build", "message"), [
    (lambda: FullAttention(False, 3, attention_dropout=1.5), "attention_dropout 1.5"),
    (lambda: FullAttention(False, 3, scale=-1.0), "scale -1.0"),
    (lambda: ProbAttention(False, 0), "factor 0"),
    (lambda: EncoderLayer(FullAttention(), 8, activation="tanh"), "activation 'tanh'"),
    (lambda: DataEmbedding(3, 8, "hourly"), "embed_type 'hourly'"),
    (lambda: AttentionLayer(FullAttention(), 8, 0), "n_heads 0"),
], ids=["dropout", "scale", "prob-factor", "activation", "embed", "heads"])
def test_bad_arguments_raise_one_line_value_errors(build, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        build()
    assert "\n" not in str(info.value)


def test_full_attention_rejects_destationary_factors() -> None:
    q = torch.randn(1, 3, 1, 4)
    with pytest.raises(ValueError, match="DSAttention"):
        FullAttention(False)(q, q, q, None, tau=torch.ones(1, 1))


def test_tslib_checkpoint_with_positional_tables_loads_strictly() -> None:
    """TSLib saves `position_embedding.pe` (ours is not persistent): such a state dict still loads strictly."""
    from layers.Embed import DataEmbedding_wo_pos, PositionalEmbedding

    for embedding in (DataEmbedding(3, 8, "timeF"), DataEmbedding_wo_pos(3, 8, "timeF")):
        state = dict(embedding.state_dict())
        state["position_embedding.pe"] = PositionalEmbedding(8).pe.clone()
        assert embedding.load_state_dict(state, strict=True).unexpected_keys == []
        state["position_embedding.pe"] = torch.zeros_like(state["position_embedding.pe"])
        with pytest.raises(RuntimeError, match="positional table"):
            embedding.load_state_dict(state, strict=True)


def test_full_attention_takes_tslibs_mask_object() -> None:
    from utils.masking import TriangularCausalMask

    q, k, v = (torch.randn(2, 6, 2, 4, dtype=torch.float64) for _ in range(3))
    attention = FullAttention(True, attention_dropout=0.0)
    assert TriangularCausalMask(2, 6).mask.shape == (2, 1, 6, 6)
    assert_close(attention(q, k, v, TriangularCausalMask(2, 6))[0], attention(q, k, v, None)[0])
