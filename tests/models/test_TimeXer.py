"""TimeXer: TSLib's initial weights for a seed, the encoder layer (patch self-attention and the global
token's cross-attention to the exogenous tokens) against a per-token float64 loop, how --features routes
endogenous and exogenous variates, the patch alignment, and one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from models.TimeXer import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N, F, P = 2, 20, 6, 3, 4, 8


def configs_for(make_configs, **overrides):
    flags = dict(model="TimeXer", features="M", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, n_heads=2, d_ff=12, e_layers=2, patch_len=P, dropout=0.2, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, N, generator=gen, dtype=torch.float64)
    x_mark = torch.rand(B, L, F, generator=gen, dtype=torch.float64) - 0.5
    return x, x_mark


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's draws: patch Linear (no bias), global tokens randn(1, N, 1, D), exogenous Linear(L → D), per
    layer self- then cross-attention q/k/v/out Linears, conv1, conv2 (LayerNorms draw nothing), the head;
    returned in registration order (the global tokens first: a module's own parameters precede its children's)."""
    torch.manual_seed(seed)
    d, n_vars = configs.d_model, (configs.enc_in if configs.features == "M" else 1)
    patch = nn.Linear(configs.patch_len, d, bias=False)
    glb = torch.randn(1, n_vars, 1, d)
    weights = [glb, patch.weight]
    ex = nn.Linear(configs.seq_len, d)
    weights += [ex.weight, ex.bias]
    ones, zeros = torch.ones(d), torch.zeros(d)
    for _ in range(configs.e_layers):
        for _ in range(8):
            linear = nn.Linear(d, d)
            weights += [linear.weight, linear.bias]
        for conv in (nn.Conv1d(d, configs.d_ff, 1), nn.Conv1d(configs.d_ff, d, 1)):
            weights += [conv.weight, conv.bias]
        weights += [ones, zeros] * 3
    weights += [ones, zeros]
    head = nn.Linear(d * (configs.seq_len // configs.patch_len + 1), configs.pred_len)
    return weights + [head.weight, head.bias]


@pytest.mark.parametrize("features", ["M", "MS"])
def test_initial_weights_follow_tslib_construction_order(make_configs, features):
    configs = configs_for(make_configs, features=features, c_out=N if features == "M" else 1)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def _layer_norm(v: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    centred = v - sum(v) / len(v)
    return centred / math.sqrt(sum(centred * centred) / len(v) + norm.eps) * norm.weight + norm.bias


def _attend(layer, query: torch.Tensor, keys: list[torch.Tensor]) -> torch.Tensor:
    """One query token against a list of key/value tokens, head by head, by explicit sums: `[D]`."""
    heads = layer.n_heads
    q = layer.query_projection(query)
    ks = [layer.key_projection(k) for k in keys]
    vs = [layer.value_projection(k) for k in keys]
    e = q.shape[0] // heads
    out = []
    for h in range(heads):
        part = slice(h * e, (h + 1) * e)
        scores = [sum(q[part] * k[part]) / math.sqrt(e) for k in ks]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        out.append(sum(w / total * v[part] for w, v in zip(weights, vs, strict=True)))
    return layer.out_projection(torch.cat(out))


def reference_layer(layer, x: torch.Tensor, cross: torch.Tensor) -> torch.Tensor:
    """The module docstring's layer token by token (eval mode): x `[B·N, p + 1, D]`, cross `[B, C, D]`."""
    n_vars = x.shape[0] // cross.shape[0]
    out = torch.empty_like(x)
    for s in range(x.shape[0]):
        tokens = list(x[s])
        mixed = [_layer_norm(t + _attend(layer.self_attention, t, tokens), layer.norm1) for t in tokens]
        glb = mixed[-1]
        mixed[-1] = _layer_norm(glb + _attend(layer.cross_attention, glb, list(cross[s // n_vars])), layer.norm2)
        for i, t in enumerate(mixed):
            hidden = torch.nn.functional.gelu(layer.conv1.weight[:, :, 0] @ t + layer.conv1.bias)
            out[s, i] = _layer_norm(t + layer.conv2.weight[:, :, 0] @ hidden + layer.conv2.bias, layer.norm3)
    return out


def test_encoder_layer_matches_the_token_loop(make_configs):
    model = Model(configs_for(make_configs, activation="gelu")).double().eval()
    layer = model.encoder.layers[0]
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():  # trained-looking norms: at γ = 1, β = 0 a second LayerNorm is almost a no-op
        for norm in (layer.norm1, layer.norm2, layer.norm3):
            norm.weight.copy_(1 + 0.3 * torch.randn(norm.weight.shape, generator=gen, dtype=torch.float64))
            norm.bias.copy_(0.3 * torch.randn(norm.bias.shape, generator=gen, dtype=torch.float64))
    x = torch.randn(B * N, L // P + 1, 8, generator=gen, dtype=torch.float64)
    cross = torch.randn(B, 5, 8, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(layer(x, cross), reference_layer(layer, x, cross))


def test_exogenous_tokens_reach_patches_only_through_the_global_token(make_configs):
    """In one layer the cross-attention updates the global token alone: patch outputs ignore `cross`."""
    model = Model(configs_for(make_configs)).double().eval()
    layer = model.encoder.layers[0]
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(B * N, 3, 8, generator=gen, dtype=torch.float64)
    cross = torch.randn(B, 5, 8, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        base, moved = layer(x, cross), layer(x, cross + torch.randn(cross.shape, generator=gen, dtype=torch.float64))
    torch.testing.assert_close(moved[:, :-1], base[:, :-1])
    assert not torch.allclose(moved[:, -1], base[:, -1])


def test_ms_forecasts_the_target_from_the_other_variates(make_configs):
    """MS/S: the last variate is endogenous (one global token), the others and the marks are exogenous."""
    model = Model(configs_for(make_configs, features="MS", c_out=1, use_norm=0)).double().eval()
    assert model.en_embedding.glb_token.shape == (1, 1, 1, 8)
    x, x_mark = batch()
    with torch.no_grad():
        base = model(x, x_mark)
        assert base.shape == (B, H, 1)
        other = x.clone()
        other[:, :, 0] += 1.0
        assert not torch.allclose(model(other, x_mark), base)
        # seq_len 20 holds two patches of 8: the oldest 4 target steps feed no patch (nor any exogenous token).
        old = x.clone()
        old[:, :L % P, -1] += 1.0
        torch.testing.assert_close(model(old, x_mark), base)
        new = x.clone()
        new[:, -1, -1] += 1.0
        assert not torch.allclose(model(new, x_mark), base)


def test_m_forecasts_every_variate_and_is_scale_equivariant(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark = batch()
    with torch.no_grad():
        out = model(x, x_mark)
        assert out.shape == (B, H, N)
        torch.testing.assert_close(model(3.0 * x + 5.0, x_mark), 3.0 * out + 5.0, rtol=1e-4, atol=1e-4)
        narrow = Model(configs_for(make_configs, c_out=1)).double().eval()
        narrow.load_state_dict(model.state_dict())
        torch.testing.assert_close(narrow(x, x_mark), out[:, :, -1:])


def test_single_variate_without_marks_is_an_error(make_configs):
    model = Model(configs_for(make_configs, features="S", enc_in=1, dec_in=1, c_out=1)).double().eval()
    x, x_mark = batch()
    assert model(x[:, :, :1], x_mark).shape == (B, H, 1)
    with pytest.raises(ValueError, match="x_mark_enc"):
        model(x[:, :, :1], None)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(patch_len=L + 1), "--patch_len"),
     (dict(patch_len=0), "--patch_len"), (dict(features="MS", c_out=2), "--c_out"), (dict(c_out=N + 1), "--c_out"),
     (dict(features="X"), "--features"), (dict(n_heads=3), "--n_heads"), (dict(e_layers=0), "--e_layers"),
     (dict(activation="tanh"), "--activation"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "patch_len-long", "patch_len-zero", "ms-c_out", "m-c_out", "features", "heads", "e_layers",
         "activation", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
