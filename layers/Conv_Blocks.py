"""Inception block (Szegedy et al., 2015) as used by TimesNet (Wu et al., ICLR 2023) on 2-D period grids.

out = (1/K) Σ_{i=0}^{K−1} Conv2d_{(2i+1)×(2i+1)}(x), each kernel padded to keep the grid size.
"""

from __future__ import annotations

import torch
import torch.nn as nn


class Inception_Block_V1(nn.Module):
    """Mean of `num_kernels` square Conv2d branches of sizes 1, 3, …, 2K−1 (same padding):
    `[B, C_in, R, P]` → `[B, C_out, R, P]`. Weights Kaiming-normal (fan_out, relu), biases zero."""

    def __init__(self, in_channels: int, out_channels: int, num_kernels: int = 6) -> None:
        super().__init__()
        self.kernels = nn.ModuleList(
            nn.Conv2d(in_channels, out_channels, kernel_size=2 * i + 1, padding=i) for i in range(num_kernels)
        )
        for conv in self.kernels:
            nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
            nn.init.constant_(conv.bias, 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([conv(x) for conv in self.kernels], dim=-1).mean(dim=-1)  # [B, C_out, R, P]
