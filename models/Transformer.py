"""The vanilla Transformer (Vaswani et al., "Attention Is All You Need", NeurIPS 2017), TSLib's
configuration: forecasting, imputation, anomaly detection and classification.

Encoder: DataEmbedding of the input window + marks, `e_layers` post-norm full-attention layers and a
final LayerNorm. Decoder: DataEmbedding of the start tokens (the last `label_len` inputs) followed by
H zero placeholders, `d_layers` layers of causal self-attention + cross-attention, a final LayerNorm
and Linear(D → c_out). The last H decoder positions are the forecast. No instance normalisation
(TSLib's Transformer treats long- and short-term forecasting alike).

The window tasks use the encoder alone (TSLib builds no decoder for them):
    imputation         Linear(D → c_out) of the encoded masked window (with its time marks)
    anomaly_detection  Linear(D → c_out) of the encoded window (no time marks)
    classification     Linear(L·D → num_class) of the flattened GELU/dropout features, padded steps zeroed
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ALL_TASKS,
    FORECAST_TASKS,
    check_attention_config,
    check_positive,
)
from layers.Embed import DataEmbedding
from layers.EncoderTaskHeads import EncoderWindowTasks
from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.TaskDispatch import TaskForward
from layers.Transformer_EncDec import attention_decoder, full_attention_encoder

TASKS = ALL_TASKS


class Model(TaskForward, EncoderWindowTasks, nn.Module):
    """Transformer for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]`,
    x_dec `[B, label_len + H, dec_in]`, x_mark_dec `[B, label_len + H, F]` → `[B, H, c_out]`; for
    imputation and anomaly detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for
    classification `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the
    experiment).

    Reads task_name, seq_len, enc_in, dec_in, c_out, pred_len, d_model, n_heads, e_layers, d_layers, d_ff,
    dropout, activation, embed, freq (dec_in, d_layers and pred_len only when forecasting).
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_attention_config(configs, "Transformer", TASKS, "e_layers", "d_ff")
        self.task_name = configs.task_name
        self.pred_len = configs.pred_len
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        def attention(causal: bool) -> AttentionLayer:
            return AttentionLayer(FullAttention(causal, configs.factor, attention_dropout=dropout), d_model, n_heads)

        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = full_attention_encoder(d_model, n_heads, configs.d_ff, configs.e_layers, dropout,
                                              configs.activation, nn.LayerNorm(d_model), configs.factor)
        if self.task_name in FORECAST_TASKS:
            check_positive(configs, "dec_in", "d_layers")
            self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
            self.decoder = attention_decoder(attention, d_model, configs.d_ff, configs.d_layers, dropout,
                                             configs.activation, configs.c_out)
        else:
            self.build_window_head(configs, d_model, dropout)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Encode the window, decode start tokens + placeholders: → `[B, H, c_out]`."""
        memory, _ = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L, D]
        out = self.decoder(self.dec_embedding(x_dec, x_mark_dec), memory)  # [B, Ll + H, c_out]
        return out[:, -self.pred_len:, :]  # [B, H, c_out]
