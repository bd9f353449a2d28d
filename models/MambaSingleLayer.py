"""MambaSingleLayer (MambaSL): one Mamba block for time-series classification (MambaSL: "Exploring
Single-Layer Mamba for Time Series Classification", https://openreview.net/pdf?id=YDl4vqQqGP), TSLib's
`--model MambaSingleLayer` (its script: scripts/classification/MambaSL.sh, 30 UEA sets).

For a batch of series x `[B, L, enc_in]` with padding mask m `[B, L]` (1 = observed step):
    h = SiLU(LayerNorm(Mamba(DataEmbedding_cls(x))))     `[B, L, D]`  (`layers.MambaBlock`, `layers.Embed`)
    s_t = m_t · W_out h_t                                 `[B, L, num_class]` per-step logits, padded steps 0
    w_t = softmax_t(max_k (W_a h_t + b_a)_k)              `[B, L, 1]`, max over --n_heads scores, softmax over time
    ŷ = Σ_t w_t s_t                                       `[B, num_class]`
As in TSLib, the softmax runs over all L steps, padded ones included (they carry weight but no logits).

Flags as TSLib reads them: `--d_model` D, `--d_ff` the SSM state size N, `--expand` and `--d_conv` the block's
inner-width factor and kernel (0: no convolution), `--tv_dt`/`--tv_B`/`--tv_C` 1 for an input-dependent Δ/B/C
(0: time-invariant), `--use_D` 1 for the skip term, `--num_kernels` the embedding convolution's kernel,
`--n_heads` the number of time-weight scores, `--dropout` on the embedding and before W_out. `--e_layers` is
not read (one block).

TSLib's block runs `mamba_ssm`'s CUDA scan; this one runs the pure-torch scans of `layers.Mamba_Blocks` on
any device (`scan`: 'sequential' or 'parallel', the same function). Parameter names and counts are TSLib's.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import CLASSIFICATION, check_non_negative, check_positive, check_task_config, peek
from layers.Embed import DataEmbedding_cls
from layers.MambaBlock import Mamba_TimeVariant
from utils.errors import UserInputError

TASKS = (CLASSIFICATION,)
SWITCHES = ("tv_dt", "tv_B", "tv_C", "use_D")


def check_mambasl_config(configs: argparse.Namespace) -> None:
    """Classification only; positive widths, --d_conv >= 0, and the four switches 0 or 1."""
    check_task_config(configs, "MambaSingleLayer", TASKS)
    check_positive(configs, "d_model", "d_ff", "expand", "num_kernels", "n_heads")
    check_non_negative(configs, "d_conv")
    for flag in SWITCHES:
        if peek(configs, flag) not in (0, 1):
            raise UserInputError(f"--{flag} {peek(configs, flag)!r} must be 0 or 1")


class Model(nn.Module):
    """MambaSL for classification: x_enc `[B, L, enc_in]`, x_mark_enc the padding mask `[B, L]` (or None: no
    padding) → logits `[B, num_class]`; x_dec and x_mark_dec are not read.

    Reads seq_len, enc_in, num_class, d_model, d_ff (state size), expand, d_conv, tv_dt, tv_B, tv_C, use_D,
    num_kernels, n_heads, dropout.
    """

    def __init__(self, configs: argparse.Namespace, scan: str = "sequential") -> None:
        super().__init__()
        check_mambasl_config(configs)
        d_model = configs.d_model
        # Built in TSLib's order, so a seed gives TSLib's initial weights.
        self.mamba = nn.Sequential(
            Mamba_TimeVariant(d_model, d_state=configs.d_ff, d_conv=configs.d_conv, expand=configs.expand,
                              timevariant_dt=bool(configs.tv_dt), timevariant_B=bool(configs.tv_B),
                              timevariant_C=bool(configs.tv_C), use_D=bool(configs.use_D), scan=scan),
            nn.LayerNorm(d_model),
            nn.SiLU(),
        )
        self.embedding = DataEmbedding_cls(configs.enc_in, d_model, dropout=configs.dropout,
                                           d_kernel=configs.num_kernels, seq_len=configs.seq_len)
        self.out_layer = nn.Sequential(nn.Dropout(configs.dropout), nn.Linear(d_model, configs.num_class, bias=False))
        nn.init.xavier_uniform_(self.out_layer[1].weight)
        # Max over the n_heads scores of a step, softmax over the steps; zero weights and unit biases start
        # every step at the same weight 1 / L.
        self.attn_weight = nn.Sequential(nn.Linear(d_model, configs.n_heads), nn.AdaptiveMaxPool1d(1),
                                         nn.Softmax(dim=1))
        nn.init.zeros_(self.attn_weight[0].weight)
        nn.init.ones_(self.attn_weight[0].bias)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.mamba(self.embedding(x_enc))  # [B, L, D]
        logits = self.out_layer(hidden)  # [B, L, num_class]
        if x_mark_enc is not None:
            if x_mark_enc.shape != x_enc.shape[:2]:
                raise ValueError(f"MambaSingleLayer: the padding mask has shape {tuple(x_mark_enc.shape)}, not the "
                                 f"{tuple(x_enc.shape[:2])} (batch, steps) of the series")
            logits = logits * x_mark_enc.unsqueeze(-1).to(logits.dtype)  # padded steps give no logits
        weights = self.attn_weight(hidden)  # [B, L, 1], summing to 1 over L
        return (logits * weights).sum(dim=1)  # [B, num_class]
