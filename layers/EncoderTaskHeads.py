"""TSLib's window-task heads of its encoder(-decoder) forecasters (Transformer, Informer, Autoformer,
FEDformer): the model's own `enc_embedding` and `encoder` over the window, then one Linear.

- imputation: h = Enc(Emb(x̃, marks)), out = W h           `[B, L, enc_in]` → `[B, L, c_out]`
- anomaly detection: h = Enc(Emb(x, None)), out = W h     `[B, L, enc_in]` → `[B, L, c_out]`
- classification: out = W · flatten(dropout(GELU(h)) ⊙ m)  `[B, L, enc_in]`, m `[B, L]` → `[B, num_class]`

As TSLib's, imputation reads neither the mask nor normalises (x̃ is 0 where hidden), and the encoder's
attention is not masked for classification, so padded values still reach the real steps' tokens; only the
padded steps' own features are zeroed before the projection. The projection and dropout keep TSLib's
names (`projection`, `dropout`) so parameter names and counts match.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import CLASSIFICATION


class EncoderWindowTasks:
    """Mixin for an `nn.Module` with `enc_embedding(x, marks) -> [B, L, D]` and `encoder(tokens) ->
    (tokens, attentions)`: `build_window_head` in `__init__`, then the three task methods."""

    enc_embedding: nn.Module
    encoder: nn.Module
    projection: nn.Linear
    dropout: nn.Dropout

    def build_window_head(self, configs: argparse.Namespace, d_model: int, dropout: float) -> None:
        """The head of a window task, in TSLib's construction order: for classification `dropout` then
        Linear(seq_len·d_model → num_class), else Linear(d_model → c_out)."""
        if configs.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(d_model * configs.seq_len, configs.num_class)
        else:
            self.projection = nn.Linear(d_model, configs.c_out)

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """x_enc `[B, L, enc_in]` (0 where hidden), marks `[B, L, F]` → `[B, L, c_out]` (mask not read)."""
        tokens, _ = self.encoder(self.enc_embedding(x_enc, x_mark_enc))  # [B, L, D]
        return self.projection(tokens)  # [B, L, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, enc_in]` → `[B, L, c_out]`, no time marks."""
        tokens, _ = self.encoder(self.enc_embedding(x_enc, None))  # [B, L, D]
        return self.projection(tokens)  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding_mask `[B, L]` (1 = real step) → logits `[B, num_class]`."""
        tokens, _ = self.encoder(self.enc_embedding(x_enc, None))  # [B, L, D]
        return self.projection(masked_flat_features(tokens, self.dropout, padding_mask))  # [B, num_class]
