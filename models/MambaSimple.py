"""MambaSimple: a stack of Mamba blocks in pure torch (Gu & Dao, "Mamba: Linear-Time Sequence Modeling with
Selective State Spaces", 2023, https://arxiv.org/abs/2312.00752), TSLib's forecaster.

For each sample, the window is instance-normalised (mean, biased std, detached; `layers.StandardNorm`), then
    x⁰ = DataEmbedding(x, x_mark)                       `[B, L, d_model]` (value conv + position + marks)
    xˡ = xˡ⁻¹ + MambaBlock(RMSNorm(xˡ⁻¹)),  l = 1..e_layers (`layers.Mamba_Blocks`: causal conv, selective SSM)
    ŷ  = Linear(RMSNorm(x^e_layers))                     `[B, L, c_out]`
and de-normalised; the forecast is the last `pred_len` of the L outputs (TSLib's reading: the model emits one
step per input step), so `--pred_len` must not exceed `--seq_len`.

Flags as TSLib reads them: `--expand` gives the inner width E = expand · d_model, `--d_conv` the causal
convolution's kernel, and `--d_ff` the SSM state size N per channel; Δ has rank ⌈d_model / 16⌉.

Difference from TSLib: with `--c_out` < `--enc_in` (features MS) the forecast keeps `--c_out` channels,
de-normalised with the statistics of the last `--c_out` input variates (the target). TSLib broadcasts its
width-1 output against all the input statistics and returns `--enc_in` channels, whose last one is the same
target forecast.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    EMBED_TYPES,
    check_choice,
    check_forecast_config,
    check_output_channels,
    check_positive,
)
from layers.Embed import DataEmbedding
from layers.Mamba_Blocks import ResidualBlock, RMSNorm, dt_rank
from layers.StandardNorm import Normalize
from utils.errors import UserInputError


def check_mamba_config(configs: argparse.Namespace, model: str) -> None:
    """The checks TSLib's Mamba forecasters share: forecasting flags, positive widths, --pred_len ≤ --seq_len
    (the forecast is the last pred_len of seq_len outputs) and --c_out ≤ --enc_in (de-normalisation)."""
    check_forecast_config(configs, model)
    check_positive(configs, "d_model", "d_ff", "expand", "d_conv")
    check_choice(configs, "embed", EMBED_TYPES)
    check_output_channels(configs, model)
    if configs.pred_len > configs.seq_len:
        raise UserInputError(
            f"--pred_len {configs.pred_len} exceeds --seq_len {configs.seq_len}: {model} emits one step per "
            "input step and forecasts with the last pred_len of them, so use --seq_len >= --pred_len")


class Model(nn.Module):
    """MambaSimple for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` or None →
    `[B, pred_len, c_out]`; x_dec and x_mark_dec are not read.

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff (state size), e_layers, expand, d_conv, dropout,
    embed, freq. `scan` picks the selective scan ('sequential' or 'parallel', `layers.Mamba_Blocks`); both
    compute the same function.
    """

    def __init__(self, configs: argparse.Namespace, scan: str = "sequential") -> None:
        super().__init__()
        check_mamba_config(configs, "MambaSimple")
        check_positive(configs, "e_layers")
        self.pred_len = configs.pred_len
        d_model = configs.d_model
        d_inner = d_model * configs.expand
        self.normalize = Normalize(configs.enc_in, eps=1e-5)
        # Built in TSLib's order, so a seed gives TSLib's initial weights.
        self.embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, configs.dropout)
        self.layers = nn.ModuleList(
            ResidualBlock(d_model, d_inner, dt_rank(d_model), configs.d_ff, configs.d_conv, scan)
            for _ in range(configs.e_layers))
        self.norm = RMSNorm(d_model)
        self.out_layer = nn.Linear(d_model, configs.c_out, bias=False)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.embedding(self.normalize(x_enc, "norm"), x_mark_enc)  # [B, L, d_model]
        for layer in self.layers:
            x = layer(x)  # [B, L, d_model]
        out = self.out_layer(self.norm(x))  # [B, L, c_out]
        return self.normalize(out[:, -self.pred_len:], "denorm")  # [B, H, c_out]
