"""The CAPS blocks' fast RMSNorm (`layers/caps/rmsnorm.py`) and tiled MLP (`layers/caps/mlp.py`) against their
autograd references: forwards bit for bit, gradients of every input in float64 (1e-12) and float32 against a
float64 reference (1e-5, relative to the gradient's scale), awkward shapes, and what each keeps for backward.
The model-level check (fast blocks on against off) is in tests/models/test_caps_fast_blocks.py.
"""

from __future__ import annotations

import pytest
import torch

from compare.grid.efficiency import TensorMemoryTracker
from layers.caps.mlp import gelu_mlp, gelu_mlp_reference, gelu_mlp_tiled
from layers.caps.rmsnorm import rms_norm, rms_norm_fused, rms_norm_reference
from tests.numerics import assert_close_to_scale

F64_TOL = 1e-12
F32_TOL = 1e-5
EPS = 1e-5
# (leading shape, D): T = 1, odd lengths, a width of 1 and the recipe's D = 32 over a long row count.
SHAPES = [((1, 1), 2), ((2, 97), 32), ((3, 63), 24), ((5,), 1), ((2, 2048), 32)]
SHAPE_IDS = ["B1-T1-D2", "B2-T97-D32", "B3-T63-D24", "N5-D1", "B2-T2048-D32"]


def _norm_inputs(lead: tuple[int, ...], dim: int, dtype: torch.dtype, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*lead, dim, generator=gen, dtype=torch.float64) * 3.0
    weight = 1.0 + 0.3 * torch.randn(dim, generator=gen, dtype=torch.float64)
    dy = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    return [t.to(dtype) for t in (x, weight, dy)]


def _grads(fn, x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor) -> list[torch.Tensor]:  # noqa: ANN001
    x, weight = x.detach().requires_grad_(), weight.detach().requires_grad_()
    out = fn(x, weight)
    return [out.detach(), *torch.autograd.grad(out, (x, weight), dy)]


@pytest.mark.parametrize(("lead", "dim"), SHAPES, ids=SHAPE_IDS)
def test_fused_rms_norm_matches_the_reference(lead: tuple[int, ...], dim: int) -> None:
    """Same forward bit for bit (float32); gradients of x and w: float64 to 1e-12, float32 to 1e-5 of float64."""
    ref64 = _grads(lambda a, b: rms_norm_reference(a, b, EPS), *_norm_inputs(lead, dim, torch.float64))
    fast64 = _grads(lambda a, b: rms_norm_fused(a, b, EPS), *_norm_inputs(lead, dim, torch.float64))
    fast32 = _grads(lambda a, b: rms_norm_fused(a, b, EPS), *_norm_inputs(lead, dim, torch.float32))
    ref32 = _grads(lambda a, b: rms_norm_reference(a, b, EPS), *_norm_inputs(lead, dim, torch.float32))
    assert torch.equal(fast32[0], ref32[0]), "fused forward differs from the reference (float32)"
    # dx = r (g - n mean(g n)) cancels to ~0 when D = 1 (n = ±1): its scale is that of the terms r g.
    x, weight, dy = _norm_inputs(lead, dim, torch.float64)
    terms = (dy * weight * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)).abs().max().item()
    for name, a, b, c in zip(["y", "dx", "dw"], fast64, ref64, fast32, strict=True):
        floor = terms if name == "dx" else 0.0
        assert_close_to_scale(a, b, F64_TOL, f"{name} fused vs reference, float64", scale_floor=floor)
        assert_close_to_scale(c, b, F32_TOL, f"{name} fused float32 vs reference float64", scale_floor=floor)


def test_fused_rms_norm_passes_gradcheck() -> None:
    x, weight, _ = _norm_inputs((2, 5), 6, torch.float64)
    assert torch.autograd.gradcheck(lambda a, b: rms_norm_fused(a, b, EPS),
                                    (x.requires_grad_(), weight.requires_grad_()))


def test_fused_rms_norm_with_tiny_rows_and_half_precision() -> None:
    """Rows far below eps (r near eps^-1/2) and bf16 inputs: the fused form matches the reference exactly."""
    x, weight, dy = _norm_inputs((4, 7), 16, torch.float32)
    x[0] *= 1e-6
    a = _grads(lambda u, w: rms_norm_fused(u, w, EPS), x, weight, dy)
    b = _grads(lambda u, w: rms_norm_reference(u, w, EPS), x, weight, dy)
    for name, fast, ref in zip(["y", "dx", "dw"], a, b, strict=True):
        assert_close_to_scale(fast, ref, F32_TOL, f"{name}, tiny rows")
    xb = x.bfloat16()
    assert torch.equal(rms_norm_fused(xb, weight, EPS), rms_norm_reference(xb, weight, EPS))


def test_rms_norm_uses_the_reference_under_autocast() -> None:
    """Under autocast the dispatcher runs the autograd formula (the fused backward would run outside it)."""
    x, weight, _ = _norm_inputs((2, 3), 8, torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = rms_norm(x.requires_grad_(), weight, EPS)
    assert out.grad_fn is not None and "RMSNorm" not in type(out.grad_fn).__name__


def _mlp_inputs(lead: tuple[int, ...], dim: int, dtype: torch.dtype, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    h = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    w_fc = torch.randn(4 * dim, dim, generator=gen, dtype=torch.float64) / dim**0.5
    w_proj = torch.randn(dim, 4 * dim, generator=gen, dtype=torch.float64) / (2 * dim**0.5)
    dy = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    return [t.to(dtype) for t in (h, w_fc, w_proj, dy)]


def _mlp_grads(fn, h, w_fc, w_proj, dy) -> list[torch.Tensor]:  # noqa: ANN001
    leaves = [t.detach().requires_grad_() for t in (h, w_fc, w_proj)]
    out = fn(*leaves)
    return [out.detach(), *torch.autograd.grad(out, leaves, dy)]


# Tile sizes: one row per tile, a size that leaves a short last tile, and the default (one tile for most shapes).
TILES = [1, 7, 1024]


@pytest.mark.parametrize("tile_rows", TILES)
@pytest.mark.parametrize(("lead", "dim"), SHAPES, ids=SHAPE_IDS)
def test_tiled_mlp_matches_the_reference(lead: tuple[int, ...], dim: int, tile_rows: int) -> None:
    """Forward to float32 rounding (bit for bit where the GEMM's row results do not depend on the row count);
    gradients of h, W_fc, W_proj: float64 to 1e-12, float32 to 1e-5 of the float64 reference."""
    def tiled(h, w_fc, w_proj):  # noqa: ANN001, ANN202
        return gelu_mlp_tiled(h, w_fc, w_proj, tile_rows)

    fast32, ref32 = check_tiled_against_reference(tiled, gelu_mlp_reference, _mlp_inputs, lead, dim,
                                                  ["y", "dh", "dw_fc", "dw_proj"])
    assert_close_to_scale(fast32, ref32, 1e-6, "y tiled vs reference, float32")


def check_tiled_against_reference(tiled, reference, make_inputs, lead: tuple[int, ...], dim: int,  # noqa: ANN001
                                  names: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """`tiled` and `reference` on `make_inputs(lead, dim, dtype)` (three leaves and dy): every output and gradient
    of the tiled form to 1e-12 of the reference in float64 and, in float32, to 1e-5 of the float64 reference;
    returns the float32 forwards (tiled, reference) for the caller's own check."""
    ref64 = _mlp_grads(reference, *make_inputs(lead, dim, torch.float64))
    fast64 = _mlp_grads(tiled, *make_inputs(lead, dim, torch.float64))
    fast32 = _mlp_grads(tiled, *make_inputs(lead, dim, torch.float32))
    ref32 = _mlp_grads(reference, *make_inputs(lead, dim, torch.float32))
    assert fast32[0].shape == ref32[0].shape
    for name, a, b, c in zip(names, fast64, ref64, fast32, strict=True):
        assert_close_to_scale(a, b, F64_TOL, f"{name} tiled vs reference, float64")
        assert_close_to_scale(c, b, F32_TOL, f"{name} tiled float32 vs reference float64")
    return fast32[0], ref32[0]


def test_tiled_mlp_passes_gradcheck() -> None:
    h, w_fc, w_proj, _ = _mlp_inputs((2, 3), 4, torch.float64)
    assert torch.autograd.gradcheck(lambda a, b, c: gelu_mlp_tiled(a, b, c, 4),
                                    tuple(t.requires_grad_() for t in (h, w_fc, w_proj)))


def test_tiled_mlp_rejects_an_empty_tile() -> None:
    h, w_fc, w_proj, _ = _mlp_inputs((2, 3), 4, torch.float32)
    with pytest.raises(ValueError, match="tile_rows must be >= 1, got 0"):
        gelu_mlp_tiled(h, w_fc, w_proj, 0)


def test_mlp_uses_the_reference_under_autocast() -> None:
    h, w_fc, w_proj, _ = _mlp_inputs((2, 3), 8, torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = gelu_mlp(h.requires_grad_(), w_fc, w_proj)
    assert out.grad_fn is not None and "Tiled" not in type(out.grad_fn).__name__


def _saved_bytes(fn, *inputs: torch.Tensor) -> int:  # noqa: ANN001
    """Bytes of the tensors created by `fn` and still alive after it returned (what backward keeps)."""
    tracker = TensorMemoryTracker()
    with tracker:
        out = fn(*inputs)
        kept = tracker.live - out.untyped_storage().nbytes()
    return kept


def test_lean_forms_keep_less_for_backward() -> None:
    """Storage kept alive for backward by one call at [2, 97, 32]: the reference MLP keeps a and GELU(a)
    (2 x 4D wide), the tiled one nothing of its own (h is the caller's); the reference norm keeps r and x·r, the fused one r only."""
    h, w_fc, w_proj, _ = _mlp_inputs((2, 97), 32, torch.float32)
    leaves = [t.requires_grad_() for t in (h, w_fc, w_proj)]
    width4 = 2 * 97 * 4 * 32 * 4  # bytes of one [2, 97, 4D] float32 tensor
    assert _saved_bytes(gelu_mlp_reference, *leaves) == 2 * width4
    assert _saved_bytes(lambda a, b, c: gelu_mlp_tiled(a, b, c, 7), *leaves) == 0
    x, weight, _ = _norm_inputs((2, 97), 32, torch.float32)
    x.requires_grad_()
    weight.requires_grad_()
    rows = 2 * 97 * 4  # bytes of r [2, 97, 1]
    assert _saved_bytes(lambda a, b: rms_norm_fused(a, b, EPS), x, weight) == rows
    assert _saved_bytes(lambda a, b: rms_norm_reference(a, b, EPS), x, weight) == rows + width4 // 4
