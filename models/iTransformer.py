"""iTransformer (Liu et al., "iTransformer: Inverted Transformers Are Effective for Time Series
Forecasting", ICLR 2024), TSLib's configuration.

Tokens are variates, not time steps: after RevIN each variate's whole window is embedded by
Linear(L → D), and each time-mark column joins as one more variate token. A non-causal post-norm
Transformer encoder (final LayerNorm) mixes the N + F tokens, Linear(D → H) reads each token out,
and only the first N (the data variates) are kept and de-normalised. `--use_norm 0` skips the
normalisation, as the official iTransformer's flag does (TSLib's always normalises).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    ACTIVATIONS,
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_choice,
    check_heads,
    check_output_channels,
    check_positive,
    check_task_config,
)
from layers.Embed import DataEmbedding_inverted
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from layers.Transformer_EncDec import full_attention_encoder

TASKS = ALL_TASKS


class Model(TaskForward, nn.Module):
    """iTransformer for long/short-term forecasting: `[B, L, enc_in]`, marks `[B, L, F]` → `[B, H, c_out]`;
    for imputation: masked `[B, L, enc_in]`, marks, mask → `[B, L, c_out]`; for anomaly detection it
    reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification `[B, L, enc_in]` →
    `[B, num_class]` (reads num_class, set by the experiment).

    Reads seq_len, pred_len, enc_in, c_out, d_model, n_heads, e_layers, d_ff, dropout, activation.
    With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc")

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_task_config(configs, "iTransformer", TASKS)
        check_heads(configs)
        check_positive(configs, "e_layers", "d_ff")
        check_choice(configs, "activation", ACTIVATIONS)
        self.task_name = configs.task_name
        classify = self.task_name == CLASSIFICATION
        if not classify:
            check_output_channels(configs, "iTransformer")
        self.pred_len = configs.pred_len
        # Reconstruction tasks read out the input window itself.
        out_len = configs.pred_len if configs.task_name in FORECAST_TASKS else configs.seq_len
        self.c_out = configs.c_out
        if configs.use_norm not in (0, 1):
            raise ValueError(f"--use_norm {configs.use_norm!r} is not supported; use 1 (RevIN) or 0 (none)")
        self.normalize = Normalize(configs.enc_in, non_norm=not configs.use_norm)
        self.enc_embedding = DataEmbedding_inverted(configs.seq_len, configs.d_model, configs.embed, configs.freq,
                                                    configs.dropout)
        self.encoder = full_attention_encoder(configs.d_model, configs.n_heads, configs.d_ff, configs.e_layers,
                                              configs.dropout, configs.activation, nn.LayerNorm(configs.d_model),
                                              configs.factor)
        if classify:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.d_model * configs.enc_in, configs.num_class)
        else:
            self.projection = nn.Linear(configs.d_model, out_len)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, marks `[B, L, F]` → `[B, H, c_out]`."""
        n_vars = x_enc.shape[-1]
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens = self.enc_embedding(x, x_mark_enc)  # [B, N + F, D]
        tokens, _ = self.encoder(tokens)
        out = self.projection(tokens).transpose(1, 2)[:, :, :n_vars]  # [B, H, N]
        return self.normalize(out[:, -self.pred_len:, -self.c_out:], "denorm")  # [B, H, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window from variate tokens alone (no time marks): `[B, L, enc_in]` → `[B, L, c_out]`."""
        n_vars = x_enc.shape[-1]
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens, _ = self.encoder(self.enc_embedding(x, None))  # [B, N, D]
        out = self.projection(tokens).transpose(1, 2)[:, :, :n_vars]  # [B, L, N]
        return self.normalize(out[:, :, -self.c_out:], "denorm")  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]` → logits `[B, num_class]`: variate tokens (no normalisation, no marks), encoder,
        GELU, dropout, flatten, Linear(N·D → classes). As TSLib, the padding mask is not used."""
        tokens = self.enc_embedding(x_enc, None)  # [B, N, D]
        tokens, _ = self.encoder(tokens)
        return self.projection(masked_flat_features(tokens, self.dropout))  # [B, num_class]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window `[B, L, N]` (0 where masked) → `[B, L, c_out]`. As TSLib's, the mask is
        not read: RevIN takes the statistics of the zero-filled window."""
        n_vars = x_enc.shape[-1]
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens = self.enc_embedding(x, x_mark_enc)  # [B, N + F, D]
        tokens, _ = self.encoder(tokens)
        out = self.projection(tokens).transpose(1, 2)[:, :, :n_vars]  # [B, L, N]
        return self.normalize(out[:, :, -self.c_out:], "denorm")  # [B, L, c_out]
