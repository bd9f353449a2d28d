"""Fast paths of the chunked CAPS kernel: the analytic backward of `_FactorisedAttention`, the
chunked path-1 normaliser `_riemann_normaliser` and the sequence-blocked eager kernel
(`_BlockedChunkedCAPS`, recompute in backward), each against the form it replaces.

Tolerances as tests/layers/test_caps_attention.py: float64 1e-12, float32 vs float64 reference 1e-5.
"""

from __future__ import annotations

import pytest
import torch

import layers.CAPS_Attention as caps
from layers.caps import chunked, decayed, maths
from tests.layers.test_caps_attention import F32_TOL, F64_TOL, make_inputs
from tests.numerics import assert_close_to_scale


def factorised_inputs(B: int, H: int, N: int, C: int, F: int, Ev: int, dtype, spread: float, seed: int = 0):
    """Chunked qc, kc [B, H, N, C, F], vc [B, H, N, C, Ev] and the in-chunk log decay local, first,
    scaled so that the largest in-chunk spread equals `spread`."""
    gen = torch.Generator().manual_seed(seed)
    qc, kc = (torch.randn(B, H, N, C, F, generator=gen, dtype=torch.float64) for _ in range(2))
    vc = torch.randn(B, H, N, C, Ev, generator=gen, dtype=torch.float64)
    ell = -torch.rand(B, H, N * C, F, generator=gen, dtype=torch.float64)
    local, first = maths._local_log_decay(ell, C)
    local, first = (x * (spread / (-local[:, :, :, -1]).amax()) for x in (local, first))
    return [x.to(dtype) for x in (qc, kc, vc, local, first)]


def test_factorised_backward_passes_gradcheck() -> None:
    """Analytic backward vs finite differences in float64 (local and first as free inputs)."""
    inputs = [x.requires_grad_() for x in factorised_inputs(1, 2, 3, 4, 3, 2, torch.float64, spread=2.0)]
    assert torch.autograd.gradcheck(decayed._FactorisedAttention.apply, inputs)


@pytest.mark.parametrize("spread", [3.0, 31.0, 79.0], ids=["weak", "default-init", "near-limit"])
def test_factorised_backward_matches_autograd(spread: float) -> None:
    """Analytic gradients vs autograd through `_factorised_forward`: float64 exactly, float32 vs float64,
    up to an in-chunk spread just under MAX_FACTORISED_SPREAD."""
    x64 = [x.requires_grad_() for x in factorised_inputs(2, 2, 4, 64, 6, 4, torch.float64, spread)]
    assert bool((-x64[3][:, :, :, -1]).amax() <= caps.MAX_FACTORISED_SPREAD)
    weight = torch.randn(2, 2, 4, 64, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref = torch.autograd.grad((decayed._factorised_forward(*x64)[0] * weight).sum(), x64)
    fast = torch.autograd.grad((decayed._FactorisedAttention.apply(*x64) * weight).sum(), x64)
    x32 = [x.detach().float().requires_grad_() for x in x64]
    fast32 = torch.autograd.grad((decayed._FactorisedAttention.apply(*x32) * weight.float()).sum(), x32)
    for name, a, b, c in zip(["qc", "kc", "vc", "local", "first"], fast, ref, fast32, strict=True):
        assert_close_to_scale(a, b, F64_TOL, f"d{name} analytic vs autograd, float64")
        assert_close_to_scale(c, b, F32_TOL, f"d{name} analytic float32 vs autograd float64")


def path1_parts(T: int, chunk: int, jump: float, dtype=torch.float64):
    """w = exp(pt - m), ell = per-step decay of -m, and the reference normaliser exp(lse - m)."""
    q, k, v, p, g, clock = make_inputs(2, T, 2, 8, dtype=torch.float64)
    pt = (p * jump + torch.log(clock)[..., None]).transpose(1, 2)  # [B, H, T, E]
    m = torch.cummax(pt, dim=2).values
    ell = torch.nn.functional.pad(m[:, :, :-1] - m[:, :, 1:], (0, 0, 1, 0))
    ref = torch.exp(torch.logcumsumexp(pt, dim=2) - m)
    return torch.exp(pt - m).to(dtype), ell.to(dtype), ref


@pytest.mark.parametrize("T", [1, 97, 1000], ids=["T1", "T97", "T1000"])
def test_riemann_normaliser_matches_logcumsumexp(T: int) -> None:
    w, ell, ref = path1_parts(T, 64, jump=3.0)
    assert bool(caps.factorised_is_safe(ell, 64))
    assert_close_to_scale(maths._riemann_normaliser(w, ell, 64), ref, F64_TOL, "normaliser float64")
    w32, ell32, _ = path1_parts(T, 64, jump=3.0, dtype=torch.float32)
    assert_close_to_scale(maths._riemann_normaliser(w32, ell32, 64), ref, F32_TOL, "normaliser float32 vs float64")


def test_path1_features_agree_across_normaliser_branches() -> None:
    """p rising by 1.5 per step makes path 1's in-chunk spread ~95 at chunk 64 (past the limit) and
    ~5 at chunk 4: the scan branch (chunk 64) and the chunked normaliser (chunk 4) agree."""
    q, k, v, p, g, clock = make_inputs(1, 70, 2, 8, dtype=torch.float32)
    p = p + 1.5 * torch.arange(70.0)[None, :, None, None]
    _, _, ell = maths._path_features(q, k, p, g, clock, (1,), chunk_size=4)
    assert bool(caps.factorised_is_safe(ell, 4)) and not bool(caps.factorised_is_safe(ell, 64))
    ref = maths._path_features(*(x.double() for x in (q, k, p, g, clock)), (1,), chunk_size=64)
    for chunk in (4, 64):
        qt, kt, ell = maths._path_features(q, k, p, g, clock, (1,), chunk_size=chunk)
        assert_close_to_scale(qt, ref[0], F32_TOL, f"qt chunk {chunk}")
        assert_close_to_scale(kt, ref[1], F32_TOL, f"kt chunk {chunk}")


@pytest.mark.parametrize("regime", ["default", "gates_x10"])
@pytest.mark.parametrize("paths", ["123", "1", "none"])
def test_blocked_kernel_matches_unblocked_and_naive(paths: str, regime: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 2 sequences (5 = 2 + 2 + 1 rows, a ragged last block): outputs and all six input
    gradients equal the single-block kernel and the float64 naive reference."""
    x64 = make_inputs(5, 150, 2, 4, regime=regime)
    block = 2 * 150 * 2 * 4 * max(1, len(paths.replace("none", "")))
    assert caps.rows_per_block(x64[0].shape, len(caps.parse_paths(paths)), block) == 2
    weight = torch.randn(5, 150, 2, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)

    def run(fn, dtype):
        xs = [x.detach().to(dtype).requires_grad_() for x in x64]
        out = fn(*xs)
        grads = torch.autograd.grad((out * weight.to(dtype)).sum(), xs, allow_unused=True)
        return [out, *(torch.zeros_like(x) if d is None else d for x, d in zip(xs, grads, strict=True))]

    ids = caps.parse_paths(paths)
    ref = run(lambda *x: caps.CAPS_KERNELS["naive"](*x, ids), torch.float64)
    single = run(lambda *x: caps.CAPS_KERNELS["chunked"](*x, ids), torch.float32)
    monkeypatch.setattr(chunked, "BLOCK_ELEMENTS", block)
    blocked = run(lambda *x: caps.CAPS_KERNELS["chunked"](*x, ids), torch.float32)
    for name, b, s, r in zip(["o", "dq", "dk", "dv", "dp", "dg", "dclock"], blocked, single, ref, strict=True):
        assert_close_to_scale(b, s, F32_TOL, f"{name} blocked vs single block")
        assert_close_to_scale(b, r, F32_TOL, f"{name} blocked float32 vs naive float64")


def test_blocked_kernel_only_returns_requested_gradients(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs without requires_grad get no gradient; the others match the single-block kernel."""
    q, k, v, p, g, clock = make_inputs(3, 40, 2, 4, dtype=torch.float32)
    q.requires_grad_()
    v.requires_grad_()
    ref_dq, ref_dv = torch.autograd.grad(caps.caps_attention_chunked(q, k, v, p, g, clock, (1, 2, 3)).sum(), [q, v])
    monkeypatch.setattr(chunked, "BLOCK_ELEMENTS", 40 * 2 * 4 * 3)
    blocked = caps.caps_attention_chunked(q, k, v, p, g, clock, (1, 2, 3))
    dq, dv = torch.autograd.grad(blocked.sum(), [q, v])
    assert_close_to_scale(dq, ref_dq, F32_TOL, "dq")
    assert_close_to_scale(dv, ref_dv, F32_TOL, "dv")
    assert k.grad is None and clock.grad is None
