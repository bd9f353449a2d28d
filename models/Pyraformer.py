"""Pyraformer (Liu et al., "Pyraformer: Low-Complexity Pyramidal Attention for Long-Range Time Series
Modeling and Forecasting", ICLR 2022, https://openreview.net/forum?id=0EXmFzUn5I), TSLib's
single-step-projection forecaster.

    embedding:  E = TokenConv(x) + PE + calendar tables   `[B, L, D]`
    CSCM:       pyramid P = LN([E ; Up(Conv_S(...Conv_1(Down(E))))])   `[B, L + L/C_1 + L/(C_1 C_2), D]`
    PAM:        e_layers of pyramidal-mask attention + feed-forward (`layers/Pyraformer_EncDec.py`)
    head:       the last time step's ancestors at every scale `[S·D]` → Linear → `[H, enc_in]`

TSLib's settings: window sizes C = [4, 4] (three scales), same-scale window A = 5 (inner size), the
bottleneck width D/4; short-term forecasting uses C = [2, 2] and normalises each window (mean, biased
std, detached) before the encoder and undoes it after the head.

Window tasks, as TSLib builds them (C = [4, 4]; no normalisation): imputation and anomaly detection read
every finest-scale position's ancestors `[S·D]` out with Linear(S·D → enc_in) (`projection`);
classification applies GELU, dropout and the padding mask to the `[L, S·D]` features and flattens them
into Linear(L·S·D → num_class).

Deliberate differences from TSLib (parameter names, shapes, counts and initial weights kept):
- The forecast is `[B, H, c_out]`: the head still predicts all enc_in variates (TSLib's width) and the
  last `--c_out` of them are returned (features MS: the target), instead of always enc_in.
- The embedding's dropout follows `--dropout`; TSLib passes `configs.dropout` into the embed-type slot of
  `DataEmbedding`, which fixes the dropout at 0.1 and builds learned calendar tables (kept: they are
  in TSLib's parameter list).
- `--seq_len` too short for the pyramid is a one-line error (TSLib fails inside a convolution), and so
  is `--embed timeF` with a `--freq` whose marks have fewer than the tables' 4 columns (TSLib: IndexError).
Kept from TSLib: the calendar tables are learned hourly ones whatever `--embed`/`--freq` say; with
timeF marks (floats in [-0.5, 0.5]) they read row 0, so they add a learned constant.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    CLASSIFICATION,
    FORECAST_TASKS,
    IMPUTATION,
    check_heads,
    check_positive,
    check_variate_task_config,
)
from layers.Pyraformer_EncDec import Encoder, pyramid_sizes
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError
from utils.timefeatures import num_time_features

# TSLib's pyramid: strides of the coarser scales (short-term forecasting halves them) and A.
WINDOW_SIZE = [4, 4]
SHORT_TERM_WINDOW_SIZE = [2, 2]
INNER_SIZE = 5
# The mark columns TSLib's hourly calendar tables index.
CALENDAR_FIELDS = ("month", "day", "weekday", "hour")
ANOMALY_DETECTION = "anomaly_detection"
TASKS = FORECAST_TASKS + (IMPUTATION, ANOMALY_DETECTION, CLASSIFICATION)


class Model(TaskForward, nn.Module):
    """Pyraformer (see the module doc). Long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`;
    imputation: masked `[B, L, enc_in]`, marks, mask → `[B, L, c_out]`; anomaly detection: `[B, L, enc_in]`
    → `[B, L, c_out]`; classification: `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]`.

    Reads task_name, seq_len, pred_len (forecasting only), enc_in, c_out (not for classification),
    d_model, d_ff, n_heads, e_layers, dropout (and embed/freq only to check the marks are wide enough);
    uses x_enc and x_mark_enc only.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc")

    def __init__(self, configs: argparse.Namespace, window_size: list[int] | None = None,
                 inner_size: int = INNER_SIZE) -> None:
        super().__init__()
        check_variate_task_config(configs, "Pyraformer", TASKS)
        check_positive(configs, "d_ff", "e_layers")
        check_heads(configs)
        if configs.d_model < 4:
            raise UserInputError(f"--d_model {configs.d_model} must be at least 4: Pyraformer's coarser scales "
                                 "are built at width d_model / 4")
        if configs.embed == "timeF" and num_time_features(configs.freq) < len(CALENDAR_FIELDS):
            raise UserInputError(
                f"--freq {configs.freq} with --embed timeF gives {num_time_features(configs.freq)} mark columns, but "
                f"Pyraformer's calendar tables read {len(CALENDAR_FIELDS)} ({', '.join(CALENDAR_FIELDS)}); "
                "use --embed fixed (or learned), or --freq h, t or s")
        self.task_name = configs.task_name
        if window_size is None:
            window_size = SHORT_TERM_WINDOW_SIZE if self.task_name == "short_term_forecast" else WINDOW_SIZE
        sizes = pyramid_sizes(configs.seq_len, window_size)
        if min(sizes) < 1:
            needed = math.prod(window_size)
            raise UserInputError(f"--seq_len {configs.seq_len} is too short for Pyraformer's pyramid (strides "
                                 f"{window_size}): use --seq_len >= {needed}")
        self.pred_len, self.c_out = configs.pred_len, configs.c_out
        self.encoder = Encoder(configs.seq_len, configs.enc_in, configs.d_model, configs.d_ff, configs.n_heads,
                               configs.e_layers, configs.dropout, window_size, inner_size)
        features = (len(window_size) + 1) * configs.d_model  # S·D per finest-scale position
        if self.task_name in FORECAST_TASKS:
            self.projection = nn.Linear(features, configs.pred_len * configs.enc_in)
        elif self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(features * configs.seq_len, configs.num_class)
        else:
            self.projection = nn.Linear(features, configs.enc_in)
        self.normalize = Normalize(configs.enc_in, eps=1e-5)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, marks `[B, L, F]` → `[B, H, c_out]` from the last position's ancestors."""
        short_term = self.task_name == "short_term_forecast"
        if short_term:
            x_enc = self.normalize(x_enc, "norm")
        last = self.encoder(x_enc, x_mark_enc)[:, -1, :]  # [B, S·D]
        out = self.projection(last).reshape(x_enc.shape[0], self.pred_len, -1)  # [B, H, enc_in]
        if short_term:
            out = self.normalize(out, "denorm")
        return out[:, :, -self.c_out:]  # [B, H, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x `[B, L, enc_in]` (0 where hidden), marks `[B, L, F]` → `[B, L, c_out]`.

        As TSLib: no normalisation and the mask is not read; each position's ancestors at every scale
        `[S·D]` are read out by Linear(S·D → enc_in), of which the last c_out variates are returned.
        """
        return self.projection(self.encoder(x_enc, x_mark_enc))[:, :, -self.c_out:]  # [B, L, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window without marks: `[B, L, enc_in]` → `[B, L, c_out]` (the imputation read-out;
        the calendar tables then add their row-0 constant, as TSLib's)."""
        return self.projection(self.encoder(x_enc, None))[:, :, -self.c_out:]  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = real step) → logits `[B, num_class]`: the `[B, L, S·D]`
        ancestor features (no marks), GELU, dropout, padded positions zeroed, flatten, Linear(L·S·D → classes).

        Zeroing a padded position removes its own features; its values still reach the real positions
        through the attention and the coarser scales (TSLib's behaviour)."""
        features = self.encoder(x_enc, None)  # [B, L, S·D]
        return self.projection(masked_flat_features(features, self.dropout, padding_mask))  # [B, num_class]
