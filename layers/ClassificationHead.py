"""The feature map most of TSLib's classification heads share, before their `projection` Linear:

    z = flatten(dropout(GELU(h)) ⊙ m),   h `[B, T, D]` encoder tokens, m `[B, T]` padding mask (1 = observed)

so padded steps contribute nothing to the logits `projection(z)`. Models keep their own `projection`
(TSLib's parameter name) and `dropout` modules and call this between them.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_flat_features(tokens: torch.Tensor, dropout: nn.Module,
                         padding_mask: torch.Tensor | None = None) -> torch.Tensor:
    """tokens `[B, T, D]`, padding_mask `[B, T]` or None (no masking) → `[B, T·D]`."""
    out = dropout(F.gelu(tokens))
    if padding_mask is not None:
        if padding_mask.shape != tokens.shape[:2]:
            raise ValueError(f"padding mask of shape {tuple(padding_mask.shape)} does not match the "
                             f"{tuple(tokens.shape[:2])} (batch, steps) of the tokens")
        out = out * padding_mask.unsqueeze(-1).to(out.dtype)
    return out.reshape(out.shape[0], -1)
