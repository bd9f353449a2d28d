"""The shape every zero-shot foundation model takes here: TSLib's `forward(x_enc, x_mark_enc, x_dec, x_mark_dec)`.

Foundation models forecast one series at a time, so each of the C channels of every window is forecast
on its own (as TSLib's wrappers do): `[B, L, C]` becomes `[B·C, L]` series, the model returns a point
forecast `[B·C, H]`, and that is folded back to `[B, H, C]`. Time marks and the decoder input are not read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import torch.nn as nn

from models.foundation.weights import resolve_weights
from utils.errors import UserInputError
from utils.flag_defaults import flag_default


class ZeroShotForecaster(nn.Module):
    """Base of the wrappers: holds the look-back and horizon, folds channels into series and back.

    Subclasses set `max_context` (the longest look-back the pretrained model reads; a longer --seq_len is
    refused) and implement `forecast_series`.
    """

    #: the name --model takes
    name: str = ""
    #: the longest context the pretrained model reads (None: no limit)
    max_context: int | None = None
    #: the Hugging Face repository of the default weights
    repo_id: str = ""

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        self.seq_len = int(configs.seq_len)
        self.pred_len = int(configs.pred_len)
        if self.seq_len < 1 or self.pred_len < 1:
            raise UserInputError(f"--model {self.name}: --seq_len and --pred_len must be at least 1 "
                                 f"(got {self.seq_len}, {self.pred_len})")

    def pretrained_folder(self, configs: argparse.Namespace, files: tuple[str, ...]) -> Path:
        """The folder holding `files`: --pretrained_path when given, else the cached `repo_id` (resolve_weights).
        Sets `source`, the weights the run's record names."""
        path = getattr(configs, "pretrained_path", flag_default("pretrained_path"))
        folder = resolve_weights(self.name, path, self.repo_id, files)
        self.source = str(path) if path else self.repo_id
        return folder

    def check_context(self, max_context: int | None) -> None:
        """Refuse a --seq_len longer than the pretrained model reads (it would silently drop the start)."""
        self.max_context = max_context
        if max_context is not None and self.seq_len > max_context:
            raise UserInputError(f"--seq_len {self.seq_len} is longer than {self.name}'s context of {max_context} "
                                 f"steps; pass --seq_len {max_context} or less")

    def describe(self) -> dict:
        """What the run's record says about the model (look-back, point forecast, weights)."""
        return {"lookback": self.seq_len}

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None, x_dec: torch.Tensor | None = None,
                x_mark_dec: torch.Tensor | None = None, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x_enc ``[B, L, C]`` → point forecast ``[B, H, C]`` (float32, on x_enc's device)."""
        batch, length, channels = x_enc.shape
        series = x_enc.float().permute(0, 2, 1).reshape(batch * channels, length)  # [B·C, L]
        out = self.forecast_series(series, self.pred_len)  # [B·C, H]
        out = out.to(device=x_enc.device, dtype=torch.float32)
        return out.reshape(batch, channels, self.pred_len).permute(0, 2, 1)  # [B, H, C]

    def forecast_series(self, series: torch.Tensor, horizon: int) -> torch.Tensor:
        """Point forecasts ``[N, horizon]`` of N independent series ``[N, L]``."""
        raise NotImplementedError
