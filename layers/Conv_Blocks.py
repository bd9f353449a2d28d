"""Inception block (Szegedy et al., 2015) as used by TimesNet (Wu et al., ICLR 2023) on 2-D period grids.

out = (1/K) Σ_{i=0}^{K−1} Conv2d_{(2i+1)×(2i+1)}(x), each kernel padded to keep the grid size.

Since every branch is centred and "same"-padded, the mean of the K convolutions is one convolution with
the mean of the kernels zero-padded to (2K−1)×(2K−1): Σ_i (2i+1)² multiply-adds per output become
(2K−1)² (286 → 121 for K = 6) in a single call. On a grid narrower than the kernel (R or P ≤ K−1, TimesNet's
short periods), taps more than R−1 rows or P−1 columns from the centre only ever meet the zero padding, so the
kernel is cropped to (2·min(K−1, R−1)+1) × (2·min(K−1, P−1)+1) with the padding to match: the same sum without
its zero terms (2–14× faster forward + backward on CPU for P ≤ 4, benchmarks/bench_inception_crop.py).
`inception_reference` keeps the branch-by-branch form.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


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

    def merged_kernel(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The single equivalent (weight `[C_out, C_in, 2K−1, 2K−1]`, bias `[C_out]`)."""
        last = len(self.kernels) - 1
        weight = torch.stack([F.pad(conv.weight, [last - i] * 4) for i, conv in enumerate(self.kernels)]).mean(0)
        bias = torch.stack([conv.bias for conv in self.kernels]).mean(0)
        return weight, bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self.merged_kernel()
        reach = len(self.kernels) - 1
        # Taps beyond R−1 rows / P−1 columns of the centre multiply only padding: drop them.
        row_reach, col_reach = min(reach, x.shape[-2] - 1), min(reach, x.shape[-1] - 1)
        weight = weight[:, :, reach - row_reach: reach + row_reach + 1, reach - col_reach: reach + col_reach + 1]
        return F.conv2d(x, weight, bias, padding=(row_reach, col_reach))  # [B, C_out, R, P]


def inception_reference(block: Inception_Block_V1, x: torch.Tensor) -> torch.Tensor:
    """The branch-by-branch mean of `block`'s convolutions (slow reference for the merged kernel)."""
    return torch.stack([conv(x) for conv in block.kernels], dim=-1).mean(dim=-1)  # [B, C_out, R, P]
