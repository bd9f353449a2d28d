"""Scheduler overhead: the same grid of tiny runs through `--executor local` and `--executor ray`.

    python benchmarks/bench_executors.py --runs 6 --jobs 2

Each run is DLinear for one epoch on a generated 300-step CSV (seconds of work), so the wall time per run is
mostly what the executor adds: starting run.py, and for Ray the instance, the tasks and the file transfers.
Both grids are checked to give the same test MSE per run before any time is printed. Prints a header
(torch, machine, commit) and one line per executor: wall seconds, seconds per run, ratio to local.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from compare import runner  # noqa: E402
from compare.recipes.tables import Dataset, ModelRecipe, RecipeBook  # noqa: E402

FLAGS = {"task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
         "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 24,
         "label_len": 12, "pred_len": "{pred_len}", "enc_in": "{channels}", "dec_in": "{channels}",
         "c_out": "{channels}", "batch_size": 16, "train_epochs": 1, "seed": 7, "des": "Exp", "itr": 1}
BOOK = RecipeBook(datasets={"toy": Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 3, fetch="toy",
                                           folder="Toy_script", horizons=(12,))},
                  models={"DLinear": ModelRecipe("DLinear", FLAGS, {"toy": {}})})


def write_csv(path: Path, rows: int = 300) -> None:
    t = np.arange(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"date": pd.date_range("2021-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
                  "x0": np.sin(t / 5), "x1": np.sin(t / 9), "OT": np.cos(t / 7)}).to_csv(path, index=False)


def grid(root: Path, out: Path, runs: int, extra: list[str]) -> tuple[float, dict]:
    seeds = [str(s) for s in range(1, runs + 1)]
    argv = ["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--seeds", *seeds, "--num_workers", "0",
            "--root", str(root), "--out", str(out), "--no-report", *extra]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = runner.main(argv, BOOK)
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"the {extra} grid failed with exit code {code}; see {out}/runs/compare_runs.jsonl")
    lines = (out / "runs" / "results.jsonl").read_text().splitlines()
    return seconds, {r["setting"]: r["mse"] for r in map(json.loads, lines)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=6)
    p.add_argument("--jobs", type=int, default=2, help="local processes at once; Ray gets the same CPUs")
    args = p.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    print(f"torch {torch.__version__} | {platform.machine()} {os.cpu_count()} CPUs | commit {commit.strip()} | "
          f"{args.runs} runs of DLinear, 1 epoch, 300 steps")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_csv(root / "data" / "toy" / "toy.csv")
        local = grid(root / "data", root / "local", args.runs, ["--jobs", str(args.jobs), "--cpus_per_run", "1"])
        ray = grid(root / "data", root / "ray", args.runs, ["--executor", "ray", "--cpus_per_run", "1"])
    if local[1] != ray[1]:
        raise SystemExit("the two executors gave different test MSEs: no timing is reported")
    print(f"{'executor':<28} {'wall s':>8} {'s / run':>8} {'ratio':>6}")
    for name, (seconds, _) in ((f"local (--jobs {args.jobs})", local), ("ray (local instance)", ray)):
        print(f"{name:<28} {seconds:8.1f} {seconds / args.runs:8.2f} {seconds / local[0]:6.2f}")


if __name__ == "__main__":
    main()
