"""float32 error of the linear CAPS kernels against float64 references, outputs and gradients.

Usage:  python benchmarks/caps_precision.py [--T 97 300 4096] [--impls chunked native]

For each input regime (default init; gates x10; gates near zero; p, gates and clock logits all x10,
and each of p and the clock logits x10 alone) and length T, the kernels run in float32
on the same inputs as a float64 reference (naive for T <= 1000, the recurrent form beyond, where the
naive backward does not fit in memory) and the table prints the relative error max|a - b| / max|b| of
the output and the worst of the six input gradients (each relative to the largest gradient entry of the
loss sum(o * w)). The tests assert 1e-5 on the same quantity (tests/layers/test_caps_attention.py).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from layers.CAPS_Attention import CAPS_KERNELS, native_unavailable_reason  # noqa: E402

# Input regimes: (scale of p, scale of g, shift of g, scale of the clock logits). The first three are the
# tests' gate regimes; "all_x10" scales every logit the paths read, the last two one at a time.
REGIMES = {
    "default": (1.0, 1.0, 0.0, 1.0),
    "gates_x10": (1.0, 10.0, 0.0, 1.0),
    "gates_zero": (1.0, 1.0, -20.0, 1.0),
    "all_x10": (10.0, 10.0, 0.0, 10.0),
    "p_x10": (10.0, 1.0, 0.0, 1.0),
    "clock_x10": (1.0, 1.0, 0.0, 10.0),
}
NAIVE_MAX_T = 1000


def inputs(T: int, regime: str, seed: int = 5) -> list[torch.Tensor]:
    """float64 q, k, v, p, g [B, T, H, 8] and clock [B, T, H]; B = H = 1 beyond NAIVE_MAX_T, else 2 x 4."""
    B, H = (1, 1) if T > NAIVE_MAX_T else (2, 4)
    gen = torch.Generator().manual_seed(seed)
    q, k, v, p, g = (torch.randn(B, T, H, 8, generator=gen, dtype=torch.float64) for _ in range(5))
    p_scale, g_scale, g_shift, clock_scale = REGIMES[regime]
    clock = F.softplus(clock_scale * torch.randn(B, T, H, generator=gen, dtype=torch.float64)) + 1e-6
    return [q, k, v, p * p_scale, g * g_scale + g_shift, clock]


def output_and_grads(xs: list[torch.Tensor], weight: torch.Tensor, impl: str) -> list[torch.Tensor]:
    leaves = [x.detach().clone().requires_grad_() for x in xs]
    o = CAPS_KERNELS[impl](*leaves, (1, 2, 3))
    (o * weight.to(o.dtype)).sum().backward()
    return [o.detach()] + [torch.zeros_like(x) if x.grad is None else x.grad for x in leaves]


def relative(a: torch.Tensor, b: torch.Tensor, scale: float) -> float:
    return ((a.double() - b).abs().max() / scale).item()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--T", nargs="+", type=int, default=[97, 300, 4096])
    p.add_argument("--impls", nargs="+", default=["chunked", "native"], choices=["chunked", "native"])
    args = p.parse_args(argv)
    impls = [i for i in args.impls if i != "native" or native_unavailable_reason() is None]
    print(f"# caps_precision  {time.strftime('%Y-%m-%d %H:%M')}  torch {torch.__version__}  "
          f"{platform.machine()}  impls {' '.join(impls)}")
    header = f"{'regime':<11}{'T':>6}  {'reference':<10}" + "".join(f"{i + ' out':>14}{i + ' grad':>14}" for i in impls)
    print(header)
    print("-" * len(header))
    worst = {i: [0.0, 0.0] for i in impls}
    for regime in REGIMES:
        for T in args.T:
            xs = inputs(T, regime)
            weight = torch.randn(*xs[2].shape, generator=torch.Generator().manual_seed(T), dtype=torch.float64)
            reference = "naive" if T <= NAIVE_MAX_T else "recurrent"
            ref = output_and_grads(xs, weight, reference)
            grad_scale = max(g.abs().max().item() for g in ref[1:])
            line = f"{regime:<11}{T:>6}  {reference:<10}"
            for impl in impls:
                got = output_and_grads([x.float() for x in xs], weight, impl)
                out = relative(got[0], ref[0], ref[0].abs().max().item())
                grad = max(relative(a, b, grad_scale) for a, b in zip(got[1:], ref[1:], strict=True))
                worst[impl] = [max(worst[impl][0], out), max(worst[impl][1], grad)]
                line += f"{out:>14.2e}{grad:>14.2e}"
            print(line, flush=True)
    print("worst: " + ", ".join(f"{i} {o:.2e} (outputs) / {g:.2e} (gradients)" for i, (o, g) in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
