"""TSLib's anomaly-detection datasets (PSM, MSL, SMAP, SMD, SWaT): sliding windows over a standardised
multivariate series, read from the published files (layout: `data_provider.registry.ANOMALY_DATASETS`).

Splits, as TSLib's segment loaders (window length L = --seq_len, stride s: 100 for SMD, 1 otherwise):
    train  windows of the whole training series, stride s
    val    windows of the last 20% of the training series, stride s (it overlaps train, as in TSLib)
    test   windows of the test series, stride s, with their labels
    thre   non-overlapping windows of the test series (stride L), with their labels
The scaler is fit on the training series. NaNs in the csv files become 0, as TSLib; everything else a
file could hold that TSLib would train on silently or crash on (text cells, inf, values whose square overflows float32,
NaN in an `.npy`, 1-D or object arrays, train/test channel mismatch, labels that are not one 0/1 column
with one row per test step) is refused in one line naming the file.
Items are (x `[L, C]` float32, labels `[L]` float32); train and val carry the first L test labels as a
placeholder, as TSLib does (they are never read). Under `--protocol strict` the train and val splits never
open the test files (their existence is checked) and carry zeros as that placeholder: the test series is read
once, by the test split after training.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler
from torch.utils.data import Dataset

from data_provider.float32_range import first_beyond_float32, unusable_reason
from data_provider.protocol import is_strict
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
                 data_path: str = "", **_unused: object) -> None:
        """win_size defaults to size[0] (--seq_len, what `build_dataset` passes as size); data_path is read by the
        formats whose file name is not fixed (data_provider/anomaly_csv.py)."""
        if flag not in FLAGS:
            raise ValueError(f"flag must be one of {', '.join(FLAGS)}, got {flag!r}")
        self.flag = flag
        self.args = args
        self.win_size = int(win_size if win_size is not None else size[0])
        self.step = int(step if step is not None else type(self).step)
        self.root_path = root_path
        paths = self.files(root_path, data_path)
        if is_strict(args) and flag in ("train", "val"):
            train = self.read_train(paths)
            check_series(train, "train", self.name, root_path)
            test, labels = train[:0], np.zeros(self.win_size)
        else:
            train, test, labels = self.read(paths)
            check_series_pair(train, test, self.name, root_path)
            labels = check_labels(labels, len(test), f"the test labels of --data {self.name} in {root_path}")
        #: fit on the training series; a model card saves its statistics for scoring new files
        self.scaler = StandardScaler().fit(train)
        self.train = self.scaler.transform(train)
        self.test = self.scaler.transform(test) if len(test) else test
        self.val = self.train[int(len(self.train) * VAL_START):]
        self.test_labels = labels.astype(np.float32)
        self.n_channels = self.train.shape[1]
        #: channel names in order: the csv header where the files have one, else "0".."C-1"
        self.columns = self.channel_names(paths) or [str(i) for i in range(self.n_channels)]
        self.data_path = root_path
        logger.info("test: %s", self.test.shape)
        logger.info("train: %s", self.train.shape)
        if len(self._series()) < self.win_size:
            raise UserInputError(f"--seq_len {self.win_size} is longer than the {flag} series of {self.name} "
                                 f"({len(self._series())} steps); use a shorter --seq_len")

    def files(self, root_path: str, data_path: str) -> list[Path]:
        """The dataset's files under `root_path` (the registry's, in order); one line naming what is missing."""
        return anomaly_files(self.name, root_path)

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(train `[T, C]`, test `[T', C]`, test labels `[T']`) from the files of `paths`."""
        raise NotImplementedError

    def read_train(self, paths: list) -> np.ndarray:
        """The train series `[T, C]` alone, from the train file of `paths` (strict train and val splits)."""
        raise NotImplementedError

    def channel_names(self, paths: list) -> list[str] | None:
        """The names of the C channels in the training file's header; None for files without names (.npy)."""
        return None

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


def _read_frame(path) -> pd.DataFrame:
    """The csv at `path` as a DataFrame; one line when it is empty or unreadable."""
    try:
        frame = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise UserInputError(f"{path}: cannot be read as a csv table ({str(err).splitlines()[0]}); "
                             "restore the published file") from None
    if frame.empty:
        raise UserInputError(f"{path}: holds a header but no rows; restore the published file")
    return frame


def _numeric_columns(frame: pd.DataFrame, path) -> np.ndarray:
    """`frame` as float64 `[T, C]`; a text cell is one line naming its row and column."""
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            coerced = pd.to_numeric(frame[column], errors="coerce")
            bad = np.flatnonzero((coerced.isna() & frame[column].notna()).to_numpy())
            if bad.size:
                i = int(bad[0])
                raise UserInputError(f"{path}: row {i + 2}, column {column!r} holds the text {frame[column].iloc[i]!r}"
                                     " where a number belongs; fix the file")
    return frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)


def _read_numeric_csv(path, drop_first: bool = False, drop_last: bool = False) -> np.ndarray:
    """The numeric columns of a csv `[T, C]`, NaN replaced by 0 as TSLib (inf is kept for the range check)."""
    frame = _read_frame(path)
    frame = frame.iloc[:, 1:] if drop_first else frame
    frame = frame.iloc[:, :-1] if drop_last else frame
    values = _numeric_columns(frame, path)
    return np.where(np.isnan(values), 0.0, values)


def _load_npy(path) -> np.ndarray:
    """A numeric `.npy` array (never unpickled); one line for object arrays and unreadable files."""
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        raise UserInputError(f"{path}: not a numeric numpy array file ({str(err).splitlines()[0]}); "
                             "restore the published file") from None
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise UserInputError(f"{path}: holds {array.dtype} values, not numbers; restore the published file")
    return array


def _check_values(values: np.ndarray, what: str) -> None:
    """Every value finite and small enough for float32 to square (the models compute in float32)."""
    found = first_beyond_float32(values)
    if found is not None:
        row, col, _ = found
        value = float(values[row, col])
        raise UserInputError(f"{what}: time step {row} (from 0), channel {col} holds {value!r}, "
                             f"{unusable_reason(value, part='channel')}")


def check_series(values: np.ndarray, split: str, name: str, root_path: str) -> None:
    """One series `[T, C]`: 2-D, values finite and small enough for float32 to square."""
    if values.ndim != 2:
        raise UserInputError(f"--data {name}: the {split} series in {root_path} has shape {values.shape}; "
                             "it must be 2-D [time steps, channels]")
    _check_values(values.astype(np.float64), f"--data {name}: the {split} series in {root_path}")


def check_series_pair(train: np.ndarray, test: np.ndarray, name: str, root_path: str) -> None:
    """train `[T, C]` and test `[T', C]`: 2-D, same channels, values finite and small enough for float32 to square."""
    for split, values in (("train", train), ("test", test)):
        check_series(values, split, name, root_path)
    if train.shape[1] != test.shape[1]:
        raise UserInputError(f"--data {name}: the train series in {root_path} has {train.shape[1]} channels and "
                             f"the test series {test.shape[1]}; both files must hold the same channels")


def check_labels(labels: np.ndarray, steps: int, what: str) -> np.ndarray:
    """Labels as a `[steps]` 0/1 array: one column of 0 or 1, one row per test step, else one line."""
    labels = np.asarray(labels)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise UserInputError(f"{what} have shape {labels.shape}; they must be one column of 0/1, one row per "
                             "test step")
    if len(labels) != steps:
        raise UserInputError(f"{what}: {len(labels)} labels for {steps} test steps; the label file must have one "
                             "row per test step")
    numeric = pd.to_numeric(pd.Series(labels), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isin(numeric, (0.0, 1.0)))
    if bad.size:
        raise UserInputError(f"{what}: row {int(bad[0])} holds {labels[bad[0]]!r}; every label must be 0 (normal) "
                             f"or 1 (anomaly) ({bad.size} such rows)")
    return numeric


class PSMSegLoader(SegmentDataset):
    """PSM: train.csv / test.csv (timestamp column dropped), test_label.csv (timestamp, label)."""

    name = "PSM"

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        train_path, test_path, label_path = paths
        labels = _read_frame(label_path).to_numpy()[:, 1:]
        return self.read_train(paths), _read_numeric_csv(test_path, drop_first=True), labels

    def read_train(self, paths: list) -> np.ndarray:
        return _read_numeric_csv(paths[0], drop_first=True)

    def channel_names(self, paths: list) -> list[str]:
        return [str(c).strip() for c in pd.read_csv(paths[0], nrows=0).columns[1:]]


class _NpySegLoader(SegmentDataset):
    """<NAME>_train.npy `[T, C]`, <NAME>_test.npy `[T', C]`, <NAME>_test_label.npy `[T']`."""

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        train_path, test_path, label_path = paths
        return _load_npy(train_path), _load_npy(test_path), _load_npy(label_path)

    def read_train(self, paths: list) -> np.ndarray:
        return _load_npy(paths[0])


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
        test = _read_frame(test_path)
        return self.read_train(paths), _read_numeric_csv(test_path, drop_last=True), test.iloc[:, -1].to_numpy()

    def read_train(self, paths: list) -> np.ndarray:
        return _read_numeric_csv(paths[0], drop_last=True)

    def channel_names(self, paths: list) -> list[str]:
        return [str(c).strip() for c in pd.read_csv(paths[0], nrows=0).columns[:-1]]
