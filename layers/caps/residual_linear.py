"""A residual linear layer, y = x + a Wᵀ, in cache-sized tiles of token rows (the CAPS attention's c_proj).

    y = x + a Wᵀ,   dx = dy,   da = dy W,   dW = Σ_rows dyᵀ a           x, y: [..., D], a: [..., K], W: [D, K]

On this project's CPU torch runs the tall, narrow product [N, 32] x [32, 32] of the recipe several times slower
per FLOP as one call over all N = 183 K token rows than in tiles of ~1 000 rows per thread (benchmarks/README.md), and the
residual add is one more pass over memory. `residual_linear_tiled` computes each tile's product and add in one
`addmm` and its backward tile by tile; it keeps a and W (x is not needed for backward). Each output row is the
same row-wise product and add as `residual_linear_reference`; dW is summed tile by tile (float32 rounding).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from layers.caps.tiles import checked_tile_rows


def residual_linear_reference(x: torch.Tensor, a: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """y = x + a Wᵀ under autograd; x [..., D], a [..., K], weight [D, K]."""
    return x + F.linear(a, weight)


class _ResidualLinear(torch.autograd.Function):
    """Forward as `residual_linear_reference`, one `addmm` per tile; saves a and W."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, a: torch.Tensor, weight: torch.Tensor, tile_rows: int) -> torch.Tensor:  # noqa: ANN001
        rows_x, rows_a = x.reshape(-1, x.shape[-1]), a.reshape(-1, a.shape[-1])  # [N, D], [N, K]
        y = torch.empty_like(rows_x)
        for start in range(0, rows_x.shape[0], tile_rows):
            part = slice(start, start + tile_rows)
            torch.addmm(rows_x[part], rows_a[part], weight.t(), out=y[part])
        ctx.save_for_backward(a, weight)
        ctx.tile_rows = tile_rows
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        a, weight = ctx.saved_tensors
        rows_a, rows_dy = a.reshape(-1, a.shape[-1]), dy.reshape(-1, dy.shape[-1])
        da = torch.empty_like(rows_a) if ctx.needs_input_grad[1] else None
        dweight = torch.zeros_like(weight)
        for start in range(0, rows_a.shape[0], ctx.tile_rows):
            part = slice(start, start + ctx.tile_rows)
            dweight.addmm_(rows_dy[part].t(), rows_a[part])
            if da is not None:
                torch.mm(rows_dy[part], weight, out=da[part])
        return dy, None if da is None else da.view_as(a), dweight, None


def residual_linear_tiled(x: torch.Tensor, a: torch.Tensor, weight: torch.Tensor,
                          tile_rows: int | None = None) -> torch.Tensor:
    """`residual_linear_reference` in tiles of `tile_rows` token rows; shapes as there, x and a with the same
    leading shape."""
    if x.shape[:-1] != a.shape[:-1]:
        raise ValueError(f"x {tuple(x.shape)} and a {tuple(a.shape)} must share their leading shape")
    return _ResidualLinear.apply(x, a, weight, checked_tile_rows(tile_rows))
