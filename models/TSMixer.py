"""TSMixer (Chen et al., "TSMixer: An All-MLP Architecture for Time Series Forecasting", TMLR 2023,
https://arxiv.org/abs/2303.06053), long-term forecasting, in TSLib's variant.

`--e_layers` mixer blocks act on x `[B, L, N]`, each two residual MLPs:
    time mixing:    x ← x + Dropout(W_t2 · ReLU(W_t1 · xᵀ + b_t1) + b_t2)ᵀ   (L → d_model → L, along time,
                    shared by all variates)
    feature mixing: x ← x + Dropout(W_f2 · ReLU(W_f1 · x + b_f1) + b_f2)      (N → d_model → N, along
                    variates, shared by all time steps)
then the temporal projection ŷ = (W_p · xᵀ + b_p)ᵀ (L → H).

As TSLib (and unlike the paper's Fig. 1), the time-mixing MLP has a hidden layer of width `--d_model`,
neither block normalises, and there is no RevIN; this keeps TSLib's parameters, FLOPs and outputs.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_output_channels, check_positive


class ResBlock(nn.Module):
    """One mixer block: a residual MLP along time, then a residual MLP along variates. `[B, L, N]` → same."""

    def __init__(self, seq_len: int, n_vars: int, d_model: int, dropout: float) -> None:
        super().__init__()
        self.temporal = nn.Sequential(
            nn.Linear(seq_len, d_model), nn.ReLU(), nn.Linear(d_model, seq_len), nn.Dropout(dropout))
        self.channel = nn.Sequential(
            nn.Linear(n_vars, d_model), nn.ReLU(), nn.Linear(d_model, n_vars), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.temporal(x.transpose(1, 2)).transpose(1, 2)  # [B, L, N]
        return x + self.channel(x)  # [B, L, N]


class Model(nn.Module):
    """TSMixer for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, e_layers, d_model, dropout. The marks and the decoder input
    are not used. With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "TSMixer")
        check_positive(configs, "e_layers", "d_model")
        check_output_channels(configs, "TSMixer")
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.model = nn.ModuleList(
            ResBlock(configs.seq_len, configs.enc_in, configs.d_model, configs.dropout)
            for _ in range(configs.e_layers))
        self.projection = nn.Linear(configs.seq_len, configs.pred_len)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x = x_enc
        for block in self.model:
            x = block(x)  # [B, L, N]
        out = self.projection(x.transpose(1, 2)).transpose(1, 2)  # [B, H, N]
        return out[:, :, -self.c_out:]  # [B, H, c_out]
