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

from layers.config_checks import check_forecast_config, check_heads, check_output_channels, check_positive
from layers.Pyraformer_EncDec import Encoder, pyramid_sizes
from layers.StandardNorm import Normalize
from utils.errors import UserInputError
from utils.timefeatures import num_time_features

# TSLib's pyramid: strides of the coarser scales (short-term forecasting halves them) and A.
WINDOW_SIZE = [4, 4]
SHORT_TERM_WINDOW_SIZE = [2, 2]
INNER_SIZE = 5
# The mark columns TSLib's hourly calendar tables index.
CALENDAR_FIELDS = ("month", "day", "weekday", "hour")


class Model(nn.Module):
    """Pyraformer for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]` (see the module doc).

    Reads task_name, seq_len, pred_len, enc_in, c_out, d_model, d_ff, n_heads, e_layers, dropout (and
    embed/freq only to check the marks are wide enough); uses x_enc and x_mark_enc only.
    """

    def __init__(self, configs: argparse.Namespace, window_size: list[int] | None = None,
                 inner_size: int = INNER_SIZE) -> None:
        super().__init__()
        check_forecast_config(configs, "Pyraformer")
        check_positive(configs, "d_ff", "e_layers")
        check_heads(configs)
        check_output_channels(configs, "Pyraformer")
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
        self.projection = nn.Linear((len(window_size) + 1) * configs.d_model, configs.pred_len * configs.enc_in)
        self.normalize = Normalize(configs.enc_in, eps=1e-5)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        short_term = self.task_name == "short_term_forecast"
        if short_term:
            x_enc = self.normalize(x_enc, "norm")
        last = self.encoder(x_enc, x_mark_enc)[:, -1, :]  # [B, S·D]
        out = self.projection(last).reshape(x_enc.shape[0], self.pred_len, -1)  # [B, H, enc_in]
        if short_term:
            out = self.normalize(out, "denorm")
        return out[:, :, -self.c_out:]  # [B, H, c_out]
