"""Autoformer's blocks (Wu et al., NeurIPS 2021, https://arxiv.org/abs/2106.13008, §3.1) and the
moving-average series decomposition it introduced (also used by DLinear, Zeng et al., 2023).

Series decomposition (eq. 1): trend_t = (1/k) Σ_{j=−⌊(k−1)/2⌋}^{k−1−⌊(k−1)/2⌋} x_{t+j}, with x
replicated beyond both edges; seasonal = x − trend.

Encoder layer (eq. 3), progressive decomposition keeping only the seasonal part:
    s = SeriesDecomp(x + AutoCorrelation(x))₀;  out = SeriesDecomp(s + FeedForward(s))₀
Decoder layer (eq. 4): three decompositions after self-correlation, cross-correlation with the
encoder output, and the feed-forward; their trends T₁ + T₂ + T₃ are projected D → c_out by a
circular Conv1d (kernel 3) and accumulated onto the trend input of the decoder.
The feed-forward is two bias-free 1×1 Conv1d layers (D → d_ff → D), TSLib's parameterisation.

Multi-scale decomposition (MICN's MHDecomp, Wang et al., ICLR 2023): trend = mean over kernels k_i of
the moving averages above; seasonal = x − trend.

DFT decomposition (TimeMixer's `--decomp_method dft_decomp`, Wang et al., ICLR 2024): per series,
seasonal = irfft of the k largest-amplitude non-zero frequencies of rfft(x) along time; trend = x − seasonal.

The decomposition forecast of Autoformer (§3.1, decoder inputs) and FEDformer: `SeasonalTrendForecast`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn

from layers.Transformer_EncDec import Decoder as DecoderStack
from layers.Transformer_EncDec import activation_fn


class moving_avg(nn.Module):
    """Edge-replicated moving average over time: `[B, L, N]` → `[B, ⌊(L − 1) / stride⌋ + 1, N]`.

    (k − 1) // 2 copies of the first step go in front and the rest of the k − 1 copies of the last
    step at the end. For odd k this is TSLib's symmetric padding; for even k it keeps the length,
    where TSLib's symmetric (k − 1) // 2 on both sides returns one step too few and breaks the
    decomposition.
    """

    def __init__(self, kernel_size: int, stride: int = 1) -> None:
        super().__init__()
        if kernel_size < 1 or stride < 1:
            raise ValueError(f"moving_avg kernel_size {kernel_size} and stride {stride} must be positive (--moving_avg)")
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


class series_decomp_multi(nn.Module):
    """Multi-scale decomposition (MICN's MHDecomp): `[B, L, N]` → (seasonal, trend), both `[B, L, N]`.

    trend = mean_i moving_avg_{k_i}(x) over the kernel sizes k_i; seasonal = x − trend, which is also
    the mean of the single-kernel seasonal parts.
    """

    def __init__(self, kernel_size: list[int]) -> None:
        super().__init__()
        if not kernel_size:
            raise ValueError("series_decomp_multi needs at least one kernel size")
        self.moving_avg = nn.ModuleList(moving_avg(k, stride=1) for k in kernel_size)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        trend = torch.stack([avg(x) for avg in self.moving_avg], dim=0).mean(dim=0)  # [B, L, N]
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


class my_Layernorm(nn.Module):
    """LayerNorm over features minus its mean over time (the seasonal part has zero time mean):
    `[B, L, D]` → `[B, L, D]`. TSLib's name, kept so model files drop in."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.layernorm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_hat = self.layernorm(x)  # [B, L, D]
        return x_hat - x_hat.mean(dim=1, keepdim=True)


class EncoderLayer(nn.Module):
    """Auto-Correlation and feed-forward, each followed by a decomposition that keeps the seasonal part:
    `[B, L, D]` → (`[B, L, D]`, correlation or None). d_ff defaults to 4·D."""

    def __init__(self, attention: nn.Module, d_model: int, d_ff: int | None = None, moving_avg: int = 25,
                 dropout: float = 0.1, activation: str = "relu") -> None:
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.attention = attention
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1, bias=False)
        self.decomp1 = series_decomp(moving_avg)
        self.decomp2 = series_decomp(moving_avg)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation_fn(activation)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        new_x, attn = self.attention(x, x, x, attn_mask)
        x, _ = self.decomp1(x + self.dropout(new_x))
        y = self.dropout(self.activation(self.conv1(x.transpose(1, 2))))  # [B, d_ff, L]
        y = self.dropout(self.conv2(y).transpose(1, 2))  # [B, L, D]
        seasonal, _ = self.decomp2(x + y)
        return seasonal, attn


class Encoder(nn.Module):
    """Encoder layers, optional distilling conv layers between them (TSLib's signature; Autoformer
    uses none) and an optional final norm: `[B, L, D]` → (`[B, L', D]`, list of correlations)."""

    def __init__(self, attn_layers: list[nn.Module], conv_layers: list[nn.Module] | None = None,
                 norm_layer: nn.Module | None = None) -> None:
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.conv_layers = nn.ModuleList(conv_layers) if conv_layers is not None else None
        self.norm = norm_layer

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        attns = []
        convs = list(self.conv_layers) if self.conv_layers is not None else []
        for i, attn_layer in enumerate(self.attn_layers):
            x, attn = attn_layer(x, attn_mask=attn_mask)
            attns.append(attn)
            if i < len(convs):
                x = convs[i](x)
        if self.norm is not None:
            x = self.norm(x)
        return x, attns


class DecoderLayer(nn.Module):
    """Self-correlation, cross-correlation with the encoder output and feed-forward, each followed by a
    decomposition; the three trends are summed and projected to c_out channels.

    x `[B, L, D]`, cross `[B, S, D]` → (seasonal `[B, L, D]`, residual trend `[B, L, c_out]`).
    """

    def __init__(self, self_attention: nn.Module, cross_attention: nn.Module, d_model: int, c_out: int,
                 d_ff: int | None = None, moving_avg: int = 25, dropout: float = 0.1,
                 activation: str = "relu") -> None:
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1, bias=False)
        self.decomp1 = series_decomp(moving_avg)
        self.decomp2 = series_decomp(moving_avg)
        self.decomp3 = series_decomp(moving_avg)
        self.dropout = nn.Dropout(dropout)
        self.projection = nn.Conv1d(d_model, c_out, kernel_size=3, stride=1, padding=1,
                                    padding_mode="circular", bias=False)
        self.activation = activation_fn(activation)

    def forward(self, x: torch.Tensor, cross: torch.Tensor, x_mask: torch.Tensor | None = None,
                cross_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        x, trend1 = self.decomp1(x + self.dropout(self.self_attention(x, x, x, x_mask)[0]))
        x, trend2 = self.decomp2(x + self.dropout(self.cross_attention(x, cross, cross, cross_mask)[0]))
        y = self.dropout(self.activation(self.conv1(x.transpose(1, 2))))  # [B, d_ff, L]
        y = self.dropout(self.conv2(y).transpose(1, 2))  # [B, L, D]
        x, trend3 = self.decomp3(x + y)
        residual_trend = trend1 + trend2 + trend3  # [B, L, D]
        residual_trend = self.projection(residual_trend.transpose(1, 2)).transpose(1, 2)  # [B, L, c_out]
        return x, residual_trend


class Decoder(DecoderStack):
    """Decoder layers accumulating their projected trends onto `trend`, then an optional norm and
    projection of the seasonal part: x `[B, L, D]`, cross `[B, S, D]`, trend `[B, L, c_out]` →
    (seasonal `[B, L, c_out]` with a projection, else `[B, L, D]`; trend `[B, L, c_out]`). TSLib's
    signature and names (layers, norm, projection): Transformer_EncDec's stack with the trend added."""

    def forward(self, x: torch.Tensor, cross: torch.Tensor, x_mask: torch.Tensor | None = None,
                cross_mask: torch.Tensor | None = None, trend: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        for layer in self.layers:
            x, residual_trend = layer(x, cross, x_mask=x_mask, cross_mask=cross_mask)
            trend = residual_trend if trend is None else trend + residual_trend
        if self.norm is not None:
            x = self.norm(x)
        if self.projection is not None:
            x = self.projection(x)  # [B, L, c_out]
        return x, trend


def decomposition_encoder(correlation: Callable[[], nn.Module], d_model: int, d_ff: int, e_layers: int,
                          moving_avg: int, dropout: float, activation: str) -> Encoder:
    """`e_layers` EncoderLayers (eq. 3), each around a fresh `correlation()` layer, then my_Layernorm: the
    encoder Autoformer and FEDformer build (layers and their parameters created in TSLib's order)."""
    return Encoder(
        [
            EncoderLayer(correlation(), d_model, d_ff, moving_avg=moving_avg, dropout=dropout,
                         activation=activation)
            for _ in range(e_layers)
        ],
        norm_layer=my_Layernorm(d_model),
    )


def decomposition_decoder(self_correlation: Callable[[], nn.Module], cross_correlation: Callable[[], nn.Module],
                          d_model: int, c_out: int, d_ff: int, d_layers: int, moving_avg: int, dropout: float,
                          activation: str) -> Decoder:
    """`d_layers` DecoderLayers (eq. 4) around fresh self- then cross-correlation layers, my_Layernorm and
    Linear(D → c_out): the decoder Autoformer and FEDformer build (in TSLib's creation order)."""
    return Decoder(
        [
            DecoderLayer(self_correlation(), cross_correlation(), d_model, c_out, d_ff, moving_avg=moving_avg,
                         dropout=dropout, activation=activation)
            for _ in range(d_layers)
        ],
        norm_layer=my_Layernorm(d_model),
        projection=nn.Linear(d_model, c_out, bias=True),
    )


class SeasonalTrendForecast:
    """Autoformer's decomposition forecast (§3.1), shared by Autoformer and FEDformer.

    The host module sets seq_len, label_len, pred_len, c_out, decomp (`series_decomp`), enc_embedding,
    dec_embedding, encoder (`Encoder`) and decoder (`Decoder` with a projection). For x `[B, L, N]`:
        seasonal, trend = decomp(x);  Ll = label_len
        trend_init    = [trend[-Ll:]; mean_t(x) repeated H times]  (its last c_out channels)
        seasonal_init = [seasonal[-Ll:]; zeros over H]
        s, t = decoder(dec_embedding(seasonal_init), encoder(enc_embedding(x)), trend=trend_init)
        forecast = (s + t)[-H:]                                   `[B, H, c_out]`
    """

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Decomposition forecast: `[B, L, enc_in]` → `[B, H, c_out]` (seasonal + trend)."""
        b, _, n = x_enc.shape
        start = self.seq_len - self.label_len
        seasonal, trend = self.decomp(x_enc)  # [B, L, N] each
        # Placeholders over the horizon: the window mean for the trend, zeros for the seasonal part.
        mean = x_enc.mean(dim=1, keepdim=True).expand(-1, self.pred_len, -1)  # [B, H, N]
        trend_init = torch.cat([trend[:, start:], mean], dim=1)[..., -self.c_out:]  # [B, Ll + H, c_out]
        seasonal_init = torch.cat([seasonal[:, start:], x_enc.new_zeros(b, self.pred_len, n)], dim=1)  # [B, Ll + H, N]

        enc_out, _ = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L, D]
        dec_in = self.dec_embedding(seasonal_init, x_mark_dec)  # [B, Ll + H, D]
        seasonal_part, trend_part = self.decoder(dec_in, enc_out, trend=trend_init)  # [B, Ll + H, c_out] each
        return (seasonal_part + trend_part)[:, -self.pred_len:, :]  # [B, H, c_out]
