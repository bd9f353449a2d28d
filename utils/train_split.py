"""The training split handed to models whose construction needs data statistics (Koopa's masked
frequencies, OLinear's OrthoTrans bases).

Protocol: a model class that needs it sets the class attribute `needs_train_split = True` and reads
`configs.train_split` (a `TrainSplit`) in `__init__`, through `require_train_split`. The experiment
(`exp/exp_long_term_forecasting.py`) and `compare/efficiency.build_model` attach it to a copy of the
configs before building such a model; tests pass a `synthetic_train_split`. `models/` never imports
`data_provider/`: the split arrives as plain arrays.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from utils.errors import UserInputError

#: The configs attribute that carries the split.
TRAIN_SPLIT_ATTR = "train_split"
#: Environment variable naming the folder for cached split statistics (default ./cache).
CACHE_DIR_ENV = "TSLIB_CACHE_DIR"


def default_cache_dir() -> Path:
    """Folder for statistics cached from training splits: $TSLIB_CACHE_DIR, else ./cache."""
    return Path(os.environ.get(CACHE_DIR_ENV) or "./cache")


def needs_train_split(model_class: type) -> bool:
    """Whether a model class reads `configs.train_split` when built."""
    return bool(getattr(model_class, "needs_train_split", False))


def with_train_split(configs: argparse.Namespace, split: TrainSplit) -> argparse.Namespace:
    """A shallow copy of `configs` carrying `split` (the caller's namespace is left as it was)."""
    copied = argparse.Namespace(**vars(configs))
    setattr(copied, TRAIN_SPLIT_ATTR, split)
    return copied


@dataclass(frozen=True)
class TrainSplit:
    """The rows of the training split as the data loader serves them.

    Attributes:
        data: `[rows, C]` the training rows (scaled, feature-selected: the dataset's `data_x`); the
            loader's lookback windows are `data[i : i + seq_len]` for i < rows - seq_len - pred_len + 1.
        cache_dir: a folder where models may cache statistics derived from `data` (None: no cache).
        fingerprint: sha256 of `data` (shape, dtype and bytes), filled in when not given. It fixes the
            data file's content, the split borders, the feature selection and the scaling, so it keys
            caches of statistics derived from the split.
    """

    data: np.ndarray
    cache_dir: Path | None = None
    fingerprint: str = field(default="")

    def __post_init__(self) -> None:
        if self.data.ndim != 2:
            raise ValueError(f"TrainSplit.data must be [rows, C], got shape {self.data.shape}")
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", array_fingerprint(self.data))

    def n_windows(self, seq_len: int, pred_len: int) -> int:
        """Number of training windows the loader yields at these lengths."""
        return len(self.data) - seq_len - pred_len + 1

    def lookback_windows(self, seq_len: int, pred_len: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Lookback windows `[n, seq_len, C]` number start..stop-1 (a strided view, no copy)."""
        count = self.n_windows(seq_len, pred_len)
        stop = count if stop is None else min(stop, count)
        windows = np.lib.stride_tricks.sliding_window_view(self.data, seq_len, axis=0)  # [rows-L+1, C, L]
        return windows[start:stop].transpose(0, 2, 1)


def array_fingerprint(array: np.ndarray) -> str:
    """sha256 hex digest of an array's shape, dtype and bytes."""
    digest = hashlib.sha256(f"{array.shape}|{array.dtype.str}|".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def require_train_split(configs: argparse.Namespace, model: str, seq_len: int, pred_len: int) -> TrainSplit:
    """`configs.train_split`, checked to hold at least one window; a one-line error says how to provide it."""
    split = getattr(configs, TRAIN_SPLIT_ATTR, None)
    if split is None:
        raise UserInputError(
            f"{model} reads statistics of the training split when it is built: build it through run.py / "
            f"Exp_Long_Term_Forecast (which attaches it), or set configs.{TRAIN_SPLIT_ATTR} = "
            "utils.train_split.TrainSplit(train_rows) before Model(configs)")
    if not isinstance(split, TrainSplit):
        raise UserInputError(f"configs.{TRAIN_SPLIT_ATTR} must be a utils.train_split.TrainSplit, "
                             f"got {type(split).__name__}")
    if split.n_windows(seq_len, pred_len) < 1:
        raise UserInputError(f"--seq_len {seq_len} + --pred_len {pred_len} is longer than the {len(split.data)} "
                             f"rows of the training split given to {model}")
    return split


def synthetic_train_split(rows: int = 512, channels: int = 3, seed: int = 0,
                          cache_dir: Path | None = None) -> TrainSplit:
    """A deterministic stand-in `[rows, channels]` float32 split: a few sinusoids (periods 24 and 168
    steps, per-channel phases) plus a trend and Gaussian noise, standardised per channel."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows, dtype=np.float64)[:, None]
    phase = rng.uniform(0, 2 * np.pi, size=(1, channels))
    series = (np.sin(2 * np.pi * t / 24 + phase) + 0.5 * np.sin(2 * np.pi * t / 168 + 2 * phase)
              + 0.002 * t + 0.3 * rng.standard_normal((rows, channels)))
    series = (series - series.mean(0)) / series.std(0)
    return TrainSplit(series.astype(np.float32), cache_dir=cache_dir)
