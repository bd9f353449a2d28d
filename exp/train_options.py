"""The training loop's options, torch-free: the choice lists and checks of --train_loop, --compile_mode and
--cpu_denormals, read by run.py's parser (`exp/arguments.py`) without importing torch, and by the training step
(`exp/train_step.py`)."""

from __future__ import annotations

import argparse

# torch.compile's modes, as --compile_mode spells them (None: torch's default mode).
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

# --cpu_denormals: subnormal floats on the CPU read and written as zero, or kept (utils/cpu_denormals.py).
CPU_DENORMAL_MODES = ("flush", "keep")

TRAIN_LOOPS = ("ours", "official")
TRAIN_LOOP_HELP = (
    "ours: AdamW's beta1 stays as set (no OneCycle momentum cycling), the gradient is unscaled before it is "
    "clipped, no loss scaling under bf16, and --grad_accum averages k micro-batches; official: the official "
    "CAPS code's loop, quirks included: OneCycle cycles beta1 between 0.85 and 0.95 and steps every "
    "micro-batch, the gradient is clipped while still loss-scaled (so under AMP the applied gradient has "
    "norm ~ --max_grad_norm / 65536), the GradScaler runs under bf16 too, and gradients are zeroed every "
    "micro-batch so only the last of a --grad_accum group is applied, at the batches the official counter "
    "picks (it restarts every 100 batches). Needs --lradj onecycle, and --amp_dtype bf16 with --use_amp; "
    "on CPU (no AMP, no loss scaling) the clip bounds the true gradient")

# The official loop's iteration counter restarts every this many batches (it doubles as its log period).
OFFICIAL_COUNTER_PERIOD = 100


def unknown_train_loop(value: object) -> ValueError:
    """The one-line error of a --train_loop value that is not one of TRAIN_LOOPS."""
    return ValueError(f"--train_loop {value!r} is not supported; valid choices: {', '.join(TRAIN_LOOPS)}")


def check_train_loop(args: argparse.Namespace) -> None:
    """Raise ValueError naming the flag and the fix when --train_loop or the flags it needs are unusable."""
    if args.train_loop not in TRAIN_LOOPS:
        raise unknown_train_loop(args.train_loop)
    if args.train_loop != "official":
        return
    if args.lradj != "onecycle":
        raise ValueError(f"--train_loop official reproduces the official OneCycle schedule stepped every batch; "
                         f"pass --lradj onecycle instead of --lradj {args.lradj}")
    if args.use_amp and args.amp_dtype != "bf16":
        raise ValueError("--train_loop official autocasts in bf16 as the official code does; pass --amp_dtype bf16 "
                         "with --use_amp")
    if args.grad_accum > OFFICIAL_COUNTER_PERIOD:
        raise ValueError(f"--train_loop official never steps the optimiser with --grad_accum {args.grad_accum}: "
                         f"its batch counter restarts every {OFFICIAL_COUNTER_PERIOD} batches; use --grad_accum "
                         f"<= {OFFICIAL_COUNTER_PERIOD}")
