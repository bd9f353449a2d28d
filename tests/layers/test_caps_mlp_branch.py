"""The CAPS block's MLP half in tiles (`layers/caps/mlp_branch.py`) against its autograd formula and against the
block's module steps: forward bit for bit in float32, gradients of x, the norm weight and both MLP weights in
float64 (1e-12) and float32 against a float64 reference (1e-5 of each gradient's scale), gradcheck, and what it
keeps for backward. The model-level check (fast blocks on against off) is in tests/models/test_caps_fast_blocks.py.
"""

from __future__ import annotations

import pytest
import torch

from layers.caps.mlp import gelu_mlp_tiled
from layers.caps.mlp_branch import residual_gelu_mlp_reference, residual_gelu_mlp_tiled
from layers.caps.rmsnorm import rms_norm_fused
from layers.caps.tiles import tile_rows as default_tile_rows
from tests.layers.test_caps_block_ops import SHAPE_IDS, SHAPES, TILES, _saved_bytes
from tests.numerics import assert_close_to_scale

EPS = 1e-5


def _inputs(lead: tuple[int, ...], dim: int, dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*lead, dim, generator=gen, dtype=torch.float64) * 2.0
    norm_weight = 1.0 + 0.3 * torch.randn(dim, generator=gen, dtype=torch.float64)
    w_fc = torch.randn(4 * dim, dim, generator=gen, dtype=torch.float64) / dim**0.5
    w_proj = torch.randn(dim, 4 * dim, generator=gen, dtype=torch.float64) / (2 * dim**0.5)
    dy = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    return [t.to(dtype) for t in (x, norm_weight, w_fc, w_proj, dy)]


def _grads(fn, x, norm_weight, w_fc, w_proj, dy) -> list[torch.Tensor]:  # noqa: ANN001
    leaves = [t.detach().requires_grad_() for t in (x, norm_weight, w_fc, w_proj)]
    out = fn(leaves[0], leaves[1], EPS, leaves[2], leaves[3])
    return [out.detach(), *torch.autograd.grad(out, leaves, dy)]


def _module_steps(x, norm_weight, eps, w_fc, w_proj):  # noqa: ANN001, ANN202
    """The block's three steps as `CAPSBlock` runs them without the tiled half."""
    return x + gelu_mlp_tiled(rms_norm_fused(x, norm_weight, eps), w_fc, w_proj)


@pytest.mark.parametrize("tile_rows", TILES)
@pytest.mark.parametrize(("lead", "dim"), SHAPES, ids=SHAPE_IDS)
def test_tiled_half_matches_the_reference(lead: tuple[int, ...], dim: int, tile_rows: int) -> None:
    def tiled(x, w, eps, w_fc, w_proj):  # noqa: ANN001, ANN202
        return residual_gelu_mlp_tiled(x, w, eps, w_fc, w_proj, tile_rows)

    ref64 = _grads(residual_gelu_mlp_reference, *_inputs(lead, dim, torch.float64))
    fast64 = _grads(tiled, *_inputs(lead, dim, torch.float64))
    fast32 = _grads(tiled, *_inputs(lead, dim, torch.float32))
    steps32 = _grads(_module_steps, *_inputs(lead, dim, torch.float32))
    if tile_rows == default_tile_rows():  # the module steps' MLP tiles: the same GEMM calls, so the same bits
        assert torch.equal(fast32[0], steps32[0]), "forward differs from the block's module steps (float32)"
    else:  # a GEMM's row results may depend on its row count
        assert_close_to_scale(fast32[0], steps32[0], 1e-6, "y tiled vs the module steps, float32")
    names = ["y", "dx", "dnorm_weight", "dw_fc", "dw_proj"]
    for name, a, b, c in zip(names, fast64, ref64, fast32, strict=True):
        assert_close_to_scale(a, b, 1e-12, f"{name} tiled vs reference, float64")
        assert_close_to_scale(c, b, 1e-5, f"{name} tiled float32 vs reference float64")


def test_tiled_half_passes_gradcheck() -> None:
    x, w, w_fc, w_proj, _ = _inputs((2, 3), 4, torch.float64)
    leaves = tuple(t.requires_grad_() for t in (x, w, w_fc, w_proj))
    assert torch.autograd.gradcheck(lambda a, b, c, d: residual_gelu_mlp_tiled(a, b, EPS, c, d, 4), leaves)


def test_tiled_half_rejects_an_empty_tile() -> None:
    x, w, w_fc, w_proj, _ = _inputs((2, 3), 4, torch.float32)
    with pytest.raises(ValueError, match="tile_rows must be >= 1, got 0"):
        residual_gelu_mlp_tiled(x, w, EPS, w_fc, w_proj, 0)


def test_tiled_half_keeps_nothing_of_its_own() -> None:
    """At [2, 97, 32] the module steps keep the norm's r and the MLP input h for backward; the tiled half keeps
    only the caller's x."""
    x, w, w_fc, w_proj, _ = _inputs((2, 97), 32, torch.float32)
    leaves = [t.requires_grad_() for t in (x, w, w_fc, w_proj)]
    rows, width = 2 * 97 * 4, 2 * 97 * 32 * 4  # bytes of r [2, 97, 1] and of h [2, 97, 32]
    assert _saved_bytes(lambda a, b, c, d: residual_gelu_mlp_tiled(a, b, EPS, c, d, 7), *leaves) == 0
    assert _saved_bytes(lambda a, b, c, d: _module_steps(a, b, EPS, c, d), *leaves) == rows + width
