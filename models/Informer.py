"""Informer (Zhou et al., "Informer: Beyond Efficient Transformer for Long Sequence Time-Series
Forecasting", AAAI 2021, https://arxiv.org/abs/2012.07436) as a forecaster, TSLib's configuration.

Implemented (long_term_forecast only):
- ProbSparse self-attention (eq. 3-4, `layers.SelfAttention_Family.ProbAttention`) in every encoder
  layer, in the decoder's causal self-attention and, as in TSLib, in the decoder's cross-attention;
- self-attention distilling (eq. 5, `layers.Transformer_EncDec.ConvLayer`) between encoder layers,
  on unless `--distil` is passed (a store_false flag);
- the generative-style decoder: the last `label_len` inputs as start tokens followed by H zero
  placeholders, decoded in one forward pass; the last H positions are the forecast.
No instance normalisation (TSLib's long-term Informer has none).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    EMBED_TYPES,
    check_choice,
    check_forecast_config,
    check_heads,
    check_positive,
    check_task,
)
from layers.Embed import DataEmbedding
from layers.SelfAttention_Family import AttentionLayer, ProbAttention
from layers.Transformer_EncDec import ConvLayer, Decoder, DecoderLayer, Encoder, EncoderLayer

TASKS = ("long_term_forecast", "short_term_forecast")


class Model(nn.Module):
    """Informer for long-term forecasting.

    x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]`, x_dec `[B, label_len + H, dec_in]`,
    x_mark_dec `[B, label_len + H, F]` → `[B, H, c_out]`.
    Reads enc_in, dec_in, c_out, pred_len, d_model, n_heads, e_layers, d_layers, d_ff, factor,
    distil, dropout, activation, embed, freq.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_task(configs, "Informer", TASKS)
        check_forecast_config(configs, "Informer")
        check_heads(configs)
        check_positive(configs, "dec_in", "e_layers", "d_layers", "d_ff", "factor")
        check_choice(configs, "activation", ACTIVATIONS)
        check_choice(configs, "embed", EMBED_TYPES)
        if configs.distil and configs.e_layers > 1 and configs.seq_len < 2:
            # The distilling ConvLayer pads circularly by 2 steps, which needs at least 2 steps to wrap.
            raise ValueError(f"--seq_len {configs.seq_len} is too short for Informer's distilling layers; use "
                             "--seq_len >= 2, --e_layers 1, or pass --distil to turn distilling off")
        self.pred_len = configs.pred_len
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        def attention(causal: bool) -> AttentionLayer:
            inner = ProbAttention(causal, configs.factor, attention_dropout=dropout)
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
            [ConvLayer(d_model) for _ in range(configs.e_layers - 1)] if configs.distil else None,
            norm_layer=nn.LayerNorm(d_model),
        )
        self.decoder = Decoder(
            [
                DecoderLayer(attention(True), attention(False), d_model, configs.d_ff, dropout=dropout,
                             activation=configs.activation)
                for _ in range(configs.d_layers)
            ],
            norm_layer=nn.LayerNorm(d_model),
            projection=nn.Linear(d_model, configs.c_out),
        )

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                x_dec: torch.Tensor, x_mark_dec: torch.Tensor | None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        # TSLib embeds both inputs before encoding; the order fixes which dropout masks each one draws.
        enc_in = self.enc_embedding(x_enc, x_mark_enc)  # [B, L, D]
        dec_in = self.dec_embedding(x_dec, x_mark_dec)  # [B, label_len + H, D]
        memory, _ = self.encoder(enc_in)  # [B, L', D], L' halved by each distilling layer
        out = self.decoder(dec_in, memory)  # [B, label_len + H, c_out]
        return out[:, -self.pred_len:, :]  # [B, H, c_out]
