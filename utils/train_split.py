"""The training split handed to models whose construction needs data statistics (Koopa's masked
frequencies, OLinear's OrthoTrans bases).

Protocol: a model class that needs it sets the class attribute `needs_train_split = True` and reads
`configs.train_split` (a `TrainSplit`) in `__init__`, through `require_train_split`. The experiment
(`exp/exp_long_term_forecasting.py`, also for short-term forecasting) and `compare/efficiency.build_model`
attach it to a copy of the configs before building such a model (`data_provider.data_factory.build_train_split`
reads it from any forecasting dataset); tests pass a `synthetic_train_split`. `models/` never imports
`data_provider/`: the split arrives as plain arrays.

A split is one or more series (segments): one `[rows, C]` array for a dataset that is one long series cut
into train/val/test (ETT, custom CSVs), one `[n_i, 1]` array per series for a dataset of separate series
(M4 and the custom short-term files). A window never crosses from one segment into the next.
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
    """The rows of the training split as the data loader draws its windows from them.

    Attributes:
        segments: the training series, each `[rows_i, C]` with the same C (scaled, feature-selected: a
            windowed dataset's `data_x`, or each series of a short-term dataset). Constructed from one
            2-D array or a sequence of them. The loader's lookback windows of a segment of n rows are
            `segment[i : i + seq_len]` for i < n - seq_len - pred_len + 1.
        cache_dir: a folder where models may cache statistics derived from the split (None: no cache).
        fingerprint: sha256 of the segments (shapes, dtype and bytes; for one segment, of that array alone),
            filled in when not given. It fixes the data file's content, the split borders, the feature
            selection and the scaling, so it keys caches of statistics derived from the split.
    """

    segments: tuple[np.ndarray, ...]
    cache_dir: Path | None = None
    fingerprint: str = field(default="")

    def __post_init__(self) -> None:
        given = self.segments
        segments = (given,) if isinstance(given, np.ndarray) else tuple(given)
        if not segments:
            raise ValueError("TrainSplit needs at least one segment")
        for segment in segments:
            if segment.ndim != 2 or segment.shape[1] != segments[0].shape[1]:
                raise ValueError(f"TrainSplit segments must be [rows, C] with one C, got shapes "
                                 f"{[s.shape for s in segments]}")
        object.__setattr__(self, "segments", segments)
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", segments_fingerprint(segments))

    @property
    def data(self) -> np.ndarray:
        """The rows `[rows, C]` of a one-segment split (a split of several series has no single array)."""
        if len(self.segments) != 1:
            raise ValueError(f"this training split holds {len(self.segments)} separate series; read .segments")
        return self.segments[0]

    @property
    def channels(self) -> int:
        """C, the columns every segment has."""
        return self.segments[0].shape[1]

    @property
    def longest(self) -> int:
        """Rows of the longest segment."""
        return max(len(segment) for segment in self.segments)

    def n_windows(self, seq_len: int, pred_len: int) -> int:
        """Number of training windows the segments hold at these lengths (windows never cross segments)."""
        return sum(max(0, len(segment) - seq_len - pred_len + 1) for segment in self.segments)

    def lookback_windows(self, seq_len: int, pred_len: int, start: int = 0, stop: int | None = None,
                         segment: int = 0) -> np.ndarray:
        """Lookback windows `[n, seq_len, C]` number start..stop-1 of one segment (a strided view, no copy)."""
        rows = self.segments[segment]
        count = max(0, len(rows) - seq_len - pred_len + 1)
        stop = count if stop is None else min(stop, count)
        if count == 0:
            return np.empty((0, seq_len, rows.shape[1]), dtype=rows.dtype)
        windows = np.lib.stride_tricks.sliding_window_view(rows, seq_len, axis=0)  # [rows-L+1, C, L]
        return windows[start:stop].transpose(0, 2, 1)


def array_fingerprint(array: np.ndarray) -> str:
    """sha256 hex digest of an array's shape, dtype and bytes."""
    digest = hashlib.sha256(f"{array.shape}|{array.dtype.str}|".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def segments_fingerprint(segments: tuple[np.ndarray, ...]) -> str:
    """sha256 hex digest of the segments: for one, `array_fingerprint` of it (so a one-series split keeps the
    fingerprint recorded before splits had segments); for several, of their count and each one's digest."""
    if len(segments) == 1:
        return array_fingerprint(segments[0])
    digest = hashlib.sha256(f"segments|{len(segments)}|".encode())
    for segment in segments:
        digest.update(array_fingerprint(segment).encode())
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
        if len(split.segments) == 1:
            raise UserInputError(f"--seq_len {seq_len} + --pred_len {pred_len} is longer than the {split.longest} "
                                 f"rows of the training split given to {model}")
        raise UserInputError(f"--seq_len {seq_len} + --pred_len {pred_len} = {seq_len + pred_len} is longer than "
                             f"each of the {len(split.segments)} training series given to {model} (the longest "
                             f"has {split.longest} values); {model} reads its statistics from whole windows, so "
                             "at least one series must hold seq_len + pred_len values")
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
