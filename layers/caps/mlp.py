"""The MLP of the CAPS blocks (paper, "Full Architecture"): bias-free, GELU (erf form), hidden width 4·D.

    a = h W_fcᵀ,   y = GELU(a) W_projᵀ                         h: [..., D], a: [..., 4D], y: [..., D]
    backward:  dW_proj = dyᵀ GELU(a),  da = GELU'(a) ⊙ (dy W_proj),  dW_fc = daᵀ h,  dh = da W_fc

`gelu_mlp_reference` runs it under torch's autograd, which keeps h, a and GELU(a) (9 token-sized tensors of
width D for one layer, written to and read back from memory at every step). `gelu_mlp_tiled` computes the same
rows in tiles of `tiles.tile_rows()` token rows: the 4D-wide a and GELU(a) of one tile stay in the CPU's cache, and
backward keeps h alone, recomputing a and GELU(a) tile by tile (one more [rows, D] x [D, 4D] product) before
the four products above. The weight gradients are summed tile by tile (`addmm_`), so they differ from the
reference's one-matmul sums only in summation order (float32 rounding). Each output row is the same
row-by-row product, so the forward matches the reference. Under autocast the tiled form is not used
(`gelu_mlp`): its backward would run outside the autocast state the forward saw.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from layers.caps.tiles import checked_tile_rows


def gelu_mlp_reference(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor) -> torch.Tensor:
    """y = GELU(h W_fcᵀ) W_projᵀ under autograd; h `[..., D]`, w_fc `[4D, D]`, w_proj `[D, 4D]`."""
    return F.linear(F.gelu(F.linear(h, w_fc)), w_proj)


class _TiledGeluMLP(torch.autograd.Function):
    """Forward as `gelu_mlp_reference`, tile by tile; saves h only and recomputes each tile's a in backward."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor,  # noqa: ANN001
                tile_rows: int) -> torch.Tensor:
        flat = h.reshape(-1, h.shape[-1])  # [N, D]
        y = flat.new_empty(flat.shape[0], w_proj.shape[0])  # [N, D]
        for start in range(0, flat.shape[0], tile_rows):
            part = slice(start, start + tile_rows)
            torch.mm(F.gelu(F.linear(flat[part], w_fc)), w_proj.t(), out=y[part])
        ctx.save_for_backward(h, w_fc, w_proj)
        ctx.tile_rows = tile_rows
        return y.view(*h.shape[:-1], w_proj.shape[0])

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        h, w_fc, w_proj = ctx.saved_tensors
        flat = h.reshape(-1, h.shape[-1])  # [N, D]
        rows_dy = dy.reshape(-1, dy.shape[-1])  # [N, D]
        dh = torch.empty_like(flat) if ctx.needs_input_grad[0] else None
        dw_fc = torch.zeros_like(w_fc) if ctx.needs_input_grad[1] else None  # [4D, D]
        dw_proj = torch.zeros_like(w_proj) if ctx.needs_input_grad[2] else None  # [D, 4D]
        for start in range(0, flat.shape[0], ctx.tile_rows):
            part = slice(start, start + ctx.tile_rows)
            da = gelu_mlp_tile_backward(flat[part], rows_dy[part], w_fc, w_proj, dw_fc, dw_proj)
            if dh is not None:
                torch.mm(da, w_fc, out=dh[part])
        return (None if dh is None else dh.view_as(h)), dw_fc, dw_proj, None


def gelu_mlp_tile_backward(h: torch.Tensor, dy: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor,
                           dw_fc: torch.Tensor | None, dw_proj: torch.Tensor | None) -> torch.Tensor:
    """One tile's backward (module docstring): recomputes a = h W_fcᵀ, adds the tile's dW_proj and dW_fc into the
    accumulators (None: not wanted) and returns da [rows, 4D] (dh = da W_fc is the caller's)."""
    a = F.linear(h, w_fc)  # [rows, 4D], recomputed
    if dw_proj is not None:
        dw_proj.addmm_(dy.t(), F.gelu(a))
    da = torch.ops.aten.gelu_backward(dy.mm(w_proj), a)  # [rows, 4D]
    if dw_fc is not None:
        dw_fc.addmm_(da.t(), h)
    return da


def gelu_mlp_tiled(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor,
                   tile_rows: int | None = None) -> torch.Tensor:
    """`gelu_mlp_reference` in tiles of `tile_rows` token rows (None: `tiles.tile_rows()`), keeping only h for backward; shapes as there."""
    return _TiledGeluMLP.apply(h, w_fc, w_proj, checked_tile_rows(tile_rows))


def gelu_mlp(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor, tiled: bool = True) -> torch.Tensor:
    """The block MLP: `gelu_mlp_tiled` when `tiled`, h on the CPU and autocast off, else `gelu_mlp_reference`
    (same forward values; on a GPU tiles would only add kernel launches)."""
    if tiled and h.device.type == "cpu" and not torch.is_autocast_enabled("cpu"):
        return gelu_mlp_tiled(h, w_fc, w_proj)
    return gelu_mlp_reference(h, w_fc, w_proj)
