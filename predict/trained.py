"""A trained model rebuilt from its checkpoint folder: the card's flags, the model class of the registry, the
weights read with `weights_only=True` after their sha256 was checked against the card, and refused when a parameter
holds NaN or inf. Every task's result passes `TrainedModel._finite`: a result holding NaN or inf is refused, never
returned.

`TrainedModel` is what every task's class (predict/forecaster.py, imputer.py, detector.py, classifier.py,
short_term.py) shares: the card, run.py's namespace, the model in eval mode, and the device.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from data_provider.data_factory import build_train_split
from exp.arguments import build_parser
from exp.checkpointing import load_checkpoint, load_model_state
from exp.model_card import CARD_FILE, file_sha256, recreate_hint
from exp.model_registry import MODEL_REGISTRY
from utils.errors import UserInputError
from utils.train_split import default_cache_dir, needs_train_split, with_train_split

__all__ = ["TrainedModel", "build_trained_model", "card_namespace", "covering_windows", "require_finite_weights",
           "verified_state"]

# The run.py flags without a default.
_REQUIRED = ("task_name", "is_training", "model_id", "model", "data")


def card_namespace(card: dict[str, Any], root_path: str | None = None) -> argparse.Namespace:
    """run.py's namespace of the card's run: run.py's defaults, then every flag the card records (a flag added to
    the library after the card was written keeps its default, which is the earlier behaviour). is_training 0."""
    flags = card.get("args")
    if not isinstance(flags, dict) or any(name not in flags for name in _REQUIRED):
        raise UserInputError(f"the model card of {card.get('setting')} lacks the run's flags; {recreate_hint()}")
    head = [item for name in _REQUIRED for item in (f"--{name}", str(flags[name]))]
    args = build_parser().parse_args(head)
    for name, value in flags.items():
        setattr(args, name, value)
    args.is_training = 0
    args.root_path = root_path or ""
    return args


def verified_state(folder: Path, card: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The checkpoint's state_dict, read with weights_only=True once its sha256 equals the card's."""
    entry = card.get("checkpoint") or {}
    path = folder / str(entry.get("file", "checkpoint.pth"))
    if Path(entry.get("file", "")).name != entry.get("file"):
        raise UserInputError(f"the model card in {folder} names the weights file {entry.get('file')!r}, not a file "
                             f"beside it; {recreate_hint()}")
    if not path.is_file():
        raise UserInputError(f"checkpoint {path} not found: the folder holds the card but not the weights it "
                             "describes; copy checkpoint.pth with it")
    if file_sha256(path) != entry.get("sha256"):
        raise UserInputError(f"checkpoint {path} is not the file its model card describes (sha256 differs): it was "
                             f"replaced or altered; restore it, or if it is meant to be there, {recreate_hint()}")
    state = load_checkpoint(path)
    if not isinstance(state, dict):
        raise UserInputError(f"checkpoint {path} does not hold a model state_dict")
    return state


def _train_split_configs(args: argparse.Namespace, card: dict[str, Any], root_path: str | None) -> argparse.Namespace:
    """Koopa and OLinear are built from statistics of their training split: read it again from `root_path` and
    check it is the split they were trained on."""
    if not root_path:
        raise UserInputError(f"{args.model} is built from statistics of its training split, which the checkpoint "
                             f"does not hold: pass root_path (python -m predict: --root_path) = the folder holding "
                             f"{args.data_path}")
    split = build_train_split(args, cache_dir=default_cache_dir())
    if split.fingerprint != card.get("train_split_fingerprint"):
        raise UserInputError(f"the training split read from {Path(root_path) / args.data_path} is not the one "
                             f"{args.model} was trained on (its fingerprint differs); pass the folder holding the "
                             "training file")
    return with_train_split(args, split)


def build_trained_model(folder: Path, card: dict[str, Any], args: argparse.Namespace,
                        root_path: str | None = None) -> nn.Module:
    """The card's model with the checkpoint's weights, on the CPU, in eval mode."""
    model_class = MODEL_REGISTRY.get(args.model)
    if model_class is None:
        raise UserInputError(f"the model card in {folder} names --model {args.model}, which this checkout does not "
                             "have; use the checkout that trained it")
    state = verified_state(folder, card)
    configs = _train_split_configs(args, card, root_path) if needs_train_split(model_class) else args
    try:
        model = model_class(configs).float()
    except ValueError as err:
        raise UserInputError(f"--model {args.model}: {err}") from None
    # The card's flags passed its schema, so what is left is a size the machine cannot hold (a hand-edited
    # --seq_len 1000000000): torch's allocator raises RuntimeError, numpy's MemoryError.
    except (RuntimeError, MemoryError) as err:
        reason = str(err).strip().splitlines()[0][:160] if str(err).strip() else type(err).__name__
        raise UserInputError(f"--model {args.model} cannot be built from the flags of {folder / CARD_FILE} "
                             f"({reason}); restore the flags the run wrote, or {recreate_hint()}") from None
    load_model_state(model, state, folder / "checkpoint.pth")
    require_finite_weights(model, folder / "checkpoint.pth")
    return model.eval()


def require_finite_weights(model: nn.Module, path: Path) -> None:
    """UserInputError naming the first parameter holding NaN or inf: such weights forecast NaN whatever the input
    (a sha256 that matches says only that the card describes this file, not that training went well)."""
    for name, weight in model.named_parameters():
        bad = int((~torch.isfinite(weight)).sum())
        if bad:
            raise UserInputError(f"checkpoint {path} holds non-finite weights (NaN or inf: {bad} of {weight.numel()} "
                                 f"in {name}): the run that saved it diverged; train again (a lower --learning_rate, "
                                 "or --max_grad_norm 1) and use that checkpoint")


def covering_windows(rows: int, length: int) -> list[int]:
    """Starts of windows of `length` rows covering rows 0..rows-1: back to back, the last one ending at the last row
    (it overlaps the one before when `length` does not divide `rows`)."""
    starts = list(range(0, rows - length + 1, length))
    if starts[-1] + length < rows:
        starts.append(rows - length)
    return starts


class TrainedModel:
    """A checkpoint ready to use: `card` (model_card.json), `args` (run.py's namespace of the run), `model` (eval
    mode, on `device`). Each task's subclass adds its method; the others say which one this task has."""

    #: the method of this task (named in the error a wrong call gets)
    method = ""

    def __init__(self, folder: Path, card: dict[str, Any], args: argparse.Namespace, model: nn.Module,
                 device: torch.device) -> None:
        self.folder, self.card, self.args = folder, card, args
        self.device = device
        self.model = model.to(device)
        self.data = card["data"]

    @property
    def task_name(self) -> str:
        return self.card["task_name"]

    def _wrong_task(self, method: str) -> UserInputError:
        return UserInputError(f"{self.folder} holds a {self.task_name} model, which has no .{method}(); use "
                              f".{self.method}()")

    def forecast(self, frame):
        raise self._wrong_task("forecast")

    def rolling(self, frame):
        raise self._wrong_task("rolling")

    def impute(self, frame):
        raise self._wrong_task("impute")

    def detect(self, frame):
        raise self._wrong_task("detect")

    def classify(self, samples):
        raise self._wrong_task("classify")

    def _finite(self, values: np.ndarray, what: str, source: str) -> np.ndarray:
        """`values` when every one is finite; else UserInputError: a result holding NaN or inf is never returned."""
        bad = int(np.size(values) - np.isfinite(values).sum())
        if bad:
            raise UserInputError(f"the {what} of {self.folder} for {source} holds {bad} of {np.size(values)} values "
                                 "that are NaN or infinite, so it is refused; the weights and the card passed their "
                                 "checks, so compare the input's values with the training data's (their scale, the "
                                 "card's data.scaler)")
        return values

    def _scale(self, values: np.ndarray, mean: list[float], scale: list[float]) -> np.ndarray:
        """(values − mean) / scale in float64, then float32: StandardScaler.transform as training applied it. A value
        beyond float32 becomes inf without a warning: the result's check (`_finite`) names the problem in one line."""
        with np.errstate(over="ignore"):
            return ((values - np.asarray(mean)) / np.asarray(scale)).astype(np.float32)
