"""Chronos (Chronos-Bolt) and Chronos-2 through the package `chronos-forecasting`, as TSLib's `Chronos` and
`Chronos2` (TSLib loads amazon/chronos-bolt-base and amazon/chronos-2 from the hub).

`BaseChronosPipeline.from_pretrained` reads a folder holding `config.json` and `model.safetensors` and picks
the pipeline class the config names. Each channel is one univariate series; the point forecast is the
pipeline's mean forecast (`predict_quantiles`'s second output). A horizon beyond the model's native
prediction length is produced by the pipeline itself (autoregressively, as the package does).
"""

from __future__ import annotations

import argparse
import warnings

import torch

from models.foundation.base import ZeroShotForecaster
from models.foundation.weights import import_package, resolve_weights
from utils.flag_defaults import flag_default

WEIGHT_FILES = ("config.json", "model.safetensors")


class ChronosForecaster(ZeroShotForecaster):
    """TSLib's `Chronos`: Chronos-Bolt, by default the cached amazon/chronos-bolt-base."""

    name = "Chronos"
    repo_id = "amazon/chronos-bolt-base"

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__(configs)
        chronos = import_package(self.name, "chronos", "chronos-forecasting")
        folder = resolve_weights(self.name, getattr(configs, "pretrained_path", flag_default("pretrained_path")), self.repo_id, WEIGHT_FILES)
        self.source = str(configs.pretrained_path) if getattr(configs, "pretrained_path", flag_default("pretrained_path")) else self.repo_id
        self.pipeline = chronos.BaseChronosPipeline.from_pretrained(str(folder), device_map="cpu",
                                                                    dtype=torch.float32)
        # Registered so that .to(device), .parameters() and eval() reach the network.
        self.network = self.pipeline.model
        self.check_context(int(self.pipeline.model_context_length))

    def describe(self) -> dict:
        return {"lookback": self.seq_len, "context": self.max_context, "point_forecast": "mean",
                "weights": self.source}

    def forecast_series(self, series: torch.Tensor, horizon: int) -> torch.Tensor:
        with warnings.catch_warnings():
            # The pipeline warns on every call when the horizon exceeds its native length.
            warnings.simplefilter("ignore", UserWarning)
            _, mean = self.pipeline.predict_quantiles(self.as_input(series.detach().cpu()), prediction_length=horizon,
                                                      quantile_levels=[0.5])
        if isinstance(mean, list):  # Chronos-2 returns one [1, H] tensor per series
            mean = torch.cat([m.reshape(-1, horizon) for m in mean], dim=0)
        return mean.reshape(series.shape[0], horizon)  # [N, H]


    @staticmethod
    def as_input(series: torch.Tensor) -> torch.Tensor:
        """The pipeline's input layout for N univariate series ``[N, L]``: Chronos-Bolt takes ``[N, L]``."""
        return series


class Chronos2Forecaster(ChronosForecaster):
    """TSLib's `Chronos2`: Chronos-2, by default the cached amazon/chronos-2 (channels forecast one by one)."""

    name = "Chronos2"
    repo_id = "amazon/chronos-2"

    @staticmethod
    def as_input(series: torch.Tensor) -> torch.Tensor:
        """Chronos-2 takes ``[N, variates, L]``: each series is one task with one variate."""
        return series[:, None, :]
