"""Moving-average series decomposition (Autoformer, Wu et al., 2021; used by DLinear, Zeng et al., 2023).

trend_t = (1/k) Σ_{j=−⌊(k−1)/2⌋}^{k−1−⌊(k−1)/2⌋} x_{t+j}, with x replicated beyond both edges;
seasonal = x − trend.
"""

from __future__ import annotations

import torch
import torch.nn as nn


class moving_avg(nn.Module):
    """Edge-replicated moving average over time: `[B, L, N]` → `[B, ⌊(L − 1) / stride⌋ + 1, N]`.

    (k − 1) // 2 copies of the first step go in front and the rest of the k − 1 copies of the last
    step at the end. For odd k this is TSLib's symmetric padding; for even k it keeps the length,
    where TSLib's symmetric (k − 1) // 2 on both sides returns one step too few and breaks the
    decomposition.
    """

    def __init__(self, kernel_size: int, stride: int = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.front = (kernel_size - 1) // 2
        self.end = kernel_size - 1 - self.front
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        front = x[:, :1, :].expand(-1, self.front, -1)  # [B, front, N]
        end = x[:, -1:, :].expand(-1, self.end, -1)  # [B, end, N]
        x = torch.cat([front, x, end], dim=1)  # [B, L + k − 1, N]
        return self.avg(x.transpose(1, 2)).transpose(1, 2)  # [B, L, N] for stride 1


class series_decomp(nn.Module):
    """Split `[B, L, N]` into (seasonal, trend), both `[B, L, N]`, with trend = moving_avg(x)."""

    def __init__(self, kernel_size: int) -> None:
        super().__init__()
        self.moving_avg = moving_avg(kernel_size, stride=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        trend = self.moving_avg(x)
        return x - trend, trend
