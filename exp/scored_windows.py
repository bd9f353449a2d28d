"""The test windows a forecasting run scores, and how it reads them, from its arguments alone.

A long-term (or zero-shot) run scores the windows of its test split in file order (every --test_every-th one
for a zero-shot run, `data_provider/window_subset.py`), each process (rank) a contiguous shard of them
(`exp.samplers.ShardSampler`), --batch_size windows a batch (`data_provider.data_factory.make_loader`); it scores
the channels from `scored_from` on (the last one for --features MS), in original units when `inverts` says
so (--inverse on scaled data). `Exp_Long_Term_Forecast` scores its model and the naive forecasters on these
batches, and `exp.naive_forecast.naive_test_scores` replays them for a finished run without its model, so both
add the same numbers in the same order.
"""

from __future__ import annotations

import argparse

import numpy as np
from torch.utils.data import DataLoader, Dataset

from data_provider.data_factory import build_dataset, make_loader
from data_provider.window_subset import EveryKthWindow
from exp.samplers import ShardSampler
from utils.flag_defaults import flag_default

__all__ = ["inverts", "scored_from", "shard_loader", "scored_test_windows", "to_original_units", "windows_every"]


def windows_every(dataset: Dataset, every: int) -> Dataset:
    """`dataset`, or its windows 0, k, 2k, ... for `every` = k > 1 (zero-shot --test_every)."""
    return dataset if every == 1 else EveryKthWindow(dataset, every)


def scored_test_windows(args: argparse.Namespace) -> Dataset:
    """The test windows `args` scores: the test split of --data, every --test_every-th window of it."""
    every = getattr(args, "test_every", flag_default("test_every"))
    return windows_every(build_dataset(args, "test"), every)


def shard_loader(args: argparse.Namespace, dataset: Dataset, flag: str, rank: int = 0, world_size: int = 1,
                 seed: int | None = None, global_draws: int = 0, shuffle: bool = False) -> DataLoader:
    """The evaluation loader of `rank`'s contiguous shard of `dataset` in window order, --batch_size a batch.

    seed: the run's seed (None: --seed); global_draws, shuffle: TSLib's random stream (`ShardSampler`)."""
    sampler = ShardSampler(len(dataset), rank, world_size, global_draws=global_draws, shuffle=shuffle)
    return make_loader(args, dataset, flag, sampler, seed=seed)


def scored_from(args: argparse.Namespace) -> int:
    """The first scored channel: -1 (the target, last) for --features MS, else 0 (every channel)."""
    return -1 if args.features == "MS" else 0


def inverts(dataset: Dataset, args: argparse.Namespace) -> bool:
    """Whether scores are taken in original units: --inverse on a dataset that standardised its values."""
    return bool(dataset.scale and args.inverse)


def to_original_units(dataset: Dataset, array: np.ndarray) -> np.ndarray:
    """De-standardise a ``[..., C]`` array with the dataset's scaler (fit on its training rows)."""
    shape = array.shape
    return dataset.inverse_transform(array.reshape(-1, shape[-1])).reshape(shape)
