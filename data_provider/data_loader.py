"""Sliding-window forecasting datasets with TSLib's splits (contract §3.2–§3.4).

Every dataset reads one file into a ``[T, C]`` float matrix, cuts it into train/val/test row ranges
(`border1s`, `border2s`), standardises it with a StandardScaler fit on the train rows only, and serves
windows ``x = rows[i, i+L)``, ``y = rows[i+L-Ll, i+L+H)`` with their time marks. Only the reading
and the borders differ between datasets, so the classes below override just those two steps:

==================  =====================================  ==========================================
class               file                                   borders (train, val, test)
==================  =====================================  ==========================================
Dataset_ETT_hour    ETTh*.csv, date + 7 columns            12/4/4 months of 720 rows; val/test − L
Dataset_ETT_minute  ETTm*.csv, 15-minute steps             the same months × 4
Dataset_Custom      any CSV with a date column             70% / rest / 20%; val/test − L
Dataset_Solar       solar_AL.txt, no header, no date       70% / 10% / 20%; val/test − L; zero marks
Dataset_PEMS        PEMS0X.npz, key data [T, N, F]          60% / 20% / 20%, no look-back; zero marks
==================  =====================================  ==========================================

"val/test − L" means those splits start L rows early so their first input window lies in the
previous split. All user mistakes (missing file, unknown column, NaN, split too short) raise
UserInputError with one line naming the problem and the fix.
"""

from __future__ import annotations

import argparse
import logging
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler
from torch.utils.data import Dataset

from data_provider.fetch import fetch_command
from data_provider.float32_range import first_beyond_float32, unusable_reason
from data_provider.registry import find_by_path
from utils.augmentation import augment_series
from utils.errors import MissingDataError, UserInputError
from utils.flag_defaults import flag_default
from utils.timefeatures import calendar_features, num_calendar_features, num_time_features, time_marks
from utils.window_lengths import check_label_len

__all__ = ["Dataset_Custom", "Dataset_ETT_hour", "Dataset_ETT_minute", "Dataset_PEMS", "Dataset_Solar", "WindowDataset",
           "custom_split_sizes", "split_windows", "window_marks"]

logger = logging.getLogger(__name__)

SPLITS = ("train", "val", "test")
FEATURE_MODES = ("M", "S", "MS")
FILLNA_CHOICES = ("none", "ffill", "interpolate")


def missing_file_error(path: Path) -> MissingDataError:
    """MissingDataError for `path`, naming the fetch command when the file is a known benchmark."""
    match = find_by_path(path)
    if match is None:
        return MissingDataError(f"data file {path} not found; check --root_path and --data_path")
    info, root = match
    message = f"data file {path} not found; fetch it with: {fetch_command(info.name, root)}"
    if root / info.relpath != path:
        message += f" and pass --root_path {info.root_dir}"
    return MissingDataError(message)


def read_csv(path: Path, header: bool = True) -> pd.DataFrame:
    """Read a CSV with CRLF or LF endings; undecodable bytes become U+FFFD instead of failing.

    Column names are stripped of surrounding spaces. Headerless files get columns "0".."C-1".
    Raises UserInputError for an empty file, a header without rows, or a malformed CSV.
    """
    try:
        frame = pd.read_csv(path, header=0 if header else None, encoding="utf-8", encoding_errors="replace")
    except pd.errors.EmptyDataError as exc:
        raise UserInputError(f"data file {path} is empty") from exc
    except pd.errors.ParserError as exc:
        raise UserInputError(f"data file {path} is not a valid CSV file: {exc}") from exc
    if frame.empty:
        raise UserInputError(f"data file {path} has no data rows (only a header)")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def parse_dates(column: pd.Series, path: Path) -> pd.DatetimeIndex:
    """Parse the `date` column; warn (keeping every row) about duplicated or decreasing timestamps."""
    try:
        dates = pd.DatetimeIndex(pd.to_datetime(column))
    except (ValueError, TypeError):
        # Mixed formats: parse value by value so the first unparseable one can be named.
        parsed = pd.to_datetime(column, errors="coerce", format="mixed")
        bad = np.flatnonzero(parsed.isna().to_numpy())
        if bad.size:
            i = int(bad[0])
            raise UserInputError(f"{path}: line {i + 2}, column 'date' has the value {column.iloc[i]!r}, "
                                 "which is not a date/time") from None
        dates = pd.DatetimeIndex(parsed)
    if dates.isna().any():
        i = int(np.flatnonzero(dates.isna())[0])
        raise UserInputError(f"{path}: line {i + 2}, column 'date' is empty; every row needs a timestamp")
    duplicated = int(dates.duplicated().sum())
    if duplicated:
        logger.warning("%s: %d duplicated timestamp(s); rows are kept as they are", path, duplicated)
    decreasing = int((np.diff(dates.asi8) < 0).sum())
    if decreasing:
        logger.warning("%s: timestamps go backwards %d time(s); rows are kept in file order", path, decreasing)
    return dates


def to_float_matrix(frame: pd.DataFrame, path: Path, locate: Callable[[int], str], fillna: str) -> np.ndarray:
    """Convert `frame` to a ``[T, C]`` float64 matrix, rejecting or filling non-numeric and NaN cells.

    fillna: 'none' rejects them (naming the first one via `locate(row)`), 'ffill' fills forward then
    backward (for leading gaps), 'interpolate' interpolates linearly and extends the ends.
    """
    columns: dict[str, pd.Series] = {}
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_numeric_dtype(column):
            coerced = pd.to_numeric(column, errors="coerce")
            bad = np.flatnonzero((coerced.isna() & column.notna()).to_numpy())
            if bad.size and fillna == "none":
                i = int(bad[0])
                raise UserInputError(
                    f"{path}: {locate(i)}, column {name!r} has the non-numeric value {column.iloc[i]!r}; "
                    "fix the file or pass --fillna ffill|interpolate to treat such values as missing")
            column = coerced
        columns[name] = column.astype(np.float64)
    numeric = pd.DataFrame(columns)
    missing = numeric.isna().to_numpy()
    if missing.any():
        rows, cols = np.nonzero(missing)
        where = f"{locate(int(rows[0]))}, column {numeric.columns[cols[0]]!r}"
        if fillna == "none":
            raise UserInputError(f"{path}: {where} is missing or NaN ({missing.sum()} such values in total); "
                                 "pass --fillna ffill|interpolate to fill them")
        if fillna == "ffill":
            numeric = numeric.ffill().bfill()
        else:
            numeric = numeric.interpolate(method="linear").ffill().bfill()
        empty = [name for name in numeric.columns if numeric[name].isna().all()]
        if empty:
            raise UserInputError(f"{path}: column {empty[0]!r} has no numeric value at all, so --fillna "
                                 f"{fillna} cannot fill it; drop the column from the file")
        logger.warning("%s: filled %d missing value(s) (first at %s) with --fillna %s",
                       path, int(missing.sum()), where, fillna)
    values = numeric.to_numpy(dtype=np.float64)
    check_float32_range(values, path, locate, list(numeric.columns))
    return values


def check_float32_range(values: np.ndarray, path: Path, locate: Callable[[int], str], columns: list[str]) -> None:
    """Reject inf and values whose square overflows float32 (data_provider/float32_range.py: they overflow in the
    float32 model, or flatten their column under the scaler), naming the first one's row and column."""
    found = first_beyond_float32(values)
    if found is not None:
        row, col, count = found
        value = float(values[row, col])
        raise UserInputError(f"{path}: {locate(row)}, column {columns[col]!r} holds {value!r}, "
                             f"{unusable_reason(value, count)}")


def custom_split_sizes(n: int) -> tuple[int, int, int]:
    """(train, val, test) rows of a `Dataset_Custom` file of `n` rows: int(0.7n), the remainder, int(0.2n)."""
    n_train, n_test = int(n * 0.7), int(n * 0.2)
    return n_train, n - n_train - n_test, n_test


def window_marks(dates: pd.DatetimeIndex | None, n: int, freq: str, timeenc: int) -> np.ndarray:
    """``[n, F]`` float32 marks of `n` rows: timeF (timeenc=1) or integer calendar (timeenc=0) columns of `freq`;
    all-zero of the same width when the file has no timestamps (dates None)."""
    if dates is None:
        width = num_time_features(freq) if timeenc == 1 else num_calendar_features(freq)
        return np.zeros((n, width), dtype=np.float32)
    if timeenc == 1:
        return time_marks(dates, freq)
    return calendar_features(dates, freq)


class WindowDataset(Dataset):
    """Shared core of every forecasting dataset; subclasses define `_load` and `_borders`.

    Attributes: `data_x`/`data_y` ``[rows, C]`` float32 (the same split rows), `data_stamp`
    ``[rows, F]`` float32 marks, `dates` (the split's timestamps or None), `columns` (all feature columns of the file, target last for
    Custom/Solar/PEMS), `used_columns` (the C columns served: all for M/MS, [target] for S),
    `scale`, `scaler` (fit on train rows), `border1s`/`border2s`.

    Constructor (TSLib's signature): `args` supplies `fillna`, and `augmentation_ratio` with the
    augmentation presets and `seed` (None means defaults); with a ratio > 0 the train split is
    augmented once as a whole series (utils/augmentation.py::augment_series); `size` = [seq_len L,
    label_len Ll, pred_len H]; `flag` picks the split; `timeenc` 1 gives timeF marks, 0 integer
    calendar marks, both for `freq`. `seasonal_patterns` is accepted for signature compatibility only (it selects an M4 subset in TSLib).
    """

    #: val/test start seq_len rows early, so their first window's input lies in the previous split.
    has_lookback = True
    #: the sampling step of a file without timestamps (None: unknown); a dated file's comes from its dates
    known_interval: pd.Timedelta | None = None

    def __init__(self, args: argparse.Namespace | None, root_path: str, flag: str = "train",
                 size: list[int] | tuple[int, int, int] | None = None, features: str = "S",
                 data_path: str = "ETTh1.csv", target: str = "OT", scale: bool = True, timeenc: int = 0,
                 freq: str = "h", seasonal_patterns: str | None = None) -> None:
        # TSLib's default window when no size is given: 4 days of 15-minute steps in, 1 day out.
        self.seq_len, self.label_len, self.pred_len = size if size is not None else (24 * 4 * 4, 24 * 4, 24 * 4)
        self.flag, self.features, self.target = flag, features, target
        self.scale, self.timeenc, self.freq = scale, timeenc, freq
        self._check_arguments(args, flag, features, timeenc)
        self.root_path, self.data_path = root_path, data_path
        self.path = Path(root_path) / data_path
        if not self.path.is_file():
            raise missing_file_error(self.path)
        fillna = getattr(args, "fillna", flag_default("fillna"))
        if fillna not in FILLNA_CHOICES:
            raise UserInputError(f"--fillna {fillna!r} is not one of {', '.join(FILLNA_CHOICES)}")

        frame, dates, locate = self._load(self.path)
        #: the sampling step: the median step of the file's timestamps, else `known_interval`
        self.interval = (pd.Series(dates).diff().median() if dates is not None and len(dates) > 1
                         else self.known_interval)
        self.columns = self._arrange_columns(list(frame.columns))
        self.used_columns = [self.target] if features == "S" else self.columns
        values = to_float_matrix(frame[self.used_columns], self.path, locate, self._fillna(fillna))  # [T, C]

        self.border1s, self.border2s = self._borders(len(values))
        split = SPLITS.index(flag)
        border1, border2 = self.border1s[split], self.border2s[split]
        self._check_split_length(split, border1, border2)

        self.scaler = StandardScaler()
        if scale:
            self.scaler.fit(values[self.border1s[0]:self.border2s[0]])
            values = self.scaler.transform(values)
        self.data_x = values[border1:border2].astype(np.float32)  # [rows, C]
        self.data_y = self.data_x
        #: TSLib's augmentation tag ("1_jitter..."), "" when the split is not augmented.
        self.augmentation_tags = ""
        if flag == "train" and getattr(args, "augmentation_ratio", flag_default("augmentation_ratio")) > 0:
            try:
                self.data_x, self.data_y, self.augmentation_tags = augment_series(self.data_x, args)
            except ValueError as exc:
                raise UserInputError(str(exc)) from None
        split_dates = dates[border1:border2] if dates is not None else None
        #: the split's timestamps (None for files without any); a model card infers the step from them
        self.dates = split_dates
        self.data_stamp = self._marks(split_dates, border2 - border1)  # [rows, F]

    def _check_arguments(self, args: argparse.Namespace | None, flag: str, features: str, timeenc: int) -> None:
        if flag not in SPLITS:
            raise UserInputError(f"flag {flag!r} is not one of {', '.join(SPLITS)}")
        if features not in FEATURE_MODES:
            raise UserInputError(f"--features {features!r} is not one of M, S, MS")
        if timeenc not in (0, 1):
            raise UserInputError(f"timeenc {timeenc!r} must be 0 (--embed fixed/learned) or 1 (--embed timeF)")
        # Resolving the width validates --freq before the file is read.
        num_time_features(self.freq)
        # pred_len 0 is a window with no future part (TSLib's imputation scripts pass it).
        if self.seq_len < 1 or self.pred_len < 0:
            raise UserInputError(f"--seq_len {self.seq_len} must be at least 1 and --pred_len {self.pred_len} "
                                 "at least 0")
        check_label_len(self.label_len, self.seq_len)

    def _load(self, path: Path) -> tuple[pd.DataFrame, pd.DatetimeIndex | None, Callable[[int], str]]:
        """Read the file: feature columns (no date), the timestamps or None, and a formatter that
        turns a row index into a location for error messages."""
        raise NotImplementedError

    def _borders(self, n: int) -> tuple[list[int], list[int]]:
        """Start and end rows of (train, val, test) for a file of `n` rows."""
        raise NotImplementedError

    def _fillna(self, fillna: str) -> str:
        return fillna

    def _arrange_columns(self, columns: list[str]) -> list[str]:
        """Feature columns in serving order; validates `target` (used by S and MS)."""
        if self.target not in columns:
            raise UserInputError(f"--target {self.target!r} is not a column of {self.path}; "
                                 f"columns: {', '.join(columns)}")
        return columns

    def _check_split_length(self, split: int, border1: int, border2: int) -> None:
        name, lookback = SPLITS[split], self.has_lookback and split > 0
        if border1 < 0:
            raise UserInputError(f"--seq_len {self.seq_len} is longer than the {border1 + self.seq_len} rows "
                                 f"before the {name} split of {self.path}; use --seq_len {border1 + self.seq_len} "
                                 "or less")
        rows = border2 - border1
        if rows - self.seq_len - self.pred_len + 1 >= 1:
            return
        if lookback:
            own = rows - self.seq_len
            raise UserInputError(f"--pred_len {self.pred_len} is longer than the {name} split of {self.path} "
                                 f"({own} rows); use --pred_len {own} or less")
        raise UserInputError(f"--seq_len {self.seq_len} + --pred_len {self.pred_len} = "
                             f"{self.seq_len + self.pred_len} is longer than the {name} split of {self.path} "
                             f"({rows} rows); the sum must be at most {rows}")

    def _marks(self, dates: pd.DatetimeIndex | None, n: int) -> np.ndarray:
        return window_marks(dates, n, self.freq, self.timeenc)

    def series_arrays(self) -> list[np.ndarray]:
        """The `[rows, C]` float32 arrays the windows are drawn from: this split's rows, one series."""
        return [self.data_x]

    def __len__(self) -> int:
        return len(self.data_x) - self.seq_len - self.pred_len + 1

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x ``[L, C]``, y ``[Ll+H, C]``, x_mark ``[L, F]``, y_mark ``[Ll+H, F]``), float32."""
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"window {index} out of range for {n} windows")
        x_end = index + self.seq_len
        y_begin = x_end - self.label_len
        y_end = x_end + self.pred_len
        return (self.data_x[index:x_end], self.data_y[y_begin:y_end],
                self.data_stamp[index:x_end], self.data_stamp[y_begin:y_end])

    def inverse_transform(self, data: np.ndarray) -> np.ndarray:
        """Undo the standardisation of a ``[rows, C]`` array (identity when scale=False)."""
        return self.scaler.inverse_transform(data) if self.scale else data

    @property
    def n_channels(self) -> int:
        """Number of feature columns in the file (what --features M feeds the model)."""
        return len(self.columns)


class _DatedCSV(WindowDataset):
    """A CSV whose `date` column holds the timestamps and whose other columns are features."""

    def _load(self, path: Path) -> tuple[pd.DataFrame, pd.DatetimeIndex, Callable[[int], str]]:
        frame = read_csv(path)
        if "date" not in frame.columns:
            raise UserInputError(f"{path} has no 'date' column (columns: {', '.join(frame.columns)}); "
                                 "rename the timestamp column to date")
        dates = parse_dates(frame["date"], path)
        # Line 1 is the header, so data row i sits on line i + 2.
        return frame.drop(columns="date"), dates, lambda i: f"line {i + 2}"


def split_windows(dataset_class: type[WindowDataset], rows: int, seq_len: int, pred_len: int, split: str,
                  path: Path | str) -> range:
    """The windows (each by its first input row in the file) that `dataset_class` serves as split `split` of a file
    of `rows` rows: window w reads rows w..w+L-1 and forecasts rows w+L..w+L+H-1. The test split's are the windows
    run.py's test scores. Only the borders are computed (the file at `path` is named in errors, not read)."""
    if split not in SPLITS:
        raise UserInputError(f"split {split!r} is not one of {', '.join(SPLITS)}")
    probe = object.__new__(dataset_class)  # `_borders` reads only the window length and the path
    probe.seq_len, probe.path = seq_len, path
    border1s, border2s = probe._borders(rows)
    k = SPLITS.index(split)
    return range(max(border1s[k], 0), border2s[k] - seq_len - pred_len + 1)


class Dataset_ETT_hour(_DatedCSV):
    """ETTh1/ETTh2: 12/4/4 months of 30·24 hourly rows; rows past month 20 are unused."""

    #: rows per 30-day month
    rows_per_month = 30 * 24

    def _borders(self, n: int) -> tuple[list[int], list[int]]:
        month, L = self.rows_per_month, self.seq_len
        border2s = [12 * month, 16 * month, 20 * month]
        if n < border2s[-1]:
            raise UserInputError(f"{self.path} has {n} rows but the ETT layout needs {border2s[-1]}; "
                                 "use --data custom for other files")
        return [0, border2s[0] - L, border2s[1] - L], border2s


class Dataset_ETT_minute(Dataset_ETT_hour):
    """ETTm1/ETTm2: the ETT months in 15-minute rows (4 per hour)."""

    rows_per_month = 30 * 24 * 4


class Dataset_Custom(_DatedCSV):
    """Any dated CSV (weather, electricity, traffic, ...): columns reordered to [others..., target],
    splits of int(0.7n) train and int(0.2n) test rows, validation the remainder."""

    def _arrange_columns(self, columns: list[str]) -> list[str]:
        columns = super()._arrange_columns(columns)
        # MS predicts the last channel, so the target goes last (TSLib's Custom convention).
        return [c for c in columns if c != self.target] + [self.target]

    def _split_sizes(self, n: int) -> tuple[int, int, int]:
        return custom_split_sizes(n)

    def _borders(self, n: int) -> tuple[list[int], list[int]]:
        n_train, n_val, n_test = self._split_sizes(n)
        L = self.seq_len
        return [0, n_train - L, n - n_test - L], [n_train, n_train + n_val, n]


class _Headerless(Dataset_Custom):
    """Files without names or timestamps: columns are "0".."C-1", the default --target OT means the
    last column, and the time marks are zeros."""

    def _arrange_columns(self, columns: list[str]) -> list[str]:
        if self.target == "OT":
            self.target = columns[-1]
        return super()._arrange_columns(columns)


class Dataset_Solar(_Headerless):
    """solar_AL.txt: 137 comma-separated columns, no header; int(0.1n) validation rows (so a few rows
    before the test look-back are unused, as in iTransformer)."""

    known_interval = pd.Timedelta("10min")

    def _load(self, path: Path) -> tuple[pd.DataFrame, None, Callable[[int], str]]:
        return read_csv(path, header=False), None, lambda i: f"line {i + 1}"

    def _split_sizes(self, n: int) -> tuple[int, int, int]:
        return int(n * 0.7), int(n * 0.1), int(n * 0.2)


class Dataset_PEMS(_Headerless):
    """PEMS0X.npz: array `data` ``[T, N, F]``, traffic flow = feature 0; contiguous 60/20/20 splits
    without look-back; NaNs forward- then back-filled unless --fillna interpolate is given."""

    has_lookback = False
    known_interval = pd.Timedelta("5min")

    def _load(self, path: Path) -> tuple[pd.DataFrame, None, Callable[[int], str]]:
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise UserInputError(f"{path} is not a readable .npz file ({exc})") from exc
        if "data" not in arrays:
            raise UserInputError(f"{path} has no array 'data' (arrays: {', '.join(arrays)})")
        array = arrays["data"]
        if array.ndim == 3:
            array = array[:, :, 0]  # [T, N, F] -> [T, N]
        if array.ndim != 2 or array.shape[0] == 0:
            raise UserInputError(f"{path}: array 'data' has shape {array.shape}; expected [T, N, F] or [T, N]")
        frame = pd.DataFrame(array, columns=[str(i) for i in range(array.shape[1])])
        return frame, None, lambda i: f"time step {i}"

    def _fillna(self, fillna: str) -> str:
        # PEMS sensors drop out; the iTransformer lineage always fills them forward then backward.
        return "ffill" if fillna == "none" else fillna

    def _borders(self, n: int) -> tuple[list[int], list[int]]:
        train_end, val_end = int(n * 0.6), int(n * 0.8)
        return [0, train_end, val_end], [train_end, val_end, n]
