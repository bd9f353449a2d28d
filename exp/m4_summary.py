"""TSLib's `M4Summary(file_path, root_path).evaluate()`: score the six `<Group>_forecast.csv` files of
`./m4_results/<model>/` against the M4 test values, with Naive2 as the OWA reference (utils/m4_summary.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.m4 import FREQUENCIES, load_m4, load_naive2
from utils.errors import UserInputError
from utils.m4_summary import M4_GROUPS, group_scores, summary

__all__ = ["M4Summary", "forecast_file", "read_forecasts"]


def forecast_file(folder: str | Path, group: str) -> Path:
    """`<folder>/<group>_forecast.csv`, the file TSLib's short-term test writes per group."""
    return Path(folder) / f"{group}_forecast.csv"


def read_forecasts(path: Path, ids: np.ndarray, horizon: int) -> np.ndarray:
    """Forecasts `[N, H]` for the series `ids` from a forecast CSV.

    Ours have an `id` column and are matched by id; TSLib's own files have none (its `set_index` drops
    the ids) and are taken row by row, in M4-info order.
    """
    table = pd.read_csv(path)
    if "id" in table.columns:
        table = table.set_index("id")
        absent = [i for i in ids if i not in table.index]
        if absent:
            raise UserInputError(f"{path} has no forecast for series {absent[0]} ({len(absent)} missing)")
        table = table.loc[list(ids)]
    values = table.to_numpy(dtype=np.float64)
    if values.shape != (len(ids), horizon):
        raise UserInputError(f"{path} holds {values.shape[0]}×{values.shape[1]} forecasts; the group needs "
                             f"{len(ids)}×{horizon}")
    return values


class M4Summary:
    """Score a folder of per-group forecasts. `evaluate()` returns TSLib's four dicts (smape, owa, mape,
    mase), each over Yearly, Quarterly, Monthly, Others and Average, rounded to 3 decimals;
    `evaluate_full()` returns them unrounded, keyed by metric."""

    def __init__(self, file_path: str | Path, root_path: str | Path) -> None:
        self.file_path = Path(file_path)
        self.root_path = Path(root_path)

    def complete(self) -> bool:
        """Whether all six forecast files exist (TSLib only summarises then)."""
        return all(forecast_file(self.file_path, g).is_file() for g in M4_GROUPS)

    def evaluate_full(self) -> dict[str, dict[str, float]]:
        training = load_m4(self.root_path, training=True)
        test = load_m4(self.root_path, training=False)
        model, naive2, counts = {}, {}, {}
        for group in M4_GROUPS:
            ids, targets = test.group(group)
            _, insample = training.group(group)
            target = np.stack(targets)  # [N, H]
            forecast = read_forecasts(forecast_file(self.file_path, group), ids, target.shape[1])
            model[group] = group_scores(forecast, insample, target, FREQUENCIES[group])
            naive2[group] = group_scores(load_naive2(self.root_path, ids), insample, target, FREQUENCIES[group])
            counts[group] = len(ids)
        return summary(model, naive2, counts)

    def evaluate(self) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, float]]:
        scores = self.evaluate_full()
        rounded = {name: {k: round(v, 3) for k, v in table.items()} for name, table in scores.items()}
        return rounded["smape"], rounded["owa"], rounded["mape"], rounded["mase"]
