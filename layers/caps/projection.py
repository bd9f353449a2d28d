"""The input projections of a CAPS block's attention half, RMSNorm folded in, in cache-sized tiles of token rows.

    r = (mean_D(x²) + eps)^(-1/2),  h = (x r) w,  P = h Wᵀ,  (q, k, v, p, g, c) = P split by `widths`
    x: [..., D], w: [D], W: [Σ widths, D] (the projections' weights stacked), piece i: [..., widths[i]]

`CAPSAttention` computes P as one matmul on the normed tensor and hands the kernel views of it: autograd then
keeps P whole for backward (q, k, v are views of it), the norm keeps x and the projection keeps h, and
backward concatenates the pieces' gradients into a full [N, Σ widths] tensor before its two matmuls.
`normed_projections_tiled` runs norm and matmul per tile of `tiles.tile_rows()` rows and writes each piece
into its own contiguous tensor; it keeps x alone. Backward gathers the pieces' gradients one tile at a time
(the tile's dP stays in cache) and runs, per tile,

    dW += dPᵀ h,   dh = dP W,   dx = r (dh w − n mean_D(dh w n)),   dw = Σ_rows dh n        (n = x r)

Each row of P is the same row-by-row product as the module path's; weight gradients are summed tile by tile
(float32 rounding of the summation order). Under autocast the module path runs instead.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from layers.caps.rmsnorm import rms_norm_input_grad, rms_norm_parts, rms_norm_weight_grad
from layers.caps.tiles import checked_tile_rows


def normed_projections_reference(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                                 widths: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """The pieces of RMSNorm(x) Wᵀ under autograd (views of one product), as the module docstring."""
    h = rms_norm_parts(x, norm_weight, eps)[2]
    return F.linear(h, weight).split(list(widths), dim=-1)


def project_tiles(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                  widths: tuple[int, ...], tile_rows: int) -> list[torch.Tensor]:
    """The pieces `[N, widths[i]]` (N = rows of x), each contiguous, of RMSNorm(x) Wᵀ computed tile by tile
    (no autograd)."""
    flat = x.reshape(-1, x.shape[-1])  # [N, D]
    pieces = [flat.new_empty(flat.shape[0], width) for width in widths]
    for start in range(0, flat.shape[0], tile_rows):
        part = slice(start, start + tile_rows)
        _, _, h = rms_norm_parts(flat[part], norm_weight, eps)
        for piece, column in zip(pieces, F.linear(h, weight).split(list(widths), dim=-1), strict=True):
            piece[part] = column
    return pieces


def project_tiles_backward(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                           dpieces: list[torch.Tensor | None], widths: tuple[int, ...], tile_rows: int,
                           need_dx: bool = True) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """(dx like x or None, d norm_weight, d weight) from the pieces' gradients (None: zero), tile by tile
    (the module docstring's formulas; no autograd)."""
    flat = x.reshape(-1, x.shape[-1])  # [N, D]
    rows = [None if d is None else d.reshape(-1, d.shape[-1]) for d in dpieces]
    dx = torch.empty_like(flat) if need_dx else None
    dw_norm = torch.zeros(flat.shape[-1], dtype=torch.promote_types(x.dtype, torch.float32))
    dweight = torch.zeros_like(weight)
    for start in range(0, flat.shape[0], tile_rows):
        part = slice(start, start + tile_rows)
        r, n, h = rms_norm_parts(flat[part], norm_weight, eps)
        columns = [h.new_zeros(h.shape[0], width) if d is None else d[part]
                   for d, width in zip(rows, widths, strict=True)]
        dp = torch.cat(columns, dim=-1)  # [rows, Σ widths], in cache
        dweight.addmm_(dp.t(), h)
        dh = dp.mm(weight)  # [rows, D]
        dw_norm += rms_norm_weight_grad(dh, n)
        if dx is not None:
            dx[part] = rms_norm_input_grad(dh, norm_weight, r, n).to(x.dtype)
    return None if dx is None else dx.view_as(x), dw_norm.to(norm_weight.dtype), dweight


class _NormedProjections(torch.autograd.Function):
    """Forward as `normed_projections_reference`, tile by tile, into contiguous pieces; saves x only."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,  # noqa: ANN001
                widths: tuple[int, ...], tile_rows: int) -> tuple[torch.Tensor, ...]:
        pieces = project_tiles(x, norm_weight, eps, weight, widths, tile_rows)
        ctx.save_for_backward(x, norm_weight, weight)
        ctx.eps, ctx.widths, ctx.tile_rows = eps, widths, tile_rows
        return tuple(piece.view(*x.shape[:-1], piece.shape[-1]) for piece in pieces)

    @staticmethod
    def backward(ctx, *dpieces: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        x, norm_weight, weight = ctx.saved_tensors
        dx, dw_norm, dweight = project_tiles_backward(x, norm_weight, ctx.eps, weight, list(dpieces), ctx.widths,
                                                      ctx.tile_rows, ctx.needs_input_grad[0])
        return dx, dw_norm, None, dweight, None, None


def normed_projections_tiled(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                             widths: tuple[int, ...], tile_rows: int | None = None) -> tuple[torch.Tensor, ...]:
    """`normed_projections_reference` in tiles of `tile_rows` rows (None: `tiles.tile_rows()`), each piece contiguous; keeps only x."""
    if sum(widths) != weight.shape[0] or min(widths, default=0) < 1:
        raise ValueError(f"widths {widths} must be positive and sum to the weight's {weight.shape[0]} rows")
    return _NormedProjections.apply(x, norm_weight, eps, weight, tuple(widths), checked_tile_rows(tile_rows))
