"""Reformer: TSLib's initial weights for a seed, the ReformerLayer's padding to a multiple of 2·bucket_size
(masked as keys), LSH attention against a direct shared-QK softmax attention where every key is in reach,
reproducible evaluation, the sequence the model encodes, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.SelfAttention_Family import ReformerLayer
from models.Reformer import Model
from tests.models.test_Transformer import (
    check_anomaly_head,
    check_classification_head,
    check_imputation_head,
    window_configs,
)
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N, MARKS = 2, 10, 3, 3, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="Reformer", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=8,
                 n_heads=2, d_ff=16, e_layers=2, dropout=0.0, embed="timeF", freq="h", activation="gelu")
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's Reformer initialisation: the DataEmbedding (token Conv1d re-drawn Kaiming-normal; timeF
    Linear), per layer LSHSelfAttention's toqk, tov (no bias) and to_out, the FFN Conv1d d→d_ff→d, then the
    projection. LayerNorms draw nothing."""
    torch.manual_seed(seed)
    d = configs.d_model
    token = nn.Conv1d(configs.enc_in, d, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    weights = [token.weight, nn.Linear(MARKS, d, bias=False).weight]
    for _ in range(configs.e_layers):
        toqk, tov, to_out = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, d)
        conv1, conv2 = nn.Conv1d(d, configs.d_ff, 1), nn.Conv1d(configs.d_ff, d, 1)
        weights += [toqk.weight, tov.weight, to_out.weight, to_out.bias, conv1.weight, conv1.bias, conv2.weight,
                    conv2.bias, torch.ones(d), torch.zeros(d), torch.ones(d), torch.zeros(d)]
    projection = nn.Linear(d, configs.c_out)
    return weights + [torch.ones(d), torch.zeros(d), projection.weight, projection.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs, e_layers=3)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


@pytest.mark.parametrize(("length", "padded"), [(1, 8), (8, 8), (13, 16), (192, 192), (193, 200)])
def test_padded_length_is_the_next_multiple_of_twice_the_bucket(length, padded):
    assert ReformerLayer(None, 8, 2, bucket_size=4).padded_length(length) == padded


def test_sequence_is_zero_padded_and_the_padding_masked(monkeypatch):
    """T = 13 reaches LSHSelfAttention as 16 steps: 3 zero rows at the end, masked as keys; the output is
    cut back to 13 steps."""
    layer = ReformerLayer(None, 8, 2, bucket_size=4, n_hashes=2)
    seen = {}
    inner = layer.attn.forward

    def spy(x, **kwargs):
        seen.update(x=x, mask=kwargs["input_mask"])
        return inner(x, **kwargs)

    monkeypatch.setattr(layer.attn, "forward", spy)
    x = torch.randn(B, 13, 8)
    out, attn = layer(x, x, x, None)
    assert out.shape == (B, 13, 8) and attn is None
    assert seen["x"].shape == (B, 16, 8)
    assert torch.equal(seen["x"][:, :13], x) and (seen["x"][:, 13:] == 0).all()
    assert seen["mask"].tolist() == [[True] * 13 + [False] * 3] * B
    layer(torch.randn(B, 16, 8), None, None, None)
    assert seen["x"].shape == (B, 16, 8) and seen["mask"] is None


def shared_qk_attention(layer: ReformerLayer, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Direct softmax attention with Reformer's shared query/key: keys are the unit-normalised queries,
    scale 1/√E, a query's own position at the logit −5e4 (attended only when nothing else is), hidden
    keys where `keep` is False. x `[B, T, D]` → `[B, T, D]`."""
    attn = layer.attn
    b, t, _ = x.shape
    qk = attn.toqk(x).view(b, t, attn.heads, -1).transpose(1, 2)  # [B, h, T, E]
    v = attn.tov(x).view(b, t, attn.heads, -1).transpose(1, 2)  # [B, h, T, E]
    scores = qk @ F.normalize(qk, dim=-1).transpose(-1, -2) * qk.shape[-1] ** -0.5  # [B, h, T, T]
    scores = scores.masked_fill(~keep, float("-inf"))
    scores = scores.masked_fill(torch.eye(t, dtype=torch.bool), -5e4)
    out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, -1)  # [B, T, D]
    return attn.to_out(out)


def test_lsh_attention_equals_direct_attention_when_every_key_is_in_reach():
    """One hashing round over 2·bucket_size steps: two buckets, and each chunk sees itself and the other,
    so LSH attention is exact shared-QK attention over the real (unpadded) steps."""
    layer = ReformerLayer(None, 8, 2, bucket_size=4, n_hashes=1).double().eval()
    x = torch.randn(B, 5, 8, dtype=torch.float64)
    padded = torch.cat([x, x.new_zeros(B, 3, 8)], dim=1)
    keep = torch.arange(8) < 5
    with torch.no_grad():
        out, _ = layer(x, x, x, None)
        expected = shared_qk_attention(layer, padded, keep)[:, :5]
        tslib_unmasked = shared_qk_attention(layer, padded, torch.ones(8, dtype=torch.bool))[:, :5]
    assert torch.allclose(out, expected, rtol=1e-10, atol=1e-10)
    # TSLib's unmasked zero padding takes attention weight: a different output.
    assert not torch.allclose(out, tslib_unmasked, rtol=1e-3, atol=1e-3)


def test_eval_is_reproducible_and_training_draws_from_the_global_stream(make_configs):
    model = Model(configs_for(make_configs, seq_len=21, pred_len=11))  # 32 steps: LSH with 8 buckets
    x = torch.randn(B, 21, N)
    dec = torch.cat([x[:, -4:], torch.zeros(B, 11, N)], dim=1)
    model.eval()
    torch.manual_seed(5)
    with torch.no_grad():
        first = model(x, None, dec, None)
        after_eval = torch.rand(3)
        second = model(x, None, dec, None)
    torch.manual_seed(5)
    assert torch.equal(first, second) and torch.equal(after_eval, torch.rand(3))
    model.train()  # dropout 0: only the hashing is random
    outs = [model(x, None, dec, None).detach() for _ in range(2)]
    assert not torch.equal(outs[0], outs[1])
    torch.manual_seed(7)
    replay = model(x, None, dec, None).detach()
    torch.manual_seed(7)
    assert torch.equal(replay, model(x, None, dec, None).detach())


def test_encodes_the_window_then_the_horizon_placeholders(make_configs):
    """The encoded sequence is x_enc followed by the last pred_len steps of x_dec (and their marks); the
    label part of x_dec is not read."""
    model = Model(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    dec = torch.randn(B, 4 + H, N, dtype=torch.float64)
    x_mark = torch.rand(B, L, MARKS, dtype=torch.float64)
    y_mark = torch.rand(B, 4 + H, MARKS, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, x_mark, dec, y_mark)
        z, _ = model.encoder(model.enc_embedding(torch.cat([x, dec[:, -H:]], 1), torch.cat([x_mark, y_mark[:, -H:]], 1)))
        assert torch.allclose(out, model.projection(z)[:, -H:], rtol=1e-10, atol=1e-10)
        label_changed = dec.clone()
        label_changed[:, :4] += 1.0
        assert torch.equal(model(x, x_mark, label_changed, y_mark), out)
        horizon_changed = dec.clone()
        horizon_changed[:, -1] += 1.0
        assert not torch.allclose(model(x, x_mark, horizon_changed, y_mark), out)


def test_short_term_forecast_is_instance_normalised(make_configs):
    """short_term_forecast normalises the window (long-term does not): with zero placeholders,
    f(3x + 5) = 3 f(x) + 5."""
    x = torch.randn(B, L, N, dtype=torch.float64)
    dec = torch.zeros(B, 4 + H, N, dtype=torch.float64)
    for task, equivariant in (("short_term_forecast", True), ("long_term_forecast", False)):
        model = Model(configs_for(make_configs, task_name=task)).double().eval()
        with torch.no_grad():
            moved, base = model(3 * x + 5, None, dec, None), model(x, None, dec, None)
        assert torch.allclose(moved, 3 * base + 5, rtol=1e-4, atol=1e-4) == equivariant


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="zero_shot_forecast"), "--task_name"), (dict(d_model=9), "--d_model"), (dict(dec_in=N + 1), "--dec_in"),
     (dict(activation="swish"), "--activation"), (dict(embed="onehot"), "--embed"), (dict(e_layers=0), "--e_layers"),
     (dict(task_name="short_term_forecast", c_out=N + 1), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "d_model", "dec_in", "activation", "embed", "e_layers", "c_out-short-term", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_encode_the_window_alone(make_configs, task):
    """The window (L = 16, padded to 16 inside LSH) without placeholders or normalisation, as TSLib's."""
    check = {"imputation": check_imputation_head, "anomaly_detection": check_anomaly_head,
             "classification": check_classification_head}[task]
    net = check(make_configs, "Reformer", Model)
    assert [name for name, _ in net.named_children()] == (
        ["normalize", "enc_embedding", "encoder", "dropout", "projection"] if task == "classification"
        else ["normalize", "enc_embedding", "encoder", "projection"])


def test_window_heads_pad_an_odd_window_for_lsh(make_configs):
    """seq_len 13 is not a multiple of 2 · bucket_size: each attention layer pads and cuts back."""
    configs = window_configs(make_configs, "Reformer", "anomaly_detection", seq_len=13)
    model = Model(configs).eval()
    assert model(torch.randn(2, 13, 3), None, None, None).shape == (2, 13, 3)
