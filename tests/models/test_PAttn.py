"""PAttn: TSLib's construction order, the patching, the single attention layer written out, instance
normalisation and clear errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.Transformer_EncDec import EncoderLayer
from models.PAttn import Model, patch_count
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N = 3, 40, 12, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="PAttn", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=16,
                 n_heads=2, d_ff=32, e_layers=2)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's order: in_layer, one encoder layer (attention projections, conv1/conv2, norms), the
    encoder's LayerNorm, out_layer."""
    torch.manual_seed(seed)
    d = configs.d_model
    modules = [
        nn.Linear(16, d),
        EncoderLayer(AttentionLayer(FullAttention(False), d, configs.n_heads), d, configs.d_ff),
        nn.LayerNorm(d),
        nn.Linear(d * patch_count(configs.seq_len, 16, 8), configs.pred_len),
    ]
    return [p for m in modules for p in m.parameters()]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


@pytest.mark.parametrize(("seq_len", "patches"), [(96, 12), (40, 5), (8, 1), (97, 12), (104, 13)])
def test_patch_count(seq_len: int, patches: int):
    """J = ⌊(L − 16) / 8⌋ + 2 (replicate-padding 8 steps adds one patch)."""
    assert patch_count(seq_len, 16, 8) == patches


def test_e_layers_does_not_apply(make_configs):
    """One attention layer by definition, whatever --e_layers (TSLib's script passes 2)."""
    for e_layers in (1, 3):
        assert len(Model(configs_for(make_configs, e_layers=e_layers)).encoder.attn_layers) == 1


def test_forward_is_the_written_model(make_configs):
    """Eval-mode output equals RevIN → pad → patches → Linear → one encoder layer → LayerNorm →
    patch-major flatten → Linear → de-normalise, built by hand from the model's weights."""
    configs = configs_for(make_configs)
    model = Model(configs).double().eval()
    x = 2.0 + 3.0 * torch.randn(B, L, N, dtype=torch.float64).cumsum(dim=1)
    mean = x.mean(dim=1, keepdim=True)
    std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + 1e-5)
    series = ((x - mean) / std).transpose(1, 2)  # [B, N, L]
    series = torch.cat([series, series[:, :, -1:].expand(B, N, 8)], dim=2)  # replicate-pad 8 steps
    j = patch_count(L, 16, 8)
    patches = torch.stack([series[:, :, 8 * i: 8 * i + 16] for i in range(j)], dim=2)  # [B, N, J, 16]
    tokens = model.in_layer(patches).reshape(B * N, j, -1)
    layer = model.encoder.attn_layers[0]
    attn = layer.attention
    d_head = configs.d_model // configs.n_heads

    def heads(t: torch.Tensor) -> torch.Tensor:
        return t.reshape(B * N, j, configs.n_heads, d_head).transpose(1, 2)  # [BN, H, J, E]

    q, k, v = (heads(proj(tokens)) for proj in (attn.query_projection, attn.key_projection, attn.value_projection))
    weights = torch.softmax(q @ k.transpose(-1, -2) / d_head ** 0.5, dim=-1)
    mixed = attn.out_projection((weights @ v).transpose(1, 2).reshape(B * N, j, -1))
    z = layer.norm1(tokens + mixed)
    ffn = layer.conv2(layer.activation(layer.conv1(z.transpose(1, 2)))).transpose(1, 2)
    z = model.encoder.norm(layer.norm2(z + ffn))
    flat = z.reshape(B, N, j * configs.d_model)  # patch-major: index j·D + d
    expected = model.out_layer(flat).transpose(1, 2) * std + mean  # [B, H, N]
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected)


def test_shift_and_scale_equivariant(make_configs):
    """Instance normalisation makes f(a·x + b) = a·f(x) + b (up to the 1e-5 variance epsilon)."""
    model = Model(configs_for(make_configs)).eval()
    x = torch.randn(B, L, N)
    with torch.no_grad():
        torch.testing.assert_close(model(3.0 * x + 5.0), 3.0 * model(x) + 5.0, rtol=1e-4, atol=1e-4)


def test_variates_are_independent(make_configs):
    """Channel independence: changing one variate leaves the others' forecasts unchanged."""
    model = Model(configs_for(make_configs)).eval()
    x = torch.randn(B, L, N)
    moved = x.clone()
    moved[:, :, 0] = torch.randn(B, L)
    with torch.no_grad():
        torch.testing.assert_close(model(moved)[:, :, 1:], model(x)[:, :, 1:])


def test_ms_returns_the_last_variate(make_configs):
    torch.manual_seed(3)
    full = Model(configs_for(make_configs)).eval()
    torch.manual_seed(3)
    ms = Model(configs_for(make_configs, c_out=1)).eval()
    x = torch.randn(B, L, N)
    with torch.no_grad():
        torch.testing.assert_close(ms(x), full(x)[:, :, -1:])


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(task_name="anomaly_detection"), "--task_name"),
        (dict(seq_len=7), "--seq_len"),
        (dict(c_out=N + 1), "--c_out"),
        (dict(d_model=15), "--d_model"),
        (dict(activation="swish"), "--activation"),
    ],
    ids=["task", "seq_len", "c_out", "heads", "activation"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
