"""Koopa: TSLib's initial weights for a seed (including the two draws of its train-loader pass), the
spectrum mask and the Fourier filter against float64 references, the least-squares operator, the
aligned backcast, the train-split protocol and one-line errors naming the flag."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

import models.Koopa as koopa
from models.Koopa import FourierFilter, KPLayer, Model, TimeVarKP, draw_like_tslib_train_loader, mask_spectrum
from tests.models.tslib_reference import assert_tslib_initial_weights
from utils.train_split import TrainSplit, synthetic_train_split

B, L, H, N = 2, 20, 8, 3
D, HID = 8, 6


def configs_for(make_configs, **overrides):
    flags = dict(model="Koopa", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 train_split=synthetic_train_split(rows=200, channels=N))
    return make_configs(**{**flags, **overrides})


def build(configs) -> Model:
    return Model(configs, dynamic_dim=D, hidden_dim=HID)


def tslib_initial_weights(seed: int) -> list[torch.Tensor]:
    """TSLib's order: the train-loader pass (two int64 draws), time-invariant encoder L→h→D and decoder
    D→h→H, per block randn(D, D) → U Vᵀ then the bias-free K Linear (overwritten), then the time-variant
    encoder S·N→h→D and decoder D→h→S·N (S = H). Parameters in registration order."""
    torch.manual_seed(seed)
    loader = DataLoader(list(range(10)), batch_size=4, shuffle=True)
    for _ in loader:
        pass
    inv = [nn.Linear(L, HID), nn.Linear(HID, D), nn.Linear(D, HID), nn.Linear(HID, H)]
    ks = []
    for _ in range(3):
        gaussian = torch.randn(D, D)
        u, _, v = torch.svd(gaussian)
        nn.Linear(D, D, bias=False)
        ks.append(torch.mm(u, v.t()))
    var = [nn.Linear(H * N, HID), nn.Linear(HID, D), nn.Linear(D, HID), nn.Linear(HID, H * N)]
    weights = [t for layer in inv for t in (layer.weight, layer.bias)] + ks
    return weights + [t for layer in var for t in (layer.weight, layer.bias)]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: build(configs), lambda: tslib_initial_weights(2021))


def test_loader_draws_match_a_real_shuffled_loader():
    torch.manual_seed(3)
    for _ in DataLoader(list(range(7)), batch_size=3, shuffle=True):
        pass
    after_loader = torch.rand(3)
    torch.manual_seed(3)
    draw_like_tslib_train_loader()
    torch.testing.assert_close(torch.rand(3), after_loader, rtol=0, atol=0)


def reference_amplitude(data: np.ndarray | list[np.ndarray], seq_len: int, pred_len: int) -> np.ndarray:
    """Mean |DFT| over every window (inside each series of a list) and variate by a direct float64 loop."""
    bins = seq_len // 2 + 1
    t = np.arange(seq_len)
    basis = np.exp(-2j * np.pi * np.outer(np.arange(bins), t) / seq_len)  # [F, L]
    total, count = np.zeros(bins), 0
    for rows in data if isinstance(data, list) else [data]:
        for i in range(len(rows) - seq_len - pred_len + 1):
            for c in range(rows.shape[1]):
                total += np.abs(basis @ rows[i:i + seq_len, c].astype(np.float64))
                count += 1
    return total / count


def reference_mask(data: np.ndarray | list[np.ndarray], seq_len: int, pred_len: int, alpha: float) -> set[int]:
    """The top α fraction of `reference_amplitude`."""
    amplitude = reference_amplitude(data, seq_len, pred_len)
    return set(np.argsort(-amplitude, kind="stable")[: int(len(amplitude) * alpha)].tolist())


@pytest.mark.parametrize("seq_len", [20, 33], ids=["L20", "L33-odd"])
def test_spectrum_mask_matches_a_float64_loop(monkeypatch, seq_len):
    monkeypatch.setattr(koopa, "SPECTRUM_CHUNK", 7)  # chunk boundaries fall inside the windows
    split = synthetic_train_split(rows=150, channels=2, seed=4)
    expected = reference_mask(split.data, seq_len, 5, 0.2)
    assert set(mask_spectrum(split, seq_len, 5, 0.2).tolist()) == expected
    amplitude = koopa.mean_amplitude_spectrum(split, seq_len, 5)
    assert amplitude.dtype == torch.float64 and amplitude.shape == (seq_len // 2 + 1,)


def test_spectrum_of_separate_series_averages_the_windows_inside_each(monkeypatch):
    """M4-like: univariate series of unequal lengths, one too short for any window; windows never span two
    series (concatenating them would add windows across each seam)."""
    monkeypatch.setattr(koopa, "SPECTRUM_CHUNK", 3)
    rng = np.random.default_rng(6)
    series = [rng.normal(size=(n, 1)).cumsum(axis=0).astype(np.float32) for n in (31, 12, 26, 40)]
    split = TrainSplit(series)
    amplitude = koopa.mean_amplitude_spectrum(split, 11, 4)
    np.testing.assert_allclose(amplitude.numpy(), reference_amplitude(series, 11, 4), rtol=1e-10)
    joined = reference_amplitude(np.concatenate(series), 11, 4)
    assert not np.allclose(amplitude.numpy(), joined, rtol=1e-6)
    assert set(mask_spectrum(split, 11, 4, 0.5).tolist()) == reference_mask(series, 11, 4, 0.5)


def test_mask_follows_the_training_split_periodicity():
    """1 + sin(2πt/5) + cos(2πt/10)/2 at L = 20: amplitudes 20 (bin 0), 10 (bin 4), 5 (bin 2); top 2 kept."""
    t = np.arange(120, dtype=np.float64)[:, None]
    data = 1 + np.sin(2 * np.pi * t / 5 + np.array([[0.0, 1.0]])) + 0.5 * np.cos(2 * np.pi * t / 10)
    assert set(mask_spectrum(TrainSplit(data), 20, 4, 0.2).tolist()) == {4, 0}


@pytest.mark.parametrize("length", [12, 13], ids=["L12", "L13-odd"])
def test_fourier_filter_matches_the_direct_dft(length):
    x = torch.randn(2, length, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    masked = [0, 2, length // 2]
    x_var, x_inv = FourierFilter(torch.tensor(masked))(x)
    t = torch.arange(length, dtype=torch.float64)
    expected_inv = torch.zeros_like(x)
    for k in masked:
        coef = (x * torch.exp(-2j * torch.pi * k * t / length)[None, :, None]).sum(dim=1, keepdim=True)
        weight = 1.0 if k == 0 or 2 * k == length else 2.0
        expected_inv += weight * (coef * torch.exp(2j * torch.pi * k * t / length)[None, :, None]).real / length
    torch.testing.assert_close(x_inv, expected_inv)
    torch.testing.assert_close(x_var + x_inv, x)


def test_least_squares_operator_is_the_minimum_norm_solution():
    z = torch.randn(2, 4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    z_rec, z_pred = KPLayer()(z, pred_len=3)
    for b in range(2):
        x, y = z[b, :-1].numpy(), z[b, 1:].numpy()
        operator = torch.from_numpy(np.linalg.pinv(x) @ y)
        torch.testing.assert_close(z_rec[b, 1:], z[b, :-1] @ operator)
        torch.testing.assert_close(z_rec[b, 0], z[b, 0])
        expected = [z[b, -1:] @ torch.linalg.matrix_power(operator, j) for j in (1, 2, 3)]
        torch.testing.assert_close(z_pred[b], torch.cat(expected))


def test_time_variant_backcast_is_aligned_with_the_input():
    """With identity encoder/decoder the reconstruction of the first segment is the segment itself, so
    the backcast's first S − pad steps equal the input's (TSLib's take the padding there instead)."""
    seg, length, channels = 4, 10, 2
    kp = TimeVarKP(channels, length, seg, seg, seg * channels, nn.Identity(), nn.Identity())
    assert kp.padding_len == 2
    x = torch.randn(1, length, channels, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    backcast, forecast = kp(x)
    assert backcast.shape == (1, length, channels) and forecast.shape == (1, seg, channels)
    torch.testing.assert_close(backcast[:, : seg - kp.padding_len], x[:, : seg - kp.padding_len])


def test_forward_matches_the_block_loop_and_is_scale_equivariant(make_configs):
    model = build(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        out = model(x, None, None, None)
        mean = x.mean(1, keepdim=True)
        std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        residual, total = (x - mean) / std, 0
        for i in range(3):
            x_var, x_inv = model.disentanglement(residual)
            backcast, var_out = model.time_var_kps[i](x_var)
            total = total + model.time_inv_kps[i](x_inv) + var_out
            residual = residual - backcast
        torch.testing.assert_close(out, total * std + mean)
        torch.testing.assert_close(model(4 * x + 2, None, None, None), 4 * out + 2, rtol=1e-4, atol=1e-4)


def test_blocks_share_encoders_and_the_mask_is_not_in_the_state_dict(make_configs):
    model = build(configs_for(make_configs))
    assert all(kp.encoder is model.time_var_encoder for kp in model.time_var_kps)
    assert all(kp.encoder is model.time_inv_encoder for kp in model.time_inv_kps)
    assert not any("mask_spectrum" in key for key in model.state_dict())
    torch.testing.assert_close(model.time_inv_kps[0].K.weight @ model.time_inv_kps[0].K.weight.T, torch.eye(D))


def test_missing_train_split_is_one_actionable_line(make_configs):
    with pytest.raises(ValueError, match="train_split") as err:
        Model(configs_for(make_configs, train_split=None))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(seq_len=8), "--seq_len"), (dict(c_out=4), "--c_out"),
     (dict(pred_len=0), "--pred_len"), (dict(seq_len=195), "--seq_len")],
    ids=["task", "seq_not_above_pred", "c_out", "pred_len", "split_too_short"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def test_etth1_mask_equals_tslibs_loader_average(make_configs, data_mirror):
    """On the real ETTh1 train split (seq_len 192, pred_len 96) the mean over all windows picks the
    same 19 frequencies as TSLib's sum of per-batch means over its shuffled loader (batch 32)."""
    from data_provider.data_factory import build_dataset

    configs = make_configs(model="Koopa", root_path=str(data_mirror / "ETT-small"), data_path="ETTh1.csv",
                           seq_len=192, label_len=48, pred_len=96)
    dataset = build_dataset(configs, "train")
    split = TrainSplit(dataset.data_x)
    windows = torch.from_numpy(np.array(split.lookback_windows(192, 96)))  # [n, 192, 7]
    per_window = torch.fft.rfft(windows, dim=1).abs().mean(dim=2)  # [n, 97]
    order = torch.randperm(len(windows), generator=torch.Generator().manual_seed(2021))
    amplitudes = sum(per_window[batch].mean(dim=0) for batch in order.split(32))
    tslib = set(amplitudes.topk(int(amplitudes.shape[0] * 0.2)).indices.tolist())
    assert set(mask_spectrum(split, 192, 96, 0.2).tolist()) == tslib
