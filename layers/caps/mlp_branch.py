"""The MLP half of a CAPS block, x ↦ x + MLP(RMSNorm(x)), in cache-sized tiles of token rows.

    r = (mean_D(x²) + eps)^(-1/2),  n = x r,  h = n w,  a = h W_fcᵀ,  y = x + GELU(a) W_projᵀ
    x, y: [..., D], w: [D], W_fc: [4D, D], W_proj: [D, 4D]

The block's modules compute the same thing as three steps (`rmsnorm.rms_norm_fused`, `mlp.gelu_mlp_tiled`,
the residual add), each one pass over token-sized tensors in memory, and the MLP keeps its input h for
backward. `residual_gelu_mlp_tiled` runs all three per tile of `tiles.tile_rows()` rows, so n, h, a and GELU(a)
of a tile stay in the CPU's cache, and keeps x alone for backward: r, n, h and a are recomputed per tile
before the MLP's four products and the norm's closed-form backward,

    dx = dy + r (g − n mean_D(g n)),  g = dh w,  dw = Σ_rows dh n            (dh from the MLP backward)

Each output row is computed by the same row-wise operations as the modules, so the forward equals theirs; the
weight gradients are summed tile by tile (float32 rounding of the summation order). Under autocast the module
steps run instead (`CAPSBlock`), as for the MLP and the norm alone.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from layers.caps.mlp import gelu_mlp_tile_backward
from layers.caps.rmsnorm import rms_norm_input_grad, rms_norm_parts, rms_norm_weight_grad
from layers.caps.tiles import checked_tile_rows


def residual_gelu_mlp_reference(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, w_fc: torch.Tensor,
                                w_proj: torch.Tensor) -> torch.Tensor:
    """y = x + GELU(RMSNorm(x) W_fcᵀ) W_projᵀ under autograd (the formula of the module docstring)."""
    h = rms_norm_parts(x, norm_weight, eps)[2]
    return x + F.linear(F.gelu(F.linear(h, w_fc)), w_proj)


class _ResidualGeluMLP(torch.autograd.Function):
    """Forward as `residual_gelu_mlp_reference`, tile by tile; saves x only (module docstring)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, norm_weight: torch.Tensor, eps: float, w_fc: torch.Tensor,  # noqa: ANN001
                w_proj: torch.Tensor, tile_rows: int) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])  # [N, D]
        y = torch.empty_like(flat)
        for start in range(0, flat.shape[0], tile_rows):
            part = slice(start, start + tile_rows)
            _, _, h = rms_norm_parts(flat[part], norm_weight, eps)
            torch.addmm(flat[part], F.gelu(F.linear(h, w_fc)), w_proj.t(), out=y[part])
        ctx.save_for_backward(x, norm_weight, w_fc, w_proj)
        ctx.eps, ctx.tile_rows = eps, tile_rows
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        x, norm_weight, w_fc, w_proj = ctx.saved_tensors
        flat = x.reshape(-1, x.shape[-1])  # [N, D]
        rows_dy = dy.reshape(-1, dy.shape[-1])  # [N, D]
        dx = torch.empty_like(flat) if ctx.needs_input_grad[0] else None
        dw_norm = torch.zeros(flat.shape[-1], dtype=torch.promote_types(x.dtype, torch.float32))
        dw_fc, dw_proj = torch.zeros_like(w_fc), torch.zeros_like(w_proj)
        for start in range(0, flat.shape[0], ctx.tile_rows):
            part = slice(start, start + ctx.tile_rows)
            dy_part = rows_dy[part]
            r, n, h = rms_norm_parts(flat[part], norm_weight, ctx.eps)
            dh = gelu_mlp_tile_backward(h, dy_part, w_fc, w_proj, dw_fc, dw_proj).mm(w_fc)  # [rows, D]
            dw_norm += rms_norm_weight_grad(dh, n)
            if dx is not None:
                torch.add(dy_part, rms_norm_input_grad(dh, norm_weight, r, n).to(x.dtype), out=dx[part])
        dx = None if dx is None else dx.view_as(x)
        return dx, dw_norm.to(norm_weight.dtype), None, dw_fc, dw_proj, None


def residual_gelu_mlp_tiled(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, w_fc: torch.Tensor,
                            w_proj: torch.Tensor, tile_rows: int | None = None) -> torch.Tensor:
    """`residual_gelu_mlp_reference` in tiles of `tile_rows` token rows (None: `tiles.tile_rows()`), keeping only x for backward."""
    return _ResidualGeluMLP.apply(x, norm_weight, eps, w_fc, w_proj, checked_tile_rows(tile_rows))
