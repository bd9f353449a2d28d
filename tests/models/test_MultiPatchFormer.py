"""MultiPatchFormer: TSLib's initial weights for a seed (shared attention modules included), the
multi-scale patch embedding, position table and multi-step decoder against direct loops in float64, the
causal channel encoder, the decoder widths for every horizon, and one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from models.MultiPatchFormer import Model, valid_seq_lens
from tests.models.tslib_reference import assert_tslib_initial_weights

B, N, L = 2, 3, 62


def configs_for(make_configs, **overrides):
    flags = dict(model="MultiPatchFormer", seq_len=L, label_len=8, pred_len=24, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, n_heads=2, d_ff=12, e_layers=2, dropout=0.1)
    return make_configs(**{**flags, **overrides})


def _params(module: nn.Module) -> list[torch.Tensor]:
    return list(module.parameters())


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's construction: e_layers temporal attentions, e_layers channel attentions, the temporal
    encoders (FFN only: their attention is shared), the channel encoders (1×1 conv, FFN), the channel
    embedding (Conv1d P·D → D), the four patch convolutions, the eight decoder Linears, then `remap`.
    Registration order equals construction order (shared attentions count once, where first built)."""
    torch.manual_seed(seed)
    d, d_ff, layers, h = configs.d_model, configs.d_ff, configs.e_layers, configs.pred_len
    num_patches = (configs.seq_len - 16) // 8 + 2
    weights = []
    for _ in range(2 * layers):
        for _ in range(4):
            weights += _params(nn.Linear(d, d))
    for _ in range(layers):
        weights += _params(nn.Linear(d, d_ff)) + _params(nn.Linear(d_ff, d)) + [torch.ones(d), torch.zeros(d)] * 2
    for _ in range(layers):
        weights += _params(nn.Conv1d(d, d, 1))
        weights += _params(nn.Linear(d, d_ff)) + _params(nn.Linear(d_ff, d)) + [torch.ones(d), torch.zeros(d)] * 2
    weights += _params(nn.Conv1d(d * num_patches, d, 1))
    for length, stride in ((8, 8), (16, 8), (24, 7), (32, 6)):
        weights += _params(nn.Conv1d(1, d // 4, length, stride=stride))
    part = h // 8
    for k in range(7):
        weights += _params(nn.Linear(d + k * part, part))
    weights += _params(nn.Linear(d + 7 * part, h - 7 * part))
    return weights + _params(nn.Linear(d, configs.seq_len))


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_attention_modules_are_shared_as_in_tslib(make_configs):
    model = Model(configs_for(make_configs))
    assert model.encoder_list[1].MHA is model.shared_MHA[1]
    assert all(encoder.MHA is model.shared_MHA_ch[0] for encoder in model.encoder_list_ch)


def test_position_table_is_tslibs_double_loop(make_configs):
    """pe[pos, i] = sin(pos / 10000^(2i/D)), pe[pos, i+1] = cos(…) for even i, with math.sin/cos."""
    model = Model(configs_for(make_configs, seq_len=96, d_model=12))
    table = torch.zeros(12, 12)
    for pos in range(12):
        for i in range(0, 12, 2):
            wavelength = 10000 ** ((2 * i) / 12)
            table[pos, i] = math.sin(pos / wavelength)
            table[pos, i + 1] = math.cos(pos / wavelength)
    torch.testing.assert_close(model.pe[0], table)


def embedding_reference(model: Model, series: torch.Tensor) -> torch.Tensor:
    """One normalised series `[L]` → `[P, D]`: explicit patches (end-padded with the last value) dotted
    with each scale's kernels, scales concatenated in order, plus the position table."""
    tokens = []
    num_patches = model.pe.shape[1]
    for p in range(num_patches):
        row = []
        for k, (length, stride, pad) in enumerate(((8, 8, 0), (16, 8, 8), (24, 7, 7), (32, 6, 6)), start=1):
            conv = getattr(model, f"embedding_patch_{k}")
            padded = torch.cat([series, series[-1:].expand(pad)])
            patch = padded[p * stride: p * stride + length]
            row.append(conv.weight[:, 0] @ patch + conv.bias)
        tokens.append(torch.cat(row))
    return torch.stack(tokens) + model.pe[0]


def test_multiscale_embedding_matches_the_patch_loop(make_configs):
    model = Model(configs_for(make_configs, seq_len=97)).double()
    x = torch.randn(B * N, 97, dtype=torch.float64)
    ours = model.embed_patches(x)
    for i in range(B * N):
        torch.testing.assert_close(ours[i], embedding_reference(model, x[i]))


def test_decoder_matches_the_step_loop(make_configs):
    """Part k = out_linear_k([h, part_1, …, part_{k-1}]); the last part takes the remainder of H."""
    model = Model(configs_for(make_configs, pred_len=21)).double()
    h = torch.randn(B, N, 8, dtype=torch.float64)
    out = model.decode(h)
    assert out.shape == (B, N, 21)
    parts = []
    for k in range(1, 9):
        linear = getattr(model, f"out_linear_{k}")
        parts.append(torch.cat([h, *parts], dim=-1) @ linear.weight.T + linear.bias)
    assert [p.shape[-1] for p in parts] == [2] * 7 + [7]
    torch.testing.assert_close(out, torch.cat(parts, dim=-1))


@pytest.mark.parametrize("pred_len", [8, 16, 20, 23, 96], ids=lambda h: f"H{h}")
def test_any_horizon_runs(make_configs, pred_len):
    """TSLib sizes decoder part k from ⌊(k−1)·H/8⌋ and fails unless H mod 8 ∈ {0, 1}; here every H runs."""
    model = Model(configs_for(make_configs, pred_len=pred_len)).eval()
    assert model(torch.randn(B, L, N)).shape == (B, pred_len, N)


@pytest.mark.filterwarnings("error")
def test_short_horizon_is_predicted_by_the_last_part(make_configs):
    """H < 8 (e.g. M4 Yearly, 6): parts 1-7 are empty (TSLib's ⌊H/8⌋ split), part 8 predicts all H, and
    the empty parts build without torch's zero-element warning (seven of them per model on M4 Yearly)."""
    model = Model(configs_for(make_configs, pred_len=6)).eval()
    assert [getattr(model, f"out_linear_{k}").out_features for k in range(1, 9)] == [0] * 7 + [6]
    assert model(torch.randn(B, L, N)).shape == (B, 6, N)


def test_channel_encoder_is_causal_over_variates(make_configs):
    """TSLib's channel attention is causal: variate 0's forecast ignores variates 1 … N−1."""
    model = Model(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    changed = x.clone()
    changed[:, :, 1:] = torch.randn(B, L, N - 1, dtype=torch.float64)
    with torch.no_grad():
        base, moved = model(x), model(changed)
    torch.testing.assert_close(moved[..., 0], base[..., 0])
    assert not torch.allclose(moved[..., 1:], base[..., 1:])


def test_instance_normalised_forecast_is_shift_and_scale_equivariant(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(3.0 * x + 5.0), 3.0 * model(x) + 5.0, rtol=1e-4, atol=1e-4)


def test_valid_windows_are_those_where_the_scales_agree():
    assert valid_seq_lens() == [62, 63, *range(68, 72), *range(74, 86), *range(88, 92), 96, 97]


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(d_model=10, n_heads=2), "--d_model"),
     (dict(d_model=8, n_heads=3), "--d_model"), (dict(seq_len=192), "--seq_len"), (dict(seq_len=64), "--seq_len"),
     (dict(e_layers=0), "--e_layers"), (dict(c_out=4), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "d_model-4", "heads", "seq_len-192", "seq_len-64", "e_layers", "c_out", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag) as error:
        Model(configs_for(make_configs, **overrides))
    assert "\n" not in str(error.value)


def test_seq_len_error_lists_the_windows_that_work(make_configs):
    with pytest.raises(ValueError, match=r"24/24/26/28 .* use --seq_len in 62-63, 68-71, 74-85, 88-91, 96-97"):
        Model(configs_for(make_configs, seq_len=192))
