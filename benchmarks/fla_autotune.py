"""Autotune fla-core's `chunk_gla` kernels once at CAPS's shapes and save the choices as fla config files.

fla-core autotunes each Triton kernel on its first call in a process (hundreds of configs compiled on a
fresh machine: minutes before the first CAPS step of a lent-GPU slice). fla can instead read the best
config per kernel from `$FLA_CONFIG_DIR/<kernel>.json` (`FLA_CACHE_MODE=strict`: an exact autotune-key
match, else it autotunes as usual). This script runs impl="fla" forward and backward at the shapes the
CAPS recipes give (key widths 3E, 2E, E: all paths, two, none), then writes, for every autotuned kernel
of fla that ran, one such file with the configs Triton picked. Run on a CUDA machine:

    python benchmarks/fla_autotune.py --out benchmarks/fla_configs/NVIDIA_H200 [--seconds 200]

and carry the folder to later runs (`FLA_CACHE_MODE=strict FLA_CONFIG_DIR=...`). Stops cleanly after
--seconds (SIGALRM), saving what was tuned so far; prints one line per shape with its first-call and
warm forward+backward times.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from layers.CAPS_Attention import (  # noqa: E402
    FLA_AUTOTUNE_ENV,
    caps_attention,
    fla_unavailable_reason,
    triton_autotuners,
)

# (label, key-width paths) at the ETTh1 H = 720 shape of the CAPS recipe: B 32 x 7 variates, 4 heads,
# head width 8, T = L + H = 816.
SHAPES = [("CAPS paths 123", "123"), ("LinAttn (no path)", "none"), ("two paths", "12")]


class OutOfTime(Exception):
    """Raised by SIGALRM when --seconds is spent."""


def _on_alarm(signum: int, frame: object) -> None:
    raise OutOfTime


def tuned_configs() -> dict[str, dict]:
    """kernel name -> fla config file contents, from every autotuner of the imported fla modules."""
    from fla.ops.utils.cache import AutotuneKey

    files: dict[str, dict] = {}
    modules = [module for name, module in list(sys.modules.items()) if name.startswith("fla.") and module]
    for tuner in triton_autotuners(modules):
        if not tuner.cache:
            continue
        kernel = getattr(tuner, "kernel_name", None) or tuner.base_fn.__name__
        entries = files.setdefault(kernel, {"kernel_name": kernel, "triton_version": _triton_version(),
                                            "autotune_entries": {}})["autotune_entries"]
        for key, cfg in tuner.cache.items():
            entries[AutotuneKey.key_hash(key)] = {"autotune_key": AutotuneKey.normalize_autotune_key(list(key)),
                                                  "config": _config_dict(cfg)}
    return files


def _triton_version() -> str:
    import triton
    return triton.__version__


def _config_dict(cfg) -> dict:
    return {"kwargs": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
            "num_ctas": getattr(cfg, "num_ctas", 1), "maxnreg": getattr(cfg, "maxnreg", None)}


def save(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    files = tuned_configs()
    for kernel, contents in files.items():
        (out / f"{kernel}.json").write_text(json.dumps(contents, indent=1, sort_keys=True) + "\n")
    return len(files)


def fwd_bwd(paths: str, B: int, T: int, H: int, E: int) -> float:
    """Seconds of one impl="fla" forward + backward on fresh random inputs (synchronised)."""
    gen = torch.Generator(device="cuda").manual_seed(T)
    q, k, v, p, g = (torch.randn(B, T, H, E, device="cuda", generator=gen, requires_grad=True) for _ in range(5))
    clock = (torch.rand(B, T, H, device="cuda", generator=gen) + 0.5).requires_grad_()
    torch.cuda.synchronize()
    start = time.perf_counter()
    caps_attention(q, k, v, p, g, clock, paths=paths, impl="fla").square().mean().backward()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of the <kernel>.json files")
    parser.add_argument("--seconds", type=int, default=200, help="stop (and save) after this many seconds")
    parser.add_argument("--B", type=int, default=224)
    parser.add_argument("--T", type=int, default=816)
    args = parser.parse_args()
    if os.environ.get(FLA_AUTOTUNE_ENV, "1") != "1":
        parser.error(f"{FLA_AUTOTUNE_ENV}={os.environ[FLA_AUTOTUNE_ENV]!r} turns fla's autotuning off; unset it to tune")
    reason = fla_unavailable_reason(torch.device("cuda"))
    if reason is not None:
        parser.error(f"impl fla cannot run here: {reason}")
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(args.seconds)
    print(f"# fla autotune on {torch.cuda.get_device_name()}, B {args.B} T {args.T} H 4 E 8")
    try:
        for label, paths in SHAPES:
            first = fwd_bwd(paths, args.B, args.T, 4, 8)
            warm = sorted(fwd_bwd(paths, args.B, args.T, 4, 8) for _ in range(5))[2]
            print(f"{label:<20} first call {first:8.1f} s   warm fwd+bwd {warm * 1e3:8.2f} ms   "
                  f"kernels saved {save(args.out)}", flush=True)
    except OutOfTime:
        print(f"out of time after {args.seconds} s: kernels saved {save(args.out)}", flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
