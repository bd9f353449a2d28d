"""Mamba's selective state space block in pure torch (Gu & Dao, "Mamba: Linear-Time Sequence Modeling with
Selective State Spaces", 2023, https://arxiv.org/abs/2312.00752), as TSLib's MambaSimple builds it.

Selective SSM (the paper's Algorithm 2, S6), per channel e of the inner width E and state index n < N:
    Δ_t = softplus(W_Δ (W_x u_t)[:R] + b_Δ)          `[E]`, R = dt_rank
    B_t, C_t = (W_x u_t)[R:R+N], (W_x u_t)[R+N:]      `[N]` each, shared by all channels
    Ā_t = exp(Δ_t A),  B̄_t u_t = Δ_t B_t u_t          (zero-order hold for A, Euler step for B, as the paper's code)
    h_t = Ā_t ⊙ h_{t-1} + B̄_t u_t,   y_t = C_t · h_t + D ⊙ u_t,   h_0 = 0
with A = −exp(A_log) (A_log initialised to log(1..N) for every channel) and D initialised to ones.

Mamba block (the paper's Fig. 3): x, z = in_proj(u) split in two halves `[B, L, E]`; x runs through a causal
depthwise Conv1d (kernel d_conv, left context only) and SiLU, then the selective SSM; the result is gated by
SiLU(z) and projected back to d_model by out_proj. A residual block is u + Mamba(RMSNorm(u)) (pre-norm).

Two scans share one signature (`SELECTIVE_SCANS`), picked by name (the block's `scan` argument), never by
input length:
- `selective_scan_sequential`: the recurrence above, one step at a time (the obviously-correct reference,
  and the step-by-step form). Default: on the CPU it is the fastest form (memory-bound small steps).
- `selective_scan_parallel`: a log-depth (Hillis–Steele) associative scan over time of the pairs
  (Ā_t, B̄_t u_t) with (a₁, b₁) ∘ (a₂, b₂) = (a₂ a₁, a₂ b₁ + b₂): ⌈log₂ L⌉ full-tensor steps instead of L
  small ones, for accelerators where per-step launches dominate (O(L log L) work: ~10× slower than the
  sequential form on a 1-thread CPU at B 32, L 96, E 256, N 16). It only multiplies decays in (0, 1] and
  adds, never divides by a cumulative product, so decays that underflow to 0 (large Δ) stay exact.
Both read out y_t with one `einsum` over the state axis, so FLOP counters see the same C·h contraction
TSLib's loop performs (2·L·E·N per sample).

Both also take MambaSL's time-invariant forms (`layers.MambaBlock`): B or C `[E, N]`, one learned row per
channel used at every step (B̄_t u_t = Δ_t B_e u_t, y_t = C_e · h_t), and no skip term (D = None).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


def dt_rank(d_model: int) -> int:
    """Rank R of the Δ projection: ⌈d_model / 16⌉ (the paper's 'auto' setting, TSLib's)."""
    return math.ceil(d_model / 16)


class RMSNorm(nn.Module):
    """Root-mean-square norm over the last axis with a learned scale (no bias): x / √(mean(x²) + eps) · w."""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x `[..., D]` → `[..., D]`."""
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _check_scan_inputs(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                       C: torch.Tensor, D: torch.Tensor | None) -> None:
    batch, length, inner = u.shape
    state = A.shape[-1]
    selective, invariant = (batch, length, state), (inner, state)
    expected = {"delta": (delta, [(batch, length, inner)]), "A": (A, [(inner, state)]),
                "B": (B, [selective, invariant]), "C": (C, [selective, invariant])}
    if D is not None:
        expected["D"] = (D, [(inner,)])
    for name, (tensor, shapes) in expected.items():
        if tuple(tensor.shape) not in shapes:
            wanted = " or ".join(str(list(shape)) for shape in shapes)
            raise ValueError(f"selective scan: {name} must be {wanted}, got {list(tensor.shape)}")


def _input_term(delta: torch.Tensor, B: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """B̄_t u_t = Δ_t B_t u_t for every step: delta, u `[B, L, E]`, B `[B, L, N]` (selective, shared by the
    channels) or `[E, N]` (time-invariant, one row per channel) → `[B, L, E, N]`."""
    per_step = B.unsqueeze(2) if B.dim() == 3 else B  # [B, L, 1, N] or [E, N]
    return delta.unsqueeze(-1) * per_step * u.unsqueeze(-1)


def _read_out(states: torch.Tensor, u: torch.Tensor, C: torch.Tensor, D: torch.Tensor | None) -> torch.Tensor:
    """y_t = C_t · h_t (+ D ⊙ u_t): states `[B, L, E, N]`, C `[B, L, N]` or `[E, N]`, D `[E]` or None →
    `[B, L, E]`. One einsum over the state axis for all steps."""
    pattern = "blen,bln->ble" if C.dim() == 3 else "blen,en->ble"
    y = torch.einsum(pattern, states, C)  # [B, L, E]
    return y if D is None else y + u * D


def selective_scan_sequential(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                              C: torch.Tensor, D: torch.Tensor | None) -> torch.Tensor:
    """The selective SSM one step at a time (reference and recurrent form).

    Args:
        u: input `[B, L, E]`.
        delta: step sizes Δ > 0 `[B, L, E]`.
        A: continuous state matrix (diagonal, negative) `[E, N]`.
        B, C: input/output matrices, each either input-dependent `[B, L, N]` (shared by the channels) or
            time-invariant `[E, N]` (one row per channel, the same at every step; MambaSL's `--tv_B 0`).
        D: skip connection `[E]`, or None for none.
    Returns:
        y `[B, L, E]`.
    """
    _check_scan_inputs(u, delta, A, B, C, D)
    batch, length, inner = u.shape
    h = u.new_zeros(batch, inner, A.shape[-1])  # [B, E, N]
    states = []
    for t in range(length):
        step = delta[:, t].unsqueeze(-1)  # [B, E, 1]
        b_t = B[:, t].unsqueeze(1) if B.dim() == 3 else B  # [B, 1, N] or [E, N]
        h = torch.exp(step * A) * h + step * b_t * u[:, t].unsqueeze(-1)  # [B, E, N]
        states.append(h)
    # One read-out for all steps (a per-step einsum is as fast to run but slow under FLOP counters).
    return _read_out(torch.stack(states, dim=1), u, C, D)  # [B, L, E]


def selective_scan_parallel(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                            C: torch.Tensor, D: torch.Tensor | None) -> torch.Tensor:
    """The selective SSM by a log-depth associative scan over time; same signature and result as
    `selective_scan_sequential` (⌈log₂ L⌉ full-tensor steps instead of L small ones)."""
    _check_scan_inputs(u, delta, A, B, C, D)
    step = delta.unsqueeze(-1)  # [B, L, E, 1]
    decay = torch.exp(step * A)  # Ā_t [B, L, E, N]
    state = _input_term(delta, B, u)  # B̄_t u_t [B, L, E, N]
    length, offset = u.shape[1], 1
    while offset < length:
        # Combine every step t ≥ offset with the prefix ending at t − offset (old values on the right).
        state = torch.cat([state[:, :offset], decay[:, offset:] * state[:, :-offset] + state[:, offset:]], dim=1)
        decay = torch.cat([decay[:, :offset], decay[:, offset:] * decay[:, :-offset]], dim=1)
        offset *= 2
    # state now holds h_t for every t.
    return _read_out(state, u, C, D)  # [B, L, E]


SelectiveScan = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                          torch.Tensor | None], torch.Tensor]
SELECTIVE_SCANS: dict[str, SelectiveScan] = {
    "sequential": selective_scan_sequential,
    "parallel": selective_scan_parallel,
}


class MambaBlock(nn.Module):
    """The Mamba mixer: `[B, L, d_model]` → `[B, L, d_model]` (module doc). TSLib's MambaSimple parameter
    names (in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj), built in its order with torch's default
    initialisation (TSLib's MambaSimple does not use the paper's Δ initialisation).

    Args:
        d_model: model width.
        d_inner: inner width E (d_model · expand).
        dt_rank: rank R of the Δ projection (⌈d_model / 16⌉ in TSLib).
        d_state: state size N per channel.
        d_conv: kernel of the causal depthwise convolution.
        scan: 'sequential' or 'parallel' (`SELECTIVE_SCANS`).
    """

    def __init__(self, d_model: int, d_inner: int, dt_rank: int, d_state: int, d_conv: int,
                 scan: str = "sequential") -> None:
        super().__init__()
        if scan not in SELECTIVE_SCANS:
            raise ValueError(f"scan {scan!r} is not one of {', '.join(SELECTIVE_SCANS)}")
        self.d_inner, self.dt_rank, self.d_state = d_inner, dt_rank, d_state
        self.scan = scan
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        # Padding d_conv − 1 on both sides; keeping the first L outputs makes the convolution causal.
        self.conv1d = nn.Conv1d(d_inner, d_inner, kernel_size=d_conv, padding=d_conv - 1, groups=d_inner)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def ssm(self, x: torch.Tensor) -> torch.Tensor:
        """The selective SSM on the convolved inner sequence: `[B, L, E]` → `[B, L, E]`."""
        delta, B, C = self.x_proj(x).split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(delta))  # [B, L, E]
        A = -torch.exp(self.A_log)  # [E, N]
        return SELECTIVE_SCANS[self.scan](x, delta, A, B, C, self.D)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        length = u.shape[1]
        x, z = self.in_proj(u).chunk(2, dim=-1)  # [B, L, E] each
        x = self.conv1d(x.transpose(1, 2))[..., :length].transpose(1, 2)  # [B, L, E]
        y = self.ssm(F.silu(x)) * F.silu(z)  # [B, L, E]
        return self.out_proj(y)  # [B, L, d_model]


class ResidualBlock(nn.Module):
    """Pre-norm residual around the mixer: u + MambaBlock(RMSNorm(u)), `[B, L, d_model]` → same.
    TSLib's attribute names (mixer, norm) and order (mixer first)."""

    def __init__(self, d_model: int, d_inner: int, dt_rank: int, d_state: int, d_conv: int,
                 scan: str = "sequential") -> None:
        super().__init__()
        self.mixer = MambaBlock(d_model, d_inner, dt_rank, d_state, d_conv, scan)
        self.norm = RMSNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mixer(self.norm(x)) + x
