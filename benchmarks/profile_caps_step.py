"""Where a CAPS training step spends its time: torch profiler table of one step of the ETTh1 recipe.

Usage:  python benchmarks/profile_caps_step.py [--pred_len 720] [--batch 32] [--impl auto] [--threads 1] [--rows 25]
                                              [--host_malloc retain|system] [--steps 5] [--attention caps|identity]
                                              [--device cpu|cuda] [--compile [--compile_mode reduce-overhead]]

Builds the model from `scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh` (as bench_models.py does),
runs one warm-up step, times `--steps` unprofiled steps (forward, MSE, backward, AdamW; median, with
the minor page faults of each step), then profiles one step and prints the operators sorted by self
CPU time. The native kernel shows up as `caps_tslib::native_forward` / `native_backward`. On CUDA the
table is sorted by self CUDA time, and a line counts the step's kernel launches and the calls that make
the host wait for the device (synchronisations, device-to-host copies): what a launch-bound step pays.

`--attention identity` is a diagnostic lower bound, not a model: the attention kernel (`dispatch_kernel`,
with its RoPE and per-path inputs) is replaced by o = v, while the projections, norms, MLPs, embeddings
and read-out still run; the step time then says what CAPS would cost with a free attention kernel.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import layers.CAPS_Attention as caps_layer  # noqa: E402
from compare.grid.efficiency import build_model, make_train_step  # noqa: E402
from compare.grid.run_args import merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from exp.train_options import COMPILE_MODES  # noqa: E402
from utils.host_memory import HOST_MALLOC_CHOICES, configure_host_malloc  # noqa: E402

# CUDA runtime calls of a profiled step: those that launch a kernel, and those that make the host wait.
LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC", "cudaGraphLaunch")
WAIT_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")


def _value_passthrough(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args, **kwargs) -> torch.Tensor:
    """The `--attention identity` stand-in for `dispatch_kernel`: o = v (same shape and dtype, differentiable)."""
    return v * 1.0


def build_parser() -> argparse.ArgumentParser:
    """The profiler's flags."""
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
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--compile", action="store_true", help="profile the torch.compile'd step, as run.py --compile")
    p.add_argument("--compile_mode", default=None, choices=COMPILE_MODES, help="with --compile: torch.compile's mode, as run.py's flag")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device is visible to torch; run with --device cpu")
    if args.attention == "identity":
        caps_layer.dispatch_kernel = _value_passthrough
        # The recomputing native path calls the kernel itself, not through dispatch_kernel: take the other path.
        caps_layer.CAPSAttention._recomputes_on_native = lambda self, x: False
    torch.set_num_threads(args.threads)
    configure_host_malloc(args.host_malloc)
    recipe = RECIPES.recipe("CAPS", "ETTh1", args.pred_len)
    compile_flags = []
    if args.compile:
        compile_flags = ["--compile"] + (["--compile_mode", args.compile_mode] if args.compile_mode else [])
    configs = parse_run_args(merge_flags(recipe.argv, ["--batch_size", str(args.batch), "--caps_impl", args.impl,
                                                       *compile_flags]))
    _, run_step = make_train_step(configs, build_model(configs, args.device), args.device)
    cuda = args.device == "cuda"

    def step() -> None:
        run_step()
        if cuda:
            torch.cuda.synchronize()

    times, faults, seconds, prof = _timed_and_profiled(step, args.steps, warmup=3 if args.compile else 1, cuda=cuda)
    _print_profile(args, times, faults, seconds, prof, cuda)
    return 0


def _timed_and_profiled(step: Callable[[], None], steps: int, warmup: int, cuda: bool
                        ) -> tuple[list[float], list[int], float, profile]:
    """`warmup` untimed steps (compilation, CUDA-graph recording), `steps` timed ones (seconds, minor page
    faults each), then one profiled step: (times, faults, its seconds, the profiler)."""
    for _ in range(warmup):
        step()
    times, faults = [], []
    for _ in range(steps):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        step()
        seconds = time.perf_counter() - start
    return times, faults, seconds, prof


def _print_profile(args: argparse.Namespace, times: list[float], faults: list[int], seconds: float, prof: profile,
                   cuda: bool) -> None:
    """The header lines (setting, step times, page faults, peak RSS; on CUDA launches and host waits) and the
    profiler's operator table."""
    device = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"# CAPS ETTh1 H={args.pred_len} batch {args.batch} impl {args.impl} attention {args.attention} "
          f"device {device} compile {(args.compile_mode or 'default') if args.compile else 'off'} "
          f"threads {torch.get_num_threads()} host_malloc {args.host_malloc} torch {torch.__version__}")
    print(f"# step: median of {args.steps} unprofiled steps {statistics.median(times) * 1e3:.1f} ms; "
          f"the profiled step {seconds * 1e3:.0f} ms")
    print(f"# minor page faults per unprofiled step: {', '.join(map(str, faults))}; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")
    events = prof.key_averages()
    if cuda:
        counts = {e.key: e.count for e in events}
        launches = sum(n for key, n in counts.items() if key in LAUNCH_CALLS)
        waits = sum(n for key, n in counts.items() if key in WAIT_CALLS)
        print(f"# the profiled step: {launches} kernel launches, {waits} host waits for the device "
              f"({', '.join(k for k in WAIT_CALLS if counts.get(k))})")
    print(events.table(sort_by="self_cuda_time_total" if cuda else "self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    sys.exit(main())
