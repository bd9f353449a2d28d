"""Lazy registry of the models in `models/`, found relative to this package (not the CWD)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from utils.errors import UserInputError

if TYPE_CHECKING:  # the registry imports no torch until a model is loaded
    import torch.nn as nn

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
# Zero-shot foundation models (TSLib's and Fracast): they run pretrained weights and are not trained, so they
# live in models/foundation/ and serve --task_name zero_shot_forecast only.
FOUNDATION_MODELS = ("Chronos", "Chronos2", "Moirai", "TimesFM", "TimeMoE", "Sundial", "TiRex", "Fracast")


def not_included_error(name: str) -> UserInputError:
    """The one-line error for a foundation model asked for a task that trains."""
    return UserInputError(f"--model {name} is a zero-shot foundation model: it is not trained here; run it with "
                          "--task_name zero_shot_forecast (README: Zero-shot forecasting)")


class ModelRegistry(Mapping):
    """Maps a model name (file stem in models/) to its `Model` class, importing on first access."""

    def __init__(self, models_dir: Path = MODELS_DIR, package: str = "models") -> None:
        self._package = package
        self._names = sorted(p.stem for p in models_dir.glob("*.py") if not p.stem.startswith("_"))
        self._loaded: dict[str, type[nn.Module]] = {}

    def __getitem__(self, name: str) -> type[nn.Module]:
        if name in FOUNDATION_MODELS:
            raise not_included_error(name)
        if name not in self._names:
            raise UserInputError(f"--model {name!r} is not a model in models/; valid choices: {', '.join(self._names)}")
        if name not in self._loaded:
            module = importlib.import_module(f"{self._package}.{name}")
            self._loaded[name] = getattr(module, "Model", None) or getattr(module, name)
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


MODEL_REGISTRY = ModelRegistry()


def model_tasks(name: str, package: str = "models") -> tuple[str, ...]:
    """The --task_name values model `name` serves: its module's `TASKS` (a module without one forecasts only,
    long- and short-term). Imports the model's module."""
    from layers.config_checks import FORECAST_TASKS

    MODEL_REGISTRY[name]  # a one-line error for an unknown or excluded model
    module = importlib.import_module(f"{package}.{name}")
    return tuple(getattr(module, "TASKS", FORECAST_TASKS))
