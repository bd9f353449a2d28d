"""TimesNet (Wu et al., "TimesNet: Temporal 2D-Variation Modeling for General Time Series
Analysis", ICLR 2023), TSLib's configuration.

After RevIN and DataEmbedding, Linear(L → L + H) along time extends the tokens over the horizon
(T = L + H steps). Each TimesBlock finds the k dominant periods from the FFT amplitude
A_f = mean_{batch, D} |rfft(x)_f| (f ≥ 1), folds the sequence into a `[T/p, p]` grid per period
p = ⌊T / f⌋, applies a 2-D Inception → GELU → Inception, unfolds, and sums the k results weighted by
softmax over the per-sample amplitudes of the chosen frequencies, plus a residual.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    EMBED_TYPES,
    FORECAST_TASKS,
    check_choice,
    check_positive,
    check_task_config,
)
from layers.Conv_Blocks import Inception_Block_V1
from layers.Embed import DataEmbedding
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.Periods import fft_periods
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError


class TimesBlock(nn.Module):
    """One TimesNet block over `[B, T, D]` tokens (T = seq_len + pred_len)."""

    def __init__(self, total_len: int, d_model: int, d_ff: int, top_k: int, num_kernels: int) -> None:
        super().__init__()
        self.total_len = total_len
        self.top_k = top_k
        self.conv = nn.Sequential(
            Inception_Block_V1(d_model, d_ff, num_kernels),
            nn.GELU(),
            Inception_Block_V1(d_ff, d_model, num_kernels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        periods, period_weight = fft_periods(x, self.top_k)
        res = []
        for period in periods:
            # Zero-pad the end so the sequence folds into whole rows of `period` steps.
            length = -(-self.total_len // period) * period
            out = F.pad(x, (0, 0, 0, length - self.total_len))  # [B, length, D]
            out = out.reshape(b, length // period, period, d).permute(0, 3, 1, 2)  # [B, D, rows, period]
            out = self.conv(out)
            out = out.permute(0, 2, 3, 1).reshape(b, -1, d)  # [B, length, D]
            res.append(out[:, : self.total_len, :])
        res = torch.stack(res, dim=-1)  # [B, T, D, k]
        weight = torch.softmax(period_weight, dim=1)[:, None, None, :]  # [B, 1, 1, k]
        return (res * weight).sum(dim=-1) + x  # [B, T, D]


TASKS = ALL_TASKS


class Model(TaskForward, nn.Module):
    """TimesNet for long/short-term forecasting: `[B, L, enc_in]`, marks `[B, L, F]` → `[B, H, c_out]`;
    for imputation: masked `[B, L, enc_in]`, marks, mask → `[B, L, c_out]`; for anomaly detection it
    reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification: `[B, L, enc_in]`,
    padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the experiment).

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff, e_layers, top_k, num_kernels, embed, freq,
    dropout. The projection outputs c_out channels; they are de-normalised with the statistics of
    the last c_out input variates (the target under features MS).
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc")

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_task_config(configs, "TimesNet", TASKS)
        classify = configs.task_name == CLASSIFICATION
        check_positive(configs, "d_model", "d_ff", "e_layers", "top_k", "num_kernels")
        check_choice(configs, "embed", EMBED_TYPES)
        if not classify and configs.c_out > configs.enc_in:
            raise UserInputError(
                f"--c_out {configs.c_out} exceeds --enc_in {configs.enc_in}: TimesNet de-normalises each "
                "output with an input variate's statistics, so use --c_out <= --enc_in")
        self.task_name = configs.task_name
        forecasting = configs.task_name in FORECAST_TASKS
        # Reconstruction tasks fold the input window itself (TSLib's scripts pass --pred_len 0 there; TSLib
        # folds seq_len + pred_len steps for imputation, which breaks for any other --pred_len).
        total_len = configs.seq_len + configs.pred_len if forecasting else configs.seq_len
        if configs.top_k > total_len // 2:
            raise UserInputError(
                f"--top_k {configs.top_k} exceeds the {total_len // 2} non-zero FFT frequencies of "
                f"the {total_len} steps folded (--seq_len, plus --pred_len when forecasting); use --top_k <= {total_len // 2}")
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.normalize = Normalize(configs.enc_in)
        # Built in TSLib's order (blocks, embedding, norm, predict_linear, projection), so a given seed
        # draws the same initial weights as TSLib's TimesNet.
        # `model` is TSLib's name for the block list, kept so its checkpoints load.
        self.model = nn.ModuleList(
            TimesBlock(total_len, configs.d_model, configs.d_ff, configs.top_k, configs.num_kernels)
            for _ in range(configs.e_layers)
        )
        self.enc_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                           configs.dropout)
        # One LayerNorm shared by every block, as in the reference implementation.
        self.layer_norm = nn.LayerNorm(configs.d_model)
        if classify:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.d_model * configs.seq_len, configs.num_class)
        else:
            if forecasting:
                self.predict_linear = nn.Linear(configs.seq_len, total_len)
            self.projection = nn.Linear(configs.d_model, configs.c_out)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, marks `[B, L, F]` → `[B, H, c_out]`."""
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens = self.enc_embedding(x, x_mark_enc)  # [B, L, D]
        tokens = self.predict_linear(tokens.transpose(1, 2)).transpose(1, 2)  # [B, T, D]
        for block in self.model:
            tokens = self.layer_norm(block(tokens))
        out = self.projection(tokens)  # [B, T, c_out]
        return self.normalize(out[:, -self.pred_len:, :], "denorm")  # [B, H, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]` (no time marks, no horizon)."""
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens = self.enc_embedding(x, None)  # [B, L, D]
        for block in self.model:
            tokens = self.layer_norm(block(tokens))
        return self.normalize(self.projection(tokens), "denorm")  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor) -> torch.Tensor:
        """`[B, L, enc_in]` (not normalised here: the loader standardises), padding mask `[B, L]` (1 = observed)
        → logits `[B, num_class]`: GELU, dropout, zero the padded steps, flatten, Linear(L·D → classes)."""
        tokens = self.enc_embedding(x_enc, None)  # [B, L, D]
        for block in self.model:
            tokens = self.layer_norm(block(tokens))
        return self.projection(masked_flat_features(tokens, self.dropout, padding_mask))  # [B, num_class]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, N]` (0 where masked), mask `[B, L, N]` (1 observed, 0
        masked) → `[B, L, c_out]`, normalised with the observed points' statistics."""
        x, means, stdev = masked_normalize(x_enc, mask)  # [B, L, N]
        tokens = self.enc_embedding(x, x_mark_enc)  # [B, L, D]
        for block in self.model:
            tokens = self.layer_norm(block(tokens))
        return masked_denormalize(self.projection(tokens), means, stdev)  # [B, L, c_out]
