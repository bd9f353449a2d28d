"""CAPS training step on a GPU: block-by-block vs whole-batch kernel, eager vs torch.compile.

Usage:  python benchmarks/bench_caps_gpu_probe.py        (needs a CUDA device)

The script behind the "Blocked vs whole-batch kernel, and torch.compile" table of benchmarks/README.md
(H100, 2026-11-22, run at commit 5c11652), committed with its logic unchanged. For each of H = 96 and
720 on the CAPS_ETTh1.sh recipe (batch 32) it prints `compare.grid.efficiency.measure` (20 steps, 3 warm-up) of
CAPS with the kernel's blocking as it is ("blocked") and with `rows_per_block` forced to the whole batch
("whole"), of the baselines, and the median of 20 steps of `torch.compile(model)` with the same step.
Since 514da1c the kernel never blocks on a GPU, so "blocked" and "whole" now measure the same code.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import layers.caps.chunked as CA  # noqa: E402
from compare.grid.efficiency import build_model, make_train_step, measure  # noqa: E402
from compare.grid.run_args import merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402

original_rows_per_block = CA.rows_per_block


def recipe(model: str, horizon: int):  # noqa: ANN201
    return parse_run_args(merge_flags(RECIPES.argv(model, "ETTh1", horizon), []))


def main() -> int:
    if not torch.cuda.is_available():
        print("error: needs a CUDA device (none visible to torch)")
        return 2
    print(torch.__version__, torch.cuda.get_device_name(0))
    for h in (96, 720):
        for mode in ("blocked", "whole"):
            CA.rows_per_block = original_rows_per_block if mode == "blocked" else (lambda *a, **k: 1 << 30)
            e = measure(recipe("CAPS", h), device="cuda", steps=20, warmup=3)
            print(f"CAPS H{h} {mode:8s} step {e.step_ms:8.2f} ms  peak {e.peak_bytes / 2**20:8.1f} MiB", flush=True)
        CA.rows_per_block = original_rows_per_block
        for m in ("PatchTST", "iTransformer", "DLinear", "TimesNet"):
            e = measure(recipe(m, h), device="cuda", steps=20, warmup=3)
            print(f"{m} H{h} step {e.step_ms:8.2f} ms  peak {e.peak_bytes / 2**20:8.1f} MiB", flush=True)
        c = recipe("CAPS", h)
        c.compile = True
        torch.manual_seed(0)
        start = time.time()
        _, step = make_train_step(c, build_model(c, "cuda"), "cuda")
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        compile_seconds = time.time() - start
        times = []
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        print(f"CAPS H{h} compiled step {1e3 * statistics.median(times):8.2f} ms "
              f"(compile+3 steps {compile_seconds:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
