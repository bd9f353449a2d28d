"""Forecasting with a trained long-term forecasting model: the next pred_len steps after a table's last row
(`forecast`), and a back-test over every window of a table (`rolling`).

The window is built as the training loader builds it (data_provider/data_loader.py) and run through the training
step's own forward (`ForecastStep.predict`):

    x      = (rows[N−L, N) − mean) / scale                    `[L, C]` float32, the card's training scaler
    x_mark = time marks of their timestamps                   `[L, F]` (timeF or calendar, the card's --freq)
    y_mark = marks of rows[N−Ll, N) and of the H next steps   `[Ll+H, F]`, the steps continue the file's
    dec    = [x[−Ll:]; 0]                                     `[Ll+H, C]` decoder input (the loader's y, known part)
    ŷ      = model(x, x_mark, dec, y_mark)[−H:, f:] · scale + mean   (f: −1 for --features MS, else 0)

so the forecast of a table that ends where a test window's input ends is that window's test prediction,
inverse-scaled.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch

from data_provider.data_factory import DATA_DICT
from data_provider.data_loader import split_windows, window_marks
from exp.train_step import ForecastStep
from predict.frames import Table, as_table, future_dates
from predict.trained import TrainedModel
from utils.errors import UserInputError

__all__ = ["ROLLING_SPLITS", "Forecaster", "Scored"]

#: which windows `rolling` back-tests: every window of the table, or those of one split as the training loader cuts it
ROLLING_SPLITS = ("all", "train", "val", "test")


class Scored(NamedTuple):
    """A result table and its scores against the truth in the input (None when the input holds no truth)."""

    frame: pd.DataFrame
    metrics: dict[str, Any] | None


class Forecaster(TrainedModel):
    """`forecast(frame)` and `rolling(frame)` of a long-term forecasting checkpoint."""

    method = "forecast"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.step = ForecastStep(self.model, self.args, self.device)
        columns = self.data["input_columns"]
        self.forecast_columns = list(self.data["forecast_columns"])
        self._out_index = [columns.index(name) for name in self.forecast_columns]
        self.seq_len, self.label_len, self.pred_len = self.args.seq_len, self.args.label_len, self.args.pred_len

    def _read(self, table: Table, start: int, stop: int,
              extra: int) -> tuple[np.ndarray, np.ndarray, pd.DatetimeIndex | None]:
        """Rows start..stop-1 as read `[rows, C]` float64 and scaled (float32, as the loader serves them), and
        their timestamps continued by `extra` steps (None for files without timestamps)."""
        data = self.data
        values = table.numbers(data["input_columns"], start, stop)
        scaled = self._scale(values, data["scaler"]["mean"], data["scaler"]["scale"]) if data["scaler"] else (
            values.astype(np.float32))
        if data["date_column"] is None:
            return values, scaled, None
        dates = table.dates(data["date_column"], start, stop, data["time_step"])
        if extra:
            dates = dates.append(future_dates(dates[-1], data["time_step"], extra))
        return values, scaled, dates

    def _marks(self, dates: pd.DatetimeIndex | None, rows: int) -> np.ndarray:
        return window_marks(dates, rows, self.data["freq"], self.data["timeenc"])

    def _inverse(self, scaled: np.ndarray) -> np.ndarray:
        """Forecast channels `[..., K]` back to the data's units (float64)."""
        scaler = self.data["scaler"]
        if scaler is None:
            return scaled.astype(np.float64)
        mean = np.asarray(scaler["mean"])[self._out_index]
        scale = np.asarray(scaler["scale"])[self._out_index]
        return scaled.astype(np.float64) * scale + mean

    @torch.no_grad()
    def _predict(self, x: np.ndarray, marks: np.ndarray, starts: list[int]) -> np.ndarray:
        """Scaled forecasts `[W, H, K]` of the windows whose input starts at each of `starts` (rows of x/marks)."""
        L, Ll, H = self.seq_len, self.label_len, self.pred_len
        preds = []
        for chunk in range(0, len(starts), max(1, self.args.batch_size)):
            batch = starts[chunk:chunk + max(1, self.args.batch_size)]
            xs = np.stack([x[s:s + L] for s in batch])  # [B, L, C]
            ys = np.concatenate([xs[:, L - Ll:], np.zeros((len(batch), H, xs.shape[-1]), np.float32)], axis=1)
            x_marks = np.stack([marks[s:s + L] for s in batch])
            y_marks = np.stack([marks[s + L - Ll:s + L + H] for s in batch])
            out, _ = self.step.predict(tuple(torch.from_numpy(a) for a in (xs, ys, x_marks, y_marks)))
            preds.append(out[..., self.step.target_from:].float().cpu().numpy())
        return np.concatenate(preds)

    def forecast(self, frame: pd.DataFrame | Table) -> pd.DataFrame:
        """The next pred_len steps after the table's last row: one row per step, the timestamp column (or `row`, the
        position, for files without timestamps) and one column per forecast variate, in the data's units."""
        table = as_table(frame)
        table.require_columns(self.data["input_columns"], self.data["date_column"])
        table.require_rows(self.seq_len, f"the model reads the last --seq_len {self.seq_len} rows")
        n, H = len(table.frame), self.pred_len
        _, x, dates = self._read(table, n - self.seq_len, n, extra=H)
        marks = self._marks(dates, self.seq_len + H)
        pred = self._finite(self._inverse(self._predict(x, marks, [0])[0]), "forecast", table.name)  # [H, K]
        index = self._time_column(dates[-H:] if dates is not None else None, n, H)
        return pd.DataFrame({**index, **{name: pred[:, k] for k, name in enumerate(self.forecast_columns)}})

    def rolling(self, frame: pd.DataFrame | Table, split: str = "all") -> Scored:
        """Windows of the table, as a back-test: window w reads rows w..w+L−1 and forecasts the H rows after them.
        One row per (window, step): `window` (w), `origin` (the window's last input timestamp or row), the step's
        timestamp (or row), `step` (1..H), each forecast variate and `<variate>_true` (empty past the table's end).
        Metrics over the windows whose H rows are all in the table: `mse`/`mae` on the standardised values (what
        run.py's test reports), `mse_original`/`mae_original` in the data's units, per variate too.

        split: "all" (every window), or "train" / "val" / "test": only the windows the training loader serves as
        that split of a file of the table's rows (`rolling_windows`); on the training file, "test" scores exactly
        the windows run.py's test scores."""
        table = as_table(frame)
        table.require_columns(self.data["input_columns"], self.data["date_column"])
        table.require_rows(self.seq_len, f"a window reads --seq_len {self.seq_len} rows")
        n, L, H = len(table.frame), self.seq_len, self.pred_len
        starts = self.rolling_windows(n, split, table.name)
        values, x, dates = self._read(table, 0, n, extra=H)
        x = np.concatenate([x, np.zeros((H, x.shape[1]), np.float32)])  # [N + H, C]: the future is never read
        scaled = self._predict(x, self._marks(dates, n + H), list(starts))  # [W, H, K]
        # The truth of window w's step h is row w + L + h where the table has it (NaN past its end).
        rows = np.asarray(starts)[:, None] + L + np.arange(H)[None, :]  # [W, H]
        inside = rows < n
        truth_scaled = np.where(inside[..., None], x[np.minimum(rows, n - 1)][..., self._out_index], np.nan)
        truth = np.where(inside[..., None], values[np.minimum(rows, n - 1)][..., self._out_index], np.nan)
        pred = self._finite(self._inverse(scaled), "rolling forecast", table.name)
        metrics = self._rolling_metrics(scaled, truth_scaled, pred, truth)
        return Scored(self._rolling_table(pred, truth, dates, np.asarray(starts)), metrics)

    def rolling_windows(self, rows: int, split: str = "all", name: str = "the table") -> range:
        """The first input row of each window `rolling` scores in a table of `rows` rows (`split`: see `rolling`;
        the table is split as run.py's --data of the card splits its file). UserInputError for an unknown split or
        a split without a whole window."""
        if split not in ROLLING_SPLITS:
            raise UserInputError(f"--rolling_split {split!r} is not one of {', '.join(ROLLING_SPLITS)}")
        if split == "all":
            return range(rows - self.seq_len + 1)
        windows = split_windows(DATA_DICT[self.args.data], rows, self.seq_len, self.pred_len, split, name)
        if not windows:
            raise UserInputError(f"--rolling_split {split}: the {split} split of {name} (its {rows} rows as --data "
                                 f"{self.args.data} splits them) holds no window of --seq_len {self.seq_len} + "
                                 f"--pred_len {self.pred_len} rows; pass the whole file")
        return windows

    def _time_column(self, dates: pd.DatetimeIndex | None, first_row: int, count: int) -> dict[str, Any]:
        if dates is not None:
            return {self.data["date_column"]: dates}
        return {"row": np.arange(first_row, first_row + count)}

    def _rolling_table(self, pred: np.ndarray, truth: np.ndarray, dates: pd.DatetimeIndex | None,
                       starts: np.ndarray) -> pd.DataFrame:
        W, H = pred.shape[:2]
        L = self.seq_len
        window = np.repeat(starts, H)
        target_rows = (starts[:, None] + L + np.arange(H)[None, :]).ravel()  # row of each forecast step
        origin_rows = window + L - 1
        if dates is not None:
            time = {"origin": dates[origin_rows], self.data["date_column"]: dates[target_rows]}
        else:
            time = {"origin": origin_rows, "row": target_rows}
        columns: dict[str, Any] = {"window": window, **time, "step": np.tile(np.arange(1, H + 1), W)}
        for k, name in enumerate(self.forecast_columns):
            columns[name] = pred[..., k].ravel()
            columns[f"{name}_true"] = truth[..., k].ravel()
        return pd.DataFrame(columns)

    def _rolling_metrics(self, scaled: np.ndarray, truth_scaled: np.ndarray, pred: np.ndarray,
                         truth: np.ndarray) -> dict[str, Any] | None:
        complete = ~np.isnan(truth_scaled).any(axis=(1, 2))
        if not complete.any():
            return None
        err_s = scaled[complete].astype(np.float64) - truth_scaled[complete]
        err = pred[complete] - truth[complete]
        return {
            "windows": int(complete.sum()),
            "mse": float(np.mean(err_s ** 2)), "mae": float(np.mean(np.abs(err_s))),
            "mse_original": float(np.mean(err ** 2)), "mae_original": float(np.mean(np.abs(err))),
            "per_variate": {name: {"mse_original": float(np.mean(err[..., k] ** 2)),
                                   "mae_original": float(np.mean(np.abs(err[..., k])))}
                            for k, name in enumerate(self.forecast_columns)},
        }
