"""Dominant periods of a sequence from its FFT amplitude spectrum (TimesNet, MSGNet).

The amplitude A_f = mean over batch and features of |rfft(x)_f| ranks the frequencies f ≥ 1 (the zero
frequency is excluded); each chosen frequency gives the period ⌊T / f⌋, and the per-sample amplitudes
of the chosen frequencies weight the per-period results.
"""

from __future__ import annotations

import torch


def fft_periods(x: torch.Tensor, k: int) -> tuple[list[int], torch.Tensor]:
    """The k dominant periods of x `[B, T, D]` and their per-sample amplitudes `[B, k]`.

    Frequencies are ranked by the amplitude averaged over batch and features; the zero frequency
    is excluded. Period = ⌊T / f⌋ for frequency index f. Computed in float32 under AMP: cuFFT has no
    bf16 transform and takes fp16 only for power-of-two lengths.
    """
    amplitude = torch.fft.rfft(x.float(), dim=1).abs()  # [B, T//2 + 1, D]
    ranking = amplitude.mean(dim=0).mean(dim=-1)  # [T//2 + 1]
    ranking[0] = 0
    top = torch.topk(ranking, k).indices.tolist()
    periods = [x.shape[1] // f for f in top]
    return periods, amplitude.mean(dim=-1)[:, top]  # [B, k]
