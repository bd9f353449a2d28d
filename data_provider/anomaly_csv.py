"""The custom anomaly-detection format (`--data anomaly_csv`) and the labelled series registered in it
(`--data Yahoo`, `--data MITDB`: `data_provider.registry.ANOMALY_CSV_DATASETS`).

One CSV file, `--root_path` / `--data_path` (the registered sets: their file in `--root_path`), with a header row:

    timestamp | date | index   optional, the first column only; dropped (the rows are in time order)
    <value columns>            one or more numeric columns: the C channels
    label                      exactly one column named `label`: 0 (normal) or 1 (anomaly), one per row

Split: with T rows and train ratio r (`--anomaly_train_ratio`, default 0.5, for `anomaly_csv`; fixed per
registered set), rows 0 .. int(r·T) − 1 are the training series and the rest the test series with its labels.
TSLib's four splits follow (`SegmentDataset`): val = the last 20% of the training rows. The model never sees a
label; the labels of the training rows are checked like the others but never read.

Every value must be a finite number float32 can square (|x| <= 1.845e19) and every label 0 or 1: text, an empty cell, inf,
|x| > 3.4e38, a second `label` column, a missing one or a label other than 0/1 is one line naming the file,
its line number (the header is line 1) and the column. Under `--protocol strict` the train and val splits
check and read the training rows only; the test rows are read (and checked) by the test split, after training.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.anomaly_loader import SegmentDataset
from data_provider.float32_range import unusable_mask, unusable_reason
from data_provider.registry import ANOMALY_CSV_DATASETS, anomaly_csv_file
from data_provider.text_numbers import parse_numbers
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

__all__ = ["DEFAULT_TRAIN_RATIO", "INDEX_COLUMNS", "LABEL_COLUMN", "AnomalyCSV", "AnomalyCSVLoader",
           "MITDBSegLoader", "YahooSegLoader", "check_anomaly_csv_args", "read_anomaly_csv", "train_rows"]

LABEL_COLUMN = "label"
#: names (any case) of the optional first column that is not a channel
INDEX_COLUMNS = ("timestamp", "date", "index")
#: `--anomaly_train_ratio` when not given (`--data anomaly_csv`)
DEFAULT_TRAIN_RATIO = 0.5
#: the --data key of the generic format
GENERIC = "anomaly_csv"


def check_anomaly_csv_args(args: argparse.Namespace) -> None:
    """--anomaly_train_ratio: in (0, 1), and only for `--task_name anomaly_detection --data anomaly_csv` (the
    registered sets have a fixed split); one line otherwise."""
    ratio = getattr(args, "anomaly_train_ratio", flag_default("anomaly_train_ratio"))
    if ratio is None:
        return
    if args.data != GENERIC or args.task_name != "anomaly_detection":
        fixed = ANOMALY_CSV_DATASETS.get(args.data)
        why = (f"--data {args.data} has the fixed split {fixed.train_ratio} (data_provider/registry.py); for another "
               f"use --data {GENERIC} --data_path {fixed.file}" if fixed is not None
               else f"it splits the file of --task_name anomaly_detection --data {GENERIC} only")
        raise UserInputError(f"--anomaly_train_ratio {ratio}: {why}; drop the flag")
    if not 0.0 < ratio < 1.0:
        raise UserInputError(f"--anomaly_train_ratio must lie in (0, 1) (the share of rows that trains), got {ratio}")


def train_rows(rows: int, ratio: float) -> int:
    """The number of training rows, int(ratio · rows)."""
    return int(ratio * rows)


class AnomalyCSV:
    """One file of the format: `values` `[T, C]` float64 as read (not yet checked), `labels` `[T]` (the raw cells),
    the channel `columns`, and what a message needs to name a cell (`path`, `value_positions`: the file column of
    each channel, `label_position`)."""

    def __init__(self, path: Path, frame: pd.DataFrame, columns: list[str], label_position: int,
                 value_positions: list[int]) -> None:
        self.path = path
        self.frame = frame
        self.columns = columns
        self.label_position = label_position
        self.value_positions = value_positions

    def __len__(self) -> int:
        return len(self.frame)

    def values(self, rows: slice) -> np.ndarray:
        """The channels of `rows` as float64 `[n, C]`: text, empty cells, inf and values whose square overflows float32 are one
        line naming file, line and column."""
        part = self.frame.iloc[rows, self.value_positions]
        out = np.empty(part.shape, dtype=np.float64)
        first = rows.start or 0
        for j, name in enumerate(self.columns):
            cells = part.iloc[:, j]
            numbers, text = parse_numbers(cells)
            if text.size:
                self._fail(first + int(text[0]), name, f"holds the text {cells.iloc[text[0]]!r} where a number belongs")
            bad = np.flatnonzero(unusable_mask(numbers))
            if bad.size:
                i = int(bad[0])
                if cells.iloc[i] is None or pd.isna(cells.iloc[i]):
                    self._fail(first + i, name, f"is empty: every value must be a finite number ({bad.size} empty "
                                                "or unusable cells here)")
                raise UserInputError(f"{self.path} line {first + i + 2}, column {name!r} holds {cells.iloc[i]}, "
                                     f"{unusable_reason(float(numbers[i]), bad.size)}")
            out[:, j] = numbers
        return out

    def labels(self, rows: slice) -> np.ndarray:
        """The labels of `rows` as float `[n]` of 0/1; any other cell is one line naming file, line and column."""
        cells = self.frame.iloc[rows, self.label_position]
        numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isin(numbers, (0.0, 1.0)))
        if bad.size:
            cell = cells.iloc[int(bad[0])]
            shown = "is empty" if cell is None or pd.isna(cell) else f"holds {cell!r}"
            self._fail((rows.start or 0) + int(bad[0]), LABEL_COLUMN,
                       f"{shown}; every label must be 0 (normal) or 1 (anomaly) ({bad.size} such rows here)")
        return numbers

    def _fail(self, row: int, column: str, what: str) -> None:
        raise UserInputError(f"{self.path} line {row + 2}, column {column!r} {what}; fix the file")


def read_anomaly_csv(path: str | Path) -> AnomalyCSV:
    """Read the file's header and cells (as text); the header must hold one `label` column and at least one value
    column (one line otherwise). The cells are checked when a split takes its rows (`AnomalyCSV.values`/`labels`)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        frame = pd.read_csv(path, header=0, names=None, dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise UserInputError(f"{path}: cannot be read as a csv table ({str(err).strip().splitlines()[0]}); the anomaly "
                             "CSV format is a header row, then one row per time step") from None
    names = [name.strip() for name in header]
    labels = [i for i, name in enumerate(names) if name == LABEL_COLUMN]
    if not labels:
        raise UserInputError(f"{path}: no column named {LABEL_COLUMN!r} (columns: {', '.join(names) or 'none'}); the "
                             f"anomaly CSV format needs one column {LABEL_COLUMN!r} of 0/1, one per row")
    if len(labels) > 1:
        raise UserInputError(f"{path}: {len(labels)} columns are named {LABEL_COLUMN!r} (columns "
                             f"{', '.join(str(i + 1) for i in labels)}); the labels must be one column of 0/1")
    if len(frame.columns) != len(names):
        raise UserInputError(f"{path}: the header names {len(names)} columns and the rows hold {len(frame.columns)}; "
                             "every row needs one cell per header column")
    if frame.empty:
        raise UserInputError(f"{path}: holds a header but no rows")
    skip = {labels[0]} | ({0} if names[0].lower() in INDEX_COLUMNS else set())
    positions = [i for i in range(len(names)) if i not in skip]
    if not positions:
        raise UserInputError(f"{path}: no value column beside {', '.join(names)}; the anomaly CSV format needs at "
                             f"least one numeric column besides {LABEL_COLUMN!r}")
    return AnomalyCSV(path, frame, [names[i] for i in positions], labels[0], positions)


class AnomalyCSVLoader(SegmentDataset):
    """`--data anomaly_csv`: the file `--root_path`/`--data_path`, split at `--anomaly_train_ratio` (module
    docstring)."""

    name = GENERIC

    def files(self, root_path: str, data_path: str) -> list[Path]:
        path = Path(root_path) / data_path
        if not path.is_file():
            raise UserInputError(f"--data {self.name}: {path} not found; pass --root_path DIR --data_path FILE.csv of "
                                 "a CSV with value columns and a 0/1 'label' column (README, Datasets)")
        return [path]

    def train_ratio(self, args: argparse.Namespace | None) -> float:
        ratio = getattr(args, "anomaly_train_ratio", flag_default("anomaly_train_ratio"))
        return DEFAULT_TRAIN_RATIO if ratio is None else float(ratio)

    def _table(self, paths: list) -> tuple[AnomalyCSV, int]:
        """The file and its number of training rows (at least one training and one test row)."""
        table = read_anomaly_csv(paths[0])
        self._columns = table.columns
        ratio = self.train_ratio(self.args)
        n_train = train_rows(len(table), ratio)
        if not 0 < n_train < len(table):
            raise UserInputError(f"--data {self.name}: train ratio {ratio} of the {len(table)} rows of {paths[0]} "
                                 f"leaves {n_train} training and {len(table) - n_train} test rows; both need one")
        return table, n_train

    def read(self, paths: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        table, n_train = self._table(paths)
        everything = slice(0, len(table))
        values, labels = table.values(everything), table.labels(everything)
        return values[:n_train], values[n_train:], labels[n_train:]

    def read_train(self, paths: list) -> np.ndarray:
        table, n_train = self._table(paths)
        table.labels(slice(0, n_train))
        return table.values(slice(0, n_train))

    def channel_names(self, paths: list) -> list[str]:
        """The value columns of the header (read by `read` / `read_train`)."""
        return list(self._columns)


class _RegisteredCSV(AnomalyCSVLoader):
    """A labelled series registered in the format: its file in --root_path and its fixed train ratio."""

    def files(self, root_path: str, data_path: str) -> list[Path]:
        return [anomaly_csv_file(self.name, root_path)]

    def train_ratio(self, args: argparse.Namespace | None) -> float:
        return ANOMALY_CSV_DATASETS[self.name].train_ratio


class YahooSegLoader(_RegisteredCSV):
    name = "Yahoo"


class MITDBSegLoader(_RegisteredCSV):
    name = "MITDB"

