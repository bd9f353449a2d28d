"""Informer (Zhou et al., "Informer: Beyond Efficient Transformer for Long Sequence Time-Series
Forecasting", AAAI 2021, https://arxiv.org/abs/2012.07436), TSLib's configuration: forecasting,
imputation, anomaly detection and classification.

Forecasting:
- ProbSparse self-attention (eq. 3-4, `layers.SelfAttention_Family.ProbAttention`) in every encoder
  layer, in the decoder's causal self-attention and, as in TSLib, in the decoder's cross-attention;
- self-attention distilling (eq. 5, `layers.Transformer_EncDec.ConvLayer`) between encoder layers,
  on unless `--distil` is passed (a store_false flag);
- the generative-style decoder: the last `label_len` inputs as start tokens followed by H zero
  placeholders, decoded in one forward pass; the last H positions are the forecast.
Long-term forecasting uses the raw series (TSLib's long-term Informer has no normalisation);
short-term forecasting instance-normalises the window (mean, biased std, detached) and de-normalises the
forecast, as TSLib's `short_forecast`.

The window tasks (imputation, anomaly_detection, classification) read the encoder alone, without the
distilling layers (TSLib builds them only when forecasting, so the encoder keeps all L steps):
    imputation         Linear(D → c_out) of the encoded masked window (with its time marks)
    anomaly_detection  Linear(D → c_out) of the encoded window (no time marks)
    classification     Linear(L·D → num_class) of the flattened GELU/dropout features, padded steps zeroed
As in TSLib the decoder (dec_in, d_layers, c_out) is built for every task, unused outside forecasting:
its parameters count in TSLib's totals and checkpoints.

Differences from TSLib (parameter names, shapes and counts kept):
- ProbSparse attention returns each step's own heads (`--attn_output_layout per_step`, as the paper; the
  authors' code interleaves only the decoder's self-attention, its `--mix`). TSLib returns the
  `[B, H, L, D]` context and its layer `view`s that memory as `[B, L, H·D]`, so output step l carries H
  consecutive steps of one head (`layers.HeadLayout`); the decoder's causal mask then no longer keeps a
  step from reading later steps. `--attn_output_layout tslib` reproduces it.
- In evaluation the sampled keys come from a fixed generator (`--prob_eval_sampling fixed`), so a
  checkpoint scores the same every time; TSLib draws them from the global stream (`global`), which also
  moves the RNG state that the next epoch's shuffle and dropout draw from.
- Short-term forecasting also normalises the decoder's start tokens with the window's statistics (the
  horizon placeholders stay zero); TSLib feeds them raw, on a different scale from the encoder's input.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ALL_TASKS,
    FORECAST_TASKS,
    OUTPUT_LAYOUTS,
    PROB_EVAL_SAMPLING,
    WINDOW_TASKS,
    check_attention_config,
    check_output_channels,
    read_choice,
)
from layers.Embed import DataEmbedding
from layers.EncoderTaskHeads import EncoderWindowTasks
from layers.SelfAttention_Family import AttentionLayer, ProbAttention, eval_sample_seed
from layers.StandardNorm import Normalize
from layers.TaskDispatch import window_task_output
from layers.Transformer_EncDec import ConvLayer, Encoder, EncoderLayer, attention_decoder
from utils.errors import UserInputError

TASKS = ALL_TASKS


class Model(EncoderWindowTasks, nn.Module):
    """Informer for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]`, x_dec
    `[B, label_len + H, dec_in]`, x_mark_dec `[B, label_len + H, F]` → `[B, H, c_out]`; for imputation and
    anomaly detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification
    `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the experiment).

    Reads task_name, seq_len, label_len, enc_in, dec_in, c_out, pred_len, d_model, n_heads, e_layers,
    d_layers, d_ff, factor, distil, dropout, activation, embed, freq, attn_output_layout (per_step, or
    TSLib's interleaved `tslib`), prob_eval_sampling (fixed, or TSLib's global stream).
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_attention_config(configs, "Informer", TASKS,
                               "dec_in", "c_out", "e_layers", "d_layers", "d_ff", "factor")
        layout = read_choice(configs, "attn_output_layout", OUTPUT_LAYOUTS)
        eval_seed = eval_sample_seed(read_choice(configs, "prob_eval_sampling", PROB_EVAL_SAMPLING))
        self.task_name = configs.task_name
        forecast = self.task_name in FORECAST_TASKS
        # TSLib distils only when forecasting: the window tasks read out every input step.
        distil = configs.distil and forecast
        if self.task_name == "short_term_forecast":
            check_output_channels(configs, "Informer")
            if configs.dec_in != configs.enc_in:
                raise UserInputError(
                    f"--dec_in {configs.dec_in} differs from --enc_in {configs.enc_in}: short-term Informer "
                    "normalises the decoder's start tokens with the window's statistics, so use --dec_in "
                    "equal to --enc_in")
        if distil and configs.e_layers > 1 and configs.seq_len < 2:
            # The distilling ConvLayer pads circularly by 2 steps, which needs at least 2 steps to wrap.
            raise ValueError(f"--seq_len {configs.seq_len} is too short for Informer's distilling layers; use "
                             "--seq_len >= 2, --e_layers 1, or pass --distil to turn distilling off")
        self.pred_len = configs.pred_len
        self.label_len = configs.label_len
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout
        self.normalize = Normalize(configs.enc_in, eps=1e-5)

        def attention(causal: bool) -> AttentionLayer:
            inner = ProbAttention(causal, configs.factor, attention_dropout=dropout, eval_sample_seed=eval_seed,
                                  output_layout=layout)
            return AttentionLayer(inner, d_model, n_heads)

        # Submodules are created in TSLib's order, so a seed gives TSLib's initial weights.
        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = Encoder(
            [
                EncoderLayer(attention(False), d_model, configs.d_ff, dropout=dropout,
                             activation=configs.activation)
                for _ in range(configs.e_layers)
            ],
            [ConvLayer(d_model) for _ in range(configs.e_layers - 1)] if distil else None,
            norm_layer=nn.LayerNorm(d_model),
        )
        self.decoder = attention_decoder(attention, d_model, configs.d_ff, configs.d_layers, dropout,
                                         configs.activation, configs.c_out)
        if not forecast:
            self.build_window_head(configs, d_model, dropout)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                x_dec: torch.Tensor | None, x_mark_dec: torch.Tensor | None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.task_name in WINDOW_TASKS:
            return window_task_output(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        if self.task_name == "short_term_forecast":
            return self.short_forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)
        return self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Long-term forecast on the raw series: → `[B, H, c_out]`."""
        # TSLib embeds both inputs before encoding; the order fixes which dropout masks each one draws.
        enc_in = self.enc_embedding(x_enc, x_mark_enc)  # [B, L, D]
        dec_in = self.dec_embedding(x_dec, x_mark_dec)  # [B, label_len + H, D]
        memory, _ = self.encoder(enc_in)  # [B, L', D], L' halved by each distilling layer
        out = self.decoder(dec_in, memory)  # [B, label_len + H, c_out]
        return out[:, -self.pred_len:, :]  # [B, H, c_out]

    def short_forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor,
                       x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Short-term forecast: the window and the decoder's start tokens are normalised by the window's
        mean and (biased) std per variate, the forecast de-normalised with them → `[B, H, c_out]`."""
        x_enc = self.normalize(x_enc, "norm")  # [B, L, N]
        # Start tokens on the window's scale; the horizon placeholders stay zero (the normalised mean).
        start = (x_dec[:, :self.label_len] - self.normalize.center) / self.normalize.stdev  # [B, label_len, N]
        x_dec = torch.cat([start, x_dec[:, self.label_len:]], dim=1)  # [B, label_len + H, N]
        return self.normalize(self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec), "denorm")  # [B, H, c_out]
