"""ETSformer: TSLib's initial weights for a seed, exponential smoothing against its recurrence and frequency
attention against a direct DFT (float64, outputs and gradients), the level equation, damping, the
training augmentation, and one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from layers.ETSformer_EncDec import (
    DampingLayer,
    ExponentialSmoothing,
    FourierLayer,
    LevelLayer,
    exponential_smoothing,
    exponential_smoothing_reference,
    fourier_extrapolation,
    fourier_extrapolation_reference,
)
from models.ETSformer import AUGMENTATION_SIGMA, Model
from tests.models.tslib_reference import assert_tslib_initial_weights

SMALL = dict(model="ETSformer", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, n_heads=2,
             e_layers=2, d_layers=2, top_k=3, enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's ETSformer construction: circular token Conv1d (Kaiming-normal) and bias-free timeF Linear;
    per encoder layer the growth (z0 = randn(H, E), in_proj, smoothing weight randn(H, 1), v0 randn(1, 1, H, E),
    out_proj), the level (smoothing weight randn(N, 1), v0 randn(1, 1, N, 1), growth and season Linear(D → N)),
    the bias-free feed-forward and two LayerNorms; per decoder layer a damping factor randn(1, H); the
    output Linear(D → c_out)."""
    torch.manual_seed(seed)
    d, h, n = configs.d_model, configs.n_heads, configs.enc_in
    token = nn.Conv1d(n, d, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    weights = [token.weight, nn.Linear(4, d, bias=False).weight]

    def linear(i: int, o: int) -> list[torch.Tensor]:
        layer = nn.Linear(i, o)
        return [layer.weight, layer.bias]

    for _ in range(configs.e_layers):
        weights.append(torch.randn(h, d // h))
        weights += linear(d, d)
        weights += [torch.randn(h, 1), torch.randn(1, 1, h, d // h)]
        weights += linear(d, d)
        weights += [torch.randn(n, 1), torch.randn(1, 1, n, 1)]
        weights += linear(d, n) + linear(d, n)
        weights += [nn.Linear(d, configs.d_ff, bias=False).weight, nn.Linear(configs.d_ff, d, bias=False).weight]
        weights += [torch.ones(d), torch.zeros(d), torch.ones(d), torch.zeros(d)]
    weights += [torch.randn(1, h) for _ in range(configs.d_layers)]
    return weights + linear(d, configs.c_out)


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = make_configs(**SMALL)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


@pytest.mark.parametrize("aux", [False, True], ids=["plain", "aux"])
@pytest.mark.parametrize(("length", "logit"), [(1, 0.3), (7, -1.0), (97, 2.0), (40, 9.0), (40, -9.0)],
                         ids=["T1", "T7", "T97", "T40-w-near-1", "T40-w-near-0"])
def test_exponential_smoothing_matches_recurrence(length: int, logit: float, aux: bool):
    gen = torch.Generator().manual_seed(length)
    values = torch.randn(2, length, 3, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    aux_values = torch.randn(2, length, 3, 4, generator=gen, dtype=torch.float64, requires_grad=True) if aux else None
    weight = torch.sigmoid(logit + 0.5 * torch.randn(3, generator=gen, dtype=torch.float64)).requires_grad_()
    v0 = torch.randn(1, 1, 3, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    fast = exponential_smoothing(values, weight, v0, aux_values)
    slow = exponential_smoothing_reference(values, weight, v0, aux_values)
    torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-10)
    inputs = [t for t in (values, weight, v0, aux_values) if t is not None]
    grad = torch.randn(fast.shape, generator=gen, dtype=torch.float64)
    for a, b in zip(torch.autograd.grad(fast, inputs, grad), torch.autograd.grad(slow, inputs, grad), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def test_level_layer_is_the_level_equation():
    """E_t = (1 − w)(X_t − S_t) + w (E_{t−1} + B_{t−1}), E_{−1} = v₀, written out per variate and step
    (the growth enters along time; TSLib applies only w·B to each step's own level)."""
    torch.manual_seed(4)
    layer = LevelLayer(d_model=6, c_out=2, dropout=0.0).double()
    level = torch.randn(2, 9, 2, dtype=torch.float64)
    growth, season = torch.randn(2, 9, 6, dtype=torch.float64), torch.randn(2, 9, 6, dtype=torch.float64)
    out = layer(level, growth, season)
    b_proj, s_proj = layer.growth_pred(growth), layer.season_pred(season)  # [B, T, N]
    w = layer.es.weight[:, 0]  # [N]
    state = layer.es.v0[0, 0, :, 0].expand(2, -1)  # [B, N]
    for t in range(9):
        state = (1 - w) * (level[:, t] - s_proj[:, t]) + w * (state + b_proj[:, t])
        torch.testing.assert_close(out[:, t], state)


@pytest.mark.parametrize(("length", "k"), [(24, 3), (25, 5), (9, 4), (96, 1)], ids=["T24-k3", "T25-k5", "T9-k4", "T96-k1"])
def test_frequency_attention_matches_direct_dft(length: int, k: int):
    gen = torch.Generator().manual_seed(length)
    x = torch.randn(2, length, 3, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(fourier_extrapolation(x, k, 7), fourier_extrapolation_reference(x, k, 7),
                               rtol=1e-9, atol=1e-10)
    layer = FourierLayer(3, 7, k=k, implementation="reference")
    torch.testing.assert_close(FourierLayer(3, 7, k=k)(x), layer(x), rtol=1e-9, atol=1e-10)


def test_frequency_attention_extrapolates_a_periodic_season():
    """A sum of two sinusoids on whole bins is recovered on the window and continued into the horizon."""
    t = torch.arange(24 + 12, dtype=torch.float64)
    season = 2.0 * torch.cos(2 * math.pi * 3 * t / 24 + 0.4) + 0.5 * torch.sin(2 * math.pi * 5 * t / 24)
    x = (season[:24] + 1.5)[None, :, None]  # the mean (DC) is not part of the season
    torch.testing.assert_close(fourier_extrapolation(x, 2, 12)[0, :, 0], season, rtol=1e-9, atol=1e-9)


def test_frequency_attention_gradients_match_reference():
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(2, 16, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    grad = torch.randn(2, 21, 3, generator=gen, dtype=torch.float64)
    (fast,) = torch.autograd.grad(fourier_extrapolation(x, 3, 5), x, grad)
    x_ref = x.detach().clone().requires_grad_()
    # The reference builds coefficients through python complex numbers; differentiate it numerically instead.
    eps = 1e-6
    flat = x_ref.detach().flatten()
    numeric = torch.zeros_like(flat)
    for i in range(0, flat.numel(), 7):
        up, down = flat.clone(), flat.clone()
        up[i] += eps
        down[i] -= eps
        numeric[i] = ((fourier_extrapolation_reference(up.view_as(x), 3, 5)
                       - fourier_extrapolation_reference(down.view_as(x), 3, 5)) * grad).sum() / (2 * eps)
    torch.testing.assert_close(fast.flatten()[::7], numeric[::7], rtol=1e-5, atol=1e-6)


def test_damping_sums_powers_of_phi():
    torch.manual_seed(5)
    layer = DampingLayer(pred_len=6, nhead=2, dropout=0.0).double()
    x = torch.randn(3, 1, 8, dtype=torch.float64)
    out = layer(x)
    phi = torch.sigmoid(layer._damping_factor[0])  # [H]
    for h in range(6):
        factor = sum(phi ** i for i in range(1, h + 2))  # [H]
        torch.testing.assert_close(out[:, h], (x[:, 0].view(3, 2, 4) * factor[None, :, None]).view(3, 8))


def test_smoothing_module_swaps_implementations():
    torch.manual_seed(6)
    fast = ExponentialSmoothing(4, 3, dropout=0.0, aux=True).double()
    slow = ExponentialSmoothing(4, 3, dropout=0.0, aux=True, implementation="reference").double()
    slow.load_state_dict(fast.state_dict())
    values, aux = torch.randn(2, 11, 3, 4, dtype=torch.float64), torch.randn(2, 11, 3, 4, dtype=torch.float64)
    torch.testing.assert_close(fast(values, aux), slow(values, aux))


def test_forecast_is_level_plus_growth_plus_season(make_configs):
    model = Model(make_configs(**SMALL)).double().eval()
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    marks = torch.rand(2, 24, 4, dtype=torch.float64) - 0.5
    with torch.no_grad():
        out = model(x, marks, None, None)
        level, growths, seasons = model.encoder(model.enc_embedding(x, marks), x)
        growth, season = model.decoder(growths, seasons)
    assert out.shape == (2, 12, 3)
    torch.testing.assert_close(out, level[:, -1:] + growth + season, rtol=0, atol=0)


def test_augmentation_only_in_training(make_configs):
    """Training draws TSLib's scale, shift and jitter (in that order) from torch's global RNG; eval draws nothing."""
    model = Model(make_configs(**{**SMALL, "dropout": 0.0}))
    x = torch.randn(2, 24, 3)
    torch.manual_seed(9)
    trained = model.train()(x)
    torch.manual_seed(9)
    scale, shift = torch.randn(3), torch.randn(3)
    jitter = torch.randn(2, 24, 3)
    augmented = (x * (scale * AUGMENTATION_SIGMA + 1) + shift * AUGMENTATION_SIGMA) + jitter * AUGMENTATION_SIGMA
    with torch.no_grad():
        torch.testing.assert_close(trained.detach(), model.eval()(augmented))
        state = torch.get_rng_state()
        model(x)
        assert torch.equal(state, torch.get_rng_state())


def test_ms_adds_the_target_level(make_configs):
    model = Model(make_configs(**{**SMALL, "c_out": 1})).double().eval()
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    with torch.no_grad():
        out = model(x, None, None, None)
        level, growths, seasons = model.encoder(model.enc_embedding(x, None), x)
        growth, season = model.decoder(growths, seasons)
    assert out.shape == (2, 12, 1)
    torch.testing.assert_close(out, level[:, -1:, -1:] + growth + season, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(d_layers=1), "--d_layers"),
        (dict(top_k=12), "--top_k"),
        (dict(top_k=0), "--top_k"),
        (dict(seq_len=2, top_k=1), "--seq_len"),
        (dict(task_name="segmentation"), "--task_name"),
        (dict(d_model=30, n_heads=4), "--d_model"),
        (dict(activation="swish"), "--activation"),
        (dict(embed="onehot"), "--embed"),
        (dict(c_out=4), "--c_out"),
        (dict(e_layers=0, d_layers=0), "--e_layers"),
        (dict(dropout=1.0), "--dropout"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, overrides: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=flag) as error:
        Model(make_configs(**{**SMALL, **overrides}))
    assert "\n" not in str(error.value)


# The window tasks (TSLib's imputation, anomaly-detection and classification heads: horizon = window).
def window_model(make_configs, task: str, num_class: int = 4, **overrides) -> Model:
    configs = make_configs(**{**SMALL, "task_name": task, "label_len": 0, "pred_len": 0, "dropout": 0.0,
                              **overrides})
    configs.num_class = num_class
    return Model(configs).eval()


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_tasks_decode_a_window_long_horizon(make_configs, task):
    model = window_model(make_configs, task)
    assert model.pred_len == 24
    assert all(layer.seasonal_layer.pred_len == 24 for layer in model.encoder.layers)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    # The decoder exists in every task (TSLib's count); only classification adds a projection.
    assert shapes["decoder.pred.weight"] == (3, 8)
    assert shapes.get("projection.weight") == ((4, 8 * 24) if task == "classification" else None)


def test_imputation_shape_and_pred_len_does_not_change_it(make_configs):
    g = torch.Generator().manual_seed(0)
    x, marks = torch.randn(2, 24, 3, generator=g), torch.rand(2, 24, 4, generator=g) - 0.5
    mask = (torch.rand(2, 24, 3, generator=g) > 0.3).float()
    outputs = []
    for pred_len in (0, 96):
        torch.manual_seed(0)
        outputs.append(window_model(make_configs, "imputation", pred_len=pred_len)(x * mask, marks, None, None, mask))
    assert outputs[0].shape == (2, 24, 3)
    torch.testing.assert_close(outputs[0], outputs[1])


def test_the_extrapolated_season_repeats_the_window(make_configs):
    """Why the next-L-steps forecast reconstructs the window: frequency attention's season at step L + t
    equals its fit at step t."""
    model = window_model(make_configs, "imputation")
    res = model.enc_embedding(torch.randn(2, 24, 3), None)
    season = model.encoder.layers[0].seasonal_layer(res)  # [B, 2L, D]
    torch.testing.assert_close(season[:, 24:], season[:, :24], rtol=1e-4, atol=1e-5)


def test_anomaly_forward_dispatches_to_the_reconstruction_and_is_not_augmented(make_configs):
    model = window_model(make_configs, "anomaly_detection").train()
    x = torch.randn(2, 24, 3)
    # Training mode: the forecast's augmentation would draw random noise; the window tasks take none.
    out = model(x, None, None, None)
    assert out.shape == (2, 24, 3)
    torch.testing.assert_close(out, model.anomaly_detection(x))


def test_classification_zeroes_padded_steps_before_the_projection(make_configs):
    model = window_model(make_configs, "classification")
    x = torch.randn(2, 24, 3)
    padding = torch.ones(2, 24)
    padding[:, 17:] = 0
    with torch.no_grad():
        masked, full = model(x, padding, None, None), model(x, torch.ones(2, 24), None, None)
        # By hand: growth B_{t-1} and season S_t of every layer, summed, for the first 17 steps.
        res, level = model.enc_embedding(x, None), x
        features = torch.zeros(2, 24, 8)
        for layer in model.encoder.layers:
            res, level, growth, season = layer(res, level)
            features = features + growth[:, :24] + season[:, :24]
        weight = model.projection.weight.reshape(4, 24, 8)[:, :17]
        expected = torch.einsum("btd,ktd->bk", nn.functional.gelu(features)[:, :17], weight) + model.projection.bias
    torch.testing.assert_close(masked, expected)
    assert not torch.allclose(masked, full)
