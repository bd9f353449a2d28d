"""MICN (Wang et al., "MICN: Multi-scale Local and Global Context Modeling for Long-term Series
Forecasting", ICLR 2023, https://openreview.net/forum?id=zt53IDUR1U), TSLib's configuration, long-term
forecasting only.

Multi-scale hybrid decomposition (MHDecomp, §3.1), over the input window X `[B, L, N]`:
    X_t = mean_i AvgPool_{k_i}(Padding(X)),   X_s = X − X_t
Trend-cyclical prediction (§3.2, MICN-regre): Y_t = Regression(X_t), a Linear L → H along time.
Seasonal prediction (§3.3): X_s followed by H zeros is embedded (value + position + time marks) to
Z `[B, L + H, D]` and passed through `d_layers` MIC layers, then Projection(D → c_out).
A MIC layer has one branch per scale i (conv kernel k_i, decomposition kernel k_i + 1 for even k_i):
    S_i       = SeriesDecomp_{k_i+1}(Z)₀                                    (seasonal part)
    Y_local   = Dropout(Tanh(Conv1d_{kernel=stride=k_i, padding=k_i/2}(S_i)))   length S
    Y_global  = Dropout(Tanh(IsometricConv1d_{kernel=S}(Pad_{S−1 zeros in front}(Y_local))))
    Y_lg      = Norm(Y_local + Y_global)
    Y_i       = Norm(Dropout(Tanh(ConvTranspose1d_{kernel=stride=k_i}(Y_lg)))[:L+H] + S_i)
then Merge: Y = Conv2d_{(n, 1)}(stack_i Y_i) over the n branches, and
    out = Norm₂(Y + Conv1d_{1×1}(Conv1d_{1×1}(Norm₁(Y))))   (D → d_ff → D, no activation, as in TSLib).
Forecast: Y = Y_s[last H steps] + Y_t.

The isometric convolution sees the whole down-sampled sequence (kernel S = its length) and is causal
thanks to the S − 1 front zeros, so it models global correlations at linear cost in L.
TSLib's MIC dropout is a fixed 0.05 (kept); `--dropout` sets the embedding's dropout.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.Autoformer_EncDec import series_decomp, series_decomp_multi
from layers.config_checks import (
    EMBED_TYPES,
    check_choice,
    check_decoder_from_encoder,
    check_forecast_config,
    check_output_channels,
    check_positive,
    check_task,
)
from layers.Embed import DataEmbedding

# TSLib's MICN scales (a constructor default there, not a run.py flag).
CONV_KERNELS = (12, 16)
# TSLib's fixed dropout inside every MIC layer.
MIC_DROPOUT = 0.05


def decomposition_kernel(conv_kernel: int) -> int:
    """Moving-average kernel of a scale: the conv kernel made odd (k + 1 for even k), as in TSLib."""
    return conv_kernel + 1 if conv_kernel % 2 == 0 else conv_kernel


def downsampled_length(length: int, conv_kernel: int) -> int:
    """Length after Conv1d(kernel = stride = k, padding = k // 2) over `length` steps: the isometric
    kernel of the scale. For even k it is (length + k) // k, TSLib's isometric kernel."""
    return (length + 2 * (conv_kernel // 2) - conv_kernel) // conv_kernel + 1


class MIC(nn.Module):
    """One Multi-scale Isometric Convolution layer: `[B, T, D]` → `[B, T, D]`.

    `isometric_kernel[i]` must be the down-sampled length of branch i (`downsampled_length(T, k_i)`),
    so the isometric convolution maps a zero-padded sequence of 2S − 1 steps back to S steps.
    """

    def __init__(self, feature_size: int = 512, d_ff: int = 2048, dropout: float = MIC_DROPOUT,
                 decomp_kernel: list[int] | tuple[int, ...] = (33,),
                 conv_kernel: list[int] | tuple[int, ...] = (12, 24),
                 isometric_kernel: list[int] | tuple[int, ...] = (18, 6)) -> None:
        super().__init__()
        if not len(decomp_kernel) == len(conv_kernel) == len(isometric_kernel):
            raise ValueError("MIC needs one decomposition, conv and isometric kernel per scale")
        self.conv_kernel = list(conv_kernel)
        d = feature_size
        # Constructed in TSLib's order (isometric, down-sampling, up-sampling, merge, feed-forward), so a
        # seed draws TSLib's initial weights.
        self.isometric_conv = nn.ModuleList(nn.Conv1d(d, d, kernel_size=s, stride=1, padding=0)
                                            for s in isometric_kernel)
        self.conv = nn.ModuleList(nn.Conv1d(d, d, kernel_size=k, stride=k, padding=k // 2) for k in conv_kernel)
        self.conv_trans = nn.ModuleList(nn.ConvTranspose1d(d, d, kernel_size=k, stride=k, padding=0)
                                        for k in conv_kernel)
        self.decomp = nn.ModuleList(series_decomp(k) for k in decomp_kernel)
        self.merge = nn.Conv2d(d, d, kernel_size=(len(conv_kernel), 1))
        self.conv1 = nn.Conv1d(d, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d, kernel_size=1)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.norm = nn.LayerNorm(d)
        self.act = nn.Tanh()
        self.drop = nn.Dropout(dropout)

    def _channel_norm(self, x: torch.Tensor) -> torch.Tensor:
        """`self.norm` over the channels of a channels-first `[B, D, T]` tensor."""
        return self.norm(x.transpose(1, 2)).transpose(1, 2)

    def local_global(self, seasonal: torch.Tensor, branch: int) -> torch.Tensor:
        """Branch `branch` on its seasonal input `[B, T, D]` → `[B, T, D]`: down-sampling convolution
        (local), isometric convolution (global), up-sampling back to T steps, residual and norm."""
        length = seasonal.shape[1]
        x = seasonal.transpose(1, 2)  # [B, D, T]
        local = self.drop(self.act(self.conv[branch](x)))  # [B, D, S]
        # S − 1 zeros in front: the kernel-S isometric convolution returns S steps, step j seeing 0..j.
        padded = torch.cat([local.new_zeros(*local.shape[:2], local.shape[2] - 1), local], dim=2)  # [B, D, 2S − 1]
        glob = self.drop(self.act(self.isometric_conv[branch](padded)))  # [B, D, S]
        mixed = self._channel_norm(local + glob)  # [B, D, S]
        up = self.drop(self.act(self.conv_trans[branch](mixed)))[:, :, :length]  # [B, D, T]
        return self.norm(up.transpose(1, 2) + seasonal)  # [B, T, D]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branches = []
        for i, decomp in enumerate(self.decomp):
            seasonal, _ = decomp(x)  # [B, T, D]
            branches.append(self.local_global(seasonal, i))
        stacked = torch.stack(branches, dim=1).permute(0, 3, 1, 2)  # [B, D, n, T]
        merged = self.merge(stacked).squeeze(2).transpose(1, 2)  # [B, T, D]
        y = self.conv2(self.conv1(self.norm1(merged).transpose(1, 2))).transpose(1, 2)  # [B, T, D]
        return self.norm2(merged + y)


class SeasonalPrediction(nn.Module):
    """`d_layers` MIC layers then Linear(D → c_out): `[B, T, D]` → `[B, T, c_out]`."""

    def __init__(self, embedding_size: int = 512, d_ff: int = 2048, dropout: float = MIC_DROPOUT,
                 d_layers: int = 1, decomp_kernel: list[int] | tuple[int, ...] = (32,), c_out: int = 1,
                 conv_kernel: list[int] | tuple[int, ...] = (2, 8),
                 isometric_kernel: list[int] | tuple[int, ...] = (48, 48)) -> None:
        super().__init__()
        self.mic = nn.ModuleList(
            MIC(embedding_size, d_ff, dropout, decomp_kernel, conv_kernel, isometric_kernel)
            for _ in range(d_layers))
        self.projection = nn.Linear(embedding_size, c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.mic:
            x = layer(x)  # [B, T, D]
        return self.projection(x)  # [B, T, c_out]


class Model(nn.Module):
    """MICN for long-term forecasting.

    x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` (or None), x_mark_dec `[B, label_len + H, F]` (or
    None) → `[B, H, c_out]`. x_dec is not read. Reads seq_len, pred_len, enc_in, dec_in, c_out,
    d_model, d_ff, d_layers, dropout, embed, freq.

    The seasonal part is embedded over L + H steps with the marks of x_mark_enc followed by the last H
    marks of x_mark_dec. (TSLib embeds it with x_mark_dec, which has L + H steps only when
    --label_len equals --seq_len, and fails otherwise; with label_len = seq_len both are the same marks.)
    With c_out < enc_in (features MS) the trend of the last c_out variates (the target) is added.
    """

    def __init__(self, configs: argparse.Namespace, conv_kernel: list[int] | tuple[int, ...] = CONV_KERNELS) -> None:
        super().__init__()
        check_task(configs, "MICN")
        check_forecast_config(configs, "MICN")
        check_positive(configs, "dec_in", "d_model", "d_ff", "d_layers")
        check_choice(configs, "embed", EMBED_TYPES)
        check_output_channels(configs, "MICN")
        check_decoder_from_encoder(configs, "MICN", "embeds the seasonal part of the encoder input", label_len=False)
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        total = configs.seq_len + configs.pred_len
        decomp_kernel = [decomposition_kernel(k) for k in conv_kernel]
        isometric_kernel = [downsampled_length(total, k) for k in conv_kernel]

        # Built in TSLib's order (decomp_multi, dec_embedding, conv_trans, regression), so a given seed
        # draws TSLib's initial weights.
        self.decomp_multi = series_decomp_multi(decomp_kernel)
        self.dec_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                           configs.dropout)
        self.conv_trans = SeasonalPrediction(configs.d_model, configs.d_ff, MIC_DROPOUT, configs.d_layers,
                                             decomp_kernel, configs.c_out, conv_kernel, isometric_kernel)
        self.regression = nn.Linear(configs.seq_len, configs.pred_len)
        # Start the trend regression as the window mean (weights 1/L, as DLinear). TSLib uses 1/H, which
        # scales the initial trend by L/H (a factor 7.5 too small at L 96, H 720); equal when L = H.
        with torch.no_grad():
            self.regression.weight.fill_(1.0 / configs.seq_len)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b, _, n = x_enc.shape
        seasonal, trend = self.decomp_multi(x_enc)  # [B, L, N] each
        trend = self.regression(trend.transpose(1, 2)).transpose(1, 2)  # [B, H, N]

        seasonal_init = torch.cat([seasonal, x_enc.new_zeros(b, self.pred_len, n)], dim=1)  # [B, L + H, N]
        marks = None
        if x_mark_enc is not None and x_mark_dec is not None:
            marks = torch.cat([x_mark_enc, x_mark_dec[:, -self.pred_len:]], dim=1)  # [B, L + H, F]
        seasonal_out = self.conv_trans(self.dec_embedding(seasonal_init, marks))  # [B, L + H, c_out]
        return seasonal_out[:, -self.pred_len:] + trend[..., -self.c_out:]  # [B, H, c_out]
