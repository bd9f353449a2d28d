"""Short-term (M4) forecasting with a trained model: the next H values of every series of a table in M4's per-group
layout (first column the series id, then its values, ragged rows padded with empty cells; M4's own
`<Group>-train.csv` is one). A table of time steps (a first column of dates, or of numbers with fractions, where the
ids belong) is refused rather than read as one series per row.

Each series is forecast as the experiment forecasts the M4 test (exp/exp_short_term_forecasting.py): its last
seq_len = 2H values, left-padded with zeros, through `ShortTermStep.forecast` (no scaling, no time marks).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.m4 import read_series_csv
from exp.exp_short_term_forecasting import ShortTermStep
from predict.trained import TrainedModel
from utils.errors import UserInputError

__all__ = ["SeriesForecaster"]


#: how many first cells `_check_layout` looks at
_LAYOUT_ROWS = 1000
#: a date, or a date and time ("2016-07-01 00:00:00", "7/1/2016"): a cell of a table's time column
_DATE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?")
#: a number with a fraction or an exponent ("0.5", "1e3"): a value, never an M4-style series id
_FRACTION = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)")


def _first_column(path: Path) -> tuple[str, list[str]] | None:
    """The header and first cells of a CSV's first column; None when pandas cannot read them (read_series_csv
    then says why)."""
    try:
        column = pd.read_csv(path, usecols=[0], dtype=str, nrows=_LAYOUT_ROWS, keep_default_na=False).iloc[:, 0]
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError):
        return None
    return str(column.name), [cell.strip() for cell in column]


class SeriesForecaster(TrainedModel):
    """`forecast(path)` of a short_term_forecast checkpoint."""

    method = "forecast"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.step = ShortTermStep(self.model, self.args, self.device)

    def _check_layout(self, path: Path) -> None:
        """UserInputError when the file is a table of time steps (a long-term forecasting CSV such as ETTh1.csv)
        rather than M4's per-group layout: its first column holds dates, or numbers with fractions, where the
        series ids belong. Read as series, each of its rows would be forecast as a series of its own."""
        first = _first_column(path) if path.is_file() else None
        if first is None or not first[1]:
            return
        header, cells = first
        if all(_DATE.fullmatch(cell) for cell in cells):
            found = f"dates such as {cells[0]!r}"
        elif all(_FRACTION.fullmatch(cell) for cell in cells):
            found = f"numbers such as {cells[0]!r}"
        else:
            return
        group = self.data.get("seasonal_patterns", "Yearly")
        raise UserInputError(f"{path} looks like a table with one row per time step (its first column {header!r} "
                             f"holds {found}, not series ids); this {self.task_name} model reads M4's per-group "
                             "layout: one row per series, its id first (such as Y1), then its values in time order, "
                             f"empty cells padding shorter rows (as M4's {group}-train.csv)")

    def forecast(self, source: str | os.PathLike | dict[str, np.ndarray]) -> pd.DataFrame:
        """One row per series: `id` and V1..VH (the next H values). `source`: a CSV in M4's per-group layout, or
        {id: values}."""
        if isinstance(source, (str, os.PathLike)):
            self._check_layout(Path(source))
            series = read_series_csv(source)
        else:
            series = dict(source)
        if not series:
            raise UserInputError(f"{source} holds no series")
        L, H = self.args.seq_len, self.args.pred_len
        windows = np.zeros((len(series), L))
        for i, (series_id, values) in enumerate(series.items()):
            values = np.asarray(values, dtype=np.float64)
            if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
                raise UserInputError(f"series {series_id}: give a non-empty list of finite numbers")
            last = values[-L:]
            windows[i, L - len(last):] = last
        preds = self.step.forecast(windows, self.model).astype(np.float64)  # [N, H]
        self._finite(preds, "forecast", str(source) if isinstance(source, (str, os.PathLike)) else "the series")
        return pd.DataFrame({"id": list(series), **{f"V{h + 1}": preds[:, h] for h in range(H)}})
