"""The MLP of the CAPS blocks (paper, "Full Architecture"): bias-free, GELU (erf form), hidden width 4·D.

    a = h W_fcᵀ,   y = GELU(a) W_projᵀ                         h: [..., D], a: [..., 4D], y: [..., D]
    backward:  dW_proj = dyᵀ GELU(a),  da = GELU'(a) ⊙ (dy W_proj),  dW_fc = daᵀ h,  dh = da W_fc

`gelu_mlp_reference` runs it under torch's autograd, which keeps h, a and GELU(a) (9 token-sized tensors of
width D for one layer). `gelu_mlp_lean` computes the same forward, bit for bit, keeps h and a, and recomputes
GELU(a) in backward (one elementwise pass) for the weight gradient of W_proj: 4 of the 9 widths fewer per
layer. The gradients are the same products, summed by the same matmuls. Under autocast the lean form is not
used (`gelu_mlp`): its backward would run outside the autocast state the forward saw.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def gelu_mlp_reference(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor) -> torch.Tensor:
    """y = GELU(h W_fcᵀ) W_projᵀ under autograd; h `[..., D]`, w_fc `[4D, D]`, w_proj `[D, 4D]`."""
    return F.linear(F.gelu(F.linear(h, w_fc)), w_proj)


class _LeanGeluMLP(torch.autograd.Function):
    """Forward as `gelu_mlp_reference`; saves h and a, recomputes GELU(a) in backward."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        a = F.linear(h, w_fc)  # [..., 4D]
        ctx.save_for_backward(h, a, w_fc, w_proj)
        return F.linear(F.gelu(a), w_proj)  # [..., D]

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        h, a, w_fc, w_proj = ctx.saved_tensors
        rows_dy = dy.reshape(-1, dy.shape[-1])  # [N, D]
        dw_proj = rows_dy.t().mm(F.gelu(a).reshape(-1, a.shape[-1])) if ctx.needs_input_grad[2] else None  # [D, 4D]
        da = torch.ops.aten.gelu_backward(dy.matmul(w_proj), a)  # [..., 4D]
        rows_da = da.reshape(-1, da.shape[-1])  # [N, 4D]
        dw_fc = rows_da.t().mm(h.reshape(-1, h.shape[-1])) if ctx.needs_input_grad[1] else None  # [4D, D]
        dh = da.matmul(w_fc) if ctx.needs_input_grad[0] else None  # [..., D]
        return dh, dw_fc, dw_proj


def gelu_mlp_lean(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor) -> torch.Tensor:
    """`gelu_mlp_reference` keeping h and a only for backward (GELU(a) recomputed); shapes as there."""
    return _LeanGeluMLP.apply(h, w_fc, w_proj)


def gelu_mlp(h: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor, lean: bool = True) -> torch.Tensor:
    """The block MLP: `gelu_mlp_lean` when `lean` and autocast is off for h's device, else
    `gelu_mlp_reference` (same forward values)."""
    if lean and not torch.is_autocast_enabled(h.device.type):
        return gelu_mlp_lean(h, w_fc, w_proj)
    return gelu_mlp_reference(h, w_fc, w_proj)
