"""TiRex (xLSTM) through the package `tirex-ts`, as TSLib's `TiRex` (TSLib loads NX-AI/TiRex from the hub).

The checkpoint `model.ckpt` (a Lightning checkpoint: hyper-parameters and state dict) is read by the package's
own `from_pretrained` of the model class it registers as "TiRex", with the pure-torch sLSTM backend (the
CUDA kernels need the optional `xlstm` package). The point forecast is TiRex's mean output (its median).
"""

from __future__ import annotations

import argparse

import torch

from models.foundation.base import ZeroShotForecaster
from models.foundation.weights import import_package, resolve_weights
from utils.flag_defaults import flag_default

WEIGHT_FILES = ("model.ckpt",)


class TiRexForecaster(ZeroShotForecaster):
    """TSLib's `TiRex`: by default the cached NX-AI/TiRex."""

    name = "TiRex"
    repo_id = "NX-AI/TiRex"

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__(configs)
        tirex_base = import_package(self.name, "tirex.base", "tirex-ts")
        import_package(self.name, "tirex.models.tirex", "tirex-ts")  # registers the "TiRex" model class
        path = getattr(configs, "pretrained_path", flag_default("pretrained_path"))
        folder = resolve_weights(self.name, path, self.repo_id, WEIGHT_FILES)
        self.source = str(path) if path else self.repo_id
        model_class = tirex_base.PretrainedModel.REGISTRY["TiRex"]
        self.network = model_class.from_pretrained(str(folder / "model.ckpt"), backend="torch", device="cpu")
        self.check_context(None)

    def describe(self) -> dict:
        return {"lookback": self.seq_len, "context": None, "point_forecast": "mean (TiRex's median)",
                "weights": self.source}

    def forecast_series(self, series: torch.Tensor, horizon: int) -> torch.Tensor:
        device = next(self.network.parameters()).device
        _, mean = self.network.forecast(series.detach().to(device), prediction_length=horizon)
        return torch.as_tensor(mean).reshape(series.shape[0], horizon)  # [N, H]
