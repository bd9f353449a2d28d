"""MambaSimple: TSLib's initial weights for a seed, the selective scans against each other and against the
quadratic closed form (outputs and gradients, awkward and long lengths, extreme step sizes), causality of
the block, the de-normalised MS output, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.Mamba_Blocks import (
    SELECTIVE_SCANS,
    MambaBlock,
    selective_scan_parallel,
    selective_scan_sequential,
)
from models.MambaSimple import Model
from tests.models.tslib_reference import assert_tslib_initial_weights
from tests.numerics import assert_close

B, L, H, N, F = 2, 12, 6, 3, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="MambaSimple", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, d_ff=4, e_layers=2, expand=2, d_conv=3, dropout=0.0, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's MambaSimple initialisation in its draw order: the DataEmbedding (circular token Conv1d re-drawn
    Kaiming-normal fan_in leaky_relu; bias-free timeF Linear), then per layer in_proj, depthwise conv1d,
    x_proj, dt_proj, out_proj (A_log = log 1..N, D = 1 and the RMSNorm weights draw nothing), then the
    bias-free output Linear. Listed as named_parameters lists them (a module's own A_log, D first)."""
    torch.manual_seed(seed)
    d, e, n, k = configs.d_model, configs.d_model * configs.expand, configs.d_ff, configs.d_conv
    rank = -(-d // 16)
    token = nn.Conv1d(configs.enc_in, d, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    weights = [token.weight, nn.Linear(F, d, bias=False).weight]
    for _ in range(configs.e_layers):
        in_proj = nn.Linear(d, 2 * e, bias=False)
        conv = nn.Conv1d(e, e, k, padding=k - 1, groups=e)
        x_proj = nn.Linear(e, rank + 2 * n, bias=False)
        dt_proj = nn.Linear(rank, e)
        out_proj = nn.Linear(e, d, bias=False)
        a_log = torch.log(torch.arange(1, n + 1, dtype=torch.float32)).expand(e, n)
        weights += [a_log, torch.ones(e), in_proj.weight, conv.weight, conv.bias, x_proj.weight, dt_proj.weight,
                    dt_proj.bias, out_proj.weight, torch.ones(d)]
    return weights + [torch.ones(d), nn.Linear(d, configs.c_out, bias=False).weight]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs, e_layers=3)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def scan_inputs(batch: int, length: int, inner: int, state: int, dt: str, seed: int = 0) -> list[torch.Tensor]:
    """(u, Δ, A, B, C, D) in float64 with gradients. dt 'typical': softplus of a normal; 'tiny': Δ ~ 1e-8
    (no decay, no input); 'huge': Δ ~ 1e4 (Ā underflows to exactly 0); 'mixed': per-step choice of the three."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    typical = torch.nn.functional.softplus(randn(batch, length, inner) - 1.0)
    tiny = 1e-8 * (1.0 + torch.rand(batch, length, inner, generator=gen, dtype=torch.float64))
    huge = 1e4 * (1.0 + torch.rand(batch, length, inner, generator=gen, dtype=torch.float64))
    if dt == "mixed":
        pick = torch.randint(3, (batch, length, 1), generator=gen)
        delta = torch.where(pick == 0, typical, torch.where(pick == 1, tiny, huge))
    else:
        delta = {"typical": typical, "tiny": tiny, "huge": huge}[dt]
    a = -torch.exp(randn(inner, state).clamp(-2, 2))
    tensors = [randn(batch, length, inner), delta, a, randn(batch, length, state), randn(batch, length, state),
               randn(inner)]
    return [t.requires_grad_() for t in tensors]


def scan_closed_form(u, delta, A, B, C, D) -> torch.Tensor:
    """y_t = Σ_{s≤t} C_t · (exp((Σ_{r=s+1..t} Δ_r) A) ⊙ Δ_s B_s u_s) + D u_t from masked pairwise segment
    sums of Δ (quadratic in L; no recurrence, no division by a cumulative product)."""
    length = u.shape[1]
    total = torch.cumsum(delta, dim=1)  # [B, L, E]
    segment = total.unsqueeze(2) - total.unsqueeze(1)  # [B, t, s, E]: Σ_{r=s+1..t} Δ_r for s ≤ t
    past = torch.ones(length, length, dtype=torch.bool).tril()[None, :, :, None, None]  # s ≤ t
    # Future pairs (s > t) are masked before the exponential: their segment sums are not decays.
    decay = torch.exp((segment.unsqueeze(-1) * A).masked_fill(~past, float("-inf")))  # [B, t, s, E, N]
    inputs = delta.unsqueeze(-1) * B.unsqueeze(2) * u.unsqueeze(-1)  # [B, s, E, N]
    states = (decay * inputs.unsqueeze(1)).sum(dim=2)  # [B, t, E, N]
    return (states * C.unsqueeze(2)).sum(-1) + u * D


def outputs_and_grads(scan, inputs: list[torch.Tensor], weight: torch.Tensor) -> list[torch.Tensor]:
    y = scan(*inputs)
    # A length-1 scan never applies a decay: the gradients of A (and the decay part of Δ) are zero.
    grads = torch.autograd.grad((y * weight).sum(), inputs, allow_unused=True, materialize_grads=True)
    return [y.detach(), *grads]


CASES = [(2, 1, 3, 4, "typical"), (2, 63, 3, 4, "typical"), (2, 97, 3, 4, "mixed"), (1, 97, 3, 4, "huge"),
         (1, 97, 3, 4, "tiny"), (1, 2048, 2, 3, "mixed")]
NAMES = ["y", "du", "ddelta", "dA", "dB", "dC", "dD"]


@pytest.mark.parametrize(("batch", "length", "inner", "state", "dt"), CASES,
                         ids=[f"B{b}-T{t}-E{e}-N{n}-{dt}-float64" for b, t, e, n, dt in CASES])
def test_parallel_scan_matches_the_sequential_reference(batch, length, inner, state, dt):
    inputs = scan_inputs(batch, length, inner, state, dt)
    weight = torch.randn(batch, length, inner, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    expected = outputs_and_grads(selective_scan_sequential, inputs, weight)
    actual = outputs_and_grads(selective_scan_parallel, inputs, weight)
    for name, mine, ref in zip(NAMES, actual, expected, strict=True):
        assert torch.isfinite(mine).all(), name
        assert_close(mine, ref, rtol=1e-9, atol=1e-9, what=name)


@pytest.mark.parametrize("scan", list(SELECTIVE_SCANS))
@pytest.mark.parametrize(("length", "dt"), [(1, "typical"), (63, "typical"), (97, "mixed")],
                         ids=["T1-typical", "T63-typical", "T97-mixed"])
def test_scans_match_the_closed_form(scan, length, dt):
    inputs = scan_inputs(2, length, 3, 4, dt)
    weight = torch.randn(2, length, 3, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    expected = outputs_and_grads(scan_closed_form, inputs, weight)
    actual = outputs_and_grads(SELECTIVE_SCANS[scan], inputs, weight)
    # rtol 1e-6: the closed form subtracts cumulative sums of Δ up to ~1e6 (cancellation), the scans do not.
    for name, mine, ref in zip(NAMES, actual, expected, strict=True):
        assert_close(mine, ref, rtol=1e-6, atol=1e-8, what=name)


def test_extreme_steps_forget_or_freeze_the_state():
    """Δ huge: Ā = 0, so y_t = C_t·(Δ_t B_t u_t) + D u_t; Δ tiny: the state stays ~0, so y ≈ D u."""
    u, delta, A, Bm, C, D = (t.detach() for t in scan_inputs(1, 9, 2, 3, "huge"))
    for scan in SELECTIVE_SCANS.values():
        y = scan(u, delta, A, Bm, C, D)
        only_now = ((delta.unsqueeze(-1) * Bm.unsqueeze(2) * u.unsqueeze(-1)) * C.unsqueeze(2)).sum(-1) + u * D
        assert_close(y, only_now, rtol=1e-12, atol=1e-12, what="y (huge Δ)")
        assert_close(scan(u, torch.full_like(delta, 1e-12), A, Bm, C, D), u * D, rtol=0, atol=1e-9, what="y (tiny Δ)")


def test_block_is_causal():
    """Editing step k of the input leaves the block's outputs before k unchanged (causal conv and scan)."""
    block = MambaBlock(d_model=6, d_inner=8, dt_rank=1, d_state=4, d_conv=3).double()
    x = torch.randn(2, 20, 6, dtype=torch.float64)
    edited = x.clone()
    edited[:, 11] += 1.0
    with torch.no_grad():
        diff = (block(edited) - block(x)).abs().amax(dim=(0, 2))  # [L]
    assert (diff[:11] == 0).all() and (diff[11:] > 0).all()


def test_scan_choice_does_not_change_the_model(make_configs):
    configs = configs_for(make_configs)
    torch.manual_seed(0)
    sequential = Model(configs).double().eval()
    torch.manual_seed(0)
    parallel = Model(configs, scan="parallel").double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    marks = torch.rand(B, L, F, dtype=torch.float64) - 0.5
    with torch.no_grad():
        assert_close(parallel(x, marks, None, None), sequential(x, marks, None, None), what="forecast")


def test_forecast_is_the_last_steps_of_the_denormalised_output(make_configs):
    """Normalise, embed, residual blocks, RMSNorm, Linear, de-normalise; the last pred_len of seq_len steps.
    With --c_out 1 (MS) the output is the last variate's forecast, de-normalised with its own statistics."""
    x = torch.randn(B, L, N, dtype=torch.float64) * 4 + 2
    marks = torch.rand(B, L, F, dtype=torch.float64) - 0.5
    for c_out in (N, 1):
        model = Model(configs_for(make_configs, c_out=c_out)).double().eval()
        mean = x.mean(1, keepdim=True)
        std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        z = model.embedding((x - mean) / std, marks)
        for layer in model.layers:
            z = z + layer.mixer(layer.norm(z))
        raw = model.out_layer(model.norm(z))[:, -H:]  # [B, H, c_out]
        expected = raw * std[..., -c_out:] + mean[..., -c_out:]
        with torch.no_grad():
            assert_close(model(x, marks, None, None), expected.detach(), what=f"c_out {c_out}")


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(pred_len=L + 1), "--pred_len"),
     (dict(c_out=N + 1), "--c_out"), (dict(expand=0), "--expand"), (dict(d_conv=0), "--d_conv"),
     (dict(d_ff=0), "--d_ff"), (dict(e_layers=0), "--e_layers"), (dict(embed="onehot"), "--embed"),
     (dict(dropout=1.0), "--dropout")],
    ids=["task", "pred_len", "c_out", "expand", "d_conv", "d_ff", "e_layers", "embed", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def test_unknown_scan_is_rejected(make_configs):
    with pytest.raises(ValueError, match="sequential, parallel"):
        Model(configs_for(make_configs), scan="chunked")
