"""LightTS (Zhang et al., "Less Is More: Fast Multivariate Time Series Forecasting with Light
Sampling-oriented MLP Structures", 2022, https://arxiv.org/abs/2207.01186), forecasting, imputation,
anomaly detection and classification (TSLib's task set).

Each variate's window of L steps is cut into L/C sub-sequences of C steps in two ways (chunk size
C = min(24, seq_len, pred_len)):
    continuous sampling: X^con_j = (x_{jC}, ..., x_{jC+C−1})                 local, short-term shape
    interval sampling:   X^int_j = (x_j, x_{j+L/C}, ..., x_{j+(C−1)L/C})     global, long-term shape
Each view is a `[C, L/C]` matrix per variate, fed to an Information Exchange Block (IEBlock):
    temporal projection  Z = MLP_C(X)             along the C axis (Linear → LeakyReLU → Linear, bottleneck)
    channel projection   Z ← Z + W_ch Z            along the L/C axis (W_ch starts as the identity)
    output projection    Y = Linear(Z)             along the feature axis
then a Linear(L/C → 1) collapses the sub-sequences. The two D/4-dim features per variate are concatenated
(D/2) and a third IEBlock, whose channel projection mixes the N variates, maps them to the H forecast
steps. As in TSLib (not in the paper) a linear autoregressive highway Linear(L → H) along time is added.

When C does not divide L the window is padded to the next multiple of C: for forecasting, imputation
and anomaly detection at the front, by repeating its first value (TSLib sizes its layers for that padded
length but pads only in classification, so it crashes there); for classification with zeros at the end,
as TSLib (and as the UEA loader pads short series).

Imputation, anomaly detection and classification map the window onto itself (H = L, C = min(24, L)), as
TSLib: the first two return that reconstruction, classification flattens it into Linear(N·L → classes).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_positive,
    check_variate_task_config,
)
from layers.TaskDispatch import EncoderOutputTasks
from utils.errors import UserInputError

TASKS = ALL_TASKS
MAX_CHUNK_SIZE = 24


class IEBlock(nn.Module):
    """Information Exchange Block: `[B', input_dim, num_node]` → `[B', output_dim, num_node]`.

    Temporal projection input_dim → hid_dim → hid_dim // 4 shared by every node, a residual node-mixing
    Linear(num_node → num_node) initialised to the identity, then hid_dim // 4 → output_dim.
    """

    def __init__(self, input_dim: int, hid_dim: int, output_dim: int, num_node: int) -> None:
        super().__init__()
        if hid_dim < 4:
            raise ValueError(f"IEBlock hid_dim {hid_dim} must be at least 4 (its bottleneck is hid_dim // 4)")
        self.spatial_proj = nn.Sequential(
            nn.Linear(input_dim, hid_dim), nn.LeakyReLU(), nn.Linear(hid_dim, hid_dim // 4))
        self.channel_proj = nn.Linear(num_node, num_node)
        nn.init.eye_(self.channel_proj.weight)
        self.output_proj = nn.Linear(hid_dim // 4, output_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.spatial_proj(x.transpose(1, 2))  # [B', num_node, hid_dim // 4]
        z = z + self.channel_proj(z.transpose(1, 2)).transpose(1, 2)  # [B', num_node, hid_dim // 4]
        return self.output_proj(z).transpose(1, 2)  # [B', output_dim, num_node]


class Model(EncoderOutputTasks, nn.Module):
    """LightTS for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; for imputation and
    anomaly detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification
    `[B, L, enc_in]` → `[B, num_class]` (reads num_class, set by the experiment).

    Reads seq_len, pred_len (forecasting only), d_model (the IEBlocks' widths: D/4 per sampling view, D/2
    for the last block), enc_in, c_out (not for classification). With c_out < enc_in (features MS) the last
    c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "LightTS", TASKS)
        check_positive(configs, "d_model")
        self.task_name = configs.task_name
        classify = self.task_name == CLASSIFICATION
        if configs.d_model < 16:
            raise UserInputError(f"--d_model {configs.d_model} is too small for LightTS; use at least 16 "
                             "(its blocks use d_model // 4 features and a further // 4 bottleneck)")
        # The window tasks map the window onto itself (TSLib sets pred_len = seq_len for them).
        self.pred_len = configs.pred_len if self.task_name in FORECAST_TASKS else configs.seq_len
        self.c_out = configs.c_out
        self.chunk_size = min(self.pred_len, configs.seq_len, MAX_CHUNK_SIZE)
        self.num_chunks = -(-configs.seq_len // self.chunk_size)
        self.padded_len = self.num_chunks * self.chunk_size
        d_model = configs.d_model
        self.layer_1 = IEBlock(self.chunk_size, d_model // 4, d_model // 4, self.num_chunks)
        self.chunk_proj_1 = nn.Linear(self.num_chunks, 1)
        self.layer_2 = IEBlock(self.chunk_size, d_model // 4, d_model // 4, self.num_chunks)
        self.chunk_proj_2 = nn.Linear(self.num_chunks, 1)
        self.layer_3 = IEBlock(d_model // 4 * 2, d_model // 2, self.pred_len, configs.enc_in)
        self.ar = nn.Linear(self.padded_len, self.pred_len)
        if classify:
            self.projection = nn.Linear(configs.enc_in * configs.seq_len, configs.num_class)

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]` → logits `[B, num_class]`: the L → L encoder, flattened time-major, then
        Linear(L·N → classes). As TSLib's LightTS, the padding mask is not read (padded steps are zeros
        that every output step mixes in, so masking the output would not remove them)."""
        out = self.encoder(x_enc, zero_pad_end=True)  # [B, L, N]
        return self.projection(out.reshape(out.shape[0], -1))  # [B, num_class]

    def encoder(self, x_enc: torch.Tensor, zero_pad_end: bool = False) -> torch.Tensor:
        """The two sampling views, the mixing IEBlock and the highway: `[B, L, N]` → `[B, H, N]`.

        A window shorter than the padded length L' gets the first value repeated in front, or zeros at
        the end with `zero_pad_end` (TSLib's classification)."""
        b, seq_len, n = x_enc.shape
        pad = self.padded_len - seq_len
        x = x_enc
        if pad and zero_pad_end:
            x = torch.cat([x_enc, x_enc.new_zeros(b, pad, n)], dim=1)  # [B, L', N]
        elif pad:
            x = torch.cat([x_enc[:, :1].expand(b, pad, n), x_enc], dim=1)  # [B, L', N]
        highway = self.ar(x.transpose(1, 2)).transpose(1, 2)  # [B, H, N]

        c, k = self.chunk_size, self.num_chunks
        # Continuous sampling: column j holds steps jC .. jC+C−1.
        con = x.reshape(b, k, c, n).permute(0, 3, 2, 1).reshape(b * n, c, k)  # [B·N, C, L'/C]
        con = self.chunk_proj_1(self.layer_1(con)).squeeze(-1)  # [B·N, D/4]
        # Interval sampling: column j holds steps j, j + L'/C, j + 2L'/C, ...
        itv = x.reshape(b, c, k, n).permute(0, 3, 1, 2).reshape(b * n, c, k)  # [B·N, C, L'/C]
        itv = self.chunk_proj_2(self.layer_2(itv)).squeeze(-1)  # [B·N, D/4]

        z = torch.cat([con, itv], dim=-1).reshape(b, n, -1).transpose(1, 2)  # [B, D/2, N]
        return self.layer_3(z) + highway  # [B, H, N]
