"""The vanilla Transformer (Vaswani et al., "Attention Is All You Need", NeurIPS 2017) as a
forecaster, TSLib's configuration.

Encoder: DataEmbedding of the input window + marks, `e_layers` post-norm full-attention layers and a
final LayerNorm. Decoder: DataEmbedding of the start tokens (the last `label_len` inputs) followed by
H zero placeholders, `d_layers` layers of causal self-attention + cross-attention, a final LayerNorm
and Linear(D → c_out). The last H decoder positions are the forecast. No instance normalisation.
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
)
from layers.Embed import DataEmbedding
from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.Transformer_EncDec import Decoder, DecoderLayer, full_attention_encoder


class Model(nn.Module):
    """Transformer for long/short-term forecasting.

    x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]`, x_dec `[B, label_len + H, dec_in]`,
    x_mark_dec `[B, label_len + H, F]` → `[B, H, c_out]`.
    Reads enc_in, dec_in, c_out, pred_len, d_model, n_heads, e_layers, d_layers, d_ff, dropout,
    activation, embed, freq.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "Transformer")
        check_heads(configs)
        check_positive(configs, "dec_in", "e_layers", "d_layers", "d_ff")
        check_choice(configs, "activation", ACTIVATIONS)
        check_choice(configs, "embed", EMBED_TYPES)
        self.pred_len = configs.pred_len
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        def attention(causal: bool) -> AttentionLayer:
            return AttentionLayer(FullAttention(causal, configs.factor, attention_dropout=dropout), d_model, n_heads)

        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = full_attention_encoder(d_model, n_heads, configs.d_ff, configs.e_layers, dropout,
                                              configs.activation, nn.LayerNorm(d_model), configs.factor)
        self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
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
        memory, _ = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L, D]
        out = self.decoder(self.dec_embedding(x_dec, x_mark_dec), memory)  # [B, Ll + H, c_out]
        return out[:, -self.pred_len:, :]  # [B, H, c_out]
