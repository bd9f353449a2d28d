"""Legendre Projection Unit (HiPPO-LegT, Gu et al. 2020; the LPU of FiLM, Zhou et al., NeurIPS 2022,
https://arxiv.org/abs/2205.08897, Section 3.1).

The last θ of a signal f, s ∈ [t − θ, t], is summarised by N Legendre coefficients c(t) that follow
    dc/dt = −(1/θ) A c(t) + (1/θ) B f(t),
    A_nk = (2n + 1) · (1 if k ≥ n else (−1)^(n−k)),   B_n = (2n + 1)(−1)^n,
and the window is recovered as f(t − θ + θ·x) ≈ Σ_n c_n(t) P_n(1 − 2(1 − x)), x ∈ [0, 1) (oldest first).
With θ = 1 and a step dt = 1 / (window length in steps), the system is discretised with scipy's
`cont2discrete` (bilinear / Tustin by default): c_t = Ā c_{t−1} + B̄ f_t. The bilinear rule makes the
reconstruction lag the samples by half a step. Legendre values come from `scipy.special.eval_legendre`.
The matrices are float32 buffers, as in TSLib.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy import signal, special


def legt_transition(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The continuous LegT system for θ = 1: returns (−A `[n, n]`, B `[n]`), so that dc/dt = (−A) c + B f."""
    row = np.arange(n, dtype=np.float64)[:, None]
    col = np.arange(n, dtype=np.float64)[None, :]
    a = (2 * row + 1) * np.where(col >= row, 1.0, (-1.0) ** (row - col))
    b = (2 * np.arange(n, dtype=np.float64) + 1) * (-1.0) ** np.arange(n)
    return -a, b


class HiPPO_LegT(nn.Module):  # noqa: N801 - TSLib's class name, kept so its module tree matches
    """Legendre memory of order `N` over a window of 1/dt steps.

    Buffers: `A` `[N, N]` and `B` `[N]` (the discretised system), `eval_matrix` `[1/dt, N]` with row j
    the Legendre polynomials at the j-th step of the window (oldest first).
    """

    def __init__(self, N: int, dt: float = 1.0, discretization: str = "bilinear") -> None:  # noqa: N803
        super().__init__()
        self.N = N
        a, b = legt_transition(N)
        c, d = np.ones((1, N)), np.zeros((1,))
        a_d, b_d, _, _, _ = signal.cont2discrete((a, b[:, None], c, d), dt=dt, method=discretization)
        self.register_buffer("A", torch.tensor(a_d, dtype=torch.float32))
        self.register_buffer("B", torch.tensor(b_d[:, 0], dtype=torch.float32))
        steps = np.arange(0.0, 1.0, dt)
        legendre = special.eval_legendre(np.arange(N)[:, None], 1 - 2 * steps).T  # [steps, N]
        self.register_buffer("eval_matrix", torch.tensor(legendre, dtype=torch.float32))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Coefficients after every step: inputs `[..., T]` → `[T, ..., N]` (the recurrent form)."""
        c = inputs.new_zeros(*inputs.shape[:-1], self.N)  # [..., N]
        b = self.B.unsqueeze(0)  # [1, N]
        states = []
        for f in inputs.unbind(-1):
            # Ā c + B̄ f, with B̄ f as an outer product [..., 1] @ [1, N].
            c = F.linear(c, self.A) + f.unsqueeze(-1) @ b  # [..., N]
            states.append(c)
        return torch.stack(states, dim=0)  # [T, ..., N]

    def reconstruct(self, c: torch.Tensor) -> torch.Tensor:
        """The window from coefficients: c `[..., N]` → `[..., 1/dt]` (oldest step first)."""
        return (self.eval_matrix @ c.unsqueeze(-1)).squeeze(-1)
