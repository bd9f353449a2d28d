"""RMSNorm of the CAPS blocks (paper, "Full Architecture": pre-norm blocks), with an analytic backward.

    y = n · w,   n = x · r,   r = (mean_D(x²) + eps)^(-1/2)                     x, y: [..., D], w: [D]
    dx = r · (g − n · mean_D(g · n)),   g = dy · w;   dw = Σ_rows dy · n

`rms_norm_reference` is the formula under torch's autograd (it keeps x, n and the product for backward);
`rms_norm_fused` computes the same forward, bit for bit, and keeps only x and r `[..., 1]`: n is
recomputed in backward (one multiply), and backward is the closed form above instead of autograd's chain
through pow, mean, rsqrt and two products. Both compute in float32 (float64 for float64 inputs) and cast
n back to x's dtype before the weight, as the official code. Under autocast the fused form is not used
(`rms_norm`): its backward would run outside the autocast state the forward saw.
"""

from __future__ import annotations

import torch


def inverse_rms(xf: torch.Tensor, eps: float) -> torch.Tensor:
    """r = (mean(x²) + eps)^(-1/2) over the last axis: `[..., D]` → `[..., 1]`."""
    return torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)


def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """y = (x · r) · w under autograd; x `[..., D]`, weight `[D]`."""
    return rms_norm_parts(x, weight, eps)[2]


def rms_norm_parts(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(r `[..., 1]`, n = x · r, y = n · w) of x `[..., D]`: r and n in float32 (float64 for float64 x), y cast
    back to x's dtype before the weight, as `rms_norm_reference`."""
    xf = x.float() if x.dtype != torch.float64 else x
    r = inverse_rms(xf, eps)
    n = xf * r
    return r, n, n.to(x.dtype) * weight


def rms_norm_input_grad(dy: torch.Tensor, weight: torch.Tensor, r: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """dx = r · (g − n · mean_D(g · n)), g = dy · w, in n's dtype (cast to x's by the caller)."""
    g = (dy * weight).to(n.dtype)  # [..., D]
    mean_gn = (g * n).mean(dim=-1, keepdim=True)  # [..., 1]
    return r * torch.addcmul(g, n, mean_gn, value=-1.0)


def rms_norm_weight_grad(dy: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """dw = Σ_rows dy · n `[D]`, summed in float32 (float64 for float64 dy)."""
    return (dy * n.to(dy.dtype)).reshape(-1, n.shape[-1]).sum(0, dtype=torch.promote_types(dy.dtype, torch.float32))


class _RMSNormFunction(torch.autograd.Function):
    """Forward as `rms_norm_reference`; saves x and r; backward by the closed form of the module docstring."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:  # noqa: ANN001
        rstd, _, y = rms_norm_parts(x, weight, eps)  # r: [..., 1]
        ctx.save_for_backward(x, rstd, weight)
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:  # noqa: ANN001
        x, rstd, weight = ctx.saved_tensors
        xf = x.float() if x.dtype != torch.float64 else x
        normed = xf * rstd  # [..., D], recomputed
        dweight = rms_norm_weight_grad(dy, normed).to(weight.dtype) if ctx.needs_input_grad[1] else None
        dx = rms_norm_input_grad(dy, weight, rstd, normed).to(x.dtype) if ctx.needs_input_grad[0] else None
        return dx, dweight, None


def rms_norm_fused(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """`rms_norm_reference` with the analytic backward (keeps x and r only); x `[..., D]`, weight `[D]`."""
    return _RMSNormFunction.apply(x, weight, eps)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float, fused: bool = True) -> torch.Tensor:
    """RMSNorm of x `[..., D]` by weight `[D]`: `rms_norm_fused` when `fused` and autocast is off for x's
    device, else `rms_norm_reference` (same forward values)."""
    if fused and not torch.is_autocast_enabled(x.device.type):
        return rms_norm_fused(x, weight, eps)
    return rms_norm_reference(x, weight, eps)
