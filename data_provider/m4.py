"""M4 as TSLib reads it (N-BEATS's files): `Dataset_M4` for `--data m4`, and the M4 files themselves.

Files, in `--root_path` (TSLib: ``./dataset/m4/``):

=====================  ==========================================================================
M4-info.csv            one row per series: M4id, category, Frequency, Horizon, SP, StartingDate
training.npz           the training histories, one float array per series in M4-info's order
test.npz               the test values (Horizon of them) per series, same order
submission-Naive2.csv  the Naive2 benchmark forecasts (id, F1..F48); only the summary (OWA) reads it
=====================  ==========================================================================

Despite their suffix, N-BEATS writes the two ``.npz`` files with `ndarray.dump` (a pickled 1-D object
array of float arrays), so reading them unpickles: use files from a source you trust. Plain ``.npy``
and single-array ``.npz`` files with the same content are read too.

Per `--seasonal_patterns` S: horizon H, seq_len = 2·H and label_len = H (set by the experiment),
frequency m and history size k (training windows end in the last k·H steps):

    Yearly 6/1/1.5, Quarterly 8/4/1.5, Monthly 18/12/1.5, Weekly 13/1/10, Daily 14/1/10, Hourly 48/24/10

A training item draws a cut point c uniformly from [max(1, T − int(k·H)), T) with numpy's global RNG
(as TSLib) and returns (insample, outsample, insample_mask, outsample_mask): insample `[L, 1]` = the
up to L values before c, zero-padded on the left; outsample `[Ll + H, 1]` = values c − Ll .. c + H,
zero-padded on the right (and on the left when c < Ll, where TSLib returns an empty item); the masks
are 1 on real values. They stand where (x, y, x_mark, y_mark) stand
for the other datasets: M4 has no time stamps. The 'val' and 'test' splits hold the test values; the
experiment forecasts from each training series' last window (`last_insample_window`). No scaling.
"""

from __future__ import annotations

import argparse
import logging
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from torch.utils.data import Dataset

from data_provider.fetch import fetch_command
from utils.errors import MissingDataError, UserInputError
from utils.m4_summary import M4_GROUPS
from utils.path_names import check_path_component

__all__ = ["FREQUENCIES", "HISTORY_SIZE", "HORIZONS", "M4_FILES", "SERIES_COUNTS", "Dataset_M4", "M4Data",
           "check_m4_args", "check_seasonal_patterns", "load_m4", "load_naive2", "m4_model_id_rest"]

logger = logging.getLogger(__name__)

HORIZONS = {"Yearly": 6, "Quarterly": 8, "Monthly": 18, "Weekly": 13, "Daily": 14, "Hourly": 48}
FREQUENCIES = {"Yearly": 1, "Quarterly": 4, "Monthly": 12, "Weekly": 1, "Daily": 1, "Hourly": 24}
HISTORY_SIZE = {"Yearly": 1.5, "Quarterly": 1.5, "Monthly": 1.5, "Weekly": 10, "Daily": 10, "Hourly": 10}
#: Number of series per group in the published M4 (100,000 in all).
SERIES_COUNTS = {"Yearly": 23000, "Quarterly": 24000, "Monthly": 48000, "Weekly": 359, "Daily": 4227,
                 "Hourly": 414}
M4_FILES = {"info": "M4-info.csv", "training": "training.npz", "test": "test.npz",
            "naive2": "submission-Naive2.csv"}
_INFO_COLUMNS = ("M4id", "SP", "Frequency", "Horizon")


def check_seasonal_patterns(value: str) -> str:
    """Return `value` when it names an M4 group, else raise a one-line UserInputError."""
    if value not in HORIZONS:
        raise UserInputError(f"--seasonal_patterns {value!r} is not an M4 group; valid choices: {', '.join(M4_GROUPS)}")
    return value


def m4_model_id_rest(model_id: str, seasonal_patterns: str) -> str:
    """What a model_id carries beyond TSLib's ``m4_<Group>`` (e.g. ``m4_Monthly_CAPS-official_s2021`` ->
    ``CAPS-official_s2021``): the experiment's subfolder of ``./m4_results/<model>/`` ("" for none)."""
    rest = re.sub(rf"(^|_){re.escape(seasonal_patterns)}(?=_|$)", "", model_id)
    return re.sub(r"^m4(?=_|$)", "", rest).strip("_")


def check_m4_args(args: argparse.Namespace) -> None:
    """Reject flag combinations M4 cannot run, in one line each (run.py calls this before any file is read).

    short_term_forecast needs --data m4 (TSLib crashes on other data, issues #79/#708), M4 needs
    short_term_forecast (the long-term loop would feed the masks to the models as time marks), and the
    series are univariate.
    """
    from utils.losses import LOSSES

    if args.task_name == "short_term_forecast" and args.data != "m4":
        raise UserInputError(f"--task_name short_term_forecast runs on M4 only (--data m4), not --data {args.data}; "
                             "for other data use --task_name long_term_forecast with a short --pred_len")
    if args.data != "m4":
        return
    if args.task_name != "short_term_forecast":
        raise UserInputError(f"--data m4 needs --task_name short_term_forecast, not {args.task_name}")
    check_seasonal_patterns(args.seasonal_patterns)
    rest = m4_model_id_rest(args.model_id, args.seasonal_patterns)
    if rest:
        check_path_component("--model_id", rest, "the ./m4_results folder")
    if args.loss not in LOSSES:
        raise UserInputError(f"--loss {args.loss!r} is not supported; valid choices: {', '.join(LOSSES)}")
    if args.enc_in != 1 or args.c_out != 1:
        raise UserInputError(f"M4 series are univariate: pass --enc_in 1 --c_out 1 (got --enc_in {args.enc_in} "
                             f"--c_out {args.c_out})")


def _require(root: Path, key: str) -> Path:
    path = root / M4_FILES[key]
    if not path.is_file():
        needed = ", ".join(M4_FILES[k] for k in ("info", "training", "test"))
        raise MissingDataError(
            f"M4 file {path} not found; put {needed} (and {M4_FILES['naive2']} for the OWA summary) in "
            f"{root}/ (TSLib's --root_path ./dataset/m4), e.g. with: {fetch_command('m4', root.parent)}")
    return path


def _read_series(path: Path) -> list[np.ndarray]:
    """The per-series float arrays of a training/test file (pickled object array, .npy or one-array .npz)."""
    try:
        loaded = np.load(path, allow_pickle=True)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError) as exc:
        raise UserInputError(f"M4 file {path} is not a numpy array file ({exc})") from exc
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            if len(loaded.files) != 1:
                raise UserInputError(f"M4 file {path} holds arrays {loaded.files}; expected exactly one")
            loaded = loaded[loaded.files[0]]
    return [np.asarray(v, dtype=np.float64) for v in loaded]


@dataclass(frozen=True)
class M4Data:
    """One M4 split: per series its id, group (SP), frequency, horizon and values (NaN kept as stored)."""

    ids: np.ndarray
    groups: np.ndarray
    frequencies: np.ndarray
    horizons: np.ndarray
    values: list[np.ndarray]

    def group(self, name: str) -> tuple[np.ndarray, list[np.ndarray]]:
        """(ids, NaN-free series) of group `name`, in file order."""
        rows = np.flatnonzero(self.groups == name)
        return self.ids[rows], [self.values[i][~np.isnan(self.values[i])] for i in rows]


def load_m4(root: str | Path, training: bool) -> M4Data:
    """Read M4-info.csv and training.npz (`training`) or test.npz from `root`; one-line errors otherwise."""
    root = Path(root)
    info_path = _require(root, "info")
    info = pd.read_csv(info_path)
    missing = [c for c in _INFO_COLUMNS if c not in info.columns]
    if missing:
        raise UserInputError(f"M4 file {info_path} lacks the columns {', '.join(missing)}")
    values_path = _require(root, "training" if training else "test")
    values = _read_series(values_path)
    if len(values) != len(info):
        raise UserInputError(f"M4 file {values_path} has {len(values)} series but {info_path} lists {len(info)}")
    return M4Data(ids=info["M4id"].to_numpy(), groups=info["SP"].to_numpy(), frequencies=info["Frequency"].to_numpy(),
                  horizons=info["Horizon"].to_numpy(), values=values)


def load_naive2(root: str | Path, ids: np.ndarray) -> np.ndarray:
    """Naive2 forecasts of the series `ids` (one group), `[N, H]`, from submission-Naive2.csv (rows found by id)."""
    path = _require(root if isinstance(root, Path) else Path(root), "naive2")
    table = pd.read_csv(path, index_col=0)
    absent = [i for i in ids if i not in table.index]
    if absent:
        raise UserInputError(f"M4 file {path} has no Naive2 forecast for {absent[0]} ({len(absent)} series missing)")
    rows = table.loc[list(ids)].to_numpy(dtype=np.float64)
    return np.stack([row[~np.isnan(row)] for row in rows])


class Dataset_M4(Dataset):  # noqa: N801 - TSLib's public name
    """TSLib's M4 loader for one `seasonal_patterns` group (see the module docstring)."""

    scale = False
    n_channels = 1

    def __init__(self, args: argparse.Namespace | None, root_path: str, flag: str = "pred",
                 size: list[int] | None = None, features: str = "S", data_path: str = "",
                 target: str = "OT", timeenc: int = 0, freq: str = "15min",
                 seasonal_patterns: str = "Yearly", **_: object) -> None:
        self.seasonal_patterns = check_seasonal_patterns(seasonal_patterns)
        self.seq_len, self.label_len, self.pred_len = size
        self.history_size = HISTORY_SIZE[seasonal_patterns]
        self.window_sampling_limit = int(self.history_size * self.pred_len)
        self.flag = flag
        self.root_path = root_path
        self.data_path = str(Path(root_path) / M4_FILES["training" if flag == "train" else "test"])
        data = load_m4(root_path, training=flag == "train")
        self.ids, self.timeseries = data.group(seasonal_patterns)
        if not self.timeseries:
            raise UserInputError(f"{Path(root_path) / M4_FILES['info']} lists no {seasonal_patterns} series")
        if flag == "train":
            short = [i for i, ts in zip(self.ids, self.timeseries, strict=True) if len(ts) < 2]
            if short:
                raise UserInputError(f"M4 series {short[0]} has fewer than 2 training values; "
                                     "a training window needs at least one input and one target value")

    def __len__(self) -> int:
        return len(self.timeseries)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(insample `[L, 1]`, outsample `[Ll + H, 1]`, insample_mask, outsample_mask), float64."""
        series = self.timeseries[index]
        n = len(series)
        cut = np.random.randint(low=max(1, n - self.window_sampling_limit), high=n, size=1)[0]
        return self.window(series, cut)

    def window(self, series: np.ndarray, cut: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The training item of `series` cut at `cut` (0 < cut <= len(series))."""
        insample = np.zeros((self.seq_len, 1))
        insample_mask = np.zeros((self.seq_len, 1))
        outsample = np.zeros((self.label_len + self.pred_len, 1))
        outsample_mask = np.zeros((self.label_len + self.pred_len, 1))
        history = series[max(0, cut - self.seq_len):cut]
        insample[self.seq_len - len(history):, 0] = history
        insample_mask[self.seq_len - len(history):, 0] = 1.0
        # outsample[j] holds series[cut − Ll + j] where that exists. TSLib slices from cut − Ll unclamped,
        # so for cut < Ll the negative start counts from the series' end and the item comes out empty
        # (all-zero mask); aligning instead keeps those items' targets. For cut >= Ll both agree.
        start = cut - self.label_len
        future = series[max(0, start):min(len(series), cut + self.pred_len)]
        offset = max(0, -start)
        outsample[offset:offset + len(future), 0] = future
        outsample_mask[offset:offset + len(future), 0] = 1.0
        return insample, outsample, insample_mask, outsample_mask

    def last_insample_window(self) -> tuple[np.ndarray, np.ndarray]:
        """The last L values of every series, left zero-padded, and their 0/1 mask: `[N, L]` each."""
        insample = np.zeros((len(self.timeseries), self.seq_len))
        insample_mask = np.zeros((len(self.timeseries), self.seq_len))
        for i, series in enumerate(self.timeseries):
            last = series[-self.seq_len:]
            insample[i, self.seq_len - len(last):] = last
            insample_mask[i, self.seq_len - len(last):] = 1.0
        return insample, insample_mask

    def inverse_transform(self, data: np.ndarray) -> np.ndarray:
        """M4 is not scaled (TSLib's call fails here, issue #541): the identity."""
        return data
