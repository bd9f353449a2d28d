"""CAPS attention of a pre-norm block's input on the native CPU kernel, its projections recomputed in backward.

    (q, k, v, p, g, c) = RMSNorm(x) Wᵀ   (tile by tile, `projection.project_tiles`),   clock = softplus(c) + ε
    o = caps(q, k, v, p, g, clock)      (`native.native_forward`, RoPE tables cos, sin applied inside the kernel)
    x: [B, T, D] -> o: [B, T, H, E]

Run as separate steps (`projection.normed_projections_tiled`, then `native.caps_attention_native`), autograd
keeps the five pieces q, k, v, p, g (each as large as x) for the kernel's backward. `recomputed_native_attention`
keeps x, the kernel's checkpoints and the RoPE tables: backward recomputes the pieces tile by tile (one more
[N, D] x [D, 5D + H] product), then runs the kernel's backward and the projections' backward. The forward is the
same computation as the separate steps; the gradients use the same formulas (float32 rounding aside).
"""

from __future__ import annotations

import torch
from torch.nn.functional import softplus

from layers.caps.native import SEGMENT, native_backward, native_forward
from layers.caps.projection import project_tiles, project_tiles_backward
from layers.caps.tiles import tile_rows


def _kernel_inputs(pieces: list[torch.Tensor], shape: tuple[int, int, int, int], mask: int, clock_eps: float
                   ) -> tuple[torch.Tensor, ...]:
    """(q, k, v, p, g [B, T, H, E], c [B, T, H], clock) from the projection pieces; q stands in for p or g when
    their path is off (the kernel never reads it then)."""
    b, t, h, _ = shape
    q, k, v, p, g = (piece.view(shape) for piece in pieces[:5])
    c = pieces[5].view(b, t, h)
    return q, k, v, p if mask & 1 else q, g if mask & 2 else q, c, softplus(c) + clock_eps


class _RecomputedNativeAttention(torch.autograd.Function):
    """Forward as the separate steps (module docstring); saves x, the weights, the RoPE tables and checkpoints."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,  # noqa: ANN001, PLR0913
                widths: tuple[int, ...], heads: int, clock_eps: float, cos: torch.Tensor, sin: torch.Tensor,
                mask: int) -> torch.Tensor:
        shape = (*x.shape[:2], heads, widths[0] // heads)
        pieces = project_tiles(x, norm_weight, eps, weight, widths, tile_rows())
        q, k, v, p, g, _, clock = _kernel_inputs(pieces, shape, mask, clock_eps)
        o, ckpt_state, ckpt_scan = native_forward(q, k, v, p, g, clock, cos, sin, mask, SEGMENT)
        ctx.save_for_backward(x, norm_weight, weight, cos, sin, ckpt_state, ckpt_scan)
        ctx.eps, ctx.widths, ctx.shape, ctx.clock_eps, ctx.mask = eps, widths, shape, clock_eps, mask
        return o

    @staticmethod
    def backward(ctx, do: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        x, norm_weight, weight, cos, sin, ckpt_state, ckpt_scan = ctx.saved_tensors
        mask = ctx.mask
        pieces = project_tiles(x, norm_weight, ctx.eps, weight, ctx.widths, tile_rows())
        q, k, v, p, g, c, clock = _kernel_inputs(pieces, ctx.shape, mask, ctx.clock_eps)
        dq, dk, dv, dp, dg, dclock, dtrig = native_backward(q, k, v, p, g, clock, cos, sin, mask, SEGMENT,
                                                            ckpt_state, ckpt_scan, do.contiguous())
        dc = torch.ops.aten.softplus_backward(dclock, c, 1.0, 20.0)  # [B, T, H]
        dpieces = [dq, dk, dv, dp if mask & 1 else None, dg if mask & 2 else None, dc]
        dpieces += [None] * (len(ctx.widths) - len(dpieces))  # padding rows of the stacked weight
        dpieces = [None if d is None else d.reshape(-1, width) for d, width in zip(dpieces, ctx.widths, strict=True)]
        dx, dnorm_weight, dweight = project_tiles_backward(x, norm_weight, ctx.eps, weight, dpieces, ctx.widths,
                                                           tile_rows(), ctx.needs_input_grad[0])
        dcos = dsin = None
        if cos.numel():
            dcos, dsin = dtrig.to(cos.dtype).unbind(0)  # [T, E/2] each
        return dx, dnorm_weight, None, dweight, None, None, None, dcos, dsin, None


def recomputed_native_attention(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                                widths: tuple[int, ...], heads: int, clock_eps: float, cos: torch.Tensor,
                                sin: torch.Tensor, mask: int) -> torch.Tensor:
    """o [B, T, H, E] of the module docstring for x [B, T, D] (contiguous float32/float64 on the CPU): weight
    [Σ widths, D] stacks q, k, v, p, g (D rows each), the clock (H rows) and optional zero padding rows,
    widths = (D,) * 5 + (H,) + padding; cos, sin: RoPE tables [T, E/2] or empty; mask: the paths' bits.
    Call only where the native kernel is available."""
    return _RecomputedNativeAttention.apply(x, norm_weight, eps, weight, tuple(widths), heads, clock_eps, cos, sin,
                                            mask)
