"""Reformer (Kitaev et al., "Reformer: The Efficient Transformer", ICLR 2020, https://arxiv.org/abs/2001.04451)
as TSLib's encoder-only model with LSH self-attention: forecasting, imputation, anomaly detection and
classification.

The window and the horizon's placeholders form one sequence of T = L + H steps:
    s = [x_enc ; last H steps of x_dec]              `[B, L+H, enc_in]` (the exp's zeros for the horizon)
    m = [x_mark_enc ; last H steps of x_mark_dec]    `[B, L+H, F]`
    z = DataEmbedding(s, m)                          `[B, T, d_model]`
    z = Encoder(z): e_layers post-norm layers of LSH self-attention (`ReformerLayer`: shared QK,
        4 hashing rounds, buckets of 4, attention within a sorted chunk and the one before) and a 1×1-conv
        FFN, then a final LayerNorm
    ŷ = Linear(z)[:, -H:]                            `[B, H, c_out]`
Long-term forecasting uses the raw series (TSLib's Reformer has no normalisation there); short-term
forecasting instance-normalises the window (mean, biased std, detached) and de-normalises the forecast.
LSH needs T to be a multiple of 2 · bucket_size = 8: the sequence is zero-padded at the end to the next
multiple inside each attention layer (TSLib's padding) and cut back.

The window tasks encode the input window alone (T = L, raw values, no normalisation, as TSLib's):
    imputation         projection = Linear(D → c_out) of the encoded masked window (with its time marks)
    anomaly_detection  projection = Linear(D → c_out) of the encoded window (no time marks)
    classification     projection = Linear(L·D → num_class) of the flattened GELU/dropout features, padded
                       steps zeroed

Differences from TSLib (interfaces, parameter names, shapes and counts kept):
- The zero padding is masked out as attention keys (TSLib lets the padded rows take attention weight).
- In eval mode each attention layer hashes with rotations from a generator seeded with a fixed seed, so
  evaluation is reproducible and leaves the global random stream untouched; training draws from the
  global stream as TSLib does.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_attention_config,
    check_output_channels,
)
from layers.Embed import DataEmbedding
from layers.SelfAttention_Family import ReformerLayer
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from layers.Transformer_EncDec import Encoder, EncoderLayer
from utils.errors import UserInputError

TASKS = ALL_TASKS


class Model(TaskForward, nn.Module):
    """Reformer for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` or None,
    x_dec `[B, label_len + H, enc_in]`, x_mark_dec `[B, label_len + H, F]` or None → `[B, H, c_out]`; for
    imputation and anomaly detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for
    classification `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the
    experiment).

    Reads task_name, seq_len, pred_len, enc_in, dec_in, c_out, d_model, n_heads, e_layers, d_ff, dropout,
    activation, embed, freq (pred_len and dec_in only when forecasting). `bucket_size` and `n_hashes` are
    constructor arguments, as in TSLib.
    """

    def __init__(self, configs: argparse.Namespace, bucket_size: int = 4, n_hashes: int = 4) -> None:
        super().__init__()
        check_attention_config(configs, "Reformer", TASKS, "e_layers", "d_ff")
        self.task_name = configs.task_name
        if self.task_name in FORECAST_TASKS and configs.dec_in != configs.enc_in:
            raise UserInputError(
                f"--dec_in {configs.dec_in} differs from --enc_in {configs.enc_in}: Reformer appends the decoder "
                "input's horizon placeholders to the encoder input, so use --dec_in equal to --enc_in")
        self.short_term = self.task_name == "short_term_forecast"
        if self.short_term:
            check_output_channels(configs, "Reformer")
        self.pred_len = configs.pred_len
        d_model, dropout = configs.d_model, configs.dropout
        self.normalize = Normalize(configs.enc_in, eps=1e-5)
        # Built in TSLib's order, so a seed gives TSLib's initial weights.
        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = Encoder(
            [
                EncoderLayer(ReformerLayer(None, d_model, configs.n_heads, bucket_size=bucket_size,
                                           n_hashes=n_hashes),
                             d_model, configs.d_ff, dropout=dropout, activation=configs.activation)
                for _ in range(configs.e_layers)
            ],
            norm_layer=nn.LayerNorm(d_model),
        )
        if self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(d_model * configs.seq_len, configs.num_class)
        else:
            self.projection = nn.Linear(d_model, configs.c_out)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Encode the window followed by the horizon's placeholders: → `[B, H, c_out]` (instance-normalised
        for short-term forecasting)."""
        if self.short_term:
            x_enc = self.normalize(x_enc, "norm")
        x = torch.cat([x_enc, x_dec[:, -self.pred_len:]], dim=1)  # [B, L+H, C]
        marks = None
        if x_mark_enc is not None and x_mark_dec is not None:
            marks = torch.cat([x_mark_enc, x_mark_dec[:, -self.pred_len:]], dim=1)  # [B, L+H, F]
        z, _ = self.encoder(self.enc_embedding(x, marks))  # [B, L+H, d_model]
        out = self.projection(z)[:, -self.pred_len:]  # [B, H, c_out]
        return self.normalize(out, "denorm") if self.short_term else out

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, enc_in]` (0 where masked), marks `[B, L, F]` → `[B, L, c_out]`.
        LSH encoder + Linear(D → c_out) on the raw values, as TSLib's (the mask is not read)."""
        z, _ = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L, D]
        return self.projection(z)  # [B, L, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window without time marks: `[B, L, enc_in]` → `[B, L, c_out]` (LSH encoder +
        Linear(D → c_out), as TSLib's)."""
        z, _ = self.encoder(self.enc_embedding(x_enc, None))  # [B, L, D]
        return self.projection(z)  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding_mask `[B, L]` (1 = real step) → logits `[B, num_class]`: LSH encoder (no
        marks), GELU, dropout, padded steps zeroed, flatten, Linear(L·D → classes). The LSH attention itself
        does not mask padded steps (as TSLib's), so their values still reach the real steps' tokens."""
        z, _ = self.encoder(self.enc_embedding(x_enc, None))  # [B, L, D]
        return self.projection(masked_flat_features(z, self.dropout, padding_mask))  # [B, num_class]
