"""The official CAPS code's arithmetic, kept beside the paper's for `--caps_numerics official` and its switches.

Path 1's global max and +1e-8, path 2's clipped prefix product with its division, and the half-split RoPE
layout (caps_reference section 4; layers/CAPS_Attention.md, "Hazards and switches"). The features are
evaluated as plain causal linear (or softmax) attention on the concatenated paths.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def rope_official(x: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    """The official code's layout (caps_reference section 4): half-split angles, interleaved partners.

    angles [t w_0 .. t w_{E/2-1}, t w_0 .. t w_{E/2-1}], out = x cos + rot(x) sin with
    rot(x)_{2j} = -x_{2j+1}, rot(x)_{2j+1} = x_{2j}. Not a rotation (norms change). x [B, T, H, E].
    """
    angle = torch.arange(x.shape[1], device=x.device, dtype=omega.dtype)[:, None] * omega  # [T, E/2]
    angle = torch.cat([angle, angle], dim=-1)[:, None].to(x.dtype)  # [T, 1, E]
    rot = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * angle.cos() + rot * angle.sin()


def official_features(
    q: torch.Tensor, k: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenated q_cat, k_cat [B, T, H, n E] with the official arithmetic (caps_reference section 4).

    Path 1: global max over T, q / (cumsum(w) + 1e-8), k w. Path 2: cumsum clipped to [-50, 40],
    q Gamma, k / (Gamma + 1e-8). Path 3: q / cumsum(clock), k clock. Inputs as `caps_attention`.
    """
    clock = clock[..., None]  # [B, T, H, 1]
    qs, ks = [], []
    for path in paths:
        if path == 1:
            pt = p + torch.log(clock)
            w = torch.exp(pt - pt.amax(dim=1, keepdim=True))
            qs.append(q / (torch.cumsum(w, dim=1) + 1e-8))
            ks.append(k * w)
        elif path == 2:
            gamma = torch.exp(torch.cumsum(-F.softplus(g) * clock, dim=1).clamp(-50.0, 40.0))
            qs.append(q * gamma)
            ks.append(k / (gamma + 1e-8))
        else:
            qs.append(q / torch.cumsum(clock, dim=1))
            ks.append(k * clock)
    if not paths:
        return q, k
    return torch.cat(qs, dim=-1), torch.cat(ks, dim=-1)
