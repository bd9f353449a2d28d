"""What a CAPS training step keeps for its backward: the tensors autograd saves in one forward, by source line.

Usage:  python benchmarks/caps_saved_memory.py [--pred_len 720] [--batch 32] [--impl chunked] [--rows 12]

Builds the model from `scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh` (as bench_models.py does), runs
one forward on `example_inputs` (a random batch at the recipe's shapes) under
`torch.autograd.graph.saved_tensors_hooks`, and counts each saved storage once (views of one storage share it), charged to the innermost line of this
repository that saved it. Device-independent (it counts bytes, not an allocator's peak), so it runs on the
CPU: the part of issue 18's "< 1 GB peak" that activations set. The attention kernel's own share depends
on --impl (fla saves its own tensors inside chunk_gla, which does not run here).
"""

from __future__ import annotations

import argparse
import collections
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from compare.grid.efficiency import build_model, example_inputs  # noqa: E402
from compare.grid.run_args import merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402


def _source_line() -> str:
    """'path:line' of the innermost frame inside the repository (this script excluded)."""
    for frame in reversed(traceback.extract_stack()):
        path = Path(frame.filename)
        if path.is_relative_to(ROOT) and path.name != Path(__file__).name:
            return f"{path.relative_to(ROOT)}:{frame.lineno}"
    return "outside the repository"


def saved_bytes_by_line(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> collections.Counter:
    """bytes of the distinct storages autograd saves during model(*inputs), keyed by `_source_line()`."""
    seen: set[int] = set()
    by_line: collections.Counter = collections.Counter()

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            by_line[_source_line()] += storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(*inputs)
    return by_line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pred_len", type=int, default=720)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--impl", default="chunked", help="--caps_impl of the model")
    p.add_argument("--rows", type=int, default=12, help="source lines listed")
    args = p.parse_args(argv)
    recipe = RECIPES.recipe("CAPS", "ETTh1", args.pred_len)
    configs = parse_run_args(merge_flags(recipe.argv, ["--batch_size", str(args.batch), "--caps_impl", args.impl]))
    model = build_model(configs, "cpu")
    by_line = saved_bytes_by_line(model, example_inputs(configs, args.batch))
    total = sum(by_line.values())
    print(f"# CAPS ETTh1 H={args.pred_len} batch {args.batch} impl {args.impl}, float32, torch {torch.__version__}: "
          f"{total / 2**20:.0f} MiB saved for backward")
    print("| MiB | share | saved at |\n|---:|---:|---|")
    for line, nbytes in by_line.most_common(args.rows):
        print(f"| {nbytes / 2**20:.1f} | {nbytes / total:.0%} | `{line}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
