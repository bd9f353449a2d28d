"""Fracast-0 (pip package `fracast`, Apache-2.0): an 85 001-parameter convolutional forecaster whose weights
ship inside the package, so it runs here with no download.

It reads the last 2 048 steps of each series (a shorter look-back is padded and masked), min-max scales
them, and predicts 9 quantiles of the next 48 steps; longer horizons append the median block and forecast
again. The point forecast scored here is the median (quantile 0.5).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from models.foundation.base import ZeroShotForecaster
from models.foundation.weights import import_package, resolve_weights
from utils.flag_defaults import flag_default

#: the package's own weights are used unless --pretrained_path names a release folder
WEIGHT_FILES = ("config.json", "model.safetensors")


class FracastForecaster(ZeroShotForecaster):
    """Fracast-0 through `fracast.FracastModel` (full-precision `model.safetensors`)."""

    name = "Fracast"

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__(configs)
        fracast = import_package(self.name, "fracast", "fracast")
        path = getattr(configs, "pretrained_path", flag_default("pretrained_path"))
        folder = resolve_weights(self.name, path, "ztxtech/fracast-0", WEIGHT_FILES) if path else None
        self.release = fracast.FracastModel.from_pretrained(folder, weights="fp32", device="cpu")
        # Registered so that .to(device), .parameters() and eval() reach the networks.
        self.core = self.release.core
        self.head = self.release.head
        self.check_context(self.release.context_length)
        self.median = int(np.argmin(np.abs(np.asarray(self.release.quantiles) - 0.5)))
        self.weights = (f"fracast {getattr(fracast, '__version__', '?')} bundled fp32" if folder is None
                        else f"fp32 from --pretrained_path {path}")

    def describe(self) -> dict:
        return {"lookback": self.seq_len, "context": self.max_context, "point_forecast": "median (q0.5)",
                "weights": self.weights}

    def forecast_series(self, series: torch.Tensor, horizon: int) -> torch.Tensor:
        self.release.device = next(self.core.parameters()).device
        quantiles = self.release.forecast_batch(series.detach().cpu().numpy(), horizon=horizon)  # [N, H, Q]
        return torch.from_numpy(np.ascontiguousarray(quantiles[..., self.median]))  # [N, H]
