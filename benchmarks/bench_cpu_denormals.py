"""What flushing subnormal floats (`--cpu_denormals flush`, run.py's default) saves and changes in a trained
long-term forecaster's training steps on the CPU.

Usage:  python benchmarks/bench_cpu_denormals.py --run CHECKPOINTS/<setting> \\
            --root_path ../shared/datasets/ETT-small/ [--batches 3] [--rounds 3] [--steps 12]

The run folder holds `last.pth`, any long-term-forecasting run's resume state (run.py writes it at every epoch
end; the comparison runner keeps a copy under OUT/resume/<setting>/ for an interrupted run): the model is
rebuilt from the flags it records over run.py's defaults, its weights loaded, and the first
`--batches` batches of its training split read. On one thread (flushing is set per thread) it prints, for
"keep" (IEEE gradual underflow, TSLib's) and "flush":
- the share of subnormal values among the gradients that reach the modules' outputs (kept arithmetic);
- one forward + backward of the training loss (`ForecastStep`) per batch, median of `--rounds` interleaved
  rounds, and the ratio;
- `--steps` optimiser steps of the run's own training step (`ForecastStep` with its optimiser) from the same
  weights over the same batches (dropout seeded alike) in each mode: the largest weight difference and the
  largest training-loss difference between the two.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

torch.set_num_threads(1)  # before any parallel op, so that no pool thread keeps its own MXCSR

from data_provider.data_factory import data_provider  # noqa: E402
from exp.checkpointing import LAST_FILE, load_checkpoint  # noqa: E402
from exp.model_registry import MODEL_REGISTRY  # noqa: E402
from exp.saved_run_flags import run_arguments  # noqa: E402
from exp.train_options import CPU_DENORMAL_MODES  # noqa: E402
from exp.train_step import Batch, ForecastStep, make_optimizer  # noqa: E402
from utils.cpu_denormals import cpu_denormals  # noqa: E402

CPU = torch.device("cpu")

TINY = torch.finfo(torch.float32).tiny


def trained_model(run: Path, root_path: str) -> tuple[nn.Module, argparse.Namespace, dict]:
    """The model of `run`/last.pth (its recorded flags over run.py's defaults) with its weights, and the state."""
    args = run_arguments(run, ["--root_path", root_path, "--num_workers", "0"])
    state = load_checkpoint(run / LAST_FILE)
    model = MODEL_REGISTRY[args.model](args).float()
    model.load_state_dict(state["model"])
    return model, args, state


def first_batches(args: argparse.Namespace, count: int) -> list[Batch]:
    torch.manual_seed(args.seed)
    _, loader = data_provider(args, "train")
    batches = []
    for batch in loader:
        batches.append(batch)
        if len(batches) == count:
            break
    return batches


def training_loss(model: nn.Module, args: argparse.Namespace, batch: Batch) -> torch.Tensor:
    """The run's training loss on `batch` (ForecastStep: MSE over the scored channels of the last pred_len steps)."""
    step = ForecastStep(model, args, CPU)
    return step.loss(*step.predict(batch))


def subnormal_gradient_share(model: nn.Module, args: argparse.Namespace, batches: list[Batch]) -> float:
    """Subnormal values / all values, over the gradients reaching every leaf module's output (kept arithmetic)."""
    counts = [0, 0]

    def count(module, grad_in, grad_out):
        for g in grad_out:
            if g is not None:
                counts[0] += int(((g != 0) & (g.abs() < TINY)).sum())
                counts[1] += g.numel()

    leaves = [m for m in model.modules() if not list(m.children())]
    hooks = [m.register_full_backward_hook(count) for m in leaves]
    try:
        with cpu_denormals(flush=False):
            for i, batch in enumerate(batches):
                torch.manual_seed(i)
                training_loss(model, args, batch).backward()
    finally:
        for hook in hooks:
            hook.remove()
    model.zero_grad()
    return counts[0] / max(counts[1], 1)


def step_seconds(model: nn.Module, args: argparse.Namespace, batch: Batch, mode: str) -> float:
    with cpu_denormals(flush=mode == "flush"):
        torch.manual_seed(0)
        start = time.perf_counter()
        training_loss(model, args, batch).backward()
        seconds = time.perf_counter() - start
    model.zero_grad()
    return seconds


def trained_copy(model: nn.Module, args: argparse.Namespace, batches: list[Batch], steps: int,
                 mode: str) -> tuple[nn.Module, list[float]]:
    """`steps` of the run's training step (its optimiser at --learning_rate) from a copy of `model`, cycling over
    `batches`."""
    model = copy.deepcopy(model)
    step = ForecastStep(model, args, CPU, optimizer=make_optimizer(model, args))
    losses = []
    with cpu_denormals(flush=mode == "flush"):
        for index in range(steps):
            torch.manual_seed(index)
            losses.append(step(batches[index % len(batches)]).item())
    return model, losses


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True,
                   help="a long-term-forecasting run's folder, <checkpoints>/<setting>, holding its last.pth")
    p.add_argument("--root_path", type=str, required=True, help="the folder holding the run's data file")
    p.add_argument("--batches", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=12)
    args_cli = p.parse_args(argv)
    model, args, state = trained_model(args_cli.run, args_cli.root_path)
    model.train()
    batches = first_batches(args, args_cli.batches)
    share = subnormal_gradient_share(model, args, batches)

    print(f"# bench_cpu_denormals  {time.strftime('%Y-%m-%d %H:%M')}  torch {torch.__version__}  threads 1  "
          f"{args.model} {args.data_path} H={args.pred_len}, batch {args.batch_size}, "
          f"checkpoint after epoch {state['progress']['epoch']}")
    print(f"subnormal share of the gradients reaching module outputs (kept): {share:.2%}")
    print("| batch | keep s (fwd + bwd) | flush s | keep / flush |")
    print("|---:|---:|---:|---:|")
    for index, batch in enumerate(batches):
        times: dict[str, list[float]] = {mode: [] for mode in CPU_DENORMAL_MODES}
        for _ in range(args_cli.rounds):
            for mode in CPU_DENORMAL_MODES:
                times[mode].append(step_seconds(model, args, batch, mode))
        keep, flush = statistics.median(times["keep"]), statistics.median(times["flush"])
        print(f"| {index} | {keep:.3f} | {flush:.3f} | {keep / flush:.1f}x |")

    kept, kept_losses = trained_copy(model, args, batches, args_cli.steps, "keep")
    flushed, flushed_losses = trained_copy(model, args, batches, args_cli.steps, "flush")
    weight_gap = max((a - b).abs().max().item() for a, b in zip(kept.parameters(), flushed.parameters(), strict=True))
    loss_gap = max(abs(a - b) for a, b in zip(kept_losses, flushed_losses, strict=True))
    print(f"after {args_cli.steps} {args.optimizer} steps (lr {args.learning_rate:g}) from the same weights: largest weight "
          f"difference keep vs flush {weight_gap:.3g}, largest training-loss difference {loss_gap:.3g} "
          f"(losses {kept_losses[0]:.4f} .. {kept_losses[-1]:.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
