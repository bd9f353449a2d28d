"""`load_trained(folder)`: a checkpoint folder (`<checkpoints>/<setting>/`) → the trained model of its task."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from exp.model_card import CARD_FILE, read_model_card
from predict.card_schema import check_card
from predict.classifier import Classifier
from predict.detector import Detector
from predict.forecaster import Forecaster
from predict.imputer import Imputer
from predict.short_term import SeriesForecaster
from predict.trained import TrainedModel, build_trained_model, card_namespace

__all__ = ["TASK_MODELS", "load_trained"]

#: --task_name → the class that uses its checkpoints (the tasks of predict.card_schema.TASK_DATA_KINDS)
TASK_MODELS: dict[str, type[TrainedModel]] = {
    "long_term_forecast": Forecaster,
    "short_term_forecast": SeriesForecaster,
    "imputation": Imputer,
    "anomaly_detection": Detector,
    "classification": Classifier,
}


def load_trained(folder: str | os.PathLike, root_path: str | None = None,
                 device: str | torch.device = "cpu") -> TrainedModel:
    """The model trained in `folder` (which holds checkpoint.pth and model_card.json), ready for its task's method:
    `.forecast(frame)` / `.rolling(frame)` (long_term_forecast), `.forecast(path)` (short_term_forecast, M4's
    per-group CSV layout), `.impute(frame)`, `.detect(frame)`, `.classify(path)` (a .ts file).

    root_path: the folder holding the training file, needed only by models built from training statistics (Koopa,
    OLinear). Every problem (no card, a card field that does not hold what it must (predict/card_schema.py), a
    weights file other than the card's, a model this checkout lacks) is one UserInputError line.
    """
    folder = Path(folder)
    card = check_card(read_model_card(folder), folder / CARD_FILE)
    args = card_namespace(card, root_path)
    model = build_trained_model(folder, card, args, root_path)
    return TASK_MODELS[card["task_name"]](folder, card, args, model, torch.device(device))
