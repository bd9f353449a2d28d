"""Fixtures for the run-level tests: a small generated CSV and the run.py arguments of a tiny model on it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]


def write_toy_csv(path: Path, rows: int = 300, columns: int = 3, seed: int = 0) -> Path:
    """Hourly `date` + `columns` noisy sines (the last one named OT)."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    data = {"date": pd.date_range("2021-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S")}
    for c in range(columns - 1):
        data[f"x{c}"] = np.sin(t / (5 + c)) + 0.1 * rng.normal(size=rows)
    data["OT"] = np.cos(t / 7) + 0.1 * rng.normal(size=rows)
    pd.DataFrame(data).to_csv(path, index=False)
    return path


def toy_argv(root: Path, *extra: str, model: str = "iTransformer") -> list[str]:
    """run.py arguments for `model` at width 16 on `root`/toy.csv (3 channels, L=24, H=12, batch 8)."""
    return [
        "--task_name", "long_term_forecast", "--is_training", "1", "--root_path", str(root),
        "--data_path", "toy.csv", "--model_id", "toy", "--model", model, "--data", "custom", "--features", "M",
        "--seq_len", "24", "--label_len", "12", "--pred_len", "12", "--enc_in", "3", "--dec_in", "3",
        "--c_out", "3", "--d_model", "16", "--d_ff", "32", "--n_heads", "2", "--e_layers", "1",
        "--batch_size", "8", "--num_workers", "0", "--no_progress", "--des", "Exp", *extra,
    ]


def read_results(folder: Path) -> list[dict]:
    path = folder / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """Run inside an empty temporary folder holding toy.csv."""
    monkeypatch.chdir(tmp_path)
    write_toy_csv(tmp_path / "toy.csv")
    return tmp_path


@pytest.fixture(scope="session")
def toy() -> Callable[..., list[str]]:
    return toy_argv


@pytest.fixture(scope="session")
def results() -> Callable[[Path], list[dict]]:
    return read_results


@pytest.fixture(scope="session")
def toy_csv() -> Callable[..., Path]:
    return write_toy_csv
