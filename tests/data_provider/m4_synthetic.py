"""Small M4 files in the published format: M4-info.csv, the per-group CSVs the M4 competition publishes
(`<Group>-train.csv` / `<Group>-test.csv`: a quoted header "V1","V2",..., then per series its quoted id and
its values, ragged rows padded with empty cells) and submission-Naive2.csv (id, F1..F48, empty cells past a
series' horizon). Series ids and groups follow M4's naming (Y1, Q1, ...)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from data_provider.m4 import FREQUENCIES, HORIZONS, series_csv

_PREFIX = {"Yearly": "Y", "Quarterly": "Q", "Monthly": "M", "Weekly": "W", "Daily": "D", "Hourly": "H"}


def write_group_csv(path: Path, ids: list[str], series: list[np.ndarray]) -> None:
    """One per-group CSV in the published layout (values written with repr, so they read back exactly)."""
    width = max(len(s) for s in series)
    lines = [",".join(f'"V{c + 1}"' for c in range(width + 1))]
    for series_id, values in zip(ids, series, strict=True):
        cells = [f'"{series_id}"', *(repr(float(v)) for v in values), *[""] * (width - len(values))]
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")


def write_m4(root: Path, counts: dict[str, int] | None = None, seed: int = 0,
             min_len: int | None = None) -> dict[str, list[np.ndarray]]:
    """Write M4-info.csv, the two CSVs of every group in `counts` and submission-Naive2.csv into `root`
    (default: 3 series per group, lengths 2H..4H+5, positive seasonal values with 3 decimals, like M4's)
    and return {"training": [...], "test": [...], "naive2": [...]} as written, in M4-info order."""
    rng = np.random.default_rng(seed)
    counts = counts or dict.fromkeys(HORIZONS, 3)
    info_rows, training, test, naive2 = [], [], [], []
    root.mkdir(parents=True, exist_ok=True)
    for group, n in counts.items():
        horizon, freq = HORIZONS[group], FREQUENCIES[group]
        ids, group_training, group_test = [], [], []
        for k in range(n):
            length = int(rng.integers(min_len or 2 * horizon, 4 * horizon + 6))
            t = np.arange(length + horizon)
            series = 100 + 10 * np.sin(2 * np.pi * t / max(freq, 2)) + rng.normal(0, 1, len(t)) + 0.5 * t
            series = np.round(series, 3)
            ids.append(f"{_PREFIX[group]}{k + 1}")
            group_training.append(series[:length])
            group_test.append(series[length:])
            naive2.append(np.full(horizon, series[length - 1]))
            info_rows.append({"M4id": ids[-1], "category": "Other", "Frequency": freq,
                              "Horizon": horizon, "SP": group, "StartingDate": "01-01-00 00:00"})
        write_group_csv(root / series_csv(group, True), ids, group_training)
        write_group_csv(root / series_csv(group, False), ids, group_test)
        training += group_training
        test += group_test
    pd.DataFrame(info_rows).to_csv(root / "M4-info.csv", index=False)
    table = np.full((len(naive2), 48), np.nan)
    for i, row in enumerate(naive2):
        table[i, :len(row)] = row
    frame = pd.DataFrame(table, columns=[f"F{i + 1}" for i in range(48)])
    frame.insert(0, "id", [row["M4id"] for row in info_rows])
    frame.to_csv(root / "submission-Naive2.csv", index=False)
    return {"training": training, "test": test, "naive2": naive2}


def write_sha256sums(folder: Path) -> Path:
    """A ``SHA256SUMS`` in `folder` listing every file below it, as ``sha256sum`` writes it."""
    lines = [f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(folder).as_posix()}"
             for path in sorted(folder.rglob("*")) if path.is_file() and path.name != "SHA256SUMS"]
    out = folder / "SHA256SUMS"
    out.write_text("\n".join(lines) + "\n")
    return out
