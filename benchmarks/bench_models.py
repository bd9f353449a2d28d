"""Model cost table in the form of the CAPS paper's Table 5, built from our recipe table.

Usage:  python benchmarks/bench_models.py [--data ETTm1] [--models CAPS DLinear ...] [--pred_lens 96 ...]
                                          [--variant NAME=BASE:FLAGS ...] [--no-timing] [--steps 3]
                                          [--device cpu|cuda] [--threads N] [--host_malloc retain|system]

For each model and horizon it takes the model's recipe from `compare/recipes/tables.py` (as `compare.run.runner`
does) and reports, with `compare.grid.efficiency`: learnable parameters, forward FLOPs of one
sample (`torch.utils.flop_counter`, matmul/conv/attention only), and, unless --no-timing, the median
train-step time at the recipe's batch size and the step's peak tensor memory. `--variant` adds a
row as in `compare.run.runner` (BASE's recipe plus run.py FLAGS, e.g. `CAPS ckpt=CAPS:--caps_checkpoint_rows 8`). Before printing anything
it checks the FLOP counter and the memory tracker on cases with a closed-form answer and refuses to
report if either is off.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from compare.grid.efficiency import (  # noqa: E402
    TensorMemoryTracker,
    format_bytes,
    format_count,
    forward_flops,
    measure,
)
from compare.grid.plan import Row, parse_variant  # noqa: E402
from compare.grid.run_args import merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from utils.errors import UserInputError  # noqa: E402
from utils.host_memory import HOST_MALLOC_CHOICES, configure_host_malloc  # noqa: E402

MODELS = ("CAPS", "LinAttn+RoPE", "DLinear", "PatchTST", "iTransformer", "TimesNet")


def self_checks() -> list[str]:
    """Failures of the measuring tools on closed-form cases (empty when both are exact)."""
    failures = []
    layer = torch.nn.Linear(96, 48, bias=False)
    flops = forward_flops(layer, (torch.randn(1, 7, 96),))
    if flops != 2 * 7 * 96 * 48:
        failures.append(f"FlopCounterMode: Linear(96->48) on 7 rows counted {flops}, expected {2 * 7 * 96 * 48}")
    tracker = TensorMemoryTracker()
    with tracker:
        a = torch.empty(1024, 256)  # 1 MiB
        b = torch.empty(512, 256)  # 0.5 MiB
        del a
        c = torch.empty(256, 256)  # 0.25 MiB, after `a` is freed
        a_view = b[:10]  # a view allocates nothing
    del b, c, a_view
    if tracker.peak != 1.5 * 2**20 or tracker.live != 0:
        failures.append(f"TensorMemoryTracker: peak {tracker.peak} B / live {tracker.live} B, "
                        f"expected {int(1.5 * 2**20)} / 0")
    return failures


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=False)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "uncommitted"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="ETTm1", help="dataset whose recipes give the shapes (paper: ETTm1)")
    p.add_argument("--models", nargs="+", default=list(MODELS), help="model rows of compare/recipes/tables.py (as in compare.run.runner)")
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96, 192, 336, 720])
    p.add_argument("--variant", action="append", default=[], metavar="NAME=BASE:FLAGS",
                   help="extra row: BASE's recipe plus run.py FLAGS (repeatable)")
    p.add_argument("--no-timing", action="store_true", help="parameters and FLOPs only")
    p.add_argument("--steps", type=int, default=3, help="timed train steps per configuration")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    p.add_argument("--host_malloc", default="retain", choices=HOST_MALLOC_CHOICES,
                   help="host allocator for every row, as run.py's flag (default: retain, run.py's default)")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device is visible to torch; run with --device cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    configure_host_malloc(args.host_malloc)

    failures = self_checks()
    if failures:
        print("measurement self-checks failed; no numbers reported:", *failures, sep="\n  ")
        return 1

    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else (platform.processor() or platform.machine())
    print(f"# bench_models  {time.strftime('%Y-%m-%d %H:%M')}  commit {_commit()}  torch {torch.__version__}  "
          f"device {args.device} ({device_name})  threads {torch.get_num_threads()}  host_malloc {args.host_malloc}")
    print(f"# shapes from compare/recipes/tables.py for {args.data}; FLOPs: one sample forward; step: median of {args.steps}")
    header = f"{'model':<14} {'H':>4} {'L':>4} {'C':>4} {'params':>8} {'FLOPs':>8}"
    if not args.no_timing:
        header += f" {'batch':>5} {'step ms':>9} {'peak mem':>11}"
    print(header)
    print("-" * len(header))
    try:
        rows = [Row(name=m, base=m) for m in args.models] + [parse_variant(v) for v in args.variant]
    except UserInputError as err:
        print(f"error: {err}")
        return 2
    status = 0
    for row in rows:
        model = row.name
        for horizon in args.pred_lens:
            try:
                argv = RECIPES.argv(row.base, args.data, horizon)
                configs = parse_run_args(merge_flags(argv, row.flags))
            except UserInputError as err:
                print(f"{model:<14} {horizon:>4}  skipped: {err}")
                status = 1
                continue
            eff = measure(configs, device=args.device, steps=args.steps, warmup=1, timing=not args.no_timing)
            line = (f"{model:<14} {horizon:>4} {configs.seq_len:>4} {configs.enc_in:>4} "
                    f"{format_count(eff.params):>8} {format_count(eff.flops):>8}")
            if eff.step_ms is not None:
                line += f" {eff.batch_size:>5} {eff.step_ms:>9.1f} {format_bytes(eff.peak_bytes):>11}"
            print(line, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
