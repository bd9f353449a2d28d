"""UEA multivariate classification archive (`.ts` files), TSLib's `UEAloader` contract (`--data UEA`).

`--root_path` holds `<Name>_TRAIN.ts` and `<Name>_TEST.ts`, with `<Name>` = `--model_id` (TSLib's
convention). Under `--protocol tslib` the train split reads the TRAIN file; val and test both read the TEST
file, as TSLib's classification experiment does (the archive has no validation split). Under `--protocol
strict` train and val are a seeded, stratified split of the TRAIN file (`validation_split`: val holds
`VAL_FRACTION` of every class) and only test reads the TEST file (whose existence every split checks).

Per sample, as TSLib: a series whose dimensions differ in length has every dimension longer than 256
steps subsampled by 2; missing values (NaN) are filled by linear interpolation along time (constant at
the ends). A dimension of a sample with no value at all, and inf or values whose square overflows float32, are
one-line errors naming the file, sample and dimension (TSLib trains on them and its loss turns NaN). Each feature is standardised, (x − mean) / (std + eps) with the sample std over every time
step of every sample; the statistics come from the TRAIN file (strict: its train share; TSLib uses each
split's own statistics).
EthanolConcentration additionally has each sample standardised per channel over time (TSLib's special
case, keyed on the root path; TSLib takes that std across channels instead).

Samples have their own lengths; `collate_fn` pads a batch with zeros (or truncates) to `max_len` =
`--seq_len`, which the experiment sets to the longest series of the two files, and returns the padding
mask (1 = observed step).
"""

from __future__ import annotations

import argparse
import functools
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from torch.utils.data import Dataset

from data_provider.float32_range import first_beyond_float32, unusable_reason
from data_provider.protocol import VAL_FRACTION, is_strict
from utils.errors import MissingDataError, UserInputError

logger = logging.getLogger(__name__)

__all__ = ["UEAloader", "check_sample", "interpolate_missing", "normalise_sample", "pad_batch", "read_ts",
           "read_ts_samples", "subsample", "validation_split"]

# Split of the experiment → the archive file that serves it (TSLib's protocol, then the strict one).
SPLIT_FILE = {"train": "TRAIN", "val": "TEST", "test": "TEST"}
STRICT_SPLIT_FILE = {"train": "TRAIN", "val": "TRAIN", "test": "TEST"}
UEA_ARCHIVE_URL = "https://www.timeseriesclassification.com/dataset.php"

# TSLib's thresholds for series whose dimensions differ in length.
SUBSAMPLE_LIMIT = 256
SUBSAMPLE_FACTOR = 2


def subsample(series: np.ndarray, limit: int = SUBSAMPLE_LIMIT, factor: int = SUBSAMPLE_FACTOR) -> np.ndarray:
    """Every `factor`-th step of a 1-D series longer than `limit`; shorter series unchanged."""
    return series[::factor] if len(series) > limit else series


def interpolate_missing(series: np.ndarray) -> np.ndarray:
    """Fill NaNs of a 1-D series by linear interpolation in the step index; leading/trailing NaNs take
    the nearest observed value. An all-NaN series stays NaN (nothing to interpolate from)."""
    missing = np.isnan(series)
    if not missing.any() or missing.all():
        return series
    steps = np.arange(len(series))
    out = series.copy()
    out[missing] = np.interp(steps[missing], steps[~missing], series[~missing])
    return out


def _load_ts(path: Path):
    """sktime's reader, imported here so forecasting runs never need sktime."""
    try:
        from sktime.datasets import load_from_tsfile_to_dataframe
    except ImportError as err:
        raise UserInputError(f"reading {path} needs sktime (UEA .ts reader): pip install sktime") from err
    try:
        return load_from_tsfile_to_dataframe(str(path), return_separate_X_and_y=True,
                                             replace_missing_vals_with="NaN")
    except Exception as err:  # sktime raises its own IOError subclasses for malformed files
        raise UserInputError(f"{path} is not a readable UEA .ts file: {err}") from err


def read_ts(path: str | Path) -> tuple[list[np.ndarray], list[str]]:
    """The samples of a `.ts` file as float64 arrays `[T_i, C]` and their labels (as strings).

    Dimensions of unequal length are subsampled (`subsample`); if they still differ the file cannot be
    stacked into `[T, C]` and a UserInputError names it. NaNs are interpolated (`interpolate_missing`).
    """
    samples, labels = read_ts_samples(path)
    if labels is None:
        raise UserInputError(f"{path} holds no class labels (@classLabel false); the TRAIN and TEST files of a "
                             "classification run need them")
    return samples, labels


def read_ts_samples(path: str | Path) -> tuple[list[np.ndarray], list[str] | None]:
    """`read_ts` for files with or without class labels: (samples, labels, or None for `@classLabel false`)."""
    path = Path(path)
    stat = path.stat()
    samples, labels = _read_ts_cached(str(path), stat.st_mtime_ns, stat.st_size)
    return list(samples), None if labels is None else list(labels)


# The experiment builds each split several times (model size, train/val/test, test again); parsing is the
# slow part, so parsed files are kept, keyed by path, modification time and size. Arrays are never mutated.
@functools.lru_cache(maxsize=8)
def _read_ts_cached(path_str: str, mtime_ns: int, size: int) -> tuple[tuple[np.ndarray, ...], tuple[str, ...] | None]:
    path = Path(path_str)
    loaded = _load_ts(path)
    # sktime returns the frame alone for a file without class labels.
    frame, labels = loaded if isinstance(loaded, tuple) else (loaded, None)
    cells = frame.to_numpy()  # [N, C] of pandas Series
    samples = []
    for index, row in enumerate(cells):
        dims = [cell.to_numpy(dtype=np.float64) for cell in row]
        if len({len(d) for d in dims}) > 1:
            dims = [subsample(d) for d in dims]
            if len({len(d) for d in dims}) > 1:
                raise UserInputError(f"{path}: sample {index} has dimensions of lengths "
                                     f"{sorted({len(d) for d in dims})}; they must be equal per sample")
        sample = np.stack([interpolate_missing(d) for d in dims], axis=1)  # [T_i, C]
        check_sample(sample, path, index)
        sample.flags.writeable = False
        samples.append(sample)
    return tuple(samples), None if labels is None else tuple(str(label) for label in labels)


def check_sample(sample: np.ndarray, path: Path, index: int) -> None:
    """Reject a sample the float32 model cannot use, naming the file, sample and dimension: a dimension with no
    observed value (interpolation leaves it NaN, and every loss it reaches becomes NaN), and inf or values
    whose square overflows float32."""
    empty = np.isnan(sample).all(axis=0)  # [C]
    if empty.any():
        raise UserInputError(f"{path}: sample {index} (from 0), dimension {int(np.argmax(empty))} has no value at all "
                             "(every step is missing), so it cannot be interpolated; fill or drop that sample in the "
                             "file")
    found = first_beyond_float32(sample)
    if found is not None:
        step, dim, _ = found
        value = float(sample[step, dim])
        raise UserInputError(f"{path}: sample {index} (from 0), dimension {dim}, step {step} holds {value!r}, "
                             f"{unusable_reason(value, part='dimension')}")


def validation_split(labels: list[str], seed: int, path: Path, fraction: float = VAL_FRACTION
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(train indices, validation indices), each sorted, of a stratified split of the TRAIN samples (scikit-learn's
    `train_test_split`, `random_state` = seed): validation gets max(round(fraction · N), number of classes) samples
    and every class its share of them. A class with fewer than 2 samples cannot be in both parts: one line."""
    counts = Counter(labels)
    n_val = max(int(round(fraction * len(labels))), len(counts))
    rare = sorted(name for name, count in counts.items() if count < 2)
    if rare or len(labels) - n_val < len(counts):
        raise UserInputError(f"{path}: --protocol strict validates on a stratified {fraction:.0%} of the TRAIN "
                             f"samples, which needs at least 2 samples of every class and more samples than "
                             f"{n_val} + {len(counts)} classes (class {rare[0] if rare else '-'!r} has "
                             f"{counts[rare[0]] if rare else '-'}, {len(labels)} samples); use --protocol tslib")
    train, val = train_test_split(np.arange(len(labels)), test_size=n_val, stratify=labels, random_state=seed)
    return np.sort(train), np.sort(val)


def normalise_sample(sample: np.ndarray, mean: np.ndarray, std: np.ndarray, per_sample: bool) -> np.ndarray:
    """(sample − mean) / (std + eps) per feature, `[T_i, C]`; with `per_sample` each channel is then standardised
    over the sample's own steps, (z − mean_t z) / sqrt(var_t z + 1e-5) (EthanolConcentration)."""
    out = (sample - mean) / (std + np.finfo(float).eps)  # [T_i, C]
    if per_sample:
        out = out - out.mean(axis=0, keepdims=True)
        out = out / np.sqrt(out.var(axis=0, keepdims=True) + 1e-5)
    return out


def pad_batch(series: list[torch.Tensor], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero-pad (or truncate) `[T_i, C]` series to `[B, max_len, C]` and the padding mask `[B, max_len]`
    (1.0 where a step is observed, 0.0 where it is padding)."""
    x = torch.zeros(len(series), max_len, series[0].shape[-1], dtype=torch.float32)
    mask = torch.zeros(len(series), max_len, dtype=torch.float32)
    for i, s in enumerate(series):
        end = min(len(s), max_len)
        x[i, :end] = s[:end]
        mask[i, :end] = 1.0
    return x, mask


class UEAloader(Dataset):
    """One split of a UEA dataset: items are (x `[T_i, C]` float32, label `[1]` int64).

    Attributes the experiment reads: `max_seq_len` (longest series of this file), `n_channels` (C),
    `class_names` (sorted labels of the TRAIN file; index = class id), `max_len` (the padding length of
    `collate_fn`, = `--seq_len` when built).
    """

    def __init__(self, args: argparse.Namespace, root_path: str, flag: str = "train", **_unused) -> None:
        if flag not in SPLIT_FILE:
            raise ValueError(f"flag must be one of {', '.join(SPLIT_FILE)}, got {flag!r}")
        if args.task_name != "classification":
            raise UserInputError(f"--data UEA holds classification data: use it with --task_name classification, "
                                 f"not {args.task_name}")
        self.root_path = root_path
        self.name = args.model_id
        self.flag = flag
        strict = is_strict(args)
        self.data_path = str(self._path((STRICT_SPLIT_FILE if strict else SPLIT_FILE)[flag]))
        self._path("TEST")  # its existence only: a strict run reads it after training
        train, train_labels = read_ts(self._path("TRAIN"))
        #: the longest series of the TRAIN file (strict seq_len)
        self.longest_train = max(len(s) for s in train)
        self.class_names = sorted(set(train_labels))
        if strict:
            fit, val = validation_split(train_labels, args.seed, self._path("TRAIN"))
            part = val if flag == "val" else fit
            samples, labels = [train[i] for i in part], [train_labels[i] for i in part]
            # Statistics below come from the train share only.
            train = [train[i] for i in fit]
        if flag == "test" or (flag == "val" and not strict):
            samples, labels = read_ts(self._path("TEST"))
        elif not strict:
            samples, labels = train, train_labels
        unknown = sorted(set(labels) - set(self.class_names))
        if unknown:
            raise UserInputError(f"{self.data_path} has labels {unknown} that the TRAIN file never uses")
        n_channels = {s.shape[1] for s in train + samples}
        if len(n_channels) > 1:
            raise UserInputError(f"{self.name}: the TRAIN and TEST files have different numbers of dimensions "
                                 f"{sorted(n_channels)}")
        self.n_channels = n_channels.pop()
        self.max_seq_len = max(len(s) for s in samples)
        self.max_len = args.seq_len
        # Feature statistics over every step of every TRAIN sample (ddof 1, as pandas' std).
        stacked = np.concatenate(train, axis=0)  # [sum T_i, C]
        mean, std = np.nanmean(stacked, axis=0), np.nanstd(stacked, axis=0, ddof=1)
        per_sample = "EthanolConcentration" in str(root_path)
        #: the TRAIN statistics and whether each sample is also standardised on its own (a model card saves them)
        self.feature_mean, self.feature_std, self.per_sample_norm = mean, std, per_sample
        self.series = [torch.from_numpy(normalise_sample(s, mean, std, per_sample)).float() for s in samples]
        index = {name: i for i, name in enumerate(self.class_names)}
        self.labels = torch.tensor([[index[label]] for label in labels], dtype=torch.long)  # [N, 1]

    def _path(self, split: str) -> Path:
        path = Path(self.root_path) / f"{self.name}_{split}.ts"
        if not path.is_file():
            raise MissingDataError(
                f"{path} not found: put {self.name}_TRAIN.ts and {self.name}_TEST.ts (UEA archive, "
                f"{UEA_ARCHIVE_URL}) in --root_path {self.root_path}; --model_id names the dataset")
        return path

    def __len__(self) -> int:
        return len(self.series)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.series[index], self.labels[index]

    def collate_fn(self, items: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, ...]:
        """(x `[B, max_len, C]`, labels `[B, 1]`, padding mask `[B, max_len]`), TSLib's batch order."""
        series, labels = zip(*items, strict=True)
        x, mask = pad_batch(list(series), self.max_len)
        return x, torch.stack(labels), mask
