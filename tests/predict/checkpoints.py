"""Data and checkpoint folders for the predict tests: `write_hourly_csv` writes a small dated CSV; `checkpoint_folder(root, argv)` leaves one as run.py does (weights and
model card) without training, by saving the experiment's initial weights; the tests that train go through
run.main. `reference_forecast` is the experiment's own test-time prediction of one test window, inverse-scaled
with the test dataset's scaler, computed without any predict code."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from exp.arguments import build_parser, make_setting, validate_args
from exp.checkpointing import BEST_FILE
from exp.model_card import write_model_card
from exp.tasks import experiment_class
from utils.tools import atomic_torch_save


def write_hourly_csv(path: Path, rows: int = 240, seed: int = 0) -> Path:
    """Hourly `date` and three noisy sines x0, x1, OT."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    pd.DataFrame({
        "date": pd.date_range("2021-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
        "x0": np.sin(t / 5) + 0.1 * rng.normal(size=rows),
        "x1": 10 + 3 * np.sin(t / 9) + 0.1 * rng.normal(size=rows),
        "OT": np.cos(t / 7) + 0.1 * rng.normal(size=rows),
    }).to_csv(path, index=False)
    return path


def toy_argv(root: Path, model: str = "DLinear", features: str = "M", *extra: str) -> list[str]:
    """run.py flags of a tiny `model` on `root`/toy.csv (L=24, Ll=12, H=12), checkpoints under `root`."""
    channels = "1" if features == "S" else "3"
    c_out = "3" if features == "M" else "1"
    return ["--task_name", "long_term_forecast", "--is_training", "1", "--root_path", str(root),
            "--data_path", "toy.csv", "--model_id", "toy", "--model", model, "--data", "custom",
            "--features", features, "--seq_len", "24", "--label_len", "12", "--pred_len", "12",
            "--enc_in", channels, "--dec_in", channels, "--c_out", c_out, "--d_model", "8", "--d_ff", "16",
            "--n_heads", "2", "--e_layers", "1", "--batch_size", "16", "--num_workers", "0", "--no_progress",
            "--train_epochs", "1", "--des", "Exp", "--checkpoints", str(root / "checkpoints"), *extra]


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Run inside `path` (run.py and the experiments write ./results, ./test_results there)."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def parse(argv: list[str]) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    validate_args(args)
    return args


def checkpoint_folder(argv: list[str], test: bool = False) -> Path:
    """`<--checkpoints>/<setting>/` with the initial weights of the run of `argv` as checkpoint.pth and its model
    card; with `test`, the experiment's test runs first (run it inside a scratch working directory) and its
    record goes into the card (anomaly detection's threshold)."""
    args = parse(argv)
    torch.manual_seed(0)
    exp = experiment_class(args.task_name)(args)
    setting = make_setting(args, 0)
    folder = Path(args.checkpoints) / setting
    atomic_torch_save(exp._bare_model().state_dict(), folder / BEST_FILE)
    record = exp.test(setting, test=1) if test else None
    write_model_card(exp, setting, record)
    return folder


def reference_forecast(argv: list[str], window: int = -1) -> tuple[np.ndarray, object]:
    """The experiment's prediction `[H, K]` of test window `window` from the saved checkpoint, inverse-scaled with
    the test split's scaler (the last channel for --features MS), and the test dataset."""
    args = parse(argv)
    args.is_training = 0
    exp = experiment_class(args.task_name)(args)
    exp._load_for_test(make_setting(args, 0))
    test_data, _ = exp._get_data("test")
    batch = tuple(torch.as_tensor(np.asarray(item))[None] for item in test_data[window % len(test_data)])
    exp.model.eval()
    with torch.no_grad():
        out, _ = exp._predict(batch, exp.eval_runner)
    out = out.float().numpy()[0]  # [H, c_out]
    channels = test_data.data_x.shape[1]
    full = np.tile(out, (1, channels // out.shape[1]))
    inverse = test_data.inverse_transform(full)
    return (inverse[:, -1:] if args.features == "MS" else inverse), test_data
