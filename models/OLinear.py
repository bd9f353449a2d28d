"""OLinear (Yue et al., "OLinear: A Linear Model for Time Series Forecasting in Orthogonally Transformed
Domain", 2025, https://arxiv.org/abs/2505.08550), long/short-term forecasting. Not part of TSLib.

For the look-back window X `[N, L]` (N variates):
    RevIN:                X̄ = RevINNorm(X)                                   (affine, per variate)
    dimension extension:  X̄ ⊗ φ  `[N, d, L]`, φ `[d]` learned (d = --embed_size)
    OrthoTrans:           Z = (X̄ ⊗ φ) Q_Lᵀ + Δ₁                              `[N, d, L]`
    encoder:              H = Lin_out(NormLinEncoder(Lin_in(flatten(Z))))    (d·L → D → ... → d·H)
    inverse OrthoTrans:   Ŷ' = reshape(H) Q_H + Δ₂                            `[N, d, H]`
    output MLP:           Ŷ = W₂ GELU(W₁ flatten(Ŷ'ᵀ) + b₁) + b₂             (H·d → d_ff → H)
and RevIN de-normalisation, with dropout on the output before it. Q_L and Q_H are the OrthoTrans
bases (`layers/OrthoTrans.py`) of the *training split* at L = --seq_len and H = --pred_len lags,
computed when the model is built (`utils.train_split`, the `needs_train_split` protocol; on a dataset
of separate series such as M4, averaged over the series as over variates) and cached per split; they are persistent buffers, so a checkpoint carries them. Δ₁ `[N, 1, L]` and Δ₂ `[N, 1, H]`
are learned offsets initialised to zero, and NormLinEncoder (`layers/NormLin.py`) has --e_layers
blocks of width D = --d_model and feed-forward width --d_ff.

Construction order (the official code's, so a seed initialises the same draws): φ, output MLP, RevIN,
encoder blocks, final LayerNorm, Lin_in, Lin_out, Δ₁, Δ₂. The paper's ETTh1 setting is --embed_size 16
--d_model 512 --d_ff 512 --e_layers 2 --dropout 0.2 --learning_rate 5e-4 (1e-4 at horizon 720),
--batch_size 32, --train_epochs 30, --patience 8, trained with an L1 loss.

Differences from the official code: the feed-forward layers are Linear instead of width-1 Conv1d (the
same function, parameter count and initialisation); with --embed_size 1 the extension still scales by
its learned φ (the official code then skips φ and leaves it untrained); the bases are computed from
the training split here instead of read from precomputed .npy files.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    OLINEAR_EMBED_SIZE,
    check_choice,
    check_forecast_config,
    check_output_channels,
    check_positive,
)
from layers.NormLin import NormLinEncoder, NormLinLayer
from layers.OrthoTrans import cached_orthotrans_basis
from layers.StandardNorm import Normalize
from utils.train_split import require_train_split

#: --embed_size's default: the width d of the dimension extension in the paper's ETTh1 setting.
EMBED_SIZE_DEFAULT = OLINEAR_EMBED_SIZE


class Model(nn.Module):
    """OLinear: `[B, L, enc_in]` → `[B, H, c_out]` (see the module doc).

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff, e_layers, embed_size, dropout, activation and
    `configs.train_split`. The marks and the decoder input are not used. With c_out < enc_in (features
    MS) the last c_out variates are returned.
    """

    needs_train_split = True

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "OLinear")
        check_output_channels(configs, "OLinear")
        check_positive(configs, "d_model", "d_ff", "e_layers", "embed_size")
        check_choice(configs, "activation", ACTIVATIONS)
        self.seq_len, self.pred_len = configs.seq_len, configs.pred_len
        self.enc_in, self.c_out = configs.enc_in, configs.c_out
        self.embed_size, self.d_model, self.d_ff = configs.embed_size, configs.d_model, configs.d_ff

        split = require_train_split(configs, "OLinear", self.seq_len, self.pred_len)
        if split.longest < max(self.seq_len, self.pred_len) + 1:
            raise ValueError(f"the training split's longest series has {split.longest} rows; OLinear's bases need "
                             f"more than --seq_len {self.seq_len} and --pred_len {self.pred_len}")
        q_in = torch.from_numpy(cached_orthotrans_basis(split, self.seq_len)).float()
        q_out = torch.from_numpy(cached_orthotrans_basis(split, self.pred_len)).float()
        self.register_buffer("q_in", q_in)  # [L, L], rows = eigenvectors
        self.register_buffer("q_out", q_out)  # [H, H]

        self.embeddings = nn.Parameter(torch.randn(1, self.embed_size))  # φ
        self.fc = nn.Sequential(nn.Linear(self.pred_len * self.embed_size, self.d_ff), nn.GELU(),
                                nn.Linear(self.d_ff, self.pred_len))
        self.revin_layer = Normalize(self.enc_in, affine=True)
        self.dropout = nn.Dropout(configs.dropout)
        self.encoder = NormLinEncoder(
            [NormLinLayer(self.d_model, self.d_ff, self.enc_in, configs.dropout, configs.activation)
             for _ in range(configs.e_layers)], self.d_model)
        self.input_proj = nn.Linear(self.seq_len * self.embed_size, self.d_model)
        self.output_proj = nn.Linear(self.d_model, self.pred_len * self.embed_size)
        self.delta1 = nn.Parameter(torch.zeros(1, self.enc_in, 1, self.seq_len))
        self.delta2 = nn.Parameter(torch.zeros(1, self.enc_in, 1, self.pred_len))

    def transformed_forecast(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised window `[B, L, N]` → the encoder's forecast in the time domain `[B, N, H, d]`."""
        batch, _, channels = x.shape
        extended = x.transpose(1, 2).unsqueeze(-1) * self.embeddings  # [B, N, L, d]
        z = extended.transpose(-1, -2) @ self.q_in.T + self.delta1  # [B, N, d, L]
        hidden = self.output_proj(self.encoder(self.input_proj(z.flatten(-2))))  # [B, N, d*H]
        hidden = hidden.reshape(batch, channels, self.embed_size, self.pred_len)  # [B, N, d, H]
        return (hidden @ self.q_out + self.delta2).transpose(-1, -2)  # [B, N, H, d]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.revin_layer(x_enc, "norm")  # [B, L, N]
        out = self.fc(self.transformed_forecast(x).flatten(-2)).transpose(1, 2)  # [B, H, N]
        out = self.dropout(out)[:, :, -self.c_out:]
        return self.revin_layer(out, "denorm")  # [B, H, c_out]
