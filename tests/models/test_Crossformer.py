"""Crossformer: TSLib's initial weights for a seed, the Two-Stage Attention layer and segment merging
against per-series / per-segment loops in float64, the padding rules for --seq_len and --pred_len that
are not multiples of the segment length 12, and one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from layers.Crossformer_EncDec import SegMerging
from layers.SelfAttention_Family import TwoStageAttentionLayer
from models.Crossformer import SEG_LEN, Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, N = 2, 3


def configs_for(make_configs, **overrides):
    flags = dict(model="Crossformer", seq_len=30, label_len=6, pred_len=20, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, n_heads=2, d_ff=12, e_layers=2, factor=2, dropout=0.1)
    return make_configs(**{**flags, **overrides})


def _linear(prefix: str, fan_in: int, fan_out: int, bias: bool = True) -> list[tuple[str, torch.Tensor]]:
    layer = nn.Linear(fan_in, fan_out, bias=bias)
    return [(f"{prefix}.weight", layer.weight)] + ([(f"{prefix}.bias", layer.bias)] if bias else [])


def _norm(prefix: str, width: int) -> list[tuple[str, torch.Tensor]]:
    return [(f"{prefix}.weight", torch.ones(width)), (f"{prefix}.bias", torch.zeros(width))]


def _attention(prefix: str, d: int) -> list[tuple[str, torch.Tensor]]:
    return [p for name in ("query", "key", "value", "out") for p in _linear(f"{prefix}.{name}_projection", d, d)]


def _tsa(prefix: str, seg_num: int, factor: int, d: int, d_ff: int) -> list[tuple[str, torch.Tensor]]:
    """TSLib draws the three attentions, then the routers, then the MLPs; the routers register first."""
    attentions = [p for name in ("time_attention", "dim_sender", "dim_receiver")
                  for p in _attention(f"{prefix}.{name}", d)]
    router = [(f"{prefix}.router", torch.randn(seg_num, factor, d))]
    norms = [p for k in range(1, 5) for p in _norm(f"{prefix}.norm{k}", d)]
    mlps = [p for k in (1, 2) for p in _linear(f"{prefix}.MLP{k}.0", d, d_ff) + _linear(f"{prefix}.MLP{k}.2", d_ff, d)]
    return router + attentions + norms + mlps


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's construction: value embedding (Linear seg_len→D, no bias), encoder position table, pre-norm,
    scale blocks (merge Linear for l > 0, then one TSA layer over ⌈S/2^l⌉ segments), decoder table, and
    e_layers + 1 decoder layers (TSA, cross attention, norms, MLP D→D→D, Linear D→seg_len). Returned in
    registration order: the two tables (direct parameters of the model) first."""
    torch.manual_seed(seed)
    d, d_ff, factor = configs.d_model, configs.d_ff, configs.factor
    s_in = math.ceil(configs.seq_len / SEG_LEN)
    s_out = math.ceil(configs.pred_len / SEG_LEN)
    embedding = _linear("enc_value_embedding.value_embedding", SEG_LEN, d, bias=False)
    enc_pos = [("enc_pos_embedding", torch.randn(1, configs.enc_in, s_in, d))]
    body = embedding + _norm("pre_norm", d)
    for level in range(configs.e_layers):
        prefix = f"encoder.encode_blocks.{level}"
        if level > 0:
            body += _linear(f"{prefix}.merge_layer.linear_trans", 2 * d, d) + _norm(f"{prefix}.merge_layer.norm", 2 * d)
        body += _tsa(f"{prefix}.encode_layers.0", math.ceil(s_in / 2**level), factor, d, d_ff)
    dec_pos = [("dec_pos_embedding", torch.randn(1, configs.enc_in, s_out, d))]
    for layer in range(configs.e_layers + 1):
        prefix = f"decoder.decode_layers.{layer}"
        body += _tsa(f"{prefix}.self_attention", s_out, factor, d, d_ff)
        body += _attention(f"{prefix}.cross_attention", d)
        body += _norm(f"{prefix}.norm1", d) + _norm(f"{prefix}.norm2", d)
        body += _linear(f"{prefix}.MLP1.0", d, d) + _linear(f"{prefix}.MLP1.2", d, d)
        body += _linear(f"{prefix}.linear_pred", d, SEG_LEN)
    return [tensor for _, tensor in enc_pos + dec_pos + body]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs, e_layers=3)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def attention_reference(layer: nn.Module, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """One sequence, head by head, softmax written out: queries `[L, D]`, keys = values `[S, D]` → `[L, D]`."""
    h = layer.n_heads
    q = queries @ layer.query_projection.weight.T + layer.query_projection.bias
    k = keys @ layer.key_projection.weight.T + layer.key_projection.bias
    v = keys @ layer.value_projection.weight.T + layer.value_projection.bias
    e = q.shape[-1] // h
    heads = []
    for i in range(h):
        part = slice(i * e, (i + 1) * e)
        scores = q[:, part] @ k[:, part].T / math.sqrt(e)
        weights = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        heads.append((weights / weights.sum(dim=-1, keepdim=True)) @ v[:, part])
    return torch.cat(heads, dim=-1) @ layer.out_projection.weight.T + layer.out_projection.bias


def tsa_reference(layer: TwoStageAttentionLayer, x: torch.Tensor) -> torch.Tensor:
    """Crossformer eq. 3-4 by loops: every (sample, variate) series over time, then every (sample,
    segment) across the variates through that segment's routers. x `[B, N, S, D]`."""
    b, n, s, _ = x.shape
    y = torch.empty_like(x)
    for i in range(b):
        for d in range(n):
            z = x[i, d]
            z = layer.norm1(z + attention_reference(layer.time_attention, z, z))
            y[i, d] = layer.norm2(z + layer.MLP1(z))
    out = torch.empty_like(x)
    for i in range(b):
        for t in range(s):
            z = y[i, :, t]  # [N, D]
            buffer = attention_reference(layer.dim_sender, layer.router[t], z)  # [c, D]
            z = layer.norm3(z + attention_reference(layer.dim_receiver, z, buffer))
            out[i, :, t] = layer.norm4(z + layer.MLP2(z))
    return out


@pytest.mark.parametrize(("n", "s", "factor"), [(1, 1, 1), (3, 5, 2), (4, 2, 3)], ids=["N1-S1-c1", "N3-S5-c2", "N4-S2-c3"])
def test_two_stage_attention_matches_the_loops(n, s, factor):
    layer = TwoStageAttentionLayer(None, s, factor, 8, 2, 12, dropout=0.0).double().eval()
    with torch.no_grad():
        for norm in (layer.norm1, layer.norm2, layer.norm3, layer.norm4):
            norm.weight.normal_()
            norm.bias.normal_()
    x = torch.randn(B, n, s, 8, dtype=torch.float64, requires_grad=True)
    ours = layer(x)
    ref = tsa_reference(layer, x)
    torch.testing.assert_close(ours, ref)
    grad_ours, = torch.autograd.grad(ours.square().sum(), x)
    grad_ref, = torch.autograd.grad(ref.square().sum(), x)
    torch.testing.assert_close(grad_ours, grad_ref)


@pytest.mark.parametrize("s", [1, 4, 5, 7])
def test_segment_merging_matches_the_loop(s):
    """Output segment i = Linear(LayerNorm(segments 2i, 2i+1 concatenated)); an odd S repeats the last."""
    merge = SegMerging(4, 2).double()
    x = torch.randn(B, N, s, 4, dtype=torch.float64)
    out = merge(x)
    assert out.shape == (B, N, math.ceil(s / 2), 4)
    for i in range(math.ceil(s / 2)):
        pair = torch.cat([x[:, :, 2 * i], x[:, :, min(2 * i + 1, s - 1)]], dim=-1)
        torch.testing.assert_close(out[:, :, i], merge.linear_trans(merge.norm(pair)))


def test_decoder_sums_the_layer_forecasts_step_by_step(make_configs):
    """Forecast step s·seg_len + t of variate n = Σ_l linear_pred_l(decoder state l)[n, s, t], layer l
    cross-attending to encoder output l (the embedding for l = 0)."""
    model = Model(configs_for(make_configs)).double().eval()
    d = model.pre_norm.normalized_shape[0]
    x = torch.randn(B, N, model.in_seg_num, d, dtype=torch.float64)
    enc_outputs, _ = model.encoder(x)
    assert [e.shape[2] for e in enc_outputs] == [3, 3, 2]
    state = model.dec_pos_embedding.repeat(B, 1, 1, 1)
    with torch.no_grad():
        out = model.decoder(state, enc_outputs)
        expected = torch.zeros(B, 2 * SEG_LEN, N, dtype=torch.float64)
        for layer, enc in zip(model.decoder.decode_layers, enc_outputs, strict=True):
            state, _ = layer(state, enc)
            step = layer.linear_pred(state)  # [B, N, S_out, seg_len]
            for n in range(N):
                for seg in range(2):
                    expected[:, seg * SEG_LEN:(seg + 1) * SEG_LEN, n] += step[:, n, seg]
    torch.testing.assert_close(out, expected)


def test_window_is_replicate_padded_to_whole_segments(make_configs):
    """--seq_len 30 pads to 36 by repeating the last step: the same weights on a 36-step window that
    ends in 6 copies of the last value give the same forecast."""
    short = Model(configs_for(make_configs, seq_len=30)).double().eval()
    full = Model(configs_for(make_configs, seq_len=36)).double().eval()
    full.load_state_dict(short.state_dict())
    x = torch.randn(B, 30, N, dtype=torch.float64)
    padded = torch.cat([x, x[:, -1:].expand(B, 6, N)], dim=1)
    with torch.no_grad():
        torch.testing.assert_close(short(x), full(padded))


def test_horizon_is_the_last_pred_len_of_whole_segments(make_configs):
    """--pred_len 20 decodes 2 segments (24 steps) and returns the last 20, as TSLib does."""
    short = Model(configs_for(make_configs, pred_len=20)).double().eval()
    full = Model(configs_for(make_configs, pred_len=24)).double().eval()
    full.load_state_dict(short.state_dict())
    x = torch.randn(B, 30, N, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(short(x), full(x)[:, -20:])


def test_ms_returns_the_last_variates(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    ms = Model(configs_for(make_configs, c_out=1)).double().eval()
    ms.load_state_dict(model.state_dict())
    x = torch.randn(B, 30, N, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(ms(x), model(x)[..., -1:])


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="segmentation"), "--task_name"), (dict(d_model=10, n_heads=4), "--d_model"),
     (dict(e_layers=0), "--e_layers"), (dict(factor=0), "--factor"), (dict(d_ff=0), "--d_ff"),
     (dict(c_out=4), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "heads", "e_layers", "factor", "d_ff", "c_out", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag) as error:
        Model(configs_for(make_configs, **overrides))
    assert "\n" not in str(error.value)


# The window tasks (TSLib's imputation, anomaly-detection and classification heads).
def window_model(make_configs, task: str, num_class: int = 4, **overrides) -> Model:
    configs = configs_for(make_configs, **{"task_name": task, "label_len": 0, "pred_len": 0, "dropout": 0.0,
                                           **overrides})
    configs.num_class = num_class
    return Model(configs).eval()


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_have_tslib_shapes(make_configs, task):
    # seq_len 30 → 3 segments; e_layers 2 → the last scale has ⌈3 / 2⌉ = 2 segments.
    model = window_model(make_configs, task)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    if task == "classification":
        assert shapes["projection.weight"] == (4, N * 8 * 2)
    else:
        assert shapes["head.linear.weight"] == (30, 8 * 2)
    # TSLib's decoder is built with no output segments: its routers and position table are empty.
    assert shapes["dec_pos_embedding"] == (1, N, 0, 8)
    assert all(shapes[f"decoder.decode_layers.{i}.self_attention.router"] == (0, 2, 8) for i in range(3))


def test_imputation_shape_and_pred_len_does_not_change_it(make_configs):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 30, N, generator=g)
    mask = (torch.rand(2, 30, N, generator=g) > 0.3).float()
    outputs = []
    for pred_len in (0, 96):
        torch.manual_seed(0)
        outputs.append(window_model(make_configs, "imputation", pred_len=pred_len)(x * mask, None, None, None, mask))
    assert outputs[0].shape == (2, 30, N)
    torch.testing.assert_close(outputs[0], outputs[1])


def test_reconstruction_flattens_the_last_scale_feature_major(make_configs):
    model = window_model(make_configs, "anomaly_detection")
    x = torch.randn(2, 30, N)
    last = model.encode(x)[-1]  # [B, N, 2, D]
    features = last.transpose(2, 3).reshape(2, N, -1)  # d-major: feature d of segment s at d·2 + s
    expected = (features @ model.head.linear.weight.T + model.head.linear.bias).transpose(1, 2)
    torch.testing.assert_close(model(x, None, None, None), expected)
    torch.testing.assert_close(model(x, None, None, None), model.anomaly_detection(x))


def test_classification_ignores_the_padding_mask_as_tslib(make_configs):
    """Segments mix 12 steps, so TSLib's Crossformer does not read the mask: the logits are the same."""
    model = window_model(make_configs, "classification")
    x = torch.randn(2, 30, N)
    padding = torch.ones(2, 30)
    padding[:, 20:] = 0
    logits = model(x, padding, None, None)
    assert logits.shape == (2, 4)
    torch.testing.assert_close(logits, model(x, torch.ones(2, 30), None, None))
    features = model.encode(x)[-1].transpose(2, 3).reshape(2, -1)
    torch.testing.assert_close(logits, model.projection(features))
