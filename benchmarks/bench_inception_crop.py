"""What cropping the merged Inception kernel to narrow grids saves in TimesNet's blocks.

Usage:  python benchmarks/bench_inception_crop.py [--pred_lens 96 192 336 720] [--periods 1 2 3 4 8 24]
                                                  [--rounds 5] [--threads 1]

TimesNet folds T = seq_len + pred_len steps into a `[T/p, p]` grid per FFT period p and runs
Inception(d_model → d_ff) → GELU → Inception(d_ff → d_model) on it (TSLib's ETTh1 script: d_model 16,
d_ff 32, 6 kernels, batch 32). For each grid this times one forward + backward of that pair with the
merged 11 × 11 kernel at full size (padding 5) and with `Inception_Block_V1`'s cropped kernel, in
interleaved rounds (median ms, and the median of the per-round ratios). Before any timing it checks both
forms against the branch-by-branch `inception_reference` on every grid and prints nothing if one is off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from layers.Conv_Blocks import Inception_Block_V1, inception_reference  # noqa: E402


def uncropped(block: Inception_Block_V1, x: torch.Tensor) -> torch.Tensor:
    """The merged kernel at its full (2K−1)² size, padded K−1 on every side (the form before cropping)."""
    weight, bias = block.merged_kernel()
    return F.conv2d(x, weight, bias, padding=len(block.kernels) - 1)


def pair(blocks: nn.ModuleList, x: torch.Tensor, conv) -> torch.Tensor:
    """Inception → GELU → Inception with `conv(block, x)` as each block's convolution."""
    return conv(blocks[1], F.gelu(conv(blocks[0], x)))


def step_ms(blocks: nn.ModuleList, x: torch.Tensor, conv) -> float:
    start = time.perf_counter()
    pair(blocks, x, conv).square().mean().backward()
    return 1e3 * (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96, 192, 336, 720])
    p.add_argument("--periods", nargs="+", type=int, default=[1, 2, 3, 4, 8, 24])
    p.add_argument("--seq_len", type=int, default=96)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    blocks = nn.ModuleList([Inception_Block_V1(16, 32), Inception_Block_V1(32, 16)])
    grids = [(args.seq_len + h, period) for h in args.pred_lens for period in args.periods]

    for total, period in grids:  # exactness first
        x = torch.randn(2, 16, -(-total // period), period)
        reference = pair(blocks, x, inception_reference)
        for name, conv in (("uncropped", uncropped), ("cropped", lambda b, v: b(v))):
            error = (pair(blocks, x, conv) - reference).abs().max().item()
            if error > 1e-4 * (1 + reference.abs().max().item()):
                print(f"{name} form is off the reference by {error:.3g} at T={total}, p={period}; no timing reported")
                return 1

    print(f"# bench_inception_crop  {time.strftime('%Y-%m-%d %H:%M')}  torch {torch.__version__}  "
          f"threads {torch.get_num_threads()}  batch 32, d_model 16, d_ff 32, 6 kernels, {args.rounds} rounds")
    print("| T | period p | grid | uncropped ms | cropped ms | ratio |")
    print("|---:|---:|---|---:|---:|---:|")
    for total, period in grids:
        x = torch.randn(32, 16, -(-total // period), period, requires_grad=True)
        times: dict[str, list[float]] = {"uncropped": [], "cropped": []}
        step_ms(blocks, x, uncropped)  # warm-up of both paths
        step_ms(blocks, x, lambda b, v: b(v))
        for _ in range(args.rounds):
            times["uncropped"].append(step_ms(blocks, x, uncropped))
            times["cropped"].append(step_ms(blocks, x, lambda b, v: b(v)))
        ratio = statistics.median(u / c for u, c in zip(times["uncropped"], times["cropped"], strict=True))
        print(f"| {total} | {period} | {x.shape[2]} × {period} | {statistics.median(times['uncropped']):.1f} | "
              f"{statistics.median(times['cropped']):.1f} | {ratio:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
