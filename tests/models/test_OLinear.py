"""OLinear: the parameter count of the paper's ETTh1 setting counted independently, the official
construction order of the initial weights, the OrthoTrans correlation and basis against float64
references, the basis cache (hit, invalidation, corrupt file, atomic write), NormLin and the forward
against a loop reference, and one-line errors naming the flag."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import layers.OrthoTrans as orthotrans
from layers.OrthoTrans import (
    cache_path,
    cached_orthotrans_basis,
    orthotrans_basis,
    segments_temporal_correlation,
    temporal_correlation,
    temporal_correlation_reference,
)
from models.OLinear import EMBED_SIZE_DEFAULT, Model
from tests.models.tslib_reference import assert_tslib_initial_weights
from utils.train_split import TrainSplit, synthetic_train_split

B, L, H, N, E, DM, FF = 2, 12, 6, 3, 4, 8, 10


def configs_for(make_configs, **overrides):
    flags = dict(model="OLinear", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=DM,
                 d_ff=FF, e_layers=2, embed_size=E, dropout=0.2, train_split=synthetic_train_split(rows=120, channels=N))
    return make_configs(**{**flags, **overrides})


def paper_parameter_count(seq_len: int, pred_len: int, n: int, d: int, d_model: int, d_ff: int, layers: int) -> int:
    """OLinear's trainable parameters from the paper's architecture: φ (d), RevIN affine (2N), the offsets
    Δ₁, Δ₂ (N·L + N·H), Lin_in (L·d → D) and Lin_out (D → H·d), per NormLin block two LayerNorms (4D),
    W_v and W_o (2(D² + D)), W (N²) and the feed-forward D → d_ff → D, the encoder's final LayerNorm
    (2D), and the output MLP H·d → d_ff → H."""
    linear = lambda i, o: i * o + o  # noqa: E731
    block = 4 * d_model + 2 * linear(d_model, d_model) + n * n + linear(d_model, d_ff) + linear(d_ff, d_model)
    return (d + 2 * n + n * seq_len + n * pred_len + linear(seq_len * d, d_model) + linear(d_model, pred_len * d)
            + layers * block + 2 * d_model + linear(pred_len * d, d_ff) + linear(d_ff, pred_len))


def test_parameter_count_of_the_papers_etth1_setting(make_configs):
    """ETTh1-96: L = H = 96, N = 7, d = 16, D = d_ff = 512, 2 blocks (the paper's script)."""
    expected = paper_parameter_count(96, 96, 7, 16, 512, 512, 2)
    assert expected == 4_518_944
    configs = make_configs(model="OLinear", seq_len=96, pred_len=96, enc_in=7, dec_in=7, c_out=7, d_model=512,
                           d_ff=512, e_layers=2, train_split=synthetic_train_split(rows=400, channels=7))
    assert configs.embed_size == EMBED_SIZE_DEFAULT == 16
    model = Model(configs)
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == expected


def official_initial_weights(seed: int) -> list[torch.Tensor]:
    """The official construction order: φ = randn(1, d); output MLP Linear(H·d, d_ff), Linear(d_ff, H);
    RevIN (ones, zeros); per block LayerNorm, v_proj, out_proj, W = I + randn(N, N), the width-1
    Conv1d(D, d_ff), Conv1d(d_ff, D) (= Linear draws), LayerNorm; final LayerNorm; Lin_in; Lin_out;
    Δ₁ = Δ₂ = 0. Listed in our registration order (a module's own parameters before its children's)."""
    torch.manual_seed(seed)
    phi = torch.randn(1, E)
    fc = [nn.Linear(H * E, FF), nn.Linear(FF, H)]
    revin = [torch.ones(N), torch.zeros(N)]
    blocks = []
    for _ in range(2):
        norm1 = nn.LayerNorm(DM)
        v_proj, out_proj = nn.Linear(DM, DM), nn.Linear(DM, DM)
        mix = torch.eye(N) + torch.randn(N, N)
        conv1, conv2 = nn.Conv1d(DM, FF, 1), nn.Conv1d(FF, DM, 1)
        norm2 = nn.LayerNorm(DM)
        blocks += [mix[None], norm1.weight, norm1.bias, v_proj.weight, v_proj.bias, out_proj.weight, out_proj.bias,
                   conv1.weight.squeeze(-1), conv1.bias, conv2.weight.squeeze(-1), conv2.bias, norm2.weight, norm2.bias]
    final = nn.LayerNorm(DM)
    lin_in, lin_out = nn.Linear(L * E, DM), nn.Linear(DM, H * E)
    deltas = [torch.zeros(1, N, 1, L), torch.zeros(1, N, 1, H)]
    return ([phi, *deltas, fc[0].weight, fc[0].bias, fc[1].weight, fc[1].bias, *revin, *blocks,
             final.weight, final.bias, lin_in.weight, lin_in.bias, lin_out.weight, lin_out.bias])


def test_initial_weights_follow_the_official_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: official_initial_weights(2021))


def awkward_series(rows: int = 70, channels: int = 3, seed: int = 0) -> np.ndarray:
    """Channels on very different offsets and scales, with trends, so centring and scaling matter."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)[:, None]
    base = np.sin(2 * np.pi * t / np.array([[7.0, 11.0, 5.0]])[:, :channels]) + 0.01 * t
    return (1e3 * np.arange(channels) + np.array([1.0, 50.0, 0.01])[:channels] * (base + rng.standard_normal((rows, channels))))


@pytest.mark.parametrize("lags", [1, 2, 7, 13], ids=["T1", "T2", "T7", "T13"])
def test_temporal_correlation_matches_corrcoef_of_the_lagged_copies(lags):
    data = awkward_series()
    fast = temporal_correlation(data, lags)
    np.testing.assert_allclose(fast, temporal_correlation_reference(data, lags), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(fast, fast.T, rtol=0, atol=0)


def test_constant_variates_are_left_out_of_the_average():
    data = awkward_series()
    with_constant = np.concatenate([data, np.full((len(data), 1), 3.0)], axis=1)
    np.testing.assert_allclose(temporal_correlation(with_constant, 5), temporal_correlation(data, 5), atol=1e-12)
    np.testing.assert_allclose(temporal_correlation(np.ones((20, 2)), 4), np.eye(4))


def test_separate_series_average_their_correlations_like_variates():
    """M4-like univariate series of unequal lengths and scales: the mean of each long-enough series' own
    correlation (a series of 4 values has none at 5 lags), unchanged when one series is rescaled, and for
    one series exactly `temporal_correlation`."""
    rng = np.random.default_rng(2)
    series = [rng.normal(size=(n, 1)).cumsum(axis=0) + 50 for n in (30, 4, 17, 22)]
    expected = np.mean([temporal_correlation_reference(s, 5) for s in series if len(s) > 5], axis=0)
    got = segments_temporal_correlation(tuple(series), 5)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    rescaled = (series[0] * 1e4, *series[1:])
    np.testing.assert_allclose(segments_temporal_correlation(rescaled, 5), got, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(segments_temporal_correlation((series[0],), 5), temporal_correlation(series[0], 5))
    with pytest.raises(ValueError, match="none of the 2 training series has more than 5 values"):
        segments_temporal_correlation((series[1], series[1]), 5)


def test_model_on_separate_series_projects_on_their_bases(make_configs):
    rng = np.random.default_rng(3)
    series = [rng.normal(size=(n, 1)).cumsum(axis=0).astype(np.float32) for n in (40, 25, 33)]
    model = Model(configs_for(make_configs, enc_in=1, dec_in=1, c_out=1, train_split=TrainSplit(series)))
    for buffer, lags in ((model.q_in, L), (model.q_out, H)):
        expected = orthotrans_basis(segments_temporal_correlation(tuple(series), lags))
        torch.testing.assert_close(buffer, torch.from_numpy(expected).float())


def test_basis_diagonalises_the_correlation_by_decreasing_eigenvalue():
    corr = temporal_correlation_reference(awkward_series(), 9)
    q = orthotrans_basis(corr)
    np.testing.assert_allclose(q @ q.T, np.eye(9), atol=1e-12)
    diag = q @ corr @ q.T
    np.testing.assert_allclose(diag, np.diag(np.diag(diag)), atol=1e-10)
    assert (np.diff(np.diag(diag)) <= 1e-12).all()
    for row in q:  # each row is an eigenvector, its largest entry positive
        np.testing.assert_allclose(corr @ row, (row @ corr @ row) * row, atol=1e-10)
        assert row[np.abs(row).argmax()] > 0


def test_model_projects_on_the_bases_of_the_training_split(make_configs):
    configs = configs_for(make_configs)
    model = Model(configs)
    data = configs.train_split.data
    for buffer, lags in ((model.q_in, L), (model.q_out, H)):
        expected = orthotrans_basis(temporal_correlation_reference(data, lags))
        torch.testing.assert_close(buffer, torch.from_numpy(expected).float())
    assert {"q_in", "q_out"} <= set(model.state_dict())


def test_cache_hit_invalidation_and_atomic_write(tmp_path, monkeypatch):
    split = TrainSplit(awkward_series().astype(np.float32), cache_dir=tmp_path)
    first = cached_orthotrans_basis(split, 6)
    path = cache_path(tmp_path, split, 6)
    assert path.is_file() and [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left

    def no_recompute(*args):
        raise AssertionError("the cached basis should have been read")

    monkeypatch.setattr(orthotrans, "temporal_correlation", no_recompute)
    np.testing.assert_array_equal(cached_orthotrans_basis(split, 6), first)  # hit
    with pytest.raises(AssertionError):
        cached_orthotrans_basis(split, 5)  # other length: its own entry
    changed = TrainSplit(split.data + np.float32(0.5) * (np.arange(len(split.data)) % 3)[:, None].astype(np.float32),
                         cache_dir=tmp_path)
    assert changed.fingerprint != split.fingerprint
    with pytest.raises(AssertionError):
        cached_orthotrans_basis(changed, 6)  # other data (file content / borders / scaling): its own entry
    monkeypatch.undo()

    path.write_bytes(b"not an npy file")
    np.testing.assert_array_equal(cached_orthotrans_basis(split, 6), first)  # corrupt: recomputed ...
    np.testing.assert_array_equal(np.load(path), first)  # ... and rewritten


def test_without_a_cache_folder_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cached_orthotrans_basis(TrainSplit(awkward_series()), 4)
    assert list(tmp_path.iterdir()) == []


def reference_forward(model: Model, x: torch.Tensor) -> torch.Tensor:
    """The module docstring's equations written out (eval mode), NormLin with an explicit token loop."""
    mean = x.mean(1, keepdim=True)
    std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
    xn = (x - mean) / std * model.revin_layer.affine_weight + model.revin_layer.affine_bias  # [B, L, N]
    phi = model.embeddings[0]
    z = torch.einsum("bln,d,kl->bndk", xn, phi, model.q_in) + model.delta1  # [B, N, d, L]
    h = model.input_proj(z.reshape(B, N, E * L))
    for layer in model.encoder.layers:
        w = F.softplus(layer.weight_mat[0])
        v = layer.v_proj(h)
        mixed = torch.stack([sum(w[i, j] / w[i].sum() * v[:, j] for j in range(N)) for i in range(N)], dim=1)
        h = layer.norm1(h + layer.out_proj(mixed))
        h = layer.norm2(h + layer.ffn2(F.gelu(layer.ffn1(h))))
    h = model.output_proj(model.encoder.norm(h)).reshape(B, N, E, H)
    y = torch.einsum("bndk,kh->bnhd", h, model.q_out) + model.delta2.transpose(-1, -2)  # [B, N, H, d]
    out = model.fc(y.reshape(B, N, H * E)).transpose(1, 2)  # [B, H, N]
    out = (out - model.revin_layer.affine_bias) / (model.revin_layer.affine_weight + 1e-10)
    return out * std + mean


def test_forward_matches_the_equations(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # move the zero/one initialisations off their special values
            p.add_(0.1 * torch.randn(p.shape, dtype=p.dtype, generator=torch.Generator().manual_seed(p.numel())))
    x = torch.randn(B, L, N, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(model(x, None, None, None), reference_forward(model, x))


def test_missing_train_split_is_one_actionable_line(make_configs):
    with pytest.raises(ValueError, match="train_split") as err:
        Model(configs_for(make_configs, train_split=None))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(embed_size=0), "--embed_size"),
     (dict(activation="tanh"), "--activation"), (dict(c_out=4), "--c_out"), (dict(e_layers=0), "--e_layers"),
     (dict(seq_len=119), "--seq_len")],
    ids=["task", "embed_size", "activation", "c_out", "e_layers", "split_too_short"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
