"""CAPS against PatchTST at ETTh1 H = 720, batch 32 (issue 63's target: CAPS's CPU train step <= 2x PatchTST's
at 1 and 2 threads, peak memory <= 2x), interleaved in one run.

Usage:  python benchmarks/bench_caps_cost.py [--threads 1 2] [--pairs 5] [--no-reference-row] [--skip-tests]

First it runs the exactness tests of what the CAPS step uses (the fast blocks against their autograd
references, the native kernel against its float64 references; `EXACTNESS_TESTS`) and refuses to print a
timing if any fails. Then, per thread count, it builds both models from their ETTh1 recipes (`compare/recipes/tables.py`,
the same step as `bench_models.py`), warms each up once and runs `--pairs` rounds of one step of each model in
turn (CAPS, PatchTST and, unless --no-reference-row, CAPS with its blocks on the autograd references: the
"before" of the fast blocks), so that a change of machine load hits every row alike. It prints the median
step of each row, the median of the per-round ratios to PatchTST, and the peak tensor memory of one step
(parameters, buffers and optimiser state plus the peak of live tensors, `compare.grid.efficiency.TensorMemoryTracker`).
The header names the date, machine, torch, commit, the load average before and after, and the other
processes then using more than 20 % of a core: on a busy machine the ratios, not the milliseconds, carry.
An idle 2-core machine runs the default in under 3 minutes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from compare.grid.efficiency import TensorMemoryTracker, build_model, make_train_step  # noqa: E402
from compare.grid.run_args import parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from models.CAPS import MLP, RMSNorm  # noqa: E402
from utils.host_load import busy_processes, load_average  # noqa: E402
from utils.host_memory import configure_host_malloc  # noqa: E402

DATA, HORIZON = "ETTh1", 720
# The exactness tests gating the timings: fast blocks vs references (outputs and gradients), the native kernel
# vs float64 references and gradcheck, and the layer's native path vs the chunked kernel.
EXACTNESS_TESTS = ["tests/layers/test_caps_block_ops.py", "tests/models/test_caps_fast_blocks.py",
                   "tests/layers/test_caps_mlp_branch.py", "tests/layers/test_caps_projection.py",
                   "tests/layers/test_caps_residual_linear.py", "tests/layers/test_caps_recomputed.py",
                   "tests/layers/test_caps_cpu_kernel.py", "-k",
                   "not build and not lock and not guard and not meta and not opcheck or reference or matches"]


def run_exactness_tests() -> bool:
    """Runs EXACTNESS_TESTS with one thread; True when all pass."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *EXACTNESS_TESTS],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    print("# exactness tests: " + (done.stdout.strip().splitlines() or ["no output"])[-1])
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
    return done.returncode == 0


def _commit() -> str:
    out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                         check=False)
    return out.stdout.strip() or "unknown"


def set_reference_blocks(model: torch.nn.Module) -> torch.nn.Module:
    """CAPS with RMSNorm and MLP on their autograd references (the forms before the fast blocks; with the norms
    unfused the blocks also run their attention half module by module: no folded norm, no recomputation)."""
    for module in model.modules():
        if isinstance(module, RMSNorm):
            module.fused = False
        elif isinstance(module, MLP):
            module.tiled = False
    return model


def peak_bytes(model: torch.nn.Module, train_step, step) -> int:  # noqa: ANN001
    """Parameters, buffers and optimiser state plus the peak of tensors alive during one step."""
    held = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
    for state in train_step.optimizer.state.values():
        held += sum(v.numel() * v.element_size() for v in state.values() if isinstance(v, torch.Tensor))
    tracker = TensorMemoryTracker()
    with tracker:
        step()
    return held + tracker.peak


def build_rows(reference_row: bool) -> dict[str, tuple]:
    """name -> (model, train step, step callable) for CAPS, PatchTST and optionally CAPS on reference blocks."""
    rows = {}
    names = ["CAPS", "PatchTST"] + (["CAPS (reference blocks)"] if reference_row else [])
    for name in names:
        configs = parse_run_args(RECIPES.argv(name.split(" ")[0], DATA, HORIZON))
        torch.manual_seed(0)
        model = build_model(configs, "cpu")
        if name != "CAPS" and name.startswith("CAPS"):
            set_reference_blocks(model)
        train_step, step = make_train_step(configs, model, "cpu")
        rows[name] = (model, train_step, step)
    return rows


def measure_threads(threads: int, pairs: int, reference_row: bool) -> None:
    torch.set_num_threads(threads)
    rows = build_rows(reference_row)
    for _, _, step in rows.values():
        step()
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(pairs):
        for name, (_, _, step) in rows.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    base = times["PatchTST"]
    print(f"\n## threads {threads}: median of {pairs} interleaved rounds; ratio = median of per-round step / PatchTST")
    print(f"{'row':<24} {'step ms':>9} {'x PatchTST':>10} {'peak MiB':>9} {'x PatchTST':>10}")
    peaks = {name: peak_bytes(model, train_step, step) for name, (model, train_step, step) in rows.items()}
    for name, own in times.items():
        ratio = statistics.median(a / b for a, b in zip(own, base, strict=True))
        print(f"{name:<24} {statistics.median(own) * 1e3:>9.1f} {ratio:>10.2f} {peaks[name] / 2**20:>9.1f} "
              f"{peaks[name] / peaks['PatchTST']:>10.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts, measured in turn")
    p.add_argument("--pairs", type=int, default=5, help="interleaved rounds per thread count")
    p.add_argument("--no-reference-row", action="store_true", help="leave out CAPS on the reference blocks")
    p.add_argument("--skip-tests", action="store_true", help="no exactness tests: prints timings, never a speed-up claim")
    args = p.parse_args(argv)
    configure_host_malloc("retain")
    start = time.perf_counter()
    print(f"# bench_caps_cost  {time.strftime('%Y-%m-%d %H:%M %Z')}  commit {_commit()}  torch {torch.__version__}  "
          f"{platform.machine()} ({os.cpu_count()} cores)  host_malloc retain")
    print(f"# {DATA} H = {HORIZON}, batch 32, each model's recipe; load average before: "
          f"{load_average()}")
    print(f"# other busy processes: {busy_processes()}")
    if not args.skip_tests and not run_exactness_tests():
        print("exactness tests failed: no timings reported")
        return 1
    for threads in args.threads:
        measure_threads(threads, args.pairs, not args.no_reference_row)
    print(f"\n# load average after: {load_average()}; "
          f"wall {time.perf_counter() - start:.0f} s" + ("; exactness tests skipped" if args.skip_tests else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
