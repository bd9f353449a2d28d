"""Small M4 files in the published format (N-BEATS's): M4-info.csv, training.npz and test.npz written with
`ndarray.dump` (a pickled 1-D object array of per-series float arrays), and submission-Naive2.csv
(id, F1..F48, empty cells past a series' horizon). Series ids and groups follow M4's naming (Y1, Q1, ...)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.m4 import FREQUENCIES, HORIZONS

_PREFIX = {"Yearly": "Y", "Quarterly": "Q", "Monthly": "M", "Weekly": "W", "Daily": "D", "Hourly": "H"}


def write_m4(root: Path, counts: dict[str, int] | None = None, seed: int = 0,
             min_len: int | None = None) -> dict[str, list[np.ndarray]]:
    """Write the four M4 files into `root` (default: 3 series per group, lengths 2H..4H+5, positive
    seasonal values) and return {"training": [...], "test": [...]} as written, in M4-info order."""
    rng = np.random.default_rng(seed)
    counts = counts or dict.fromkeys(HORIZONS, 3)
    info_rows, training, test, naive2 = [], [], [], []
    for group, n in counts.items():
        horizon, freq = HORIZONS[group], FREQUENCIES[group]
        for k in range(n):
            length = int(rng.integers(min_len or 2 * horizon, 4 * horizon + 6))
            t = np.arange(length + horizon)
            series = 100 + 10 * np.sin(2 * np.pi * t / max(freq, 2)) + rng.normal(0, 1, len(t)) + 0.5 * t
            training.append(series[:length])
            test.append(series[length:])
            naive2.append(np.full(horizon, series[length - 1]))
            info_rows.append({"M4id": f"{_PREFIX[group]}{k + 1}", "category": "Other", "Frequency": freq,
                              "Horizon": horizon, "SP": group, "StartingDate": "01-01-00 00:00"})
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(info_rows).to_csv(root / "M4-info.csv", index=False)
    for name, values in (("training.npz", training), ("test.npz", test)):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        array.dump(root / name)
    table = np.full((len(naive2), 48), np.nan)
    for i, row in enumerate(naive2):
        table[i, :len(row)] = row
    frame = pd.DataFrame(table, columns=[f"F{i + 1}" for i in range(48)])
    frame.insert(0, "id", [row["M4id"] for row in info_rows])
    frame.to_csv(root / "submission-Naive2.csv", index=False)
    return {"training": training, "test": test, "naive2": naive2}
