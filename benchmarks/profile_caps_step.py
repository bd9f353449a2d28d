"""Where a CAPS training step spends its time: torch profiler table of one step of the ETTh1 recipe.

Usage:  python benchmarks/profile_caps_step.py [--pred_len 720] [--batch 32] [--impl auto] [--threads 1] [--rows 25]
                                              [--host_malloc retain|system] [--steps 5] [--attention caps|identity]

Builds the model from `scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh` (as bench_models.py does),
runs one warm-up step, times `--steps` unprofiled steps (forward, MSE, backward, AdamW; median, with
the minor page faults of each step), then profiles one step and prints the operators sorted by self
CPU time. The native kernel shows up as `caps_tslib::native_forward` / `native_backward`.

`--attention identity` is a diagnostic lower bound, not a model: the attention kernel (`caps_attention`,
with its RoPE and per-path inputs) is replaced by o = v, while the projections, norms, MLPs, embeddings
and read-out still run; the step time then says what CAPS would cost with a free attention kernel.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import layers.CAPS_Attention as caps_layer  # noqa: E402
from compare.efficiency import build_model, make_train_step  # noqa: E402
from compare.recipes import RECIPES  # noqa: E402
from compare.run_args import merge_flags, parse_run_args  # noqa: E402
from utils.host_memory import HOST_MALLOC_CHOICES, configure_host_malloc  # noqa: E402


def _value_passthrough(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args, **kwargs) -> torch.Tensor:
    """The `--attention identity` stand-in for `caps_attention`: o = v (same shape and dtype, differentiable)."""
    return v * 1.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pred_len", type=int, default=720)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--impl", default="auto", help="--caps_impl of the model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rows", type=int, default=25, help="operators listed")
    p.add_argument("--host_malloc", default="retain", choices=HOST_MALLOC_CHOICES, help="as run.py's flag")
    p.add_argument("--steps", type=int, default=5, help="unprofiled timed steps (median reported)")
    p.add_argument("--attention", default="caps", choices=("caps", "identity"),
                   help="identity: replace the attention kernel by o = v (lower bound of the step, see above)")
    args = p.parse_args(argv)
    if args.attention == "identity":
        caps_layer.caps_attention = _value_passthrough
    torch.set_num_threads(args.threads)
    configure_host_malloc(args.host_malloc)
    recipe = RECIPES.recipe("CAPS", "ETTh1", args.pred_len)
    configs = parse_run_args(merge_flags(recipe.argv, ["--batch_size", str(args.batch), "--caps_impl", args.impl]))
    _, step = make_train_step(configs, build_model(configs))
    step()
    times, faults = [], []
    for _ in range(args.steps):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        step()
        seconds = time.perf_counter() - start
    print(f"# CAPS ETTh1 H={args.pred_len} batch {args.batch} impl {args.impl} attention {args.attention} "
          f"threads {torch.get_num_threads()} host_malloc {args.host_malloc} torch {torch.__version__}")
    print(f"# step: median of {args.steps} unprofiled steps {statistics.median(times) * 1e3:.1f} ms; "
          f"the profiled step {seconds * 1e3:.0f} ms")
    print(f"# minor page faults per unprofiled step: {', '.join(map(str, faults))}; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
