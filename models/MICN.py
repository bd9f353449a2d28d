"""MICN (Wang et al., "MICN: Multi-scale Local and Global Context Modeling for Long-term Series
Forecasting", ICLR 2023, https://openreview.net/forum?id=zt53IDUR1U), TSLib's configuration:
forecasting, imputation, anomaly detection and classification.

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
    out = Norm₂(Y + Conv1d_{1×1}(Conv1d_{1×1}(Norm₁(Y))))   (D → 4D → D, no activation, as in TSLib;
TSLib's MICN never reads --d_ff, its JapaneseVowels count of 1,173,427 at d_model 128, d_ff 256 fixes 4D).
Forecast: Y = Y_s[last H steps] + Y_t.

The isometric convolution sees the whole down-sampled sequence (kernel S = its length) and is causal
thanks to the S − 1 front zeros, so it models global correlations at linear cost in L.
TSLib's MIC dropout is a fixed 0.05 (kept); `--dropout` sets the embedding's dropout.

Imputation, anomaly detection and classification run the same network over the window alone (T = L, no
zero horizon) and add the decomposed trend back without the forecast-only regression (TSLib builds
`regression` for forecasting only): Y = Y_s + X_t `[B, L, c_out]`. Imputation and anomaly detection return
it; classification feeds it through the shared masked feature map (GELU, dropout, padded steps zeroed,
flatten) to Linear(c_out·L → classes).

TSLib's classification reads `--c_out` (the seasonal projection's width) but its trend keeps the
enc_in variates, so Y_s + X_t fails whenever they differ (its JapaneseVowels block: 7 vs 12). Here the
trend of the last min(c_out, enc_in) variates is added to the last min(c_out, enc_in) output channels,
which keeps TSLib's parameter count at every block (the width stays --c_out).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.Autoformer_EncDec import series_decomp, series_decomp_multi
from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    EMBED_TYPES,
    FORECAST_TASKS,
    check_choice,
    check_decoder_from_encoder,
    check_positive,
    check_variate_task_config,
)
from layers.Embed import DataEmbedding
from layers.TaskDispatch import TaskForward

TASKS = ALL_TASKS
# Width of the MIC feed-forward per model dimension (TSLib: 4·d_model; --d_ff is not read).
FEED_FORWARD_RATIO = 4

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
    """One Multi-scale Isometric Convolution layer: `[B, T, D]` → `[B, T, D]`, feed-forward width d_ff
    (TSLib's MICN builds it with d_ff = 4 · feature_size).

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


def add_trend(seasonal: torch.Tensor, trend: torch.Tensor) -> torch.Tensor:
    """seasonal `[B, T, C]` + trend `[B, T, N]`: the last k = min(C, N) trend variates are added to the last
    k channels (C ≤ N: the MS target's trend; C > N: only TSLib's classification build, whose width is
    --c_out whatever the data's variates)."""
    k = min(seasonal.shape[-1], trend.shape[-1])
    if k == seasonal.shape[-1]:
        return seasonal + trend[..., -k:]
    return torch.cat([seasonal[..., :-k], seasonal[..., -k:] + trend[..., -k:]], dim=-1)


class Model(TaskForward, nn.Module):
    """MICN for long/short-term forecasting, imputation, anomaly detection and classification.

    Forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` (or None), x_mark_dec `[B, label_len + H, F]`
    (or None) → `[B, H, c_out]`; x_dec is not read. Imputation: masked x_enc `[B, L, enc_in]`, marks
    `[B, L, F]` → `[B, L, c_out]`; anomaly detection `[B, L, enc_in]` → `[B, L, c_out]`; classification
    `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the experiment).
    Reads seq_len, pred_len (forecasting only), enc_in, dec_in (forecasting), c_out, d_model, d_layers,
    dropout, embed, freq.

    The seasonal part is embedded over L + H steps with the marks of x_mark_enc followed by the last H
    marks of x_mark_dec. (TSLib embeds it with x_mark_dec, which has L + H steps only when
    --label_len equals --seq_len, and fails otherwise; with label_len = seq_len both are the same marks.)
    With c_out < enc_in (features MS) the trend of the last c_out variates (the target) is added.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc", "x_mark_dec")

    def __init__(self, configs: argparse.Namespace, conv_kernel: list[int] | tuple[int, ...] = CONV_KERNELS) -> None:
        super().__init__()
        check_variate_task_config(configs, "MICN", TASKS)
        self.task_name = configs.task_name
        forecasting = self.task_name in FORECAST_TASKS
        check_positive(configs, "d_model", "d_layers", "c_out")
        check_choice(configs, "embed", EMBED_TYPES)
        if forecasting:
            check_positive(configs, "dec_in")
            check_decoder_from_encoder(configs, "MICN", "embeds the seasonal part of the encoder input")
        self.seq_len = configs.seq_len
        # The window tasks run over the window alone (TSLib's scripts pass --pred_len 0 there).
        self.pred_len = configs.pred_len if forecasting else 0
        self.c_out = configs.c_out
        total = configs.seq_len + self.pred_len
        decomp_kernel = [decomposition_kernel(k) for k in conv_kernel]
        isometric_kernel = [downsampled_length(total, k) for k in conv_kernel]

        # Built in TSLib's order (decomp_multi, dec_embedding, conv_trans, then regression or the
        # classification projection), so a given seed draws TSLib's initial weights.
        self.decomp_multi = series_decomp_multi(decomp_kernel)
        self.dec_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                           configs.dropout)
        self.conv_trans = SeasonalPrediction(configs.d_model, FEED_FORWARD_RATIO * configs.d_model, MIC_DROPOUT,
                                             configs.d_layers, decomp_kernel, configs.c_out, conv_kernel,
                                             isometric_kernel)
        if forecasting:
            self.regression = nn.Linear(configs.seq_len, configs.pred_len)
            # Start the trend regression as the window mean (weights 1/L, as DLinear). TSLib uses 1/H, which
            # scales the initial trend by L/H (a factor 7.5 too small at L 96, H 720); equal when L = H.
            with torch.no_grad():
                self.regression.weight.fill_(1.0 / configs.seq_len)
        if self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.c_out * configs.seq_len, configs.num_class)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, marks → `[B, H, c_out]`: seasonal MIC prediction over L + H steps plus the
        regressed trend."""
        b, _, n = x_enc.shape
        seasonal, trend = self.decomp_multi(x_enc)  # [B, L, N] each
        trend = self.regression(trend.transpose(1, 2)).transpose(1, 2)  # [B, H, N]

        seasonal_init = torch.cat([seasonal, x_enc.new_zeros(b, self.pred_len, n)], dim=1)  # [B, L + H, N]
        marks = None
        if x_mark_enc is not None and x_mark_dec is not None:
            marks = torch.cat([x_mark_enc, x_mark_dec[:, -self.pred_len:]], dim=1)  # [B, L + H, F]
        seasonal_out = self.conv_trans(self.dec_embedding(seasonal_init, marks))  # [B, L + H, c_out]
        return add_trend(seasonal_out[:, -self.pred_len:], trend)  # [B, H, c_out]

    def reconstruct(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """The window tasks' network: `[B, L, enc_in]`, marks `[B, L, F]` or None → `[B, L, c_out]`,
        the seasonal MIC prediction over the L window steps plus the decomposed trend itself."""
        seasonal, trend = self.decomp_multi(x_enc)  # [B, L, N] each
        seasonal_out = self.conv_trans(self.dec_embedding(seasonal, x_mark_enc))  # [B, L, c_out]
        return add_trend(seasonal_out, trend)  # [B, L, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, N]` (0 where masked), marks `[B, L, F]` → `[B, L, c_out]`.
        The window's own marks are embedded (TSLib passes None there, leaving the time embedding untrained);
        MICN does not normalise, so the mask is not read (as TSLib)."""
        return self.reconstruct(x_enc, x_mark_enc)

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]` (no time marks)."""
        return self.reconstruct(x_enc, None)

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = observed) → logits `[B, num_class]`: the window's
        reconstruction `[B, L, c_out]` (trend added on the last min(c_out, enc_in) channels), GELU, dropout,
        padded steps zeroed, flatten, Linear(L·c_out → classes)."""
        out = self.reconstruct(x_enc, None)  # [B, L, c_out]
        return self.projection(masked_flat_features(out, self.dropout, padding_mask))  # [B, num_class]
