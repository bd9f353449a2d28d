"""FiLM: TSLib's construction order, the frequency enhanced layer against its definition, the
normalisation's equivariance, the decoded step and clear errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.FiLM import Model, SpectralConv1d


def small_configs(make_configs, **overrides):
    flags = dict(model="FiLM", seq_len=32, label_len=16, pred_len=16, enc_in=3, dec_in=3, c_out=3)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's FiLM: affine_weight ones, affine_bias zeros, the three HiPPO-LegT (buffers only), then per
    scale a SpectralConv1d (real then imaginary U(0, 1)/256², modes = min(32, min(L, H) // 2)), then
    Linear(3 → 1)."""
    torch.manual_seed(seed)
    n = configs.enc_in
    weights = [torch.ones(1, 1, n), torch.zeros(1, 1, n)]
    modes = min(32, min(configs.seq_len, configs.pred_len) // 2)
    for _ in range(3):
        weights += [torch.rand(256, 256, modes) / 256**2, torch.rand(256, 256, modes) / 256**2]
    mlp = nn.Linear(3, 1)
    return weights + [mlp.weight, mlp.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = small_configs(make_configs)
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    names = [name for name, _ in model.named_parameters()]
    assert names == ["affine_weight", "affine_bias"] + [
        f"spec_conv_1.{i}.weights_{part}" for i in range(3) for part in ("real", "imag")] + ["mlp.weight", "mlp.bias"]
    for mine, theirs in zip(model.parameters(), expected, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-6, atol=0)
    after_ours = torch.rand(4)
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))
    buffers = {name: tuple(b.shape) for name, b in model.named_buffers()}
    assert buffers["legts.2.A"] == (256, 256) and buffers["legts.2.B"] == (256,)
    assert [buffers[f"legts.{i}.eval_matrix"] for i in range(3)] == [(16, 256), (32, 256), (64, 256)]


@pytest.mark.parametrize("steps", [16, 17, 63])
def test_spectral_conv_equals_its_definition(steps):
    """y = irfft(Σ_i rfft(x)_{i,m} · (W_r + jW_i)_{i,o,m} for m < M, 0 above), in complex arithmetic."""
    torch.manual_seed(0)
    layer = SpectralConv1d(4, 5, seq_len=steps).double()
    with torch.no_grad():
        layer.weights_real.normal_()
        layer.weights_imag.normal_()
    x = torch.randn(2, 3, 4, steps, dtype=torch.float64, requires_grad=True)
    spectrum = torch.fft.rfft(x)  # [2, 3, 4, F]
    weight = torch.complex(layer.weights_real, layer.weights_imag)  # [4, 5, M]
    out = torch.zeros(2, 3, 5, steps // 2 + 1, dtype=torch.complex128)
    for m in range(layer.modes):
        out[..., m] = spectrum[..., m] @ weight[..., m]
    expected = torch.fft.irfft(out, n=steps)
    ours = layer(x)
    torch.testing.assert_close(ours, expected)
    grad_ours, = torch.autograd.grad(ours.square().sum(), x)
    grad_ref, = torch.autograd.grad(expected.square().sum(), x)
    torch.testing.assert_close(grad_ours, grad_ref)


def test_spectral_conv_removes_modes_above_the_cap():
    layer = SpectralConv1d(2, 2, seq_len=16)  # M = 8 modes kept out of 9 (T = 16)
    t = torch.arange(16, dtype=torch.float32)
    high = torch.cos(torch.pi * t).expand(1, 1, 2, 16)  # frequency 8 only
    assert layer(high).abs().max() < 1e-6
    assert layer(torch.cos(2 * torch.pi * t / 16).expand(1, 1, 2, 16)).abs().max() > 1e-6


def test_forward_is_shift_and_scale_equivariant(make_configs):
    """RevIN around the model: f(a·x + b) = a·f(x) + b (up to the 1e-5 variance epsilon), also with a
    trained-looking affine."""
    model = Model(small_configs(make_configs)).double().eval()
    with torch.no_grad():
        model.affine_weight.uniform_(0.5, 2.0)
        model.affine_bias.normal_()
    x = torch.randn(2, 32, 3, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(3.0 * x - 2.0), 3.0 * model(x) - 2.0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("seq_len", "pred_len", "step"), [(32, 16, 15), (32, 32, 31), (12, 16, -1)])
def test_forward_equals_the_block_equations(make_configs, seq_len, pred_len, step):
    """Per scale i: decode the FEL output at step H − 1 (the last step when L < H) with the last H rows
    of the Legendre evaluation, mix the three scales with the Linear, undo the normalisation."""
    configs = small_configs(make_configs, seq_len=seq_len, pred_len=pred_len)
    model = Model(configs).double().eval()
    x = torch.randn(2, seq_len, 3, dtype=torch.float64)
    mean = x.mean(1, keepdim=True)
    std = (x.var(1, keepdim=True, unbiased=False) + 1e-5).sqrt()
    xn = (x - mean) / std  # affine starts as the identity
    per_scale = []
    for i, scale in enumerate((1, 2, 4)):
        window = xn[:, -scale * pred_len:].transpose(1, 2)  # [B, N, T]
        coeffs = model.legts[i](window).permute(1, 2, 3, 0)  # [B, N, 256, T]
        decoded = model.spec_conv_1[i](coeffs)[..., step]  # [B, N, 256]
        per_scale.append(decoded @ model.legts[i].eval_matrix[-pred_len:].T)  # [B, N, H]
    mixed = sum(w * y for w, y in zip(model.mlp.weight[0], per_scale, strict=True)) + model.mlp.bias
    expected = mixed.transpose(1, 2) * std + mean
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected)


def test_ms_returns_the_last_variates(make_configs):
    full = Model(small_configs(make_configs)).eval()
    ms = Model(small_configs(make_configs, c_out=1)).eval()
    ms.load_state_dict(full.state_dict())
    x = torch.randn(2, 32, 3)
    with torch.no_grad():
        torch.testing.assert_close(ms(x), full(x)[:, :, -1:])


@pytest.mark.parametrize(("overrides", "flag"), [
    (dict(task_name="zero_shot_forecast"), "--task_name"),
    (dict(pred_len=1), "--pred_len"),
    (dict(seq_len=1), "--seq_len"),
    (dict(c_out=4), "--c_out"),
], ids=["task", "pred_len", "seq_len", "c_out"])
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(small_configs(make_configs, **overrides))


def window_configs(make_configs, task: str, **overrides):
    """A window task's namespace as its experiment builds it (--pred_len 0; num_class from the data)."""
    flags = dict(model="FiLM", task_name=task, seq_len=16, label_len=0, pred_len=0, enc_in=3, dec_in=3, c_out=3,
                 dropout=0.0)
    configs = make_configs(**{**flags, **overrides})
    if task == "classification":
        configs.num_class = 4
    return configs


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_decode_the_window_with_tslib_parameter_names(make_configs, task):
    model = Model(window_configs(make_configs, task))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    body = ["affine_weight", "affine_bias"] + [
        f"spec_conv_1.{i}.weights_{part}" for i in range(3) for part in ("real", "imag")] + ["mlp.weight", "mlp.bias"]
    head = ["projection.weight", "projection.bias"] if task == "classification" else []
    assert list(shapes) == body + head
    assert shapes["spec_conv_1.0.weights_real"] == (256, 256, 8)  # min(32, L // 2) modes with H = L = 16
    assert tuple(model.legts[0].eval_matrix.shape) == (16, 256)
    if task == "classification":
        assert shapes["projection.weight"] == (4, 3 * 16)


def test_imputation_shape_and_pred_len_independence(make_configs):
    x = torch.randn(2, 16, 3)
    mask = (torch.rand(2, 16, 3) > 0.3).float()
    marks = torch.rand(2, 16, 4)
    outs = []
    for pred_len in (0, 96):
        torch.manual_seed(1)
        model = Model(window_configs(make_configs, "imputation", pred_len=pred_len)).eval()
        with torch.no_grad():
            outs.append(model(x * mask, marks, None, None, mask))
    assert outs[0].shape == (2, 16, 3)
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)


def test_imputation_normalises_by_the_observed_points(make_configs):
    """Hidden values do not reach the output; with nothing hidden it is the anomaly (RevIN) path."""
    torch.manual_seed(1)
    imputer = Model(window_configs(make_configs, "imputation")).double().eval()
    detector = Model(window_configs(make_configs, "anomaly_detection")).double().eval()
    detector.load_state_dict(imputer.state_dict())
    x = torch.randn(2, 16, 3, dtype=torch.float64)
    mask = (torch.rand(2, 16, 3) > 0.3).double()
    noisy = torch.where(mask == 0, 100 * torch.randn_like(x), x)
    with torch.no_grad():
        torch.testing.assert_close(imputer(x * mask, None, None, None, mask), imputer(noisy, None, None, None, mask))
        torch.testing.assert_close(imputer(x, None, None, None, torch.ones_like(x)), detector(x))


def test_anomaly_forward_is_the_reconstruction(make_configs):
    model = Model(window_configs(make_configs, "anomaly_detection")).eval()
    x = torch.randn(2, 16, 3)
    with torch.no_grad():
        out = model(x, None, None, None)
        assert out.shape == (2, 16, 3)
        torch.testing.assert_close(out, model.anomaly_detection(x), rtol=0, atol=0)


def test_classification_zeroes_padded_steps_before_the_projection(make_configs):
    model = Model(window_configs(make_configs, "classification")).eval()
    with torch.no_grad():
        model.affine_weight.uniform_(0.5, 2.0)
        model.affine_bias.normal_()
    x = torch.randn(2, 16, 3)
    mask = torch.ones(2, 16)
    mask[:, 10:] = 0
    with torch.no_grad():
        full, masked = model(x, torch.ones(2, 16), None, None), model(x, mask, None, None)
        features = torch.nn.functional.gelu(model.decode(x * model.affine_weight + model.affine_bias))  # [B, L, N]
        weight = model.projection.weight.reshape(4, 16, 3)
        expected = torch.einsum("btn,ktn->bk", features[:, :10], weight[:, :10]) + model.projection.bias
    torch.testing.assert_close(masked, expected)
    assert not torch.allclose(full, masked)


def test_classification_does_not_read_c_out(make_configs):
    """BasicMotions: 6 variates, fewer than the default --c_out 7."""
    model = Model(window_configs(make_configs, "classification", enc_in=6, dec_in=7, c_out=7))
    assert model(torch.randn(2, 16, 6), torch.ones(2, 16), None, None).shape == (2, 4)
