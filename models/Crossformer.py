"""Crossformer (Zhang & Yan, "Crossformer: Transformer Utilizing Cross-Dimension Dependency for
Multivariate Time Series Forecasting", ICLR 2023, https://openreview.net/forum?id=vSVLM2j9eie), long- and
short-term forecasting, with TSLib's architecture, parameter names and construction order.

- Dimension-Segment-Wise embedding (eq. 2): each variate's window is replicate-padded at the end to
  L' = ⌈L / seg_len⌉·seg_len and cut into S = L' / seg_len segments x_{i,d} `[seg_len]`;
  h_{i,d} = E x_{i,d} + E^{pos}_{i,d} (a learnable `[N, S, D]` table; TSLib's PatchEmbedding also adds
  the fixed sinusoid), then LayerNorm (`pre_norm`).
- Hierarchical encoder (Sec. 3.3): e_layers scales; scale 0 is one Two-Stage Attention (TSA) layer over
  S segments, scale l > 0 merges every 2 segments (S_l = ⌈S / 2^l⌉) before its TSA layer.
- Decoder (eq. 6-7): e_layers + 1 layers over learnable decoder tokens `[N, S_out, D]`,
  S_out = ⌈H / seg_len⌉; layer l cross-attends to encoder scale l (scale 0 is the embedding) and
  predicts S_out·seg_len steps with a Linear; the forecast is the sum over layers, of which the last H
  steps are returned (TSLib's choice when seg_len does not divide H).

Window tasks, as TSLib builds them: the encoder's last scale `[B, N, S_last, D]`, S_last =
⌈S / 2^(e_layers − 1)⌉, is flattened per variate (feature-major, `[N, D·S_last]`); imputation and anomaly
detection map it to the window with a FlattenHead Linear(D·S_last → L) shared by the variates (`head`),
classification with dropout and Linear(N·D·S_last → num_class) (`projection`; no GELU, and, as TSLib's,
the padding mask is not read: a segment mixes 12 steps, so padded steps cannot be dropped one by one).
The decoder is built there too (TSLib's parameter count and state dict) with no output segments, so
--pred_len changes nothing, and is not run.

As in TSLib, seg_len is 12 and the merge window 2 (TSLib hard-codes both; run.py's --seg_len is
SegRNN's), any --seq_len/--pred_len is padded up to a multiple of 12, and the model reads no marks and
no decoder input. With --c_out < --enc_in (features MS) the last c_out variates are returned.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn as nn

from layers.config_checks import (
    CLASSIFICATION,
    FORECAST_TASKS,
    IMPUTATION,
    check_heads,
    check_positive,
    check_variate_task_config,
)
from layers.Crossformer_EncDec import Decoder, DecoderLayer, Encoder, scale_block
from layers.Embed import PatchEmbedding
from layers.FlattenHead import FlattenHead
from layers.SelfAttention_Family import AttentionLayer, FullAttention, TwoStageAttentionLayer
from layers.TaskDispatch import TaskForward

# TSLib's fixed segment length and merge window.
SEG_LEN = 12
WIN_SIZE = 2
ANOMALY_DETECTION = "anomaly_detection"
TASKS = FORECAST_TASKS + (IMPUTATION, ANOMALY_DETECTION, CLASSIFICATION)


class Model(TaskForward, nn.Module):
    """Crossformer. Long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; imputation (masked x,
    marks, mask) and anomaly detection: `[B, L, enc_in]` → `[B, L, c_out]`; classification: x, padding
    mask `[B, L]` → `[B, num_class]` (see the module doc).

    Reads seq_len, pred_len (forecasting only), enc_in, c_out (not for classification), d_model,
    n_heads, d_ff, e_layers, dropout, factor (routers per segment in the cross-dimension stage).
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc",)

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "Crossformer", TASKS)
        check_heads(configs)
        check_positive(configs, "e_layers", "d_ff", "factor")
        self.task_name = configs.task_name
        forecast = self.task_name in FORECAST_TASKS
        self.seq_len = configs.seq_len
        # The window tasks read no horizon (TSLib's scripts pass --pred_len 0 there): no decoder segments.
        self.pred_len = configs.pred_len if forecast else 0
        self.c_out = configs.c_out
        self.seg_len = SEG_LEN
        self.win_size = WIN_SIZE
        self.pad_in_len = math.ceil(configs.seq_len / SEG_LEN) * SEG_LEN
        self.pad_out_len = math.ceil(self.pred_len / SEG_LEN) * SEG_LEN
        self.in_seg_num = self.pad_in_len // SEG_LEN
        out_seg_num = self.pad_out_len // SEG_LEN
        d_model, n_heads, d_ff, dropout, factor = (configs.d_model, configs.n_heads, configs.d_ff, configs.dropout,
                                                   configs.factor)

        # Built in TSLib's order (embedding, encoder position table, encoder, decoder table, decoder).
        self.enc_value_embedding = PatchEmbedding(d_model, SEG_LEN, SEG_LEN, self.pad_in_len - configs.seq_len, 0)
        self.enc_pos_embedding = nn.Parameter(torch.randn(1, configs.enc_in, self.in_seg_num, d_model))
        self.pre_norm = nn.LayerNorm(d_model)
        self.encoder = Encoder([
            scale_block(configs, 1 if level == 0 else WIN_SIZE, d_model, n_heads, d_ff, 1, dropout,
                        math.ceil(self.in_seg_num / WIN_SIZE**level), factor)
            for level in range(configs.e_layers)
        ])
        self.dec_pos_embedding = nn.Parameter(torch.randn(1, configs.enc_in, out_seg_num, d_model))
        self.decoder = Decoder([
            DecoderLayer(
                TwoStageAttentionLayer(configs, out_seg_num, factor, d_model, n_heads, d_ff, dropout),
                AttentionLayer(FullAttention(False, factor, attention_dropout=dropout), d_model, n_heads),
                SEG_LEN, d_model, d_ff, dropout=dropout)
            for _ in range(configs.e_layers + 1)
        ])
        # Segments of the encoder's last scale, which the window tasks' heads flatten.
        last_seg_num = math.ceil(self.in_seg_num / WIN_SIZE ** (configs.e_layers - 1))
        head_nf = d_model * last_seg_num
        if self.task_name == CLASSIFICATION:
            self.flatten = nn.Flatten(start_dim=-2)
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(head_nf * configs.enc_in, configs.num_class)
        elif not forecast:
            self.head = FlattenHead(configs.enc_in, head_nf, configs.seq_len, head_dropout=dropout)

    def encode(self, x_enc: torch.Tensor) -> list[torch.Tensor]:
        """Segment embedding and the hierarchical encoder: `[B, L, N]` → the embedding and every scale's
        output, `[B, N, S_l, D]` each."""
        b = x_enc.shape[0]
        tokens, n_vars = self.enc_value_embedding(x_enc.transpose(1, 2))  # [B·N, S, D]
        tokens = tokens.reshape(b, n_vars, self.in_seg_num, -1) + self.enc_pos_embedding  # [B, N, S, D]
        enc_outputs, _ = self.encoder(self.pre_norm(tokens))
        return enc_outputs

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """x_enc `[B, L, N]` → `[B, H, c_out]`."""
        b = x_enc.shape[0]
        enc_outputs = self.encode(x_enc)
        # A copy, not an expanded view: a view of a parameter made under no_grad trips torch's module
        # tracker (FLOP counting), as TSLib's einops repeat does at batch 1.
        dec_in = self.dec_pos_embedding.repeat(b, 1, 1, 1)  # [B, N, S_out, D]
        out = self.decoder(dec_in, enc_outputs)  # [B, S_out·seg_len, N]
        return out[:, -self.pred_len:, -self.c_out:]  # [B, H, c_out]

    def reconstruct(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, N]` → `[B, L, c_out]`: the last scale `[B, N, S_last, D]` flattened per variate (D-major),
        FlattenHead Linear(D·S_last → L), the last c_out variates."""
        last = self.encode(x_enc)[-1].transpose(2, 3)  # [B, N, D, S_last]
        return self.head(last).transpose(1, 2)[:, :, -self.c_out:]  # [B, L, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x `[B, L, N]` (0 where hidden) → `[B, L, c_out]` (`reconstruct`). As
        TSLib's, neither the marks nor the mask are read and there is no normalisation."""
        return self.reconstruct(x_enc)

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, N]` → `[B, L, c_out]` (`reconstruct`)."""
        return self.reconstruct(x_enc)

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, N]` → logits `[B, num_class]`: the last scale flattened (`[B, N·D·S_last]`, D-major per
        variate), dropout, Linear. As TSLib's, the padding mask is not read (no GELU either)."""
        last = self.encode(x_enc)[-1].transpose(2, 3)  # [B, N, D, S_last]
        features = self.dropout(self.flatten(last)).flatten(start_dim=1)  # [B, N·D·S_last]
        return self.projection(features)  # [B, num_class]
