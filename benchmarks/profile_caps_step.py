"""Where a CAPS training step spends its time: torch profiler table of one step of the ETTh1 recipe.

Usage:  python benchmarks/profile_caps_step.py [--pred_len 720] [--batch 32] [--impl auto] [--threads 1] [--rows 25] [--host_malloc retain|system]

Builds the model from `scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh` (as bench_models.py does),
runs one warm-up step, then profiles one step (forward, MSE, backward, AdamW) and prints the operators
sorted by self CPU time. The native kernel shows up as `caps_tslib::native_forward` / `native_backward`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from utils.efficiency import build_model, example_inputs  # noqa: E402
from utils.host_memory import HOST_MALLOC_CHOICES, configure_host_malloc  # noqa: E402
from utils.script_recipes import find_recipe, load_recipes, merge_flags, parse_run_args  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pred_len", type=int, default=720)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--impl", default="auto", help="--caps_impl of the model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rows", type=int, default=25, help="operators listed")
    p.add_argument("--host_malloc", default="retain", choices=HOST_MALLOC_CHOICES, help="as run.py's flag")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    configure_host_malloc(args.host_malloc)
    recipe = find_recipe(load_recipes(), "CAPS", "ETTh1", args.pred_len)
    configs = parse_run_args(merge_flags(recipe.argv, ["--batch_size", str(args.batch), "--caps_impl", args.impl]))
    model = build_model(configs)
    inputs = example_inputs(configs, args.batch)
    target = torch.randn(args.batch, args.pred_len, configs.c_out)
    optimizer = torch.optim.AdamW(model.parameters(), lr=configs.learning_rate, weight_decay=configs.weight_decay)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        F.mse_loss(model(*inputs), target).backward()
        optimizer.step()

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        step()
        seconds = time.perf_counter() - start
    print(f"# CAPS ETTh1 H={args.pred_len} batch {args.batch} impl {args.impl} threads {torch.get_num_threads()} "
          f"host_malloc {args.host_malloc} torch {torch.__version__}: one profiled step {seconds * 1e3:.0f} ms")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
