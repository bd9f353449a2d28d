"""`--data` → dataset class, and the DataLoader settings of TSLib (contract §3.1).

Loader settings, per split: shuffle for train and val (not test); drop_last False everywhere, so every
test window is scored (the Informer-era drop_last=True silently dropped up to batch_size−1 windows);
batch_size = --batch_size for all splits. Workers: ``min(--num_workers, os.cpu_count())`` because
TSLib's default of 10 oversubscribes small machines and the extra processes only cost start-up time;
they are kept alive between epochs (persistent_workers) when there are any, and leave SIGTERM/SIGINT to the main
process (a signal to the process group stops the run in one line, not with a killed-worker stack trace).

The experiment builds datasets with `build_dataset` and passes `make_loader` its own sampler (exp/samplers.py): a resumable, distributable shuffle for train
and contiguous shards for val/test. Such loaders also get a private `torch.Generator`, so creating an
iterator (which draws the workers' base seed) never advances the global torch RNG that dropout uses.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from data_provider.anomaly_csv import AnomalyCSVLoader, MITDBSegLoader, YahooSegLoader
from data_provider.anomaly_loader import (
    MSLSegLoader,
    PSMSegLoader,
    SMAPSegLoader,
    SMDSegLoader,
    SWATSegLoader,
)
from data_provider.data_loader import (
    Dataset_Custom,
    Dataset_ETT_hour,
    Dataset_ETT_minute,
    Dataset_PEMS,
    Dataset_Solar,
    WindowDataset,
)
from data_provider.m4 import Dataset_M4
from data_provider.short_term_files import Dataset_ShortTermFile
from data_provider.uea import UEAloader
from utils.errors import UserInputError
from utils.flag_defaults import flag_default
from utils.train_split import TrainSplit

__all__ = ["DATA_DICT", "build_dataset", "build_train_split", "check_channels", "data_provider", "make_loader"]

logger = logging.getLogger(__name__)

DATA_DICT: dict[str, type[WindowDataset]] = {
    "ETTh1": Dataset_ETT_hour,
    "ETTh2": Dataset_ETT_hour,
    "ETTm1": Dataset_ETT_minute,
    "ETTm2": Dataset_ETT_minute,
    "custom": Dataset_Custom,
    "Solar": Dataset_Solar,
    "PEMS": Dataset_PEMS,
    "m4": Dataset_M4,
    "short_term_csv": Dataset_ShortTermFile,
    "tsf": Dataset_ShortTermFile,
    "PSM": PSMSegLoader,
    "MSL": MSLSegLoader,
    "SMAP": SMAPSegLoader,
    "SMD": SMDSegLoader,
    "SWAT": SWATSegLoader,
    "anomaly_csv": AnomalyCSVLoader,
    "Yahoo": YahooSegLoader,
    "MITDB": MITDBSegLoader,
    "UEA": UEAloader,
}


def data_provider(args: argparse.Namespace, flag: str) -> tuple[Dataset, DataLoader]:
    """Build the `flag` split ('train', 'val' or 'test') of ``--data`` and TSLib's DataLoader for it.

    Batches are (x ``[B, L, C]``, y ``[B, Ll+H, C]``, x_mark ``[B, L, F]``, y_mark ``[B, Ll+H, F]``).
    Raises UserInputError for an unknown --data and for every data problem the dataset detects.
    """
    dataset = build_dataset(args, flag)
    return dataset, make_loader(args, dataset, flag)


def build_dataset(args: argparse.Namespace, flag: str) -> WindowDataset:
    """The `flag` split of ``--data`` (logs its number of windows, as TSLib prints it)."""
    if args.data not in DATA_DICT:
        raise UserInputError(f"--data {args.data!r} is not supported; choose one of {', '.join(DATA_DICT)}")
    dataset = DATA_DICT[args.data](
        args,
        root_path=args.root_path,
        data_path=args.data_path,
        flag=flag,
        size=[args.seq_len, args.label_len, args.pred_len],
        features=args.features,
        target=args.target,
        timeenc=1 if args.embed == "timeF" else 0,
        freq=args.freq,
        seasonal_patterns=getattr(args, "seasonal_patterns", flag_default("seasonal_patterns")),
    )
    logger.info("%s %d", flag, len(dataset))
    return dataset


def build_train_split(args: argparse.Namespace, cache_dir: Path | None = None) -> TrainSplit:
    """The training split of a forecasting ``--data`` as models built from its statistics read it
    (`utils.train_split`): the rows of a windowed dataset, or every series of a short-term one (M4)."""
    return TrainSplit(build_dataset(args, "train").series_arrays(), cache_dir=cache_dir)


def leave_stop_signals_to_the_main_process(worker_id: int) -> None:
    """A DataLoader worker's start: ignore SIGTERM and SIGINT. A signal to the whole process group (Ctrl-C,
    `timeout`, a cluster scheduler) then reaches the main process alone, which stops through its saved-state path
    (exp/training_guards.py) and ends its workers, instead of failing the pass on a killed worker with a stack
    trace. A worker still exits when the main process dies (PyTorch's workers watch their parent)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def make_loader(args: argparse.Namespace, dataset: Dataset, flag: str, sampler: Sampler | None = None,
                seed: int | None = None) -> DataLoader:
    """DataLoader over `dataset`; `sampler` replaces TSLib's shuffle setting (see the module docstring).

    seed: the run's seed for the loader's private generator (None: --seed)."""
    generator = None
    if sampler is not None:
        generator = torch.Generator().manual_seed(args.seed if seed is None else seed)
    workers = max(0, min(args.num_workers, os.cpu_count() or 1))
    return DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=flag != "test" if sampler is None else None,
        sampler=sampler,
        generator=generator,
        num_workers=workers,
        drop_last=False,
        persistent_workers=workers > 0,
        worker_init_fn=leave_stop_signals_to_the_main_process if workers > 0 else None,
        # A dataset whose samples need batching of their own (variable-length series) provides it.
        collate_fn=getattr(dataset, "collate_fn", None),
    )


def check_channels(args: argparse.Namespace, dataset: WindowDataset) -> None:
    """Reject --enc_in / --dec_in / --c_out values that do not fit the file and --features.

    M: all three equal the file's channel count C. S: all three are 1. MS: enc_in = dec_in = C, and
    c_out is 1 or C (TSLib scripts use both; the loss reads the last channel either way).
    """
    total = dataset.n_channels
    expected_in = 1 if args.features == "S" else total
    if args.features == "M":
        fix = f"--enc_in {total} --dec_in {total} --c_out {total}"
        c_out_ok = (total,)
    elif args.features == "S":
        fix = "--enc_in 1 --dec_in 1 --c_out 1"
        c_out_ok = (1,)
    else:
        fix = f"--enc_in {total} --dec_in {total} --c_out 1 (or {total})"
        c_out_ok = (1, total)
    described = f"--features {args.features} on {dataset.data_path} ({total} channels) needs {fix}"
    for flag in ("enc_in", "dec_in"):
        value = getattr(args, flag)
        if value != expected_in:
            raise UserInputError(f"--{flag} {value} does not match the data: {described}")
    if args.c_out not in c_out_ok:
        raise UserInputError(f"--c_out {args.c_out} does not match the data: {described}")
