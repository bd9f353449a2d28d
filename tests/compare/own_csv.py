"""Generated files in the formats `python -m compare --data_path` reads (the tests' own data, never a benchmark)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_dated_csv(path: Path, rows: int = 600, freq: str = "W-TUE", variates: int = 4, seed: int = 0,
                    names: tuple[str, ...] = ()) -> Path:
    """A long-term CSV: `date` at pandas frequency `freq`, then `variates` seasonal columns (named `names`, else
    v0, v1, ..., the last one OT)."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    columns = list(names) or [*(f"v{k}" for k in range(variates - 1)), "OT"]
    frame = pd.DataFrame({"date": pd.date_range("2002-01-01", periods=rows, freq=freq).strftime("%Y-%m-%d %H:%M:%S")})
    for k, name in enumerate(columns):
        frame[name] = np.sin(2 * np.pi * t / (12 + 5 * k)) + 0.1 * rng.normal(size=rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def write_series_csv(path: Path, lengths: tuple[int, ...] = (60, 66, 72), freq: str | None = "MS") -> Path:
    """A short-term long CSV: series S0, S1, ... of `lengths` values, with ISO timestamps at `freq` (None: none)."""
    rng = np.random.default_rng(1)
    rows = []
    for s, n in enumerate(lengths):
        values = 100 + 10 * np.sin(2 * np.pi * np.arange(n) / 12) + rng.normal(size=n)
        stamps = (pd.date_range("2010-01-01", periods=n, freq=freq).strftime("%Y-%m-%d %H:%M:%S") if freq
                  else [None] * n)
        rows += [{"series_id": f"S{s}", "timestamp": d, "value": v} for d, v in zip(stamps, values, strict=True)]
    frame = pd.DataFrame(rows)
    frame = frame if freq else frame.drop(columns="timestamp")
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def write_labelled_csv(path: Path, rows: int = 600, channels: int = 2) -> Path:
    """An anomaly CSV: a timestamp column, `channels` value columns and a 0/1 label with one anomalous stretch."""
    rng = np.random.default_rng(2)
    t = np.arange(rows)
    label = np.zeros(rows, dtype=int)
    label[int(rows * 0.75): int(rows * 0.75) + 10] = 1
    frame = pd.DataFrame({"timestamp": t})
    for k in range(channels):
        frame[f"c{k}"] = np.sin(t / (7 + k)) + 0.1 * rng.normal(size=rows) + 3 * label
    frame["label"] = label
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path
