"""The recurrent O(T) form of linear CAPS: one step at a time, which is also the step-by-step decoder form.

    S_t = exp(L_t - L_{t-1}) * S_{t-1} + kt_t^T v_t,   o_t = qt_t S_t          (every decay factor <= 1)

with the per-path features of layers/caps/README.md, section 1; path 1's normaliser and path 3's clock sum
are carried as scans in the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from layers.caps.options import parse_paths, resolve_attn_impl
from layers.caps.rope import _rotated


@dataclass
class CAPSState:
    """Recurrent state of one CAPS layer: S [B, H, F, Ev] and the scan carries of paths 1 and 3.

    m, z: running max of pt and sum_{j<=t} exp(pt_j - m_t) [B, H, E] (path 1); c: sum of clock [B, H, 1].
    """

    s: torch.Tensor
    m: torch.Tensor | None = None
    z: torch.Tensor | None = None
    c: torch.Tensor | None = None


def caps_attention_step(
    state: CAPSState | None, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor,
    g: torch.Tensor, clock: torch.Tensor, paths: tuple[int, ...] = (1, 2, 3),
) -> tuple[torch.Tensor, CAPSState]:
    """One step of linear CAPS: q, k, p, g [B, H, E], v [B, H, Ev], clock [B, H] -> (o [B, H, Ev], state).

    S_t = exp(L_t - L_{t-1}) * S_{t-1} + kt_t^T v_t,  o_t = qt_t S_t  (every decay factor <= 1).
    paths: parsed ids (`parse_paths`), so a caller stepping over t parses them once, not per step.
    q, k already rotated when RoPE is used (the rotation angle depends on the absolute step t).
    """
    ids = paths
    clock = clock[..., None]  # [B, H, 1]
    qs, ks, decays = [], [], []
    m_new = z_new = c_new = None
    for path in ids:
        if path == 1:
            pt = p + torch.log(clock)
            m_old = pt if state is None else state.m
            m_new = torch.maximum(m_old, pt)
            z_old = torch.zeros_like(pt) if state is None else state.z
            z_new = z_old * torch.exp(m_old - m_new) + torch.exp(pt - m_new)
            qs.append(q / z_new)
            ks.append(k * torch.exp(pt - m_new))
            decays.append(torch.exp(m_old - m_new))
        elif path == 2:
            qs.append(q)
            ks.append(k)
            decays.append(torch.exp(-F.softplus(g) * clock))
        else:
            c_new = clock if state is None else state.c + clock
            qs.append(q / c_new)
            ks.append(k * clock)
            decays.append(torch.ones_like(q))
    if not ids:
        qs, ks, decays = [q], [k], [torch.ones_like(q)]
    qt, kt, decay = (torch.cat(x, dim=-1) for x in (qs, ks, decays))  # [B, H, F]
    kv = kt[..., :, None] * v[..., None, :]  # [B, H, F, Ev]
    s = kv if state is None else decay[..., None] * state.s + kv
    o = torch.einsum("bhf,bhfv->bhv", qt, s)
    return o, CAPSState(s=s, m=m_new, z=z_new, c=c_new)


def caps_attention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """O(T) recurrent form: `caps_attention_step` over t. The `CAPSKernel` signature; linear attention
    only; chunk_size unused."""
    resolve_attn_impl(attn, "recurrent")
    paths = parse_paths(paths)
    q, k = _rotated(q, k, rope_freq)
    state = None
    outs = []
    for t in range(q.shape[1]):
        o, state = caps_attention_step(
            state, q[:, t], k[:, t], v[:, t], p[:, t], g[:, t], clock[:, t], paths
        )
        outs.append(o)
    return torch.stack(outs, dim=1)  # [B, T, H, Ev]
