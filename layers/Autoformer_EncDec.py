"""Moving-average series decomposition (Autoformer, Wu et al., 2021; used by DLinear, Zeng et al., 2023).

trend_t = (1/k) Σ_{j=−⌊(k−1)/2⌋}^{k−1−⌊(k−1)/2⌋} x_{t+j}, with x replicated beyond both edges;
seasonal = x − trend.

DFT decomposition (TimeMixer's `--decomp_method dft_decomp`, Wang et al., ICLR 2024): per series,
seasonal = irfft of the k largest-amplitude non-zero frequencies of rfft(x) along time; trend = x − seasonal.
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


class DFT_series_decomp(nn.Module):
    """Split `[B, L, N]` into (seasonal, trend), both `[B, L, N]`, by the discrete Fourier transform.

    For each sample and variate, the `top_k` frequencies f ≥ 1 of largest |rfft(x)_f| along time form
    the seasonal part (the inverse transform of those coefficients alone); trend = x − seasonal, so it
    holds the mean (f = 0) and every weaker frequency. With fewer than `top_k` non-zero frequencies
    (L < 2·top_k) all of them are kept. Ties at the k-th amplitude keep exactly k (`torch.topk`).

    TSLib's block transforms the last axis (the d_model features of `[B, L, D]` tokens, not time),
    zeroes the whole spectrum of the first sample and thresholds with one minimum over the batch;
    here the transform runs along time, per series, as the decomposition intends.
    """

    def __init__(self, top_k: int = 5) -> None:
        super().__init__()
        self.top_k = top_k

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        length = x.shape[1]
        # cuFFT has no bf16 transform: compute in float32 at least, return x's dtype.
        spectrum = torch.fft.rfft(x.float() if x.dtype in (torch.float16, torch.bfloat16) else x, dim=1)  # [B, F, N]
        amplitude = spectrum.abs()
        amplitude[:, 0, :] = -1.0  # the mean is never a seasonal frequency
        k = min(self.top_k, spectrum.shape[1] - 1)
        keep = torch.zeros_like(amplitude, dtype=torch.bool)
        if k > 0:
            keep.scatter_(1, torch.topk(amplitude, k, dim=1).indices, True)  # [B, F, N]
        seasonal = torch.fft.irfft(spectrum * keep, n=length, dim=1).to(x.dtype)  # [B, L, N]
        return seasonal, x - seasonal
