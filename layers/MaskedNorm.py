"""Instance normalisation over the observed points only (TimesNet's imputation normalisation, TSLib's
`imputation` heads of TimesNet and PatchTST).

With m = 1 where a value is observed and 0 where it is masked:

    μ = Σ_t m_t x_t / max(1, Σ_t m_t)
    σ = √(Σ_t m_t (x_t − μ)² / max(1, Σ_t m_t) + eps)

per sample and variate; x̂ = m (x − μ) / σ, so masked points stay 0 after normalising. The statistics
are detached, as TSLib's. TSLib divides by Σ_t m_t itself, which is 0 (→ inf/NaN) for a variate whose
whole window is masked; the max(1, ·) leaves such a variate at μ = 0, σ = √eps instead.
"""

from __future__ import annotations

import torch


def masked_normalize(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-5
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x̂, μ, σ) for x `[B, L, N]` and mask `[B, L, N]` (1 observed, 0 masked); μ, σ are `[B, 1, N]`."""
    observed = (mask == 1).to(x.dtype)
    count = observed.sum(dim=1, keepdim=True).clamp(min=1.0)  # [B, 1, N]
    means = ((x * observed).sum(dim=1, keepdim=True) / count).detach()
    centred = (x - means) * observed
    stdev = torch.sqrt((centred * centred).sum(dim=1, keepdim=True) / count + eps).detach()
    return centred / stdev, means, stdev


def masked_denormalize(y: torch.Tensor, means: torch.Tensor, stdev: torch.Tensor) -> torch.Tensor:
    """Undo `masked_normalize` on y `[B, L, N']` (N' ≤ N: the last N' variates' statistics)."""
    n = y.shape[-1]
    return y * stdev[..., -n:] + means[..., -n:]
