"""The tiled residual linear layer (`layers/caps/residual_linear.py`, the CAPS attention's c_proj) against its
autograd formula: forward bit for bit in float32 at the default tile, gradients of x, a and W in float64
(1e-12) and float32 against float64 (1e-5), gradcheck, bad arguments and what it keeps for backward.
"""

from __future__ import annotations

import pytest
import torch

from layers.caps.residual_linear import residual_linear_reference, residual_linear_tiled
from layers.caps.tiles import tile_rows as default_tile_rows
from tests.layers.test_caps_block_ops import (
    SHAPE_IDS,
    SHAPES,
    TILES,
    _saved_bytes,
    check_tiled_against_reference,
)


def _inputs(lead: tuple[int, ...], dim: int, dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    a = torch.randn(*lead, dim + 3, generator=gen, dtype=torch.float64)
    weight = torch.randn(dim, dim + 3, generator=gen, dtype=torch.float64) / dim**0.5
    dy = torch.randn(*lead, dim, generator=gen, dtype=torch.float64)
    return [t.to(dtype) for t in (x, a, weight, dy)]


@pytest.mark.parametrize("tile_rows", TILES)
@pytest.mark.parametrize(("lead", "dim"), SHAPES, ids=SHAPE_IDS)
def test_tiled_residual_linear_matches_the_reference(lead: tuple[int, ...], dim: int, tile_rows: int) -> None:
    def tiled(x, a, w):  # noqa: ANN001, ANN202
        return residual_linear_tiled(x, a, w, tile_rows)

    fast32, ref32 = check_tiled_against_reference(tiled, residual_linear_reference, _inputs, lead, dim,
                                                  ["y", "dx", "da", "dw"])
    if fast32.numel() <= min(tile_rows, default_tile_rows()) * dim:  # one tile: one GEMM
        assert torch.equal(fast32, ref32), "forward differs from the reference (float32)"


def test_tiled_residual_linear_passes_gradcheck() -> None:
    x, a, w, _ = _inputs((2, 3), 4, torch.float64)
    leaves = tuple(t.requires_grad_() for t in (x, a, w))
    assert torch.autograd.gradcheck(lambda p, q, r: residual_linear_tiled(p, q, r, 4), leaves)


def test_tiled_residual_linear_rejects_bad_arguments() -> None:
    x, a, w, _ = _inputs((2, 3), 4, torch.float32)
    with pytest.raises(ValueError, match="tile_rows must be >= 1, got 0"):
        residual_linear_tiled(x, a, w, 0)
    with pytest.raises(ValueError, match=r"x \(2, 3, 4\) and a \(3, 2, 7\) must share their leading shape"):
        residual_linear_tiled(x, a.transpose(0, 1), w)


def test_tiled_residual_linear_keeps_nothing_of_its_own() -> None:
    """The reference keeps a (for dW) as the tiled form does; neither keeps x or the product."""
    x, a, w, _ = _inputs((2, 97), 32, torch.float32)
    leaves = [t.requires_grad_() for t in (x, a, w)]
    assert _saved_bytes(lambda p, q, r: residual_linear_tiled(p, q, r, 7), *leaves) == 0
    assert _saved_bytes(residual_linear_reference, *leaves) == 0
