"""Reversible instance normalisation (RevIN, Kim et al., ICLR 2022), the one copy every model uses.

norm:   x̂ = (x − μ) / σ · γ + β,  μ = mean over time (or the last value), σ = √(Var_biased(x) + eps)
denorm: y  = (ŷ − β) / (γ + eps²) · σ + μ

The statistics are per sample and per variate, computed over the time axis of the *input* window
and kept until `denorm`. They are detached: they depend only on the data, and treating them as
constants is what TSLib does.
"""

from __future__ import annotations

import torch
import torch.nn as nn


class Normalize(nn.Module):
    """RevIN over `[B, L, N]` inputs with modes ``'norm'`` and ``'denorm'``.

    Args:
        num_features: number of variates N.
        eps: added to the biased variance before the square root (TSLib: 1e-5).
        affine: learn a per-variate scale γ and shift β (initialised to 1 and 0).
        subtract_last: centre on the last value of the window instead of its mean.
        non_norm: make both modes the identity (TimeMixer's `use_norm 0`).

    `denorm` accepts an output with fewer variates than the input: its channels are taken to be the
    *last* ones of the input, which is where the target of `--features MS` sits.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = False,
                 subtract_last: bool = False, non_norm: bool = False) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.affine = affine
        self.subtract_last = subtract_last
        self.non_norm = non_norm
        if affine:
            self.affine_weight = nn.Parameter(torch.ones(num_features))
            self.affine_bias = nn.Parameter(torch.zeros(num_features))
        self.center: torch.Tensor | None = None
        self.stdev: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mode: str) -> torch.Tensor:
        """`mode='norm'`: record the statistics of x `[B, L, N]` and normalise it.
        `mode='denorm'`: undo the normalisation on a forecast `[B, H, N']` with N' ≤ N."""
        if mode == "norm":
            return self._norm(x)
        if mode == "denorm":
            return self._denorm(x)
        raise ValueError(f"Normalize mode must be 'norm' or 'denorm', got {mode!r}")

    def record_statistics(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Record and return (μ, σ) of x `[B, L, N]`, each `[B, 1, N]`, without normalising (what `norm` does
        first; for a model that needs the statistics of a window it does not normalise)."""
        if self.subtract_last:
            self.center = x[:, -1:, :].detach()  # [B, 1, N]
        else:
            self.center = x.mean(dim=1, keepdim=True).detach()  # [B, 1, N]
        var = x.var(dim=1, keepdim=True, unbiased=False)
        self.stdev = torch.sqrt(var + self.eps).detach()  # [B, 1, N]
        return self.center, self.stdev

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        self.record_statistics(x)
        if self.non_norm:
            return x
        x = (x - self.center) / self.stdev
        if self.affine:
            x = x * self.affine_weight + self.affine_bias
        return x

    def _denorm(self, x: torch.Tensor) -> torch.Tensor:
        if self.center is None or self.stdev is None:
            raise RuntimeError("Normalize: call mode='norm' before mode='denorm'")
        if self.non_norm:
            return x
        n = x.shape[-1]
        if self.affine:
            x = (x - self.affine_bias[-n:]) / (self.affine_weight[-n:] + self.eps * self.eps)
        return x * self.stdev[..., -n:] + self.center[..., -n:]
