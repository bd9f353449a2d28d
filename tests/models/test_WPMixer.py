"""WPMixer: the wavelet transform against PyWavelets (coefficients and perfect reconstruction), TSLib's
initial weights for a seed, the run.py wavelet flags (TSLib's script-intended build), the patching
against a loop, features MS, and one-line errors naming the flag."""

from __future__ import annotations

import numpy as np
import pytest
import pywt
import torch
import torch.nn as nn

from compare.grid.efficiency import count_parameters, example_inputs, forward_flops
from layers.DWT_Decomposition import Decomposition, DWT1DForward, DWT1DInverse, wavelet_lengths
from models.WPMixer import Model, ResolutionBranch
from tests.models.tslib_reference import assert_tslib_initial_weights, tslib_configs

B, L, H, N = 2, 40, 12, 3


@pytest.fixture
def float64_default():
    """Build the wavelet filters (buffers at the default dtype, float32 as in TSLib) in float64, so
    the comparison with pywt is exact; a float32 filter cast to float64 is only 1e-7 close."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def configs_for(make_configs, **overrides):
    flags = dict(model="WPMixer", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=8,
                 patch_len=4, stride=2, wavelet="db2", level=2, tfactor=2, dfactor=3, dropout=0.2)
    return make_configs(**{**flags, **overrides})


# pywt warns that levels beyond dwt_max_level are all boundary effects; the transform stays exact.
@pytest.mark.filterwarnings("ignore:Level value")
@pytest.mark.parametrize("length", [1, 7, 40, 97])
@pytest.mark.parametrize("level", [1, 3])
@pytest.mark.parametrize("wave", ["haar", "db2", "sym5", "coif1", "bior2.4"])
def test_dwt_equals_pywt_wavedec_and_waverec(float64_default, wave, level, length):
    x = torch.randn(2, 3, length, dtype=torch.float64, generator=torch.Generator().manual_seed(length))
    low, details = DWT1DForward(J=level, wave=wave)(x)
    expected = pywt.wavedec(x.numpy(), wave, mode="zero", level=level, axis=-1)
    np.testing.assert_allclose(low.numpy(), expected[0], rtol=1e-12, atol=1e-12)
    assert len(details) == level
    for ours, theirs in zip(reversed(details), expected[1:], strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, atol=1e-12)
    assert [low.shape[-1], *(d.shape[-1] for d in details)] == wavelet_lengths(length, wave, level)

    rebuilt = DWT1DInverse(wave=wave)((low, details))
    np.testing.assert_allclose(rebuilt.numpy(), pywt.waverec(expected, wave, mode="zero", axis=-1),
                               rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rebuilt[..., :length], x, rtol=1e-10, atol=1e-10)  # perfect reconstruction


def test_inverse_is_linear_in_the_bands_and_differentiable(float64_default):
    """The inverse of perturbed bands is pywt's inverse of the same bands (the model predicts bands)."""
    gen = torch.Generator().manual_seed(3)
    bands = [torch.randn(1, 2, n, dtype=torch.float64, generator=gen, requires_grad=True)
             for n in wavelet_lengths(12, "db3", 2)]
    out = DWT1DInverse(wave="db3")((bands[0], bands[1:]))
    expected = pywt.waverec([bands[0].detach().numpy(), bands[2].detach().numpy(), bands[1].detach().numpy()],
                            "db3", mode="zero", axis=-1)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    out.sum().backward()
    assert all(b.grad is not None and b.grad.abs().sum() > 0 for b in bands)


def test_decomposition_lengths_and_buffers():
    dec = Decomposition(input_length=512, pred_length=96, wavelet_name="db2", level=1)
    assert dec.input_w_dim == [257, 257] and dec.pred_w_dim == [49, 49]
    names = {name: tuple(b.shape) for name, b in dec.named_buffers()}
    assert names == {"dwt.h0": (1, 1, 4), "dwt.h1": (1, 1, 4), "idwt.g0": (1, 1, 4), "idwt.g1": (1, 1, 4)}
    np.testing.assert_allclose(dec.dwt.h0.flatten().numpy(), pywt.Wavelet("db2").dec_lo[::-1], rtol=1e-6)


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's draw sequence: per band (approximation, then details finest first) a ResolutionBranch:
    BN, Linear(patch_len → d), two Mixers [Linear(P → tf·P), Linear(tf·P → P), BN, BN,
    Linear(d → df·d), Linear(df·d → d)], BN, head Linear(P·d → band length of the horizon)."""
    torch.manual_seed(seed)
    d, tf, df = configs.d_model, configs.tfactor, configs.dfactor
    bn = [torch.ones(N), torch.zeros(N)]
    weights = []
    for n_in, n_out in zip(wavelet_lengths(L, "db2", 2), wavelet_lengths(H, "db2", 2), strict=True):
        p = int((n_in - configs.patch_len) / configs.stride + 2)
        embed = nn.Linear(configs.patch_len, d)
        weights += bn + [embed.weight, embed.bias]
        for _ in range(2):
            t1, t2 = nn.Linear(p, p * tf), nn.Linear(p * tf, p)
            e1, e2 = nn.Linear(d, d * df), nn.Linear(d * df, d)
            weights += [t1.weight, t1.bias, t2.weight, t2.bias, *bn, *bn, e1.weight, e1.bias, e2.weight, e2.bias]
        head = nn.Linear(p * d, n_out)
        weights += bn + [head.weight, head.bias]
    return weights


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_wavelet_flags_give_tslibs_script_intended_build(make_configs):
    """TSLib's ETTh1 script intends db2, level 2, tfactor 5, dfactor 8, stride 8 (editing the model file);
    as flags they give the measured 6,964,577 parameters and 2,001,472,032 FLOPs."""
    configs = tslib_configs(make_configs, "WPMixer", level=2, dfactor=8)
    model = Model(configs)
    assert len(model.wpmixerCore.resolutionBranch) == 3
    assert count_parameters(model) == 6_964_577
    assert forward_flops(model, example_inputs(configs, 1)) == 2_001_472_032
    keyword = Model(tslib_configs(make_configs, "WPMixer"), level=2, dfactor=8)  # TSLib's keyword signature
    assert count_parameters(keyword) == 6_964_577


def test_patching_matches_a_loop():
    branch = ResolutionBranch(input_seq=11, pred_seq=5, channel=2, d_model=4, patch_len=4, patch_stride=3)
    x = torch.randn(2, 2, 11, dtype=torch.float64)
    patches = branch.do_patching(x)
    padded = torch.cat([x, x[..., -1:].repeat(1, 1, 3)], dim=-1)
    expected = torch.stack([padded[..., s:s + 4] for s in range(0, 14 - 4 + 1, 3)], dim=2)
    assert branch.patch_num == patches.shape[2] == 4
    torch.testing.assert_close(patches, expected, rtol=0, atol=0)


def test_forecast_is_the_inverse_transform_of_the_branch_outputs(make_configs, float64_default):
    model = Model(configs_for(make_configs)).eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    with torch.no_grad():
        mean, std = x.mean(1, keepdim=True), torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        z = ((x - mean) / std).transpose(1, 2).numpy()
        coeffs = pywt.wavedec(z, "db2", mode="zero", level=2, axis=-1)  # [A2, D2, D1]
        branches = model.wpmixerCore.resolutionBranch
        predicted = [branches[0](torch.from_numpy(coeffs[0])).numpy(),
                     branches[2](torch.from_numpy(coeffs[1])).numpy(),
                     branches[1](torch.from_numpy(coeffs[2])).numpy()]
        y = torch.from_numpy(pywt.waverec(predicted, "db2", mode="zero", axis=-1)[..., -H:]).transpose(1, 2)
        torch.testing.assert_close(model(x, None, None, None), y * std + mean)


def test_features_ms_returns_the_target_of_the_m_forecast(make_configs):
    """TSLib sizes the BatchNorms by --c_out, so MS (c_out 1 < enc_in) fails there; here MS is the last
    variate of the same model's forecast."""
    x = torch.randn(B, L, N, dtype=torch.float64)
    torch.manual_seed(5)
    full = Model(configs_for(make_configs)).double().eval()
    torch.manual_seed(5)
    target = Model(configs_for(make_configs, c_out=1)).double().eval()
    with torch.no_grad():
        torch.testing.assert_close(target(x, None, None, None), full(x, None, None, None)[:, :, -1:])


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(wavelet="db99"), "--wavelet"), (dict(level=0), "--level"), (dict(tfactor=0), "--tfactor"),
     (dict(dfactor=0), "--dfactor"), (dict(stride=0), "--stride"), (dict(patch_len=30), "--patch_len"),
     (dict(task_name="imputation"), "--task_name"), (dict(c_out=4), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["wavelet", "level", "tfactor", "dfactor", "stride", "patch_len", "task", "c_out", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
