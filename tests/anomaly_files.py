"""Small files in the published formats of TSLib's anomaly benchmarks (PSM, MSL, SMAP, SMD, SWaT), for
the loader and end-to-end tests: none of the real data sets can be downloaded here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

# Channel counts of the real files (TSLib's scripts pass them as --enc_in/--c_out).
CHANNELS = {"PSM": 25, "MSL": 55, "SMAP": 25, "SMD": 38, "SWAT": 51}


def toy_series(steps: int, channels: int, seed: int, anomalies: list[tuple[int, int]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Noisy sines `[steps, channels]` with a +5 jump on every channel inside each (start, end) segment,
    and the 0/1 labels `[steps]` of those segments."""
    rng = np.random.default_rng(seed)
    t = np.arange(steps)[:, None]
    data = np.sin(t / (3.0 + np.arange(channels))) + 0.1 * rng.normal(size=(steps, channels))
    labels = np.zeros(steps, dtype=np.int64)
    for start, end in anomalies:
        data[start:end] += 5.0
        labels[start:end] = 1
    return data, labels


def write_anomaly_files(name: str, folder: Path, train_steps: int = 200, test_steps: int = 150,
                        channels: int | None = None, seed: int = 0,
                        anomalies: list[tuple[int, int]] = ((40, 60), (100, 110))) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write `name`'s files into `folder` (created); returns (train, test, labels) as written."""
    channels = channels or CHANNELS[name]
    folder.mkdir(parents=True, exist_ok=True)
    train, _ = toy_series(train_steps, channels, seed)
    test, labels = toy_series(test_steps, channels, seed + 1, list(anomalies))
    if name == "PSM":
        columns = [f"feature_{i}" for i in range(channels)]
        for file, values, start in (("train.csv", train, 132481), ("test.csv", test, 0)):
            frame = pd.DataFrame(values, columns=columns)
            frame.insert(0, "timestamp_(min)", np.arange(start, start + len(values), dtype=float))
            frame.to_csv(folder / file, index=False)
        pd.DataFrame({"timestamp_(min)": np.arange(test_steps, dtype=float), "label": labels}).to_csv(
            folder / "test_label.csv", index=False)
    elif name == "SWAT":
        columns = [f"FIT{i:03d}" for i in range(channels)]
        train_frame = pd.DataFrame(train, columns=columns)
        train_frame["Normal/Attack"] = 0
        train_frame.to_csv(folder / "swat_train2.csv", index=False)
        test_frame = pd.DataFrame(test, columns=columns)
        test_frame["Normal/Attack"] = labels
        test_frame.to_csv(folder / "swat2.csv", index=False)
    else:
        np.save(folder / f"{name}_train.npy", train.astype(np.float32))
        np.save(folder / f"{name}_test.npy", test.astype(np.float32))
        np.save(folder / f"{name}_test_label.npy", labels.astype(bool) if name != "SMD" else labels)
    return train, test, labels


def write_anomaly_csv(path: Path, steps: int = 300, channels: int = 3, seed: int = 0, index: str | None = "timestamp",
                      anomalies: list[tuple[int, int]] = ((200, 215), (250, 256))) -> tuple[np.ndarray, np.ndarray]:
    """A file in the custom anomaly format (data_provider/anomaly_csv.py): an optional first `index` column, value
    columns v0..v{C-1}, then `label`; returns (values `[steps, C]`, labels `[steps]`) as written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    values, labels = toy_series(steps, channels, seed, list(anomalies))
    frame = pd.DataFrame(values, columns=[f"v{i}" for i in range(channels)])
    if index is not None:
        frame.insert(0, index, pd.date_range("2024-01-01", periods=steps, freq="min").astype(str))
    frame["label"] = labels
    frame.to_csv(path, index=False)
    return values, labels
