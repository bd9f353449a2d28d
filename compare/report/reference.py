"""Reference numbers a comparison is held against (a paper's table, TSLib's own runs): read from a CSV
`dataset,pred_len,model,mse,mae` and looked up per (dataset, row, horizon) under every name the dataset
and the row are known by (`compare.recipes.tables.name_key`)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from compare.recipes.tables import RECIPES, name_key
from compare.report.ranking import AVG
from utils.errors import UserInputError

__all__ = ["Reference", "difference_pct", "load_reference", "reference_for", "reference_horizons", "reference_value"]

#: (normalised dataset, normalised model, pred_len or 'Avg') -> (mse, mae)
Reference = dict[tuple[str, str, int | str], tuple[float, float]]


def load_reference(path: str | Path) -> Reference:
    """Reference numbers keyed by (normalised dataset, normalised model, pred_len or 'Avg') -> (mse, mae).

    The CSV has columns dataset,pred_len,model,mse,mae (`variant` is accepted for `model`, as in the
    paper's ablation tables); a pred_len of `Avg` is the reference's own horizon average."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"reference file {path} does not exist; pass a CSV with columns "
                             "dataset,pred_len,model,mse,mae")
    table: Reference = {}
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields = set(reader.fieldnames or [])
        name_col = "model" if "model" in fields else "variant"
        missing = {"dataset", "pred_len", name_col, "mse", "mae"} - fields
        if missing:
            raise UserInputError(f"reference file {path} lacks columns {sorted(missing)}; "
                                 "expected dataset,pred_len,model,mse,mae")
        for number, rec in enumerate(reader, start=2):
            horizon_text = rec["pred_len"].strip()
            try:
                horizon: int | str = AVG if horizon_text.lower() == "avg" else int(horizon_text)
                values = (float(rec["mse"]), float(rec["mae"]))
            except ValueError:
                raise UserInputError(f"{path}:{number}: pred_len must be an integer or Avg and mse/mae numbers, "
                                     f"got {horizon_text!r}, {rec['mse']!r}, {rec['mae']!r}") from None
            for key in RECIPES.dataset_keys(rec["dataset"]):
                table[(key, name_key(rec[name_col]), horizon)] = values
    return table


def reference_for(reference: Reference, dataset: str, row: str, pred_len: int) -> tuple[float, float] | None:
    """The reference (mse, mae) of `row` on `dataset` at horizon `pred_len`, under any of their names."""
    for key in RECIPES.dataset_keys(dataset):
        hit = reference.get((key, name_key(row), pred_len))
        if hit is not None:
            return hit
    return None


def _by_horizon(reference: Reference, dataset: str, row: str) -> dict[int | str, tuple[float, float]]:
    """Horizon (or 'Avg') -> the reference (mse, mae) of `row` on `dataset`, under any of their names."""
    keys, model = RECIPES.dataset_keys(dataset), name_key(row)
    return {k[2]: v for k, v in reference.items() if k[0] in keys and k[1] == model}


def reference_horizons(reference: Reference | None, dataset: str, row: str) -> list[int]:
    """The horizons the reference has for `row` on `dataset` (its Avg aside), ascending; [] when none."""
    if not reference:
        return []
    return sorted(h for h in _by_horizon(reference, dataset, row) if h != AVG)


def reference_value(reference: Reference | None, dataset: str, row: str, h: int | str,
                    horizons: Sequence[int] = ()) -> tuple[float, float] | None:
    """Reference (mse, mae) at horizon h. For Avg, only when the reference covers exactly our
    `horizons` (an average over other horizons is not comparable): its Avg row, else the mean."""
    if not reference:
        return None
    if h != AVG:
        return reference_for(reference, dataset, row, int(h))
    by_h = _by_horizon(reference, dataset, row)
    numeric = {k: v for k, v in by_h.items() if k != AVG}
    if not numeric or set(numeric) != set(horizons):
        return None
    if AVG in by_h:
        return by_h[AVG]
    return float(np.mean([v[0] for v in numeric.values()])), float(np.mean([v[1] for v in numeric.values()]))


def difference_pct(ours: float | None, ref: float | None) -> float | None:
    """(ours − ref) / ref in percent at 3 decimals (table.csv's `*_diff_pct`); None when not defined."""
    if ours is None or ref is None or ref == 0:
        return None
    return round(100.0 * (ours - ref) / ref, 3) + 0.0  # + 0.0: no -0.0 in the CSV
