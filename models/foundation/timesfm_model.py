"""TimesFM 2.5 (200M) through the package `timesfm`, as TSLib's `TimesFM` (TSLib loads
google/timesfm-2.5-200m-pytorch from the hub).

`TimesFM_2p5_200M_torch.from_pretrained` reads `model.safetensors` from a folder; the model is then compiled
for this run's look-back and horizon with TSLib's forecast settings (normalised inputs, continuous quantile
head, flip invariance, positivity inference, quantile-crossing fix). The point forecast is TimesFM's own.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch

from models.foundation.base import ZeroShotForecaster
from models.foundation.weights import import_package, resolve_weights
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

WEIGHT_FILES = ("model.safetensors",)


class TimesFMForecaster(ZeroShotForecaster):
    """TSLib's `TimesFM`: TimesFM 2.5, by default the cached google/timesfm-2.5-200m-pytorch."""

    name = "TimesFM"
    repo_id = "google/timesfm-2.5-200m-pytorch"

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__(configs)
        timesfm = import_package(self.name, "timesfm", "timesfm")
        path = getattr(configs, "pretrained_path", flag_default("pretrained_path"))
        folder = resolve_weights(self.name, path, self.repo_id, WEIGHT_FILES)
        self.source = str(path) if path else self.repo_id
        self.tfm = timesfm.TimesFM_2p5_200M_torch.from_pretrained(str(folder), torch_compile=False,
                                                                  local_files_only=True)
        # Registered so that .to(device), .parameters() and eval() reach the network.
        self.network = self.tfm.model
        definition = self.network.config
        # Context and horizon are rounded up to whole patches and must fit the model's limit together.
        horizon = math.ceil(self.pred_len / definition.output_patch_len) * definition.output_patch_len
        if horizon > definition.output_quantile_len:
            raise UserInputError(f"--pred_len {self.pred_len} is longer than TimesFM's quantile head "
                                 f"({definition.output_quantile_len} steps); pass a shorter --pred_len")
        patch = definition.input_patch_len
        self.check_context((definition.context_limit - horizon) // patch * patch)
        self.tfm.compile(timesfm.ForecastConfig(
            max_context=self.seq_len, max_horizon=self.pred_len, normalize_inputs=True,
            use_continuous_quantile_head=True, force_flip_invariance=True, infer_is_positive=True,
            fix_quantile_crossing=True))

    def describe(self) -> dict:
        return {"lookback": self.seq_len, "context": self.max_context, "point_forecast": "TimesFM point",
                "weights": self.source}

    def forecast_series(self, series: torch.Tensor, horizon: int) -> torch.Tensor:
        rows = list(series.detach().cpu().numpy().astype(np.float32))
        point, _ = self.tfm.forecast(horizon=horizon, inputs=rows)  # [N, H]
        return torch.from_numpy(np.ascontiguousarray(point[:, :horizon], dtype=np.float32))
