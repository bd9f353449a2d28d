"""Multi-scale inputs by repeated down-sampling, as TimeMixer and TimeMixer++ build them:
x_0 = x, x_m = Down(x_{m−1}) for m = 1..M (`--down_sampling_layers` M, `--down_sampling_window` w), so
scale m has L_m = L / w^m steps; the time marks are subsampled with stride w^m.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from utils.errors import UserInputError

DOWN_SAMPLING_METHODS = ("avg", "max", "conv")


def scale_lengths(seq_len: int, window: int, layers: int) -> list[int]:
    """Steps of each scale: L_m = seq_len // window^m for m = 0..layers."""
    return [seq_len // window**m for m in range(layers + 1)]


def check_down_sampling(configs: argparse.Namespace) -> None:
    """One-line errors for a down-sampling method or window that cannot build the scales."""
    layers, window = configs.down_sampling_layers, configs.down_sampling_window
    if layers == 0:
        return
    if configs.down_sampling_method not in DOWN_SAMPLING_METHODS:
        raise UserInputError(
            f"--down_sampling_method {configs.down_sampling_method!r} is not supported with "
            f"--down_sampling_layers {layers}; use one of {', '.join(DOWN_SAMPLING_METHODS)}")
    if configs.seq_len % window**layers != 0:
        raise UserInputError(
            f"--seq_len {configs.seq_len} is not divisible by --down_sampling_window {window} ** "
            f"--down_sampling_layers {layers} = {window**layers}; choose --seq_len as a multiple of it")


def make_down_pool(configs: argparse.Namespace) -> nn.Module | None:
    """The pooling `[B, N, L_m]` → `[B, N, L_m / w]` shared by every scale (None with one scale)."""
    if configs.down_sampling_layers == 0:
        return None
    window = configs.down_sampling_window
    if configs.down_sampling_method == "avg":
        return nn.AvgPool1d(window)
    if configs.down_sampling_method == "max":
        return nn.MaxPool1d(window)
    # Circular padding 1 with kernel 3 and stride w keeps L / w steps when w divides L.
    return nn.Conv1d(configs.enc_in, configs.enc_in, kernel_size=3, stride=window, padding=1,
                     padding_mode="circular", bias=False)


def multi_scale_inputs(x: torch.Tensor, x_mark: torch.Tensor | None, down_pool: nn.Module | None, layers: int,
                       window: int) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
    """x `[B, L, N]` and marks `[B, L, F]` (or None) at every scale: lists of `[B, L_m, N]` and `[B, L_m, F]`."""
    xs, marks = [x], [x_mark]
    for _ in range(layers):
        xs.append(down_pool(xs[-1].transpose(1, 2)).transpose(1, 2))  # [B, L_m, N]
        marks.append(None if x_mark is None else marks[-1][:, ::window, :])  # [B, L_m, F]
    return xs, marks
