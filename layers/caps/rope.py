"""Rotary position embedding (RoPE; Su et al., RoFormer) as the CAPS paper uses it: the SO(2) rotations.

Pair (2j, 2j+1) of step t is turned by the angle t omega_j, omega_j = 10000^(-2j/E). The angles have one
home (`rope_angles`): the pure-torch kernels rotate q and k with `rope_rotate` before they run, and the
native kernel (`native.py`) takes cos and sin of the same angles and rotates inside its recurrence.
The official code's layout, which is not a rotation, is `official.rope_official`.
"""

from __future__ import annotations

import torch


def rope_frequencies(head_dim: int) -> torch.Tensor:
    """omega_j = 10000^(-2j/E), j < E/2: [E/2]."""
    return 10000.0 ** (-2.0 * torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)


def rope_angles(length: int, omega: torch.Tensor) -> torch.Tensor:
    """The angles t omega_j, t = 0..length-1: [length, E/2], formed in float64 (float32 on MPS, which has
    no float64): a float32 product t omega is off by up to ~2e-4 rad at t = 4096."""
    wide = torch.float32 if omega.device.type == "mps" else torch.float64
    return torch.arange(length, device=omega.device, dtype=wide)[:, None] * omega.to(wide)


def rope_rotate(x: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    """Block-diagonal SO(2) rotation of pairs (2j, 2j+1) by angle t omega_j, t = 0..T-1. x [B, T, H, E].

    Computed as the complex product (x_2j + i x_2j+1) e^(i t omega_j): one vectorised pass instead of
    four products over strided halves. Half-precision inputs are rotated in float32 and cast back.
    """
    pairs = (x if x.dtype in (torch.float32, torch.float64) else x.float()).unflatten(-1, (-1, 2))
    angle = rope_angles(x.shape[1], omega)  # [T, E/2]
    turn = torch.polar(torch.ones_like(angle), angle)[:, None].to(  # [T, 1, E/2]
        torch.complex64 if pairs.dtype == torch.float32 else torch.complex128)
    # view_as_complex needs (re, im) adjacent, even strides and an even offset; the layout test is
    # eager-only (storage_offset would break a torch.compile graph, where the copy is fused anyway).
    if torch.compiler.is_compiling() or pairs.stride(-1) != 1 or pairs.storage_offset() % 2 or any(
            st % 2 for st in pairs.stride()[:-1]):
        pairs = pairs.contiguous()
    return torch.view_as_real(torch.view_as_complex(pairs) * turn).flatten(-2).to(x.dtype)  # [B, T, H, E]


def _rotated(q: torch.Tensor, k: torch.Tensor, rope_freq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k rotated by `rope_rotate` when rope_freq is given, else unchanged (the pure-torch kernels' RoPE)."""
    if rope_freq is None:
        return q, k
    return rope_rotate(q, rope_freq), rope_rotate(k, rope_freq)
