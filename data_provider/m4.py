"""M4 as TSLib reads it: `Dataset_M4` for `--data m4`, and the M4 files themselves.

Files, in `--root_path` (TSLib: ``./dataset/m4/``, which ships all of them):

=====================  ==========================================================================
M4-info.csv            one row per series: M4id, category, Frequency, Horizon, SP, StartingDate
<Group>-train.csv      the training histories of one group (Yearly-train.csv ... Hourly-train.csv), as
                       the M4 competition publishes them: a header row, then per series its id
                       (column 1, e.g. "Y1") and its values (V2, V3, ...), ragged rows padded by empty cells
<Group>-test.csv       the test values of one group (Horizon of them per series), same layout
submission-Naive2.csv  the Naive2 benchmark forecasts (id, F1..F48); only the summary (OWA) reads it
=====================  ==========================================================================

The CSV rows are matched to M4-info.csv by id (every id of the group exactly once; text cells, infinite
values and empty cells before a series' last value are one-line errors). Where a group's CSV is absent,
``training.npz`` / ``test.npz`` are read instead if they hold plain arrays (``np.load(allow_pickle=False)``:
one 2-D float array, every series of M4-info.csv in its order, right-padded with NaN, as ``.npy`` or a
one-array ``.npz``). N-BEATS's own ``training.npz`` / ``test.npz`` (written with `ndarray.dump`, a pickled
object array) are refused: this project never unpickles a data file, since loading a pickle can run any
code its author chose.

Per `--seasonal_patterns` S: horizon H, seq_len = 2·H and label_len = H (set by the experiment),
frequency m and history size k (training windows end in the last k·H steps):

    Yearly 6/1/1.5, Quarterly 8/4/1.5, Monthly 18/12/1.5, Weekly 13/1/10, Daily 14/1/10, Hourly 48/24/10

A training item (`ShortTermSeries`, data_provider/short_term_series.py) draws a cut point c uniformly from [max(1, T − int(k·H)), T) with numpy's global RNG
(as TSLib) and returns (insample, outsample, insample_mask, outsample_mask): insample `[L, 1]` = the
up to L values before c, zero-padded on the left; outsample `[Ll + H, 1]` = values c − Ll .. c + H,
zero-padded on the right (and on the left when c < Ll, where TSLib returns an empty item); the masks
are 1 on real values. They stand where (x, y, x_mark, y_mark) stand
for the other datasets: M4 has no time stamps. The 'val' and 'test' splits hold the test values; the
experiment forecasts from each training series' last window (`last_insample_window`). No scaling.

Under `--protocol strict` the test values are read by the 'test' split only: 'train' holds each training
series without its last H values (`history` keeps the whole series, which the test forecasts start from),
and 'val' holds those held-out last H values, forecast from the shortened series' last window.
"""

from __future__ import annotations

import argparse
import csv
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.fetch import fetch_command
from data_provider.float32_range import unusable_mask, unusable_reason
from data_provider.protocol import is_strict
from data_provider.short_term_series import SHORT_TERM_DATA, ShortTermSeries, check_univariate_and_loss
from utils.errors import MissingDataError, UserInputError
from utils.flag_defaults import flag_default
from utils.m4_summary import M4_GROUPS
from utils.path_names import check_path_component

__all__ = ["FREQUENCIES", "HISTORY_SIZE", "HORIZONS", "M4_ARRAY_FILES", "M4_FILES", "M4_SERIES_FILES", "SERIES_COUNTS",
           "Dataset_M4", "M4Data", "check_m4_args", "check_seasonal_patterns", "load_m4", "load_naive2",
           "m4_model_id_rest", "missing_m4_files", "read_series_csv", "series_csv"]

logger = logging.getLogger(__name__)

HORIZONS = {"Yearly": 6, "Quarterly": 8, "Monthly": 18, "Weekly": 13, "Daily": 14, "Hourly": 48}
FREQUENCIES = {"Yearly": 1, "Quarterly": 4, "Monthly": 12, "Weekly": 1, "Daily": 1, "Hourly": 24}
HISTORY_SIZE = {"Yearly": 1.5, "Quarterly": 1.5, "Monthly": 1.5, "Weekly": 10, "Daily": 10, "Hourly": 10}
#: Number of series per group in the published M4 (100,000 in all).
SERIES_COUNTS = {"Yearly": 23000, "Quarterly": 24000, "Monthly": 48000, "Weekly": 359, "Daily": 4227,
                 "Hourly": 414}
M4_FILES = {"info": "M4-info.csv", "naive2": "submission-Naive2.csv"}
#: Pickle-free numpy stand-ins for the per-group CSVs of a split (read only where a group's CSV is absent).
M4_ARRAY_FILES = {"training": "training.npz", "test": "test.npz"}
_INFO_COLUMNS = ("M4id", "SP", "Frequency", "Horizon")
#: Cells parsed at a time (about 200 MB of floats), so the widest files (Daily-train.csv: ~9,900 columns,
#: Monthly-train.csv: 48,000 rows) never sit whole in memory as a padded table.
_CHUNK_CELLS = 25_000_000
#: How the first bytes tell the numpy formats apart (anything else is neither .npy nor .npz).
_NPY_MAGIC, _ZIP_MAGIC, _PICKLE_PROTO = b"\x93NUMPY", b"PK\x03\x04", b"\x80"


def series_csv(group: str, training: bool) -> str:
    """The published file name of a group's split, e.g. ``Yearly-train.csv`` / ``Yearly-test.csv``."""
    return f"{group}-{'train' if training else 'test'}.csv"


#: The twelve per-group CSVs, training then test per group, in TSLib's group order.
M4_SERIES_FILES = tuple(series_csv(group, training) for group in M4_GROUPS for training in (True, False))


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

    short_term_forecast needs --data m4 or a custom short-term file (`SHORT_TERM_DATA`; TSLib crashes on other
    data, issues #79/#708), M4 needs short_term_forecast (the long-term loop would feed the masks to the models
    as time marks), its seasonality comes from --seasonal_patterns, and the series are univariate.
    """
    if args.task_name == "short_term_forecast" and args.data not in SHORT_TERM_DATA:
        raise UserInputError(f"--task_name short_term_forecast runs on M4 (--data m4) or a short-term file (--data "
                             f"short_term_csv or tsf), not --data {args.data}; for other data use --task_name "
                             "long_term_forecast with a short --pred_len")
    if args.data != "m4":
        return
    if args.task_name != "short_term_forecast":
        raise UserInputError(f"--data m4 needs --task_name short_term_forecast, not {args.task_name}")
    check_seasonal_patterns(args.seasonal_patterns)
    if getattr(args, "seasonality", flag_default("seasonality")) is not None:
        raise UserInputError(f"--seasonality {args.seasonality}: M4's comes from --seasonal_patterns "
                             f"({args.seasonal_patterns}: {FREQUENCIES[args.seasonal_patterns]}); drop the flag")
    rest = m4_model_id_rest(args.model_id, args.seasonal_patterns)
    if rest:
        check_path_component("--model_id", rest, "the ./m4_results folder")
    check_univariate_and_loss(args, "M4")


def _split(training: bool) -> str:
    return "training" if training else "test"


def _fetch_hint(root: Path) -> str:
    return f"e.g. with: {fetch_command('m4', root.parent)}"


def _require_info(root: Path) -> Path:
    path = root / M4_FILES["info"]
    if not path.is_file():
        raise MissingDataError(
            f"M4 file {path} not found; put M4-info.csv and the per-group CSVs (Yearly-train.csv, Yearly-test.csv, "
            f"..., Hourly-test.csv; and {M4_FILES['naive2']} for the OWA summary) in {root}/ "
            f"(TSLib's --root_path ./dataset/m4), {_fetch_hint(root)}")
    return path


def missing_m4_files(root: str | Path, group: str) -> list[Path]:
    """The files a run of `group` needs that are absent from `root` (M4-info.csv and, per split, the
    group's CSV unless the numpy stand-in is there); [] when all are present."""
    root = Path(root)
    missing = [] if (root / M4_FILES["info"]).is_file() else [root / M4_FILES["info"]]
    for training in (True, False):
        csv = root / series_csv(group, training)
        if not (csv.is_file() or (root / M4_ARRAY_FILES[_split(training)]).is_file()):
            missing.append(csv)
    return missing


def _read_info(root: Path) -> pd.DataFrame:
    path = _require_info(root)
    info = pd.read_csv(path, dtype={"M4id": str, "SP": str}, keep_default_na=False)
    missing = [c for c in _INFO_COLUMNS if c not in info.columns]
    if missing:
        raise UserInputError(f"M4 file {path} lacks the columns {', '.join(missing)}")
    duplicated = info["M4id"][info["M4id"].duplicated()]
    if len(duplicated):
        raise UserInputError(f"M4 file {path} lists series {duplicated.iloc[0]} more than once")
    return info


def _bad_cell(column: pd.Series) -> int | None:
    """Position of the first non-empty cell of `column` that is not a number, None when there is none."""
    for position, cell in enumerate(column):
        if pd.isna(cell):
            continue
        if isinstance(cell, bool | np.bool_):
            return position
        try:
            float(cell)
        except (TypeError, ValueError):
            return position
    return None


def _check_values(values: np.ndarray, ids: list[str], columns: list[str], path: Path) -> list[np.ndarray]:
    """The rows of `values` (`[N, C]` float, NaN = empty) without their trailing padding, after rejecting
    infinite values, values whose square overflows float32, rows with no value and empty cells before a row's
    last value."""
    infinite = np.argwhere(np.isinf(values))
    if len(infinite):
        row, col = infinite[0]
        raise UserInputError(f"M4 file {path}: series {ids[row]} has an infinite value in column {columns[col]}; "
                             "the published files hold finite numbers only")
    # M4 is not scaled: the models square the raw values (instance normalisation, the losses) in float32.
    too_large = np.argwhere(unusable_mask(values) & ~np.isnan(values))
    if len(too_large):
        row, col = too_large[0]
        value = float(values[row, col])
        raise UserInputError(f"M4 file {path}: series {ids[row]}, column {columns[col]} holds {value!r}, "
                             f"{unusable_reason(value, len(too_large), part='series')}")
    present = ~np.isnan(values)
    counts = present.sum(axis=1)
    # One past each row's last value (0 for an empty row): right-padding only means counts == lengths.
    lengths = np.where(counts > 0, values.shape[1] - np.argmax(present[:, ::-1], axis=1), 0)
    for row in np.flatnonzero(counts == 0):
        raise UserInputError(f"M4 file {path}: series {ids[row]} has no values")
    for row in np.flatnonzero(counts != lengths):
        col = int(np.argmin(present[row, :lengths[row]]))
        raise UserInputError(f"M4 file {path}: series {ids[row]} has an empty cell in column {columns[col]} "
                             "before its last value; only the cells after a series' end may be empty")
    return [values[row, :lengths[row]].copy() for row in range(len(values))]


def read_series_csv(path: str | Path) -> dict[str, np.ndarray]:
    """{id: values} of a CSV in the per-group layout (first column the series id, then its values, empty cells
    padding a row), checked as the M4 files are: one line for text, infinite values, gaps and repeated ids."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"file {path} not found")
    return _read_csv_series(path)


def _read_csv_series(path: Path) -> dict[str, np.ndarray]:
    """{id: values} of one per-group CSV (first column the id, then the values; empty cells pad a row)."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        if len(header) < 2:
            raise UserInputError(f"M4 file {path} has {len(header)} column(s); expected the series id, then "
                                 "its values (the published <Group>-train.csv / <Group>-test.csv layout)")
        id_column, value_columns = header[0], header[1:]
        # pandas' default float parser, as N-BEATS used to build its .npz files (exact for M4's few decimals).
        chunks = pd.read_csv(path, dtype={id_column: str}, keep_default_na=False,
                             na_values={name: ["", "NA"] for name in value_columns},
                             chunksize=max(1000, _CHUNK_CELLS // len(header)))
        series: dict[str, np.ndarray] = {}
        first_row = 0
        for chunk in chunks:
            series.update(_read_chunk(chunk, first_row, value_columns, path, series))
            first_row += len(chunk)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UserInputError(f"M4 file {path} is not a readable CSV ({str(exc).strip().splitlines()[-1]}); "
                             "expected the published per-group layout") from exc
    return series


def _read_chunk(chunk: pd.DataFrame, first_row: int, value_columns: list[str], path: Path,
                seen: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    ids = chunk.iloc[:, 0].tolist()
    for offset, series_id in enumerate(ids):
        if not isinstance(series_id, str) or not series_id.strip():
            raise UserInputError(f"M4 file {path}: data row {first_row + offset + 1} has no series id in its "
                                 "first column")
    values = chunk.iloc[:, 1:]
    numeric = [pd.api.types.is_float_dtype(d) or pd.api.types.is_integer_dtype(d) for d in values.dtypes]
    if not all(numeric):
        values = values.copy()
        for position in (p for p, ok in enumerate(numeric) if not ok):
            column = values.iloc[:, position]
            row = _bad_cell(column)
            if row is not None:
                raise UserInputError(f"M4 file {path}: series {ids[row]} holds {column.iloc[row]!r} in column "
                                     f"{value_columns[position]}, not a number")
            # Text that parses as numbers after all (e.g. padded with spaces).
            values.isetitem(position, pd.to_numeric(column))
    array = values.to_numpy(dtype=np.float64)
    rows = _check_values(array, ids, value_columns, path)
    out: dict[str, np.ndarray] = {}
    for series_id, row in zip(ids, rows, strict=True):
        if series_id in seen or series_id in out:
            raise UserInputError(f"M4 file {path} lists series {series_id} more than once")
        out[series_id] = row
    return out


def _pickle_refusal(path: Path, root: Path, what: str) -> UserInputError:
    needed = ", ".join(M4_SERIES_FILES[:2]) + ", ..., " + M4_SERIES_FILES[-1]
    return UserInputError(
        f"M4 file {path} {what}, and this project never unpickles data files (unpickling runs whatever code the "
        f"file names); nothing was loaded: put the published per-group CSVs ({needed}) in {root}/ beside "
        f"M4-info.csv, {_fetch_hint(root)}")


def _read_array_file(path: Path, root: Path, n_rows: int) -> np.ndarray:
    """The `[N, T]` float array of a pickle-free training.npz / test.npz (`.npy` or one-array `.npz`)."""
    with path.open("rb") as f:
        magic = f.read(6)
    if magic.startswith(_PICKLE_PROTO):
        raise _pickle_refusal(path, root, "is a pickle (N-BEATS writes training.npz/test.npz with ndarray.dump)")
    if not (magic.startswith(_NPY_MAGIC) or magic.startswith(_ZIP_MAGIC)):
        raise _pickle_refusal(path, root, "is neither a .npy nor a .npz array file")
    try:
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                names = loaded.files
                loaded = loaded[names[0]] if len(names) == 1 else None
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise _pickle_refusal(path, root, "holds a pickled object array") from exc
        raise UserInputError(f"M4 file {path} is not a readable numpy array file ({exc})") from exc
    except (OSError, EOFError) as exc:
        raise UserInputError(f"M4 file {path} is not a readable numpy array file ({exc})") from exc
    if loaded is None:
        raise UserInputError(f"M4 file {path} holds arrays {names}; expected exactly one")
    if loaded.ndim != 2 or loaded.dtype.kind not in "fiu":
        raise UserInputError(f"M4 file {path} holds a {loaded.ndim}-D {loaded.dtype} array; expected a 2-D float "
                             "array (one row per M4-info.csv series, NaN after a series' end)")
    if len(loaded) != n_rows:
        raise UserInputError(f"M4 file {path} has {len(loaded)} series but M4-info.csv lists {n_rows}")
    return loaded.astype(np.float64, copy=False)


def _group_from_csv(path: Path, info_path: Path, group: str, ids: list[str]) -> list[np.ndarray]:
    series = _read_csv_series(path)
    wanted = set(ids)
    unknown = [i for i in series if i not in wanted]
    if unknown:
        raise UserInputError(f"M4 file {path} holds series {unknown[0]}, which {info_path} does not list as "
                             f"{group} ({len(unknown)} such)")
    absent = [i for i in ids if i not in series]
    if absent:
        raise UserInputError(f"M4 file {path} lacks series {absent[0]}, which {info_path} lists as {group} "
                             f"({len(absent)} missing)")
    return [series[i] for i in ids]


def _check_test_lengths(path: Path, ids: Iterable[str], values: list[np.ndarray], horizons: np.ndarray) -> None:
    for series_id, series, horizon in zip(ids, values, horizons, strict=True):
        if len(series) != horizon:
            raise UserInputError(f"M4 file {path}: series {series_id} has {len(series)} test values but "
                                 f"M4-info.csv gives it Horizon {horizon}")


@dataclass(frozen=True)
class M4Data:
    """One M4 split of some groups: per series (M4-info order) its id, group (SP), frequency, horizon and values."""

    ids: np.ndarray
    groups: np.ndarray
    frequencies: np.ndarray
    horizons: np.ndarray
    values: list[np.ndarray]

    def group(self, name: str) -> tuple[np.ndarray, list[np.ndarray]]:
        """(ids, series) of group `name`, in M4-info order."""
        rows = np.flatnonzero(self.groups == name)
        return self.ids[rows], [self.values[i] for i in rows]


def load_m4(root: str | Path, training: bool, groups: Iterable[str] = M4_GROUPS) -> M4Data:
    """Read M4-info.csv and the training (`training`) or test values of `groups` from `root`: each group's
    CSV, else the pickle-free training.npz / test.npz; one-line errors otherwise (never unpickles)."""
    root = Path(root)
    info = _read_info(root)
    info_path, n_series = root / M4_FILES["info"], len(info)
    groups = [check_seasonal_patterns(g) for g in groups]
    rows = np.flatnonzero(info["SP"].isin(groups).to_numpy())
    info = info.iloc[rows]
    values: dict[str, np.ndarray] = {}
    array: np.ndarray | None = None
    array_path = root / M4_ARRAY_FILES[_split(training)]
    for group in groups:
        selected = info[info["SP"] == group]
        ids = selected["M4id"].tolist()
        csv_path = root / series_csv(group, training)
        if not ids:  # M4-info.csv lists none: no file to read
            continue
        if csv_path.is_file():
            group_values = _group_from_csv(csv_path, info_path, group, ids)
            source = csv_path
        elif array_path.is_file():
            if array is None:
                array = _read_array_file(array_path, root, n_series)
            source = array_path
            picked = array[rows[(info["SP"] == group).to_numpy()]]
            group_values = _check_values(picked, ids, [f"V{c + 2}" for c in range(array.shape[1])], array_path)
        else:
            raise MissingDataError(f"M4 file {csv_path} not found; put the published {series_csv(group, True)} and "
                                   f"{series_csv(group, False)} in {root}/ beside M4-info.csv, {_fetch_hint(root)}")
        if not training:
            _check_test_lengths(source, ids, group_values, selected["Horizon"].to_numpy())
        values.update(zip(ids, group_values, strict=True))
    return M4Data(ids=info["M4id"].to_numpy(), groups=info["SP"].to_numpy(), frequencies=info["Frequency"].to_numpy(),
                  horizons=info["Horizon"].to_numpy(), values=[values[i] for i in info["M4id"]])


def load_naive2(root: str | Path, ids: np.ndarray) -> np.ndarray:
    """Naive2 forecasts of the series `ids` (one group), `[N, H]`, from submission-Naive2.csv (rows found by id)."""
    root = Path(root)
    path = root / M4_FILES["naive2"]
    if not path.is_file():
        raise MissingDataError(f"M4 file {path} not found; put the M4 competition's {M4_FILES['naive2']} in "
                               f"{root}/ (only the OWA summary reads it), {_fetch_hint(root)}")
    table = pd.read_csv(path, index_col=0)
    absent = [i for i in ids if i not in table.index]
    if absent:
        raise UserInputError(f"M4 file {path} has no Naive2 forecast for {absent[0]} ({len(absent)} series missing)")
    rows = table.loc[list(ids)].to_numpy(dtype=np.float64)
    return np.stack([row[~np.isnan(row)] for row in rows])


class Dataset_M4(ShortTermSeries):  # noqa: N801 - TSLib's public name
    """TSLib's M4 loader for one `seasonal_patterns` group (see the module docstring; the windows are
    `ShortTermSeries`')."""

    series_name = "M4 series"

    def __init__(self, args: argparse.Namespace | None, root_path: str, flag: str = "pred",
                 size: list[int] | None = None, features: str = "S", data_path: str = "",
                 target: str = "OT", timeenc: int = 0, freq: str = "15min",
                 seasonal_patterns: str = "Yearly", **_: object) -> None:
        self.seasonal_patterns = check_seasonal_patterns(seasonal_patterns)
        self.set_lengths(size, HISTORY_SIZE[seasonal_patterns])
        self.flag = flag
        self.root_path = root_path
        strict = is_strict(args)
        training = flag == "train" or (strict and flag == "val")
        csv = Path(root_path) / series_csv(seasonal_patterns, training)
        self.data_path = str(csv if csv.is_file() else Path(root_path) / M4_ARRAY_FILES[_split(training)])
        data = load_m4(root_path, training=training, groups=[seasonal_patterns])
        self.ids, self.timeseries = data.group(seasonal_patterns)
        if not self.timeseries:
            raise UserInputError(f"{Path(root_path) / M4_FILES['info']} lists no {seasonal_patterns} series")
        #: the whole training series (train split), which the test forecasts start from
        self.history = self.timeseries
        if strict and training:
            self.history, self.timeseries = self.hold_out_last_horizon(flag, f"the {seasonal_patterns} horizon")
        if flag == "train":
            self.check_trainable()
