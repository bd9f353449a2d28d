"""PAttn (Tan et al., "Are Language Models Actually Useful for Time Series Forecasting?", NeurIPS 2024,
https://arxiv.org/abs/2406.16964), TSLib's configuration: the paper's ablation that replaces the
language model of an LLM forecaster with one attention layer over patches.

Each variate is handled independently (channel independence):
    x̂ = (x − μ_x) / σ_x                                       instance normalisation over the window
    p_j = x̂[j·s : j·s + P], j = 0 … J − 1                     patches of P = 16 every s = 8 steps, after
                                                             replicate-padding s steps at the end:
                                                             J = ⌊(L − P) / s⌋ + 2
    z_j = W_in p_j + b_in                                      Linear(P → D), no position embedding
    Z = LN(EncoderLayer(z_1 … z_J))                            one post-norm multi-head attention + FFN layer
    ŷ = W_out [z_1; …; z_J] + b_out                            patch-major flatten, Linear(J·D → H)
    y = σ_x · ŷ + μ_x

The patch sizes are fixed keyword arguments as in TSLib (`--patch_len` does not apply), and the
attention is a single layer by the model's definition, so `--e_layers` does not apply either
(TSLib's script passes `--e_layers 2` and builds one layer).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    check_choice,
    check_forecast_config,
    check_heads,
    check_output_channels,
    check_positive,
)
from layers.StandardNorm import Normalize
from layers.Transformer_EncDec import full_attention_encoder
from utils.errors import UserInputError


def patch_count(seq_len: int, patch_len: int, stride: int) -> int:
    """J = ⌊(L + s − P) / s⌋ + 1 = ⌊(L − P) / s⌋ + 2 patches of a window of L steps padded by s = stride."""
    return (seq_len + stride - patch_len) // stride + 1


class Model(nn.Module):
    """PAttn for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, d_model, n_heads, d_ff, factor, dropout, activation. With
    c_out < enc_in (features MS) the last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace, patch_len: int = 16, stride: int = 8) -> None:
        super().__init__()
        check_forecast_config(configs, "PAttn")
        check_heads(configs)
        check_positive(configs, "d_ff")
        check_choice(configs, "activation", ACTIVATIONS)
        check_output_channels(configs, "PAttn")
        if patch_len < 1 or stride < 1:
            raise ValueError(f"PAttn needs patch_len >= 1 and stride >= 1, got {patch_len} and {stride}")
        if configs.seq_len + stride < patch_len:
            raise UserInputError(
                f"--seq_len {configs.seq_len} is too short for PAttn's patch length {patch_len} "
                f"(with {stride} steps of end padding); use --seq_len >= {patch_len - stride}")
        self.patch_len, self.stride = patch_len, stride
        self.pred_len, self.c_out = configs.pred_len, configs.c_out
        self.num_patches = patch_count(configs.seq_len, patch_len, stride)
        self.normalize = Normalize(configs.enc_in)
        # TSLib's attribute names and construction order (in_layer, encoder, out_layer).
        self.padding_patch_layer = nn.ReplicationPad1d((0, stride))
        self.in_layer = nn.Linear(patch_len, configs.d_model)
        self.encoder = full_attention_encoder(configs.d_model, configs.n_heads, configs.d_ff, 1, configs.dropout,
                                              configs.activation, nn.LayerNorm(configs.d_model), configs.factor)
        self.out_layer = nn.Linear(configs.d_model * self.num_patches, configs.pred_len)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b, _, n_vars = x_enc.shape
        x = self.normalize(x_enc, "norm").transpose(1, 2)  # [B, N, L]
        x = self.padding_patch_layer(x)  # [B, N, L + s]
        patches = x.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [B, N, J, P]
        tokens = self.in_layer(patches).flatten(end_dim=1)  # [B·N, J, D]
        tokens, _ = self.encoder(tokens)  # [B·N, J, D]
        # Patch-major flatten (index j·D + d), TSLib's layout of out_layer's weight.
        out = self.out_layer(tokens.reshape(b, n_vars, -1))  # [B, N, H]
        out = out.transpose(1, 2)[:, :, n_vars - self.c_out:]  # [B, H, c_out]
        return self.normalize(out, "denorm")  # [B, H, c_out]
