"""One-dimensional discrete wavelet transform as convolutions (WPMixer's multi-resolution decomposition).

TSLib's public names: `DWT1DForward`, `DWT1DInverse` and `Decomposition` (layers/DWT_Decomposition.py).
The filters come from PyWavelets; coefficients equal `pywt.wavedec(x, wave, mode="zero", level=J)` and
the inverse equals `pywt.waverec(..., mode="zero")` (perfect reconstruction; tested against pywt).

Analysis of one level (zero extension, h = dec_lo or dec_hi of length K):
    c[k] = Σ_j h[j] · x[2k + 1 − j],   k = 0 … ⌊(N + K − 1) / 2⌋ − 1   (x = 0 outside [0, N)),
i.e. a stride-2 cross-correlation with the reversed filter over x padded by K − 2 zeros on the left and
K − 1 on the right. Synthesis (g = rec_lo, rec_hi):
    x̂[t] = Σ_k a[k] · g_lo[t + K − 2 − 2k] + d[k] · g_hi[t + K − 2 − 2k],   t = 0 … 2M − K + 1,
a stride-2 transposed convolution cropped by K − 2 on each side (M coefficients per band). Before
each inverse level an approximation one longer than its detail band drops its last value (pywt's rule).

Buffers follow pytorch_wavelets' layout, which TSLib's file keeps (so its checkpoints load): the
forward transform holds h0, h1 = reversed dec_lo, dec_hi and the inverse g0, g1 = rec_lo, rec_hi,
each `[1, 1, K]`.
"""

from __future__ import annotations

import pywt
import torch
import torch.nn as nn
import torch.nn.functional as F

MODES = ("zero",)


def discrete_wavelets() -> list[str]:
    """Names PyWavelets accepts as discrete wavelets (db2, sym4, coif1, haar, ...)."""
    return pywt.wavelist(kind="discrete")


def _wavelet(wave: str) -> pywt.Wavelet:
    if wave not in discrete_wavelets():
        raise ValueError(f"wavelet {wave!r} is not a discrete PyWavelets wavelet (--wavelet); "
                         "use e.g. db1, db2, sym3, coif1 (pywt.wavelist(kind='discrete'))")
    return pywt.Wavelet(wave)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"wavelet extension mode {mode!r} is not supported; use one of {', '.join(MODES)}")


def coefficient_length(length: int, filter_length: int) -> int:
    """Coefficients per band of one zero-extended DWT level of a length-`length` signal."""
    return (length + filter_length - 1) // 2


def _filter(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.get_default_dtype()).reshape(1, 1, -1)  # [1, 1, K]


class DWT1DForward(nn.Module):
    """J-level DWT of x `[B, C, N]` → (approximation `[B, C, N_J]`, [detail `[B, C, N_j]`, j = 1 … J]),
    the details from the finest (j = 1) to the coarsest, as pywt.wavedec's reversed detail list.

    Args:
        J: number of levels (≥ 1).
        wave: PyWavelets discrete wavelet name.
        mode: signal extension; only "zero" (TSLib's default).
        use_amp: accepted for TSLib's signature; the transform runs in the input's dtype.
    """

    def __init__(self, J: int = 1, wave: str = "db1", mode: str = "zero", use_amp: bool = False) -> None:  # noqa: N803 (TSLib's name)
        super().__init__()
        if J < 1:
            raise ValueError(f"wavelet level {J} must be >= 1 (--level)")
        _check_mode(mode)
        wavelet = _wavelet(wave)
        self.J, self.mode, self.use_amp = J, mode, use_amp
        self.register_buffer("h0", _filter(wavelet.dec_lo[::-1]))
        self.register_buffer("h1", _filter(wavelet.dec_hi[::-1]))

    def analysis(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One level: x `[B, C, N]` → (low, high), each `[B, C, ⌊(N + K − 1) / 2⌋]`."""
        channels, k = x.shape[1], self.h0.shape[-1]
        filters = torch.cat([self.h0, self.h1], dim=0).to(x.dtype).repeat(channels, 1, 1)  # [2C, 1, K]
        padded = F.pad(x, (k - 2, k - 1))  # [B, C, N + 2K − 3]
        both = F.conv1d(padded, filters, stride=2, groups=channels)  # [B, 2C, M], low/high interleaved
        return both[:, 0::2], both[:, 1::2]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        details = []
        low = x
        for _ in range(self.J):
            low, high = self.analysis(low)
            details.append(high)
        return low, details


class DWT1DInverse(nn.Module):
    """Inverse of `DWT1DForward`: (approximation, details finest-first) → signal `[B, C, N']`.

    Args:
        wave: PyWavelets discrete wavelet name.
        mode: signal extension; only "zero".
        use_amp: accepted for TSLib's signature.
    """

    def __init__(self, wave: str = "db1", mode: str = "zero", use_amp: bool = False) -> None:
        super().__init__()
        _check_mode(mode)
        wavelet = _wavelet(wave)
        self.mode, self.use_amp = mode, use_amp
        self.register_buffer("g0", _filter(wavelet.rec_lo))
        self.register_buffer("g1", _filter(wavelet.rec_hi))

    def synthesis(self, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
        """One level: low, high `[B, C, M]` → `[B, C, 2M − K + 2]`."""
        channels, k = low.shape[1], self.g0.shape[-1]
        bands = torch.stack([low, high], dim=2).flatten(1, 2)  # [B, 2C, M]: low/high interleaved
        filters = torch.cat([self.g0, self.g1], dim=0).to(low.dtype).repeat(channels, 1, 1)  # [2C, 1, K]
        return F.conv_transpose1d(bands, filters, stride=2, padding=k - 2, groups=channels)

    def forward(self, coeffs: tuple[torch.Tensor, list[torch.Tensor]]) -> torch.Tensor:
        low, details = coeffs
        for high in reversed(details):
            if low.shape[-1] == high.shape[-1] + 1:
                low = low[..., :-1]
            if low.shape[-1] != high.shape[-1]:
                raise ValueError(f"approximation ({low.shape[-1]}) and detail ({high.shape[-1]}) lengths "
                                 "do not belong to one wavelet level")
            low = self.synthesis(low, high)
        return low


def wavelet_lengths(length: int, wave: str, level: int) -> list[int]:
    """Band lengths of a length-`length` signal: [approximation, detail 1 (finest), …, detail J]."""
    k = _wavelet(wave).dec_len
    details = []
    for _ in range(level):
        length = coefficient_length(length, k)
        details.append(length)
    return [length, *details]


class Decomposition(nn.Module):
    """WPMixer's wavelet front and back end: `transform` splits `[B, C, L]` into the approximation and
    the details (finest first), `inv_transform` rebuilds the series from (predicted) bands.

    `input_w_dim` / `pred_w_dim` list the band lengths of the look-back window and of the horizon
    ([approximation, detail 1, …, detail J]). With `no_decomposition` the series passes unchanged.
    TSLib's other keyword arguments (batch_size, channel, d_model, tfactor, dfactor, device) are
    accepted for its signature and unused.
    """

    def __init__(self, input_length: int, pred_length: int, wavelet_name: str, level: int,
                 batch_size: int | None = None, channel: int | None = None, d_model: int | None = None,
                 tfactor: int | None = None, dfactor: int | None = None, device: object = None,
                 no_decomposition: bool = False, use_amp: bool = False) -> None:
        super().__init__()
        self.input_length, self.pred_length = input_length, pred_length
        self.wavelet_name, self.level = wavelet_name, level
        self.no_decomposition, self.use_amp = no_decomposition, use_amp
        self.dwt = DWT1DForward(J=level, wave=wavelet_name, use_amp=use_amp)
        self.idwt = DWT1DInverse(wave=wavelet_name, use_amp=use_amp)
        if no_decomposition:
            self.input_w_dim, self.pred_w_dim = [input_length], [pred_length]
        else:
            self.input_w_dim = wavelet_lengths(input_length, wavelet_name, level)
            self.pred_w_dim = wavelet_lengths(pred_length, wavelet_name, level)

    def transform(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """x `[B, C, L]` → (approximation `[B, C, input_w_dim[0]]`, details `[B, C, input_w_dim[j]]`)."""
        if self.no_decomposition:
            return x, []
        return self.dwt(x)

    def inv_transform(self, yl: torch.Tensor, yh: list[torch.Tensor]) -> torch.Tensor:
        """Bands → series `[B, C, L']` (L' ≥ the length they were computed from)."""
        if self.no_decomposition:
            return yl
        return self.idwt((yl, yh))
