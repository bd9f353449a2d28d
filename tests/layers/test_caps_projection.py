"""The CAPS attention half's input projections with the norm folded in (`layers/caps/projection.py`) against
their autograd formula and against the layer's module path: pieces bit for bit in float32 at the default tile,
gradients of x, the norm weight and the stacked weight in float64 (1e-12) and float32 against a float64
reference (1e-5), pieces whose gradient is absent, gradcheck, bad widths, and what it keeps for backward.
"""

from __future__ import annotations

import pytest
import torch

from layers.caps.projection import (
    normed_projections_reference,
    normed_projections_tiled,
)
from layers.caps.rmsnorm import rms_norm_fused
from layers.caps.tiles import tile_rows as default_tile_rows
from tests.layers.test_caps_block_ops import TILES, _saved_bytes
from tests.numerics import assert_close_to_scale

EPS = 1e-5
# (leading shape, D, widths): the recipe's five D-wide pieces, H = 4 clock columns and 4 padding rows;
# one row; a width of 1.
CASES = [((2, 97), 32, (32,) * 5 + (4, 4)), ((1, 1), 6, (6, 6, 2)), ((3, 40), 1, (1, 1, 1))]
CASE_IDS = ["recipe-widths", "one-row", "width-1"]


def _inputs(lead: tuple[int, ...], dim: int, widths: tuple[int, ...], dtype: torch.dtype) -> list:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*lead, dim, generator=gen, dtype=torch.float64) * 2.0
    norm_weight = 1.0 + 0.3 * torch.randn(dim, generator=gen, dtype=torch.float64)
    weight = torch.randn(sum(widths), dim, generator=gen, dtype=torch.float64) / dim**0.5
    dpieces = [torch.randn(*lead, width, generator=gen, dtype=torch.float64) for width in widths]
    return [t.to(dtype) for t in (x, norm_weight, weight)] + [[d.to(dtype) for d in dpieces]]


def _grads(fn, x, norm_weight, weight, dpieces, widths, skip: int | None = None) -> list:  # noqa: ANN001
    """Pieces and the gradients of (x, norm weight, weight); piece `skip` takes no part in the loss."""
    leaves = [t.detach().requires_grad_() for t in (x, norm_weight, weight)]
    pieces = fn(leaves[0], leaves[1], EPS, leaves[2], widths)
    loss = sum((piece * d).sum() for i, (piece, d) in enumerate(zip(pieces, dpieces, strict=True)) if i != skip)
    return [[piece.detach() for piece in pieces], *torch.autograd.grad(loss, leaves)]


def _module_path(x, norm_weight, eps, weight, widths):  # noqa: ANN001, ANN202
    """The layer's module path: the fused norm, one matmul, views of it."""
    return torch.nn.functional.linear(rms_norm_fused(x, norm_weight, eps), weight).split(list(widths), dim=-1)


@pytest.mark.parametrize("tile_rows", TILES)
@pytest.mark.parametrize(("lead", "dim", "widths"), CASES, ids=CASE_IDS)
def test_tiled_projections_match_the_reference(lead: tuple[int, ...], dim: int, widths: tuple[int, ...],
                                               tile_rows: int) -> None:
    def tiled(x, w, eps, weight, widths):  # noqa: ANN001, ANN202
        return normed_projections_tiled(x, w, eps, weight, widths, tile_rows)

    ref64 = _grads(normed_projections_reference, *_inputs(lead, dim, widths, torch.float64), widths)
    fast64 = _grads(tiled, *_inputs(lead, dim, widths, torch.float64), widths)
    fast32 = _grads(tiled, *_inputs(lead, dim, widths, torch.float32), widths)
    module32 = _grads(_module_path, *_inputs(lead, dim, widths, torch.float32), widths)
    for got, want, ref in zip(fast32[0], module32[0], ref64[0], strict=True):
        assert got.is_contiguous() and got.shape == want.shape
        if tile_rows == default_tile_rows():
            assert torch.equal(got, want), "a piece differs from the module path (float32)"
        assert_close_to_scale(got, ref, 1e-5, "piece float32 vs reference float64")
    for got, ref in zip(fast64[0], ref64[0], strict=True):
        assert_close_to_scale(got, ref, 1e-12, "piece float64")
    for name, a, b, c in zip(["dx", "dnorm_weight", "dweight"], fast64[1:], ref64[1:], fast32[1:], strict=True):
        assert_close_to_scale(a, b, 1e-12, f"{name} tiled vs reference, float64")
        assert_close_to_scale(c, b, 1e-5, f"{name} tiled float32 vs reference float64")


def test_a_piece_without_gradient_counts_as_zero() -> None:
    """A piece outside the loss (the padding, or p without path 1) gets None from autograd: the same gradients as
    the reference, where that piece's gradient is zero."""
    lead, dim, widths = (2, 97), 32, (32,) * 5 + (4, 4)
    got = _grads(normed_projections_tiled, *_inputs(lead, dim, widths, torch.float64), widths, skip=6)
    want = _grads(normed_projections_reference, *_inputs(lead, dim, widths, torch.float64), widths, skip=6)
    for a, b in zip(got[1:], want[1:], strict=True):
        assert_close_to_scale(a, b, 1e-12, "gradient with the padding piece unused")


def test_tiled_projections_pass_gradcheck() -> None:
    x, w, weight, _ = _inputs((2, 3), 4, (3, 2), torch.float64)
    leaves = tuple(t.requires_grad_() for t in (x, w, weight))
    assert torch.autograd.gradcheck(lambda a, b, c: normed_projections_tiled(a, b, EPS, c, (3, 2), 4), leaves)


@pytest.mark.parametrize(("widths", "tile_rows", "message"), [
    ((3, 2), 0, "tile_rows must be >= 1, got 0"),
    ((3, 3), 4, r"widths \(3, 3\) must be positive and sum to the weight's 5 rows"),
    ((5, 0), 4, r"widths \(5, 0\) must be positive"),
])
def test_tiled_projections_reject_bad_arguments(widths: tuple[int, ...], tile_rows: int, message: str) -> None:
    x, w, weight, _ = _inputs((2, 3), 4, (3, 2), torch.float32)
    with pytest.raises(ValueError, match=message):
        normed_projections_tiled(x, w, EPS, weight, widths, tile_rows)


def test_tiled_projections_keep_nothing_of_their_own() -> None:
    """At [2, 97, 32] with the recipe's widths the module path keeps the norm's r and the matmul's input h for
    backward; the tiled form keeps only the caller's x (the pieces are kept by whoever saves them, as there)."""
    lead, dim, widths = (2, 97), 32, (32,) * 5 + (4, 4)
    x, w, weight, _ = _inputs(lead, dim, widths, torch.float32)
    leaves = [t.requires_grad_() for t in (x, w, weight)]

    def kept(fn) -> int:  # noqa: ANN001
        return _saved_bytes(lambda a, b, c: torch.cat(fn(a, b, EPS, c, widths), dim=-1), *leaves)

    rows = 2 * 97  # token rows
    assert kept(normed_projections_tiled) == 0
    assert kept(_module_path) == rows * 4 + rows * dim * 4
