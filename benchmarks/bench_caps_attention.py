"""Benchmark of the CAPS attention kernel: naive / recurrent / chunked (chunk 16-128) / native over T.

Usage:  python benchmarks/bench_caps_attention.py [--quick] [--device cpu|cuda] [--threads N] [--T ...] [--chunks ...]
                                                  [--host_malloc retain|system]
        python benchmarks/bench_caps_attention.py --model-step [--pred_lens 96 720] [--batch 32] [--naive-batch 4]

It first checks exactness (chunked float32, the native CPU kernel and recurrent against the float64
naive reference, all paths, default and extreme gates) and refuses to print any timing if a check fails.
"native" rows (the C++ CPU recurrence of layers/caps/native.py) appear on the CPU when it builds, "fla" rows
(fla-core's Triton `chunk_gla`, `--caps_impl fla`) on CUDA when fla-core imports; both are checked first like the
others. Kernels are called by name from `CAPS_KERNELS` (one shared signature); timings use paths 123.

Every configuration runs in a fresh subprocess, so peak memory is honest and independent:
- cpu (Linux): the process's peak RSS (VmHWM, reset through /proc/self/clear_refs just before the pass)
  during one forward+backward minus the RSS just before it (inputs already allocated), i.e. the
  working memory of the kernel and its autograd graph;
- cuda: torch.cuda.max_memory_allocated during the same pass minus the memory held before it.
Times are medians over --repeats runs after the memory pass, which doubles as warm-up (forward alone;
forward+backward of sum(o)); a configuration stops repeating once it has used MAX_SECONDS.

--model-step times the full CAPS model's training step instead (the CAPS_ETTh1.sh recipe: seq_len 96,
7 channels, 4 time features, 3 layers, D = 32, 4 heads, AdamW; forward, MSE, backward, optimiser step, measured
by `compare.grid.efficiency.measure` as in bench_models.py, peak = exact tensor bytes), chunked and native at
--batch, and both against impl="naive" at --naive-batch (the naive backward keeps every [B, H, rows, T, E]
block, so it only fits small batches).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from layers.CAPS_Attention import (  # noqa: E402
    CAPS_KERNELS,
    fla_unavailable_reason,
    native_unavailable_reason,
    parse_paths,
)
from utils.host_memory import HOST_MALLOC_CHOICES, configure_host_malloc  # noqa: E402

T_VALUES = (96, 192, 816, 2048, 4096, 16384)
CHUNKS = (16, 32, 64, 128)
# Above these the materialised naive reference ([B, H, T, T, E] per row block, kept for backward)
# or the per-step Python loop of the recurrent form do not fit the machine / a sensible time budget.
NAIVE_MAX_ELEMENTS = 2 ** 28
RECURRENT_MAX_T = 816
MAX_SECONDS = 20.0


def make_inputs(B: int, T: int, H: int, E: int, device: str, dtype=torch.float32, gate_shift: float = 0.0,
                seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    q, k, v, p, g = (torch.randn(B, T, H, E, generator=gen, dtype=torch.float64) for _ in range(5))
    clock = torch.nn.functional.softplus(torch.randn(B, T, H, generator=gen, dtype=torch.float64)) + 1e-6
    return [x.to(device=device, dtype=dtype) for x in (q, k, v, p, g + gate_shift, clock)]


def native_rows(device: str) -> bool:
    """Whether the native CPU kernel is benchmarked (CPU, and it builds here)."""
    return device == "cpu" and native_unavailable_reason() is None


def fla_rows(device: str) -> bool:
    """Whether fla-core's Triton kernel is benchmarked (CUDA, and fla-core imports)."""
    return fla_unavailable_reason(torch.device(device)) is None


def equivalence_checks(device: str) -> list[str]:
    """Failures (empty when exact): relative max error vs the float64 naive reference <= 1e-5."""
    failures = []
    with_native, with_fla = native_rows(device), fla_rows(device)
    for paths in ("123", "12", "2", "none"):
        for shift in (0.0, 3.0, -20.0):
            for T in (97, 1000):
                x64 = make_inputs(1, T, 2, 8, device, torch.float64, shift, seed=T)
                ids = parse_paths(paths)
                ref = CAPS_KERNELS["naive"](*x64, ids)
                runs = {f"chunked-{c}": ("chunked", c) for c in CHUNKS}
                if T < 1000:
                    runs["recurrent"] = ("recurrent", None)
                if with_native and ids:
                    runs["native"] = ("native", None)
                if with_fla:
                    runs["fla"] = ("fla", None)
                for name, (impl, chunk) in runs.items():
                    o = CAPS_KERNELS[impl](*[x.float() for x in x64], ids, chunk_size=chunk)
                    rel = ((o.double() - ref).abs().max() / ref.abs().max()).item()
                    if not rel <= 1e-5:
                        failures.append(f"paths={paths} gate_shift={shift} T={T} {name}: rel err {rel:.2e}")
    return failures


def _rss_kib(field: str) -> int:
    """VmRSS / VmHWM of this process in KiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found in /proc/self/status: peak memory needs Linux")


def measure(config: dict) -> dict:
    """Runs in the subprocess: memory of one forward+backward, then median timings."""
    torch.set_num_threads(config["threads"])
    device = config["device"]
    x = make_inputs(config["B"], config["T"], config["H"], config["E"], device)
    x = [t.requires_grad_() for t in x]
    kernel = CAPS_KERNELS[config["impl"]]
    paths = (1, 2, 3)

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    def fwd_bwd() -> None:
        kernel(*x, paths, chunk_size=config["chunk"]).sum().backward()
        for t in x:
            t.grad = None

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        fwd_bwd()
        sync()
        peak = torch.cuda.max_memory_allocated() - before
    else:
        before = _rss_kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")
        fwd_bwd()
        peak = (_rss_kib("VmHWM") - before) * 1024
    times = {"fwd": [], "fwd_bwd": []}
    budget = time.perf_counter() + MAX_SECONDS
    for _ in range(config["repeats"]):
        if times["fwd"] and time.perf_counter() > budget:
            break
        sync()
        start = time.perf_counter()
        with torch.no_grad():
            kernel(*x, paths, chunk_size=config["chunk"])
        sync()
        times["fwd"].append(time.perf_counter() - start)
        start = time.perf_counter()
        fwd_bwd()
        sync()
        times["fwd_bwd"].append(time.perf_counter() - start)
    median = {key: sorted(val)[len(val) // 2] * 1e3 for key, val in times.items()}
    return {"fwd_ms": median["fwd"], "fwd_bwd_ms": median["fwd_bwd"], "peak_mb": peak / 2**20}


def measure_model_step(config: dict) -> dict:
    """Runs in the subprocess: the CAPS ETTh1 recipe's training step (`compare.grid.efficiency.measure`, the
    same measurement as benchmarks/bench_models.py) at batch B with the given kernel implementation."""
    from compare.grid.efficiency import measure as measure_step
    from compare.grid.run_args import merge_flags, parse_run_args
    from compare.recipes.tables import RECIPES

    torch.set_num_threads(config["threads"])
    recipe = RECIPES.recipe("CAPS", "ETTh1", config["pred_len"])
    configs = parse_run_args(merge_flags(recipe.argv, ["--batch_size", str(config["B"]),
                                                        "--caps_impl", config["impl"]]))
    eff = measure_step(configs, steps=config["repeats"], warmup=1)
    return {"step_ms": eff.step_ms, "peak_mb": eff.peak_bytes / 2**20, "params": eff.params}


def model_step_table(args: argparse.Namespace) -> None:
    header = f"{'pred_len':>8}{'T':>6}{'batch':>7}  {'impl':<9}{'step ms':>10}{'peak MB':>10}{'x naive':>9}"
    print(header)
    print("-" * len(header))
    for pred_len in args.pred_lens:
        naive_ms = None
        impls = ["chunked"] + (["native"] if native_rows("cpu") else [])
        runs = [(args.naive_batch, "naive")] + [(args.naive_batch, impl) for impl in impls]
        if args.batch != args.naive_batch:
            runs += [(args.batch, impl) for impl in impls]
        for batch, impl in runs:
            config = dict(mode="model", B=batch, pred_len=pred_len, impl=impl, threads=args.threads,
                          repeats=args.repeats, host_malloc=args.host_malloc)
            res = run_config(config)
            if "error" in res:
                print(f"{pred_len:>8}{96 + pred_len:>6}{batch:>7}  {impl:<9}  failed: {res['error']}")
                continue
            if impl == "naive":
                naive_ms = res["step_ms"]
            ratio = f"{naive_ms / res['step_ms']:.1f}" if naive_ms and batch == args.naive_batch else "n/a"
            print(f"{pred_len:>8}{96 + pred_len:>6}{batch:>7}  {impl:<9}{res['step_ms']:>10.1f}"
                  f"{res['peak_mb']:>10.1f}{ratio:>9}", flush=True)
    print("x naive = naive step time / this step time at the same batch (same run).")


def run_config(config: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(config)], capture_output=True, text=True,
                         cwd=ROOT, env=os.environ | {"OMP_NUM_THREADS": str(config["threads"])})
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"rc {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=ROOT).stdout
    commit = out.stdout.strip() if out.returncode == 0 else "no commit"
    return commit + (" (+uncommitted changes)" if dirty.strip() else "")


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's flags (--worker: one measurement in a fresh process, for run_config)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="T in {192, 816, 2048}, chunk 64 only, no ETTh1 shape")
    parser.add_argument("--T", nargs="+", type=int, default=None, help="sequence lengths (default: the full grid)")
    parser.add_argument("--chunks", nargs="+", type=int, default=None, help="chunk sizes (default: 16 32 64 128)")
    parser.add_argument("--model-step", action="store_true", help="time the CAPS model's training step instead")
    parser.add_argument("--pred_lens", nargs="+", type=int, default=[96, 720], help="--model-step horizons")
    parser.add_argument("--batch", type=int, default=32, help="--model-step batch of the chunked rows")
    parser.add_argument("--naive-batch", type=int, default=4, help="--model-step batch of the naive comparison")
    parser.add_argument("--host_malloc", default="retain", choices=HOST_MALLOC_CHOICES,
                        help="host allocator of every measurement, as run.py's flag")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    return parser


def main() -> int:
    parser = build_parser()
    args = parser.parse_args()
    if args.worker:
        config = json.loads(args.worker)
        configure_host_malloc(config["host_malloc"])
        print(json.dumps(measure_model_step(config) if config.get("mode") == "model" else measure(config)))
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is visible to torch; run with --device cpu")
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or "cpu"
    print(f"torch {torch.__version__} | device {args.device} ({device_name}) | threads {args.threads} | "
          f"commit {git_commit()} | python {platform.python_version()} | host_malloc {args.host_malloc}")
    torch.set_num_threads(args.threads)
    failures = equivalence_checks(args.device)
    if failures:
        print("EQUIVALENCE CHECKS FAILED, no timings reported:\n  " + "\n  ".join(failures))
        return 1
    checked = ("chunked 16-128, recurrent" + (", native" if native_rows(args.device) else "")
               + (", fla" if fla_rows(args.device) else ""))
    print(f"equivalence checks passed ({checked}, float32, vs naive float64: rel err <= 1e-5)")
    if args.model_step:
        model_step_table(args)
        return 0
    kernel_table(args)
    return 0


def kernel_table(args: argparse.Namespace) -> None:
    """One row per (shape, implementation): forward and forward+backward ms, peak MB and the speed-up over the
    naive form measured in the same run; naive and recurrent are skipped where they would not fit or finish."""
    t_values = args.T or ((192, 816, 2048) if args.quick else T_VALUES)
    chunks = args.chunks or ((64,) if args.quick else CHUNKS)
    shapes = [("B8-H4-E8", 8, 4, 8, t) for t in t_values]
    if not args.quick and args.T is None:
        shapes.append(("ETTh1-720 B224-H4-E8", 224, 4, 8, 816))
    impls = [("naive", 0), ("recurrent", 0)] + [("chunked", c) for c in chunks]
    if native_rows(args.device):
        impls.append(("native", 0))
    if fla_rows(args.device):
        impls.append(("fla", 0))
    header = f"{'shape':<22}{'T':>6}  {'impl':<12}{'fwd ms':>10}{'fwd+bwd ms':>12}{'peak MB':>10}{'x naive':>9}"
    print(header)
    print("-" * len(header))
    for label, B, H, E, T in shapes:
        naive_ms = None
        for impl, chunk in impls:
            name = f"{impl}-{chunk}" if chunk else impl
            if impl == "naive" and B * H * T * T * E > NAIVE_MAX_ELEMENTS:
                print(f"{label:<22}{T:>6}  {name:<12}{'skipped: [B,H,T,T,E] exceeds memory':>41}")
                continue
            if impl == "recurrent" and T > RECURRENT_MAX_T:
                print(f"{label:<22}{T:>6}  {name:<12}{'skipped: per-step loop too slow':>41}")
                continue
            config = dict(B=B, H=H, E=E, T=T, impl=impl, chunk=chunk or 64, device=args.device,
                          threads=args.threads, repeats=args.repeats, host_malloc=args.host_malloc)
            res = run_config(config)
            if "error" in res:
                print(f"{label:<22}{T:>6}  {name:<12}  failed: {res['error']}")
                continue
            if impl == "naive":
                naive_ms = res["fwd_bwd_ms"]
            ratio = f"{naive_ms / res['fwd_bwd_ms']:.1f}" if naive_ms else "n/a"
            print(f"{label:<22}{T:>6}  {name:<12}{res['fwd_ms']:>10.1f}{res['fwd_bwd_ms']:>12.1f}"
                  f"{res['peak_mb']:>10.1f}{ratio:>9}", flush=True)
    print("x naive = naive forward+backward time / this forward+backward time (same shape, same run).")


if __name__ == "__main__":
    sys.exit(main())
