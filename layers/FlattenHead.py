"""The forecasting head of the patch models (PatchTST, TimeXer): flatten each variate's token features and
map them to the horizon with one Linear shared by all variates."""

from __future__ import annotations

import torch
import torch.nn as nn


class FlattenHead(nn.Module):
    """`[B, N, D, P]` → flatten to `[B, N, D·P]` → Linear(nf = D·P → H) → dropout → `[B, N, H]`.

    `n_vars` is kept for TSLib's signature (the head is shared by all variates)."""

    def __init__(self, n_vars: int, nf: int, target_window: int, head_dropout: float = 0.0) -> None:
        super().__init__()
        self.n_vars = n_vars
        self.flatten = nn.Flatten(start_dim=-2)
        self.linear = nn.Linear(nf, target_window)
        self.dropout = nn.Dropout(head_dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.linear(self.flatten(x)))  # [B, N, H]
