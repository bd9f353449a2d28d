"""The model card: `<checkpoints>/<setting>/model_card.json`, what a checkpoint needs to be used on new data.

`checkpoint.pth` holds weights only. Beside it, every run.py run that trains or tests a setting writes this JSON
file (issue 52), so `predict.load_trained(folder)` can rebuild the model and feed it as training did:

- `args`: every flag of the run after the experiment resolved it (classification's seq_len and num_class, M4's
  lengths), without the machine's paths: `root_path` and `checkpoints` are left out, `data_path` keeps its file
  name only; `config_hash`, `code_version` (git commit) and `library_version` (pyproject.toml, or the installed
  distribution's);
- `checkpoint`: the weights file's name and sha256, so a replaced or altered file is refused;
- `data`: how the training data was read, per kind of dataset (`describe_dataset`): the columns in the order the
  model reads them, the target(s) and --features, the scaler fitted on the training split (mean and scale per
  column), the time-feature encoding and the training file's time step; anomaly detection adds the threshold
  chosen at test time, classification the class names and the TRAIN statistics;
- `train_split_fingerprint` for models built from training statistics (Koopa, OLinear: `utils.train_split`).

A card is plain JSON (no pickle), written atomically; floats are written with Python's repr, which reads back
to the same float64.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from data_provider.anomaly_loader import SegmentDataset
from data_provider.data_factory import build_dataset
from data_provider.data_loader import WindowDataset
from data_provider.m4 import FREQUENCIES, Dataset_M4
from data_provider.short_term_files import Dataset_ShortTermFile
from data_provider.uea import UEAloader
from exp.checkpointing import BEST_FILE, capture_rng_state, restore_rng_state
from exp.run_config import REPO_ROOT, code_version, config_hash, run_config
from utils.errors import UserInputError
from utils.tools import atomic_write_text
from utils.train_split import TrainSplit, needs_train_split

__all__ = ["CARD_FILE", "CARD_FORMAT", "CARD_KIND", "build_model_card", "describe_dataset", "file_sha256",
           "forecast_columns", "library_version", "read_model_card", "recreate_hint", "write_model_card"]

CARD_FILE = "model_card.json"
#: pyproject.toml's [project] name, as pip installs it
DISTRIBUTION = "caps-tslib"
CARD_KIND = "caps-tslib model card"
#: bumped when a field changes meaning; a reader refuses cards of a later format
CARD_FORMAT = 1
#: flags naming folders of the machine that trained: never written into a card
MACHINE_PATH_FLAGS = ("root_path", "checkpoints", "predict_data")


def recreate_hint() -> str:
    """How to (re)write a setting's card: the training command, tested again."""
    return ("run the original training command with --is_training 0 (it tests the checkpoint and writes "
            f"{CARD_FILE} beside it)")


def library_version() -> str | None:
    """The `version` of pyproject.toml's [project] table (the checkout's library version); installed with pip
    (no pyproject.toml beside the packages), the installed distribution's; None when neither is found."""
    path = REPO_ROOT / "pyproject.toml"
    if not path.is_file():
        try:
            return metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:
            return None
    match = re.search(r'^version\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return match.group(1) if match else None


def file_sha256(path: Path) -> str:
    """sha256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def card_args(args: argparse.Namespace) -> dict[str, Any]:
    """The run's resolved flags without the machine's paths (`data_path` keeps its file name)."""
    flags = run_config(args)
    for name in MACHINE_PATH_FLAGS:
        flags.pop(name, None)
    if isinstance(flags.get("data_path"), str):
        flags["data_path"] = Path(flags["data_path"]).name
    return flags


def forecast_columns(features: str, input_columns: list[str]) -> list[str]:
    """The columns a forecast holds: every input column for M, the one column for S, the last for MS (the column
    the experiment scores with `[..., -1:]`: the target for custom files, the file's last column for ETT)."""
    return list(input_columns) if features == "M" else list(input_columns[-1:])


def time_step(dates: pd.DatetimeIndex | None) -> str | None:
    """The training file's step as a pandas frequency string ("h", "15min", "MS", ...): `pd.infer_freq` of the
    timestamps, else their most common difference (files with a few gaps); None without timestamps."""
    if dates is None or len(dates) < 3:
        return None
    inferred = pd.infer_freq(dates)
    if inferred is not None:
        return pd.tseries.frequencies.to_offset(inferred).freqstr
    steps = pd.Series(np.diff(pd.DatetimeIndex(dates).as_unit("ns").asi8))
    steps = steps[steps > 0]
    if steps.empty:
        return None
    return _tick_name(int(steps.mode().iloc[0]))


# Fixed-length pandas units, longest first, in nanoseconds.
_TICKS = (("D", 86_400 * 10**9), ("h", 3_600 * 10**9), ("min", 60 * 10**9), ("s", 10**9), ("ms", 10**6),
          ("us", 10**3), ("ns", 1))


def _tick_name(nanoseconds: int) -> str:
    """A step of `nanoseconds` as a pandas frequency string in the longest unit that divides it (3600 s -> "h")."""
    unit, size = next((unit, size) for unit, size in _TICKS if nanoseconds % size == 0)
    count = nanoseconds // size
    return unit if count == 1 else f"{count}{unit}"


def _scaler(mean: np.ndarray, scale: np.ndarray) -> dict[str, list[float]]:
    return {"mean": [float(v) for v in np.ravel(mean)], "scale": [float(v) for v in np.ravel(scale)]}


def describe_dataset(dataset: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The `data` part of a card for the training split `dataset` of any task."""
    if isinstance(dataset, WindowDataset):
        columns = list(dataset.used_columns)
        scaler = dataset.scaler if dataset.scale else None
        return {
            "kind": "series",
            "file": Path(dataset.data_path).name,
            "date_column": "date" if dataset.dates is not None else None,
            "input_columns": columns,
            "target": dataset.target,
            "features": dataset.features,
            "forecast_columns": forecast_columns(dataset.features, columns),
            "freq": dataset.freq,
            "timeenc": dataset.timeenc,
            "time_step": time_step(dataset.dates),
            "scaler": _scaler(scaler.mean_, scaler.scale_) if scaler is not None else None,
        }
    if isinstance(dataset, SegmentDataset):
        return {
            "kind": "segments",
            "dataset": type(dataset).name,
            "input_columns": list(dataset.columns),
            "stride": dataset.step,
            "scaler": _scaler(dataset.scaler.mean_, dataset.scaler.scale_),
            "anomaly_ratio": args.anomaly_ratio,
            "threshold": None,
        }
    if isinstance(dataset, UEAloader):
        return {
            "kind": "samples",
            "dataset": dataset.name,
            "n_channels": dataset.n_channels,
            "class_names": list(dataset.class_names),
            "max_len": dataset.max_len,
            "feature_mean": [float(v) for v in dataset.feature_mean],
            "feature_std": [float(v) for v in dataset.feature_std],
            "per_sample_norm": bool(dataset.per_sample_norm),
        }
    if isinstance(dataset, Dataset_M4):
        return {"kind": "m4", "seasonal_patterns": dataset.seasonal_patterns,
                "frequency": FREQUENCIES[dataset.seasonal_patterns]}
    if isinstance(dataset, Dataset_ShortTermFile):
        return {"kind": "short_term_file", "file": Path(dataset.data_path).name, "horizon": dataset.pred_len,
                "frequency": dataset.seasonality}
    raise TypeError(f"no model card for a {type(dataset).__name__}")


def _training_split(args: argparse.Namespace, model_class: type) -> Any:
    """The run's training split, read again without touching any random stream (the test that follows a card draws
    what it would draw without one). Augmentation (seeded by --seed) is skipped unless the model is built from the
    split, whose fingerprint the card records: the statistics a card saves come before it."""
    rng = capture_rng_state()
    try:
        if needs_train_split(model_class):
            return build_dataset(args, "train")
        return build_dataset(argparse.Namespace(**{**vars(args), "augmentation_ratio": 0}), "train")
    finally:
        restore_rng_state(rng)


def build_model_card(args: argparse.Namespace, config: dict[str, Any], model_class: type, folder: Path,
                     setting: str, test_record: dict | None = None) -> dict[str, Any]:
    """The card of the checkpoint in `folder` trained with the resolved `args`; `config` is the command's
    `run_config` (its hash is the one results.jsonl records); `test_record` is the run's results.jsonl record
    (anomaly detection's threshold comes from it)."""
    checkpoint = folder / BEST_FILE
    if not checkpoint.is_file():
        raise UserInputError(f"no checkpoint at {checkpoint}: train first (--is_training 1)")
    train = _training_split(args, model_class)
    data = describe_dataset(train, args)
    if data["kind"] == "segments" and test_record is not None:
        data["threshold"] = test_record.get("threshold")
    card = {
        "kind": CARD_KIND,
        "format": CARD_FORMAT,
        "task_name": args.task_name,
        "model": args.model,
        "setting": setting,
        "checkpoint": {"file": BEST_FILE, "sha256": file_sha256(checkpoint)},
        "args": card_args(args),
        "config_hash": config_hash(config),
        "code_version": code_version(),
        "library_version": library_version(),
        "data": data,
    }
    if needs_train_split(model_class):
        card["train_split_fingerprint"] = TrainSplit(train.series_arrays()).fingerprint
    return card


def write_model_card(exp: Any, setting: str, test_record: dict | None = None) -> Path | None:
    """Write the card of experiment `exp`'s checkpoint of `setting` into `<--checkpoints>/<setting>/`, atomically
    (rank 0 only; the others return None). `exp` is any task's experiment (its `args`, `config`, `model_dict`)."""
    if not exp.dist.is_main:
        return None
    folder = Path(exp.args.checkpoints) / setting
    card = build_model_card(exp.args, exp.config, exp.model_dict[exp.args.model], folder, setting, test_record)
    path = folder / CARD_FILE
    atomic_write_text(path, json.dumps(card, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return path


def read_model_card(folder: Path) -> dict[str, Any]:
    """The card of a checkpoint folder; one-line UserInputError when it is missing, unreadable or too new."""
    path = Path(folder) / CARD_FILE
    if not Path(folder).is_dir():
        raise UserInputError(f"checkpoint folder {folder} not found: pass <checkpoints>/<setting>/")
    if not path.is_file():
        raise UserInputError(f"{folder} has no {CARD_FILE} (it was trained before checkpoints described "
                             f"themselves): {recreate_hint()}")
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserInputError(f"{path} is not readable JSON ({type(err).__name__}); {recreate_hint()}") from None
    if not isinstance(card, dict) or card.get("kind") != CARD_KIND:
        raise UserInputError(f"{path} is not a model card this library wrote; {recreate_hint()}")
    form = card.get("format")
    if not isinstance(form, int) or isinstance(form, bool) or form < 1:
        shown = f"is {form!r}" if "format" in card else "is missing"
        raise UserInputError(f"{path}: field format {shown}; it must be a whole number from 1 to {CARD_FORMAT}: "
                             f"restore the value the run wrote, or {recreate_hint()}")
    if form > CARD_FORMAT:
        raise UserInputError(f"{path} has card format {form!r}, newer than this checkout reads ({CARD_FORMAT}); "
                             f"update the checkout or {recreate_hint()}")
    return card
