"""Short-term (M4) forecasting with a trained model: the next H values of every series of a table in M4's per-group
layout (first column the series id, then its values, ragged rows padded with empty cells; M4's own
`<Group>-train.csv` is one).

Each series is forecast as the experiment forecasts the M4 test (exp/exp_short_term_forecasting.py): its last
seq_len = 2H values, left-padded with zeros, through `ShortTermStep.forecast` (no scaling, no time marks).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from data_provider.m4 import read_series_csv
from exp.exp_short_term_forecasting import ShortTermStep
from predict.trained import TrainedModel
from utils.errors import UserInputError

__all__ = ["SeriesForecaster"]


class SeriesForecaster(TrainedModel):
    """`forecast(path)` of a short_term_forecast checkpoint."""

    method = "forecast"

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.step = ShortTermStep(self.model, self.args, self.device)

    def forecast(self, source: str | os.PathLike | dict[str, np.ndarray]) -> pd.DataFrame:
        """One row per series: `id` and V1..VH (the next H values). `source`: a CSV in M4's per-group layout, or
        {id: values}."""
        series = read_series_csv(source) if isinstance(source, (str, os.PathLike)) else dict(source)
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
