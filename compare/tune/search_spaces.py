"""Search spaces of equal-budget tuning (`python -m compare tune`): data beside the recipes, one home.

Every model has the same *family space*, each flag a range centred on the recipe's own value r for that
(model, dataset, horizon), so the recipe is always inside its space:

    learning_rate   log-uniform in [r / 10, r · 10]                       (read by the experiment)
    batch_size      one of {r / 2, r, 2r}                                 (read by the experiment)
    d_model, d_ff   one of {r / 2, r, 2r}  (d_model: multiples of n_heads when the model reads n_heads)
    e_layers        one of {max(1, r - 1), r, r + 1}
    dropout         uniform in [max(0, r - 0.2), min(0.9, r + 0.2)]

A model's space is the family space restricted to the flags its constructor reads
(`exp.model_flags.flags_read`: one build on the meta device), less the flags of `NOT_SEARCHED`, which a
model reads but whose recipe value must stay as it is. Nothing is listed per model otherwise: a model
added to the recipes gets its space by construction.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from compare.grid.run_args import parse_run_args
from utils.errors import UserInputError

__all__ = ["FAMILY_SPACE", "MULTIPLE_OF", "NOT_SEARCHED", "TRAINING_FLAGS", "model_reads", "space_for"]

Range = dict  # {"log" | "uniform": (low, high)} or {"choice": [values]}


def log_around(r: float, factor: float = 10.0) -> Range:
    """Log-uniform on [r / factor, r · factor]."""
    return {"log": (r / factor, r * factor)}


def scaled(r: int, multiple: int = 1, scales: Sequence[float] = (0.5, 1.0, 2.0)) -> Range:
    """One of {r · s}, integers at least 1 that are multiples of `multiple` (r itself always stays)."""
    values = {max(1, int(round(r * s))) for s in scales}
    return {"choice": sorted({v for v in values if v % multiple == 0} | {r})}


def stepped(r: int, steps: Sequence[int] = (-1, 0, 1)) -> Range:
    """One of {max(1, r + d)}."""
    return {"choice": sorted({max(1, r + d) for d in steps})}


def uniform_around(r: float, half: float = 0.2, low: float = 0.0, high: float = 0.9) -> Range:
    """Uniform on [max(low, r - half), min(high, r + half)]."""
    return {"uniform": (max(low, round(r - half, 10)), min(high, round(r + half, 10)))}


#: flag -> range of the recipe value r (and the divisor of `MULTIPLE_OF`, 1 when none applies)
FAMILY_SPACE: dict[str, Callable[[float, int], Range]] = {
    "learning_rate": lambda r, m: log_around(r),
    "batch_size": lambda r, m: scaled(r),
    "d_model": lambda r, m: scaled(r, m),
    "d_ff": lambda r, m: scaled(r),
    "e_layers": lambda r, m: stepped(r),
    "dropout": lambda r, m: uniform_around(r),
}
#: flags read by the experiment (optimiser, loader), so every model reads them
TRAINING_FLAGS = frozenset({"learning_rate", "batch_size"})
#: flag -> the flag whose value its every choice must be a multiple of, when the model reads that one
MULTIPLE_OF = {"d_model": "n_heads"}  # each head gets d_model / n_heads features

#: model -> flag -> why the recipe value is kept (flags the model reads; tests check every entry)
NOT_SEARCHED: dict[str, dict[str, str]] = {
    "CAPS": {"d_model": "the recipe's 0 selects the paper's width rule (width from the data); "
                        "halving or doubling 0 is no width"},
    "ETSformer": {"e_layers": "must equal --d_layers (each encoder layer has its own decoder layer), and the "
                              "space moves one flag at a time"},
}


def model_reads(args: argparse.Namespace) -> frozenset[str]:
    """The flags `args.model` reads in this run: its constructor's (`exp.model_flags.flags_read`) and
    the experiment's `TRAINING_FLAGS`; a model that cannot be built here is one UserInputError."""
    from exp.model_flags import flags_read

    try:
        return flags_read(args) | TRAINING_FLAGS
    except UserInputError as err:
        raise UserInputError(f"cannot derive the search space of {args.model}, which does not build here: "
                             f"{err}") from None


def space_for(model: str, argv: list[str] | tuple[str, ...]) -> dict[str, Range]:
    """flag -> Optuna-style range of `model`'s space, centred on the values in the run's `argv`: the
    family space restricted to the flags the model reads, less its `NOT_SEARCHED` flags."""
    args = parse_run_args(argv)
    if args.model != model:
        raise ValueError(f"space_for({model!r}) was given the argv of --model {args.model}")
    read = model_reads(args)
    kept = NOT_SEARCHED.get(model, {})
    space = {}
    for flag, around in FAMILY_SPACE.items():
        if flag in read and flag not in kept:
            divisor = MULTIPLE_OF.get(flag)
            space[flag] = around(getattr(args, flag), getattr(args, divisor) if divisor in read else 1)
    return space
