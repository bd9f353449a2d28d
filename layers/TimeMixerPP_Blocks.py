"""The MixerBlock of TimeMixer++ (Wang et al., "TimeMixer++: A General Time Series Pattern Machine for
Universal Predictive Analysis", ICLR 2025, https://arxiv.org/abs/2410.16032) and its parts.

A MixerBlock maps multi-scale tokens x_m `[B', T_m, D]` (m = 0..M, finest first, T_m = T / w^m) to tokens
of the same shapes:

MRTI (multi-resolution time imaging). Periods come from the coarsest scale: the FFT of x_M over time gives
amplitudes A_f (mean over the D features); the top-K non-zero frequencies f_1..f_K (chosen on the batch
mean, so one set of periods serves the whole batch) give periods p_k = ⌈T / f_k⌉ in steps of the finest
scale. Every scale is zero-padded at the end to p_k · c_{m,k} steps, c_{m,k} = ⌈T_m / p_k⌉, and folded
into a time image Z_{m,k} `[B', D, p_k, c_{m,k}]` whose column j holds the steps j·p_k .. (j+1)·p_k − 1
(one period) and whose row i holds phase i of every period.

TID (time image decomposition), dual-axis attention:
    S_{m,k} = Attention_col(Z_{m,k})   attention along each column (within a period): seasonal image
    T_{m,k} = Attention_row(Z_{m,k})   attention along each row (across periods): trend image

MCM (multi-scale mixing), per period k, over the column axis (every scale has p_k rows):
    bottom-up seasonal:  S_m ← S_m + Conv_m(S_{m−1}),        m = 1..M      (stride w on columns)
    top-down trend:      T_m ← T_m + TransConv_m(T_{m+1}),   m = M−1..0    (stride w on columns)
    z_{m,k} = Unfold(S_m + T_m)[:T_m]                       (2D → 1D, padding dropped)

MRM (multi-resolution mixing): x̂_m = Σ_k softmax_k(A_{f_k}) · z_{m,k}, with the per-sample amplitudes of
the chosen frequencies; the block returns LayerNorm(x_m + x̂_m).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.SelfAttention_Family import AttentionLayer, FullAttention


def top_k_periods(x: torch.Tensor, top_k: int, full_len: int) -> tuple[list[int], torch.Tensor]:
    """FFT period detection on the coarsest scale.

    Args:
        x: the coarsest-scale tokens `[B', T_M, D]`.
        top_k: K, the number of frequencies kept (1 ≤ K ≤ T_M // 2).
        full_len: T, the length of the finest scale; periods are returned in its steps.

    Returns:
        periods: K ints p_k = ⌈T / f_k⌉, f_k the K frequencies (≥ 1) of largest batch-mean amplitude.
        amplitudes: `[B', K]` each sample's amplitude (mean over D) at those frequencies (unnormalised).
    """
    # In float32 at least: half-precision FFTs (autocast) only take power-of-two lengths.
    spectrum = torch.fft.rfft(x if x.dtype == torch.float64 else x.float(), dim=1)
    amplitude = spectrum.abs().mean(dim=-1)  # [B', T_M // 2 + 1]
    score = amplitude.detach().mean(dim=0)  # [T_M // 2 + 1]
    score[0] = float("-inf")  # the constant term has no period
    freqs = torch.topk(score, top_k).indices  # [K]
    periods = [math.ceil(full_len / int(f)) for f in freqs.tolist()]
    return periods, amplitude[:, freqs]  # [B', K]


def fold_to_image(x: torch.Tensor, period: int) -> torch.Tensor:
    """1D → 2D: `[B', T_m, D]` → `[B', D, p, ⌈T_m / p⌉]`, zero-padded at the end; entry [b, d, i, j] is
    x[b, j·p + i, d] (column j: the j-th period; row i: phase i)."""
    b, length, d = x.shape
    cols = -(-length // period)
    x = F.pad(x, (0, 0, 0, cols * period - length))  # [B', p·c, D]
    return x.reshape(b, cols, period, d).permute(0, 3, 2, 1)  # [B', D, p, c]


def unfold_from_image(z: torch.Tensor, length: int) -> torch.Tensor:
    """2D → 1D, the inverse of `fold_to_image`: `[B', D, p, c]` → `[B', length, D]` (padding dropped)."""
    b, d, period, cols = z.shape
    return z.permute(0, 3, 2, 1).reshape(b, cols * period, d)[:, :length]  # [B', T_m, D]


def _attention(d_model: int, n_heads: int, dropout: float) -> AttentionLayer:
    return AttentionLayer(FullAttention(False, attention_dropout=dropout), d_model, n_heads)


class TimeImageDecomposition(nn.Module):
    """Dual-axis attention: an image `[B', D, p, c]` → (seasonal, trend) images of the same shape.

    Column-axis attention runs over the p phases inside each period (each of the c columns a sequence);
    row-axis attention runs over the c periods at each phase (each of the p rows a sequence).
    Both are multi-head self-attention (Q, K, V and output projections, no mask).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.column_attention = _attention(d_model, n_heads, dropout)
        self.row_attention = _attention(d_model, n_heads, dropout)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, d, p, c = z.shape
        columns = z.permute(0, 3, 2, 1).reshape(b * c, p, d)  # [B'·c, p, D]
        season, _ = self.column_attention(columns, columns, columns, None)
        season = season.reshape(b, c, p, d).permute(0, 3, 2, 1)  # [B', D, p, c]
        rows = z.permute(0, 2, 3, 1).reshape(b * p, c, d)  # [B'·p, c, D]
        trend, _ = self.row_attention(rows, rows, rows, None)
        trend = trend.reshape(b, p, c, d).permute(0, 3, 1, 2)  # [B', D, p, c]
        return season, trend


class ImageDownMixing(nn.Module):
    """Seasonal step of MCM: `[B', D, p, c]` → `[B', D, p, ⌈c / w⌉]`.

    Conv2d(D → d_ff, kernel (3, w), stride (1, w)) → GELU → Conv2d(d_ff → D, kernel 3), "same" padding on
    the rows; the columns are zero-padded at the end to a multiple of w first.
    """

    def __init__(self, d_model: int, d_ff: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.layers = nn.Sequential(
            nn.Conv2d(d_model, d_ff, (3, window), stride=(1, window), padding=(1, 0)),
            nn.GELU(),
            nn.Conv2d(d_ff, d_model, 3, padding=1))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        cols = z.shape[-1]
        z = F.pad(z, (0, -(-cols // self.window) * self.window - cols))  # [B', D, p, w·⌈c / w⌉]
        return self.layers(z)


class ImageUpMixing(nn.Module):
    """Trend step of MCM: `[B', D, p, c]` → `[B', D, p, cols]` with cols ≤ w·c.

    ConvTranspose2d(D → d_ff, kernel (3, w), stride (1, w)) → GELU → ConvTranspose2d(d_ff → D, kernel 3),
    "same" padding on the rows; the w·c columns are cut to `cols`.
    """

    def __init__(self, d_model: int, d_ff: int, window: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.ConvTranspose2d(d_model, d_ff, (3, window), stride=(1, window), padding=(1, 0)),
            nn.GELU(),
            nn.ConvTranspose2d(d_ff, d_model, 3, padding=1))

    def forward(self, z: torch.Tensor, cols: int) -> torch.Tensor:
        return self.layers(z)[..., :cols]


class MultiScaleImageMixing(nn.Module):
    """MCM over the images of one period, a list `[B', D, p, c_m]` for m = 0..M (finest first).

    `down_mixing[m − 1]` takes scale m − 1 to m; `up_mixing[m]` takes scale m + 1 to m.
    """

    def __init__(self, n_scales: int, d_model: int, d_ff: int, window: int) -> None:
        super().__init__()
        self.down_mixing = nn.ModuleList(ImageDownMixing(d_model, d_ff, window) for _ in range(n_scales - 1))
        self.up_mixing = nn.ModuleList(ImageUpMixing(d_model, d_ff, window) for _ in range(n_scales - 1))

    def forward(self, seasons: list[torch.Tensor], trends: list[torch.Tensor]) -> list[torch.Tensor]:
        """Mixed seasonal plus mixed trend image of every scale (a list like the inputs)."""
        seasons, trends = list(seasons), list(trends)
        for m in range(1, len(seasons)):
            seasons[m] = seasons[m] + self.down_mixing[m - 1](seasons[m - 1])
        for m in reversed(range(len(trends) - 1)):
            trends[m] = trends[m] + self.up_mixing[m](trends[m + 1], trends[m].shape[-1])
        return [s + t for s, t in zip(seasons, trends, strict=True)]


class MixerBlock(nn.Module):
    """One MixerBlock (MRTI → TID → MCM → MRM, then residual and LayerNorm) over multi-scale tokens.

    Args:
        lengths: T_m of every scale, finest first (T_0 = T, T_m = T_{m−1} / w).
        d_model: D. d_ff: hidden channels of the MCM convolutions. n_heads: heads of both attentions.
        top_k: K periods (≤ T_M // 2). window: w, the column stride of the MCM convolutions.
        dropout: attention dropout.
    The two attentions and the convolutions are shared by all K periods; the attentions also by all scales.
    """

    def __init__(self, lengths: list[int], d_model: int, d_ff: int, n_heads: int, top_k: int, window: int,
                 dropout: float) -> None:
        super().__init__()
        self.lengths = list(lengths)
        self.top_k = top_k
        self.decomposition = TimeImageDecomposition(d_model, n_heads, dropout)
        self.multi_scale_mixing = MultiScaleImageMixing(len(lengths), d_model, d_ff, window)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, xs: list[torch.Tensor]) -> list[torch.Tensor]:
        """xs: a list of `[B', T_m, D]`, finest first → a list of the same shapes."""
        periods, amplitudes = top_k_periods(xs[-1], self.top_k, self.lengths[0])
        per_period = []
        for period in periods:
            images = [fold_to_image(x, period) for x in xs]  # [B', D, p, c_m] each
            seasons, trends = zip(*(self.decomposition(z) for z in images), strict=True)
            mixed = self.multi_scale_mixing(list(seasons), list(trends))
            per_period.append([unfold_from_image(z, x.shape[1]) for z, x in zip(mixed, xs, strict=True)])
        weights = torch.softmax(amplitudes, dim=-1)  # [B', K]
        out = []
        for m, x in enumerate(xs):
            stacked = torch.stack([z[m] for z in per_period], dim=-1)  # [B', T_m, D, K]
            mixed = (stacked * weights[:, None, None, :]).sum(-1)  # [B', T_m, D]
            out.append(self.layer_norm(x + mixed))
        return out
