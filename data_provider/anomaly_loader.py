"""TSLib's anomaly-detection datasets (PSM, MSL, SMAP, SMD, SWaT): sliding windows over a standardised
multivariate series, read from the published files (layout: `data_provider.registry.ANOMALY_DATASETS`).

Splits, as TSLib's segment loaders (window length L = --seq_len, stride s: 100 for SMD, 1 otherwise):
    train  windows of the whole training series, stride s
    val    windows of the last 20% of the training series, stride s (it overlaps train, as in TSLib)
    test   windows of the test series, stride s, with their labels
    thre   non-overlapping windows of the test series (stride L), with their labels
The scaler is fit on the training series. NaNs in the csv files become 0 (numpy's nan_to_num), as TSLib.
Items are (x `[L, C]` float32, labels `[L]` float32); train and val carry the first L test labels as a
placeholder, as TSLib does (they are never read).
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler
from torch.utils.data import Dataset

from data_provider.registry import anomaly_files
from utils.errors import UserInputError

__all__ = ["MSLSegLoader", "PSMSegLoader", "SMAPSegLoader", "SMDSegLoader", "SWATSegLoader", "SegmentDataset"]

logger = logging.getLogger(__name__)

FLAGS = ("train", "val", "test", "thre")
VAL_START = 0.8


class SegmentDataset(Dataset):
    """Windows over (train `[T, C]`, test `[T', C]`, test labels `[T']`), TSLib's four splits.

    Subclasses set `name` (the --data key) and `step` (the stride), and implement `read` on the
    files listed in the registry.
    """

    name = ""
    step = 1

    def __init__(self, args: argparse.Namespace | None, root_path: str, flag: str = "train",
                 size: list[int] | None = None, win_size: int | None = None, step: int | None = None,
                 **_unused: object) -> None:
        """win_size defaults to size[0] (--seq_len, what `build_dataset` passes as size)."""
        if flag not in FLAGS:
            raise ValueError(f"flag must be one of {', '.join(FLAGS)}, got {flag!r}")
        self.flag = flag
        self.win_size = int(win_size if win_size is not None else size[0])
        self.step = int(step if step is not None else type(self).step)
        self.root_path = root_path
        train, test, labels = self.read(anomaly_files(self.name, root_path))
        if len(labels) != len(test):
            raise UserInputError(f"--data {self.name}: {len(labels)} test labels for {len(test)} test steps in "
                                 f"{root_path}; the label file must have one row per test step")
        scaler = StandardScaler().fit(train)
        self.train = scaler.transform(train)
        self.test = scaler.transform(test)
        self.val = self.train[int(len(self.train) * VAL_START):]
        self.test_labels = np.asarray(labels, dtype=np.float32).reshape(-1)
        self.n_channels = self.train.shape[1]
        self.data_path = root_path
        logger.info("test: %s", self.test.shape)
        logger.info("train: %s", self.train.shape)
        if len(self._series()) < self.win_size:
            raise UserInputError(f"--seq_len {self.win_size} is longer than the {flag} series of {self.name} "
                                 f"({len(self._series())} steps); use a shorter --seq_len")

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(train `[T, C]`, test `[T', C]`, test labels `[T']`) from the files of `paths`."""
        raise NotImplementedError

    def _series(self) -> np.ndarray:
        return {"train": self.train, "val": self.val}.get(self.flag, self.test)

    def __len__(self) -> int:
        stride = self.win_size if self.flag == "thre" else self.step
        return (len(self._series()) - self.win_size) // stride + 1

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        start = index * (self.win_size if self.flag == "thre" else self.step)
        window = slice(start, start + self.win_size)
        if self.flag in ("train", "val"):
            return np.float32(self._series()[window]), self.test_labels[: self.win_size]
        return np.float32(self.test[window]), self.test_labels[window]


def _read_numeric_csv(path, drop_first: bool = False, drop_last: bool = False) -> np.ndarray:
    values = pd.read_csv(path).to_numpy()
    values = values[:, 1:] if drop_first else values
    values = values[:, :-1] if drop_last else values
    return np.nan_to_num(values.astype(np.float64))


class PSMSegLoader(SegmentDataset):
    """PSM: train.csv / test.csv (timestamp column dropped), test_label.csv (timestamp, label)."""

    name = "PSM"

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        train_path, test_path, label_path = paths
        labels = pd.read_csv(label_path).to_numpy()[:, 1:]
        return _read_numeric_csv(train_path, drop_first=True), _read_numeric_csv(test_path, drop_first=True), labels


class _NpySegLoader(SegmentDataset):
    """<NAME>_train.npy `[T, C]`, <NAME>_test.npy `[T', C]`, <NAME>_test_label.npy `[T']`."""

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        train_path, test_path, label_path = paths
        return np.load(train_path), np.load(test_path), np.load(label_path)


class MSLSegLoader(_NpySegLoader):
    name = "MSL"


class SMAPSegLoader(_NpySegLoader):
    name = "SMAP"


class SMDSegLoader(_NpySegLoader):
    """SMD: TSLib's default stride 100, for every split."""

    name = "SMD"
    step = 100


class SWATSegLoader(SegmentDataset):
    """SWaT: swat_train2.csv (its last column dropped) and swat2.csv (last column = label)."""

    name = "SWAT"

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        train_path, test_path = paths
        test = pd.read_csv(test_path).to_numpy()
        return (_read_numeric_csv(train_path, drop_last=True), np.nan_to_num(test[:, :-1].astype(np.float64)),
                test[:, -1])
