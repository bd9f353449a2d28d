"""DLinear (Zeng et al., "Are Transformers Effective for Time Series Forecasting?", AAAI 2023).

x = seasonal + trend with trend = edge-replicated moving average (`--moving_avg`);
ŷ = W_s · seasonal + b_s + W_t · trend + b_t, each W: L → H along time, shared by all variates, or
one per variate with `--individual` (TSLib declares that flag but never reads it; here it is honoured).
Weights start at 1/L (every output step begins as the window mean); biases keep PyTorch's default.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn as nn

from layers.Autoformer_EncDec import series_decomp
from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_positive,
    check_variate_task_config,
)
from layers.TaskDispatch import EncoderOutputTasks


class PerVariateLinear(nn.Module):
    """N independent Linear(L → H) maps along time, one per variate: `[B, N, L]` → `[B, N, H]`.

    Initialised like DLinear's shared layer: weights 1/L, biases U(−1/√L, 1/√L) (nn.Linear's default).
    """

    def __init__(self, n_vars: int, in_len: int, out_len: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.full((n_vars, out_len, in_len), 1.0 / in_len))
        bound = 1.0 / math.sqrt(in_len)
        self.bias = nn.Parameter(torch.empty(n_vars, out_len).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bnl,nhl->bnh", x, self.weight) + self.bias  # [B, N, H]


def _time_linear(n_vars: int, seq_len: int, pred_len: int, individual: bool) -> nn.Module:
    if individual:
        return PerVariateLinear(n_vars, seq_len, pred_len)
    layer = nn.Linear(seq_len, pred_len)
    nn.init.constant_(layer.weight, 1.0 / seq_len)
    return layer


TASKS = ALL_TASKS


class Model(EncoderOutputTasks, nn.Module):
    """DLinear for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; for imputation (masked
    window) and anomaly detection it maps the window to itself (TSLib sets the output length to seq_len):
    `[B, L, enc_in]` → `[B, L, c_out]`; for classification `[B, L, enc_in]` → `[B, num_class]` (reads
    num_class, set by the experiment).

    Reads seq_len, pred_len, moving_avg, enc_in, c_out, individual. With c_out < enc_in (features MS)
    the last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "DLinear", TASKS)
        check_positive(configs, "moving_avg")
        self.task_name = configs.task_name
        classify = self.task_name == CLASSIFICATION
        # Imputation, anomaly detection and classification map each window onto itself (L → L), as TSLib.
        self.pred_len = configs.pred_len if configs.task_name in FORECAST_TASKS else configs.seq_len
        self.c_out = configs.c_out
        individual = bool(configs.individual)
        # TSLib's attribute names (its spelling of `decompsition` included), so its checkpoints load.
        self.decompsition = series_decomp(configs.moving_avg)
        self.Linear_Seasonal = _time_linear(configs.enc_in, configs.seq_len, self.pred_len, individual)
        self.Linear_Trend = _time_linear(configs.enc_in, configs.seq_len, self.pred_len, individual)
        if classify:
            self.projection = nn.Linear(configs.enc_in * configs.seq_len, configs.num_class)

    def encoder(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Seasonal and trend maps along time: `[B, L, N]` → `[B, H, N]`."""
        seasonal, trend = self.decompsition(x_enc)  # [B, L, N] each
        out = self.Linear_Seasonal(seasonal.transpose(1, 2)) + self.Linear_Trend(trend.transpose(1, 2))  # [B, N, H]
        return out.transpose(1, 2)  # [B, H, N]
