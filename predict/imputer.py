"""Imputation with a trained imputation model: a table with missing cells → the same table with them filled.

The table is cut into windows of seq_len rows (back to back; the last one ends at the last row), and each window
goes through the model as the experiment feeds a masked test window (exp/imputation_step.py):

    x    = (rows − mean) / scale, 0 where a cell is missing   `[L, C]` float32, the card's training scaler
    m    = 0 where a cell is missing, 1 where observed         `[L, C]`
    x̂    = model(x, x_mark, None, None, m)                     `[L, c_out]`
    cell = x̂[..., f:] · scale + mean  where m = 0              (f: −1 for --features MS, else 0)

Only the model's reconstructed columns are filled (M: every column, S: the one column, MS: the last column); a
missing cell in another column is an error, since the model cannot fill it. Each row is filled from the first
window holding it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from data_provider.data_loader import window_marks
from predict.frames import Table, as_table
from predict.trained import TrainedModel, covering_windows
from utils.errors import UserInputError

__all__ = ["Imputer"]


class Imputer(TrainedModel):
    """`impute(frame)` of an imputation checkpoint."""

    method = "impute"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.filled_columns = list(self.data["forecast_columns"])
        self._fill_index = [self.data["input_columns"].index(c) for c in self.filled_columns]

    def _inputs(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """The read values `[N, C]` (NaN where missing) and the marks `[N, F]`, after the checks."""
        data = self.data
        table.require_columns(data["input_columns"], data["date_column"])
        table.require_rows(self.args.seq_len, f"the model fills windows of --seq_len {self.args.seq_len} rows")
        values = table.numbers(data["input_columns"], 0, len(table.frame), allow_missing=True)
        missing = np.isnan(values)
        other = [j for j in range(values.shape[1]) if j not in self._fill_index and missing[:, j].any()]
        if other:
            row = int(np.flatnonzero(missing[:, other[0]])[0])
            raise UserInputError(f"{table.name}: {table.row(row)}, column {data['input_columns'][other[0]]!r} is "
                                 f"missing, but this --features {data['features']} model fills "
                                 f"{', '.join(self.filled_columns)} only; fill it first")
        dates = (table.dates(data["date_column"], 0, len(table.frame), data["time_step"])
                 if data["date_column"] else None)
        return values, window_marks(dates, len(values), data["freq"], data["timeenc"])

    @torch.no_grad()
    def _reconstruct(self, x: np.ndarray, mask: np.ndarray, marks: np.ndarray) -> np.ndarray:
        """The model's reconstruction `[N, K]` (standardised) of every row, window by window."""
        L, batch = self.args.seq_len, max(1, self.args.batch_size)
        starts = covering_windows(len(x), L)
        out = np.full((len(x), len(self._fill_index)), np.nan, dtype=np.float32)
        target_from = -1 if self.data["features"] == "MS" else 0
        for chunk in range(0, len(starts), batch):
            group = starts[chunk:chunk + batch]
            xs = torch.from_numpy(np.stack([x[s:s + L] for s in group])).to(self.device)
            ms = torch.from_numpy(np.stack([mask[s:s + L] for s in group])).to(self.device)
            marks_in = torch.from_numpy(np.stack([marks[s:s + L] for s in group])).to(self.device)
            recon = self.model(xs.masked_fill(ms == 0, 0.0), marks_in, None, None, ms)[..., target_from:]
            recon = recon.float().cpu().numpy()
            for s, window in zip(group, recon, strict=True):
                rows = np.isnan(out[s:s + L, 0])  # rows no earlier window filled
                out[s:s + L][rows] = window[rows]
        return out

    def impute(self, frame: pd.DataFrame | Table) -> pd.DataFrame:
        """A copy of the table with every missing cell of the filled columns replaced by the model's value (in the
        data's units); every other cell as it was."""
        table = as_table(frame)
        values, marks = self._inputs(table)
        scaler = self.data["scaler"]
        scaled = self._scale(values, scaler["mean"], scaler["scale"]) if scaler else values.astype(np.float32)
        observed = (~np.isnan(scaled)).astype(np.float32)
        recon = self._reconstruct(np.nan_to_num(scaled, nan=0.0), observed, marks).astype(np.float64)
        if scaler:
            recon = recon * np.asarray(scaler["scale"])[self._fill_index] + np.asarray(scaler["mean"])[self._fill_index]
        self._finite(recon, "imputation", table.name)
        result = table.frame.copy()
        for k, (j, name) in enumerate(zip(self._fill_index, self.filled_columns, strict=True)):
            hidden = observed[:, j] == 0
            column = values[:, j].copy()
            column[hidden] = recon[hidden, k]
            result[name] = column
        return result

    def filled_cells(self, frame: pd.DataFrame | Table) -> np.ndarray:
        """`[N, K]` bool: the cells of the filled columns that `impute` fills."""
        table = as_table(frame)
        return np.isnan(table.numbers(self.filled_columns, 0, len(table.frame), allow_missing=True))
