"""PatchTST (Nie et al., "A Time Series is Worth 64 Words", ICLR 2023), TSLib's configuration.

Each variate is handled independently: RevIN-normalise, replicate-pad 8 steps, cut patches of 16
every 8 steps (P = ⌊(L − 16) / 8⌋ + 2 tokens), embed them (Linear + sinusoid position), run a post-norm
Transformer encoder whose final norm is a BatchNorm over D, flatten the `[D, P]` tokens and map
D·P → H with one Linear; then de-normalise.

The patch sizes are fixed keyword arguments as in TSLib, so `--patch_len` does not apply here.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_choice,
    check_heads,
    check_positive,
    check_variate_task_config,
)
from layers.Embed import PatchEmbedding
from layers.FlattenHead import FlattenHead
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.SafeBatchNorm import SafeBatchNorm1d
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from layers.Transformer_EncDec import full_attention_encoder
from utils.errors import UserInputError


class Transpose(nn.Module):
    """Swap two axes (TSLib's PatchTST helper, so the encoder norm keeps its parameter names)."""

    def __init__(self, dim0: int, dim1: int) -> None:
        super().__init__()
        self.dim0, self.dim1 = dim0, dim1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(self.dim0, self.dim1)


def batch_norm_tokens(d_model: int) -> nn.Sequential:
    """BatchNorm1d over the feature axis of tokens `[B, P, D]` (PatchTST's choice over LayerNorm), laid
    out as TSLib's Sequential(Transpose, BatchNorm1d, Transpose): parameters `norm.1.weight/bias`. A training
    batch of one window with one patch per variate normalises with the running statistics (layers/SafeBatchNorm.py)."""
    return nn.Sequential(Transpose(1, 2), SafeBatchNorm1d(d_model), Transpose(1, 2))


TASKS = ALL_TASKS


class Model(TaskForward, nn.Module):
    """PatchTST for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; for imputation
    (masked `[B, L, enc_in]`, mask) and anomaly detection it reconstructs the window, `[B, L, enc_in]` →
    `[B, L, c_out]`; for classification `[B, L, enc_in]` → `[B, num_class]` (reads num_class, set by the
    experiment).

    Reads seq_len, pred_len, enc_in, c_out, d_model, n_heads, e_layers, d_ff, dropout, activation.
    With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc",)

    def __init__(self, configs: argparse.Namespace, patch_len: int = 16, stride: int = 8) -> None:
        super().__init__()
        check_variate_task_config(configs, "PatchTST", TASKS)
        classify = configs.task_name == CLASSIFICATION
        check_heads(configs)
        check_positive(configs, "e_layers", "d_ff")
        check_choice(configs, "activation", ACTIVATIONS)
        padding = stride
        if configs.seq_len + padding < patch_len:
            raise UserInputError(
                f"--seq_len {configs.seq_len} is too short for PatchTST's patch length {patch_len} "
                f"(with {padding} steps of end padding); use --seq_len >= {patch_len - padding}")
        self.task_name = configs.task_name
        self.pred_len = configs.pred_len
        # Reconstruction tasks read out the input window itself.
        out_len = configs.pred_len if configs.task_name in FORECAST_TASKS else configs.seq_len
        self.c_out = configs.c_out
        self.normalize = Normalize(configs.enc_in)
        self.patch_embedding = PatchEmbedding(configs.d_model, patch_len, stride, padding, configs.dropout)
        self.encoder = full_attention_encoder(configs.d_model, configs.n_heads, configs.d_ff, configs.e_layers,
                                              configs.dropout, configs.activation, batch_norm_tokens(configs.d_model),
                                              configs.factor)
        num_patches = (configs.seq_len + padding - patch_len) // stride + 1
        if classify:
            self.flatten = nn.Flatten(start_dim=-2)
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.d_model * num_patches * configs.enc_in, configs.num_class)
        else:
            self.head = FlattenHead(configs.enc_in, configs.d_model * num_patches, out_len,
                                    head_dropout=configs.dropout)

    def _encode(self, x_enc: torch.Tensor) -> torch.Tensor:
        """RevIN-normalised patches through the encoder: `[B, L, N]` → `[B, N, D, P]`."""
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        tokens, n_vars = self.patch_embedding(x.transpose(1, 2))  # [B·N, P, D]
        tokens, _ = self.encoder(tokens)
        tokens = tokens.reshape(-1, n_vars, tokens.shape[-2], tokens.shape[-1])  # [B, N, P, D]
        return tokens.transpose(2, 3)  # [B, N, D, P]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]`."""
        out = self.head(self._encode(x_enc)).transpose(1, 2)  # [B, L, N]
        return self.normalize(out[:, :, -self.c_out:], "denorm")

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]` → logits `[B, num_class]`: encode, flatten each variate's `[D, P]`, dropout,
        Linear(N·D·P → classes). As TSLib, the padding mask is not used (padding enters the statistics)."""
        out = self.dropout(self.flatten(self._encode(x_enc)))  # [B, N, D·P]
        return self.projection(out.reshape(out.shape[0], -1))  # [B, num_class]

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, enc_in]` → `[B, H, c_out]`."""
        out = self.head(self._encode(x_enc)).transpose(1, 2)  # [B, H, N]
        out = self.normalize(out[:, -self.pred_len:, -self.c_out:], "denorm")
        return out  # [B, H, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, N]` (0 where masked), mask `[B, L, N]` (1 observed, 0
        masked) → `[B, L, c_out]`, normalised with the observed points' statistics."""
        x, means, stdev = masked_normalize(x_enc, mask)  # [B, L, N]
        tokens, n_vars = self.patch_embedding(x.transpose(1, 2))  # [B·N, P, D]
        tokens, _ = self.encoder(tokens)
        tokens = tokens.reshape(-1, n_vars, tokens.shape[-2], tokens.shape[-1])  # [B, N, P, D]
        out = self.head(tokens.transpose(2, 3)).transpose(1, 2)  # [B, L, N]
        return masked_denormalize(out[:, :, -self.c_out:], means, stdev)  # [B, L, c_out]
