"""TiDE: TSLib's initial weights for a seed, the dense encoder/decoder against a per-series loop, the
covariates it reads, the temporal-decoder LayerNorm fix, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.TiDE import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N, F = 2, 16, 8, 3, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="TiDE", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=5,
                 d_model=8, d_ff=6, e_layers=2, d_layers=2, dropout=0.3, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def batch(seed: int = 0, label_len: int = 4) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, N, generator=gen, dtype=torch.float64)
    x_mark = torch.rand(B, L, F, generator=gen, dtype=torch.float64) - 0.5
    y_mark = torch.rand(B, label_len + H, F, generator=gen, dtype=torch.float64) - 0.5
    return x, x_mark, y_mark


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's TiDE initialisation at 2 encoder and 2 decoder layers: ResBlocks (fc1, fc2, fc3; the
    LayerNorm draws nothing) feature F→d→2, encoder L+2(L+H)→d→d, d→d→d, decoder d→d→d, d→d→p·H,
    temporal p+2→d_ff→1, then the residual Linear L→H."""
    torch.manual_seed(seed)
    d, p = configs.d_model, configs.c_out
    blocks = [(F, d, 2), (L + 2 * (L + H), d, d), (d, d, d), (d, d, d), (d, d, p * H), (p + 2, configs.d_ff, 1)]
    weights = []
    for i, h, o in blocks:
        for layer in (nn.Linear(i, h), nn.Linear(h, o), nn.Linear(i, o)):
            weights += [layer.weight, layer.bias]
        weights += [torch.ones(o), torch.zeros(o)]
    residual = nn.Linear(L, H)
    return weights + [residual.weight, residual.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def reference_forecast(model: Model, x, x_mark, y_mark) -> torch.Tensor:
    """The module docstring's equations one series at a time (eval mode): `[B, H, N]`."""
    marks = torch.cat([x_mark, y_mark[:, -H:]], dim=1)  # [B, L+H, F]
    out = torch.empty(B, H, N, dtype=x.dtype)
    for b in range(B):
        for c in range(N):
            series = x[b, :, c]
            mean, std = series.mean(), torch.sqrt(series.var(unbiased=False) + 1e-5)
            y = (series - mean) / std
            feature = model.feature_encoder(marks[b])  # [L+H, 2]
            hidden = model.encoders(torch.cat([y, feature.flatten()]))
            g = model.decoders(hidden).reshape(H, model.decode_dim)
            block = model.temporalDecoder
            t_in = torch.cat([feature[L:], g], dim=-1)
            temporal = block.fc2(torch.relu(block.fc1(t_in))) + block.fc3(t_in)  # no LayerNorm
            out[b, :, c] = (temporal.squeeze(-1) + model.residual_proj(y)) * std + mean
    return out


def test_forward_matches_the_per_series_loop(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark, y_mark = batch()
    with torch.no_grad():
        torch.testing.assert_close(model(x, x_mark, None, y_mark), reference_forecast(model, x, x_mark, y_mark))


def test_output_keeps_the_input_variates(make_configs):
    """--c_out is the decoder width p: under M every input variate comes back whatever p is (TSLib; its
    ETTh1 script sets p = 8 > N = 7), under MS and S the last min(p, N) (what the loop scores)."""
    x, x_mark, y_mark = batch()
    for features, c_out, width in (("M", 5, N), ("M", N, N), ("M", 1, N), ("MS", 1, 1), ("MS", 2, 2),
                                   ("MS", 5, N)):
        model = Model(configs_for(make_configs, c_out=c_out, features=features)).double().eval()
        assert model(x, x_mark, None, y_mark).shape == (B, H, width)
        assert model.decoders[-1].fc2.out_features == c_out * H


def test_reads_past_and_future_marks_not_the_label_marks(make_configs):
    """Covariates are x_mark_enc and the last H steps of x_mark_dec; its label_len steps are ignored."""
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark, y_mark = batch()
    with torch.no_grad():
        base = model(x, x_mark, None, y_mark)
        label_changed = y_mark.clone()
        label_changed[:, :-H] += 1.0
        torch.testing.assert_close(model(x, x_mark, None, label_changed), base)
        future_changed = y_mark.clone()
        future_changed[:, -1] += 1.0
        assert not torch.allclose(model(x, x_mark, None, future_changed), base)
        past_changed = x_mark.clone()
        past_changed[:, 0] += 1.0
        assert not torch.allclose(model(x, past_changed, None, y_mark), base)
        zeros = model(x, torch.zeros_like(x_mark), None, torch.zeros_like(y_mark))
        torch.testing.assert_close(model(x, None, None, None), zeros)


def test_encoder_reaches_the_forecast(make_configs):
    """TSLib's LayerNorm over the width-1 temporal output would make it the constant ln.bias, cutting the
    encoder off; here the encoder and decoder receive gradients."""
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark, y_mark = batch()
    model(x, x_mark, None, y_mark).sum().backward()
    assert model.encoders[0].fc1.weight.grad.abs().sum() > 0
    assert model.feature_encoder.fc1.weight.grad.abs().sum() > 0
    assert model.temporalDecoder.ln.weight.grad is None
    ln_width_one = nn.LayerNorm(1).double()
    torch.testing.assert_close(ln_width_one(torch.randn(5, 1, dtype=torch.float64)), torch.zeros(5, 1, dtype=torch.float64))


def test_instance_normalised_forecast_is_shift_and_scale_equivariant(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark, y_mark = batch()
    with torch.no_grad():
        torch.testing.assert_close(model(3.0 * x + 5.0, x_mark, None, y_mark),
                                   3.0 * model(x, x_mark, None, y_mark) + 5.0, rtol=1e-4, atol=1e-4)


def test_middle_layers_are_independent(make_configs):
    """TSLib repeats one block object for the middle layers; here each layer has its own weights."""
    model = Model(configs_for(make_configs, e_layers=3, d_layers=3))
    assert model.encoders[1] is not model.encoders[2]
    assert model.decoders[0] is not model.decoders[1]
    assert not torch.equal(model.encoders[1].fc1.weight, model.encoders[2].fc1.weight)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="classification"), "--task_name"), (dict(e_layers=0), "--e_layers"),
     (dict(d_layers=0), "--d_layers"), (dict(d_ff=0), "--d_ff"), (dict(c_out=0), "--c_out"),
     (dict(embed="onehot"), "--embed"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "e_layers", "d_layers", "d_ff", "c_out", "embed", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def imputation_configs(make_configs, **overrides):
    """The imputation namespace as its experiment builds it (--label_len 0, --pred_len 0)."""
    return configs_for(make_configs, **{"task_name": "imputation", "label_len": 0, "pred_len": 0, **overrides})


def test_imputation_layers_decode_the_window(make_configs):
    """Horizon = the L window steps: encoder input L + 2L (series and the window's projected marks),
    decoder output p·L, residual L → L; the temporal decoder is the forecasting one."""
    model = Model(imputation_configs(make_configs))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes["encoders.0.fc1.weight"] == (8, L + 2 * L)
    assert shapes["decoders.1.fc2.weight"] == (5 * L, 8)
    assert shapes["temporalDecoder.fc1.weight"] == (6, 5 + 2)
    assert shapes["residual_proj.weight"] == (L, L)


def reference_imputation(model: Model, x, x_mark, mask) -> torch.Tensor:
    """One series at a time, normalised by its observed points (eval mode): `[B, L, N]`."""
    out = torch.empty(B, L, N, dtype=x.dtype)
    for b in range(B):
        feature = model.feature_encoder(x_mark[b])  # [L, 2]
        for c in range(N):
            seen = mask[b, :, c] == 1
            mean = x[b, seen, c].mean()
            std = torch.sqrt(((x[b, seen, c] - mean) ** 2).mean() + 1e-5)
            y = torch.where(seen, (x[b, :, c] - mean) / std, torch.zeros_like(mean))
            g = model.decoders(model.encoders(torch.cat([y, feature.flatten()]))).reshape(L, model.decode_dim)
            block = model.temporalDecoder
            t_in = torch.cat([feature, g], dim=-1)
            temporal = block.fc2(torch.relu(block.fc1(t_in))) + block.fc3(t_in)  # no LayerNorm
            out[b, :, c] = (temporal.squeeze(-1) + model.residual_proj(y)) * std + mean
    return out


def test_imputation_matches_the_per_series_loop_and_ignores_hidden_values(make_configs):
    model = Model(imputation_configs(make_configs)).double().eval()
    x, x_mark, _ = batch()
    mask = (torch.rand(B, L, N, generator=torch.Generator().manual_seed(3)) > 0.3).double()
    noisy = torch.where(mask == 0, 100 * torch.randn_like(x), x)
    with torch.no_grad():
        out = model(x * mask, x_mark, None, None, mask)
        torch.testing.assert_close(out, reference_imputation(model, x, x_mark, mask))
        torch.testing.assert_close(out, model(noisy, x_mark, None, None, mask))
        # Without marks the covariates are zeros.
        torch.testing.assert_close(model(x * mask, None, None, None, mask),
                                   model(x * mask, torch.zeros_like(x_mark), None, None, mask))
    assert out.shape == (B, L, N)


def test_imputation_does_not_read_pred_len(make_configs):
    x, x_mark, _ = batch()
    mask = torch.ones_like(x)
    outs = []
    for pred_len in (0, 96):
        torch.manual_seed(1)
        model = Model(imputation_configs(make_configs, pred_len=pred_len)).double().eval()
        with torch.no_grad():
            outs.append(model(x, x_mark, None, None, mask))
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
