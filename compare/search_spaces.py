"""Search spaces of equal-budget tuning (`python -m compare tune`): data beside the recipes, one home.

Each model family's space is a set of run.py flags, each a range *centred on the recipe's own value* for
that (model, dataset, horizon), so the recipe is always inside its space and the search explores around
what the model's authors or TSLib chose:

    learning_rate   log-uniform in [lr / 10, lr · 10]           every model
    batch_size      one of {b / 2, b, 2b}                       every model
    d_model, d_ff   one of {w / 2, w, 2w}                       models that read them (not CAPS: width rule)
    e_layers        one of {max(1, e - 1), e, e + 1}            models that read it
    dropout         uniform in [0, 0.3]                         models that read it

A model's space lists only the flags it reads: `check_space` builds the model once from the recipe with a
namespace that records what its constructor reads (`exp.model_flags.ReadRecorder`) and refuses a model
flag it never reads (training flags, read by the experiment, always count).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from compare.run_args import parse_run_args
from utils.errors import UserInputError

__all__ = ["FAMILIES", "SPACES", "Dimension", "check_space", "space_for"]


@dataclass(frozen=True)
class Dimension:
    """One flag's range around the recipe value v: `log` [v/f, v·f], `uniform` [low, high], `scale`
    {v·s for s in scales} (integers, at least 1), `step` {v + d for d in steps} (at least 1)."""

    kind: str
    factor: float = 10.0
    low: float = 0.0
    high: float = 0.0
    values: tuple[float, ...] = ()

    def around(self, centre: float) -> dict:
        """This dimension as Optuna-style data: {'log'|'uniform': (low, high)} or {'choice': [...]}."""
        if self.kind == "log":
            return {"log": (centre / self.factor, centre * self.factor)}
        if self.kind == "uniform":
            return {"uniform": (self.low, self.high)}
        if self.kind == "scale":
            return {"choice": sorted({max(1, int(round(centre * s))) for s in self.values})}
        if self.kind == "step":
            return {"choice": sorted({max(1, int(centre + d)) for d in self.values})}
        raise ValueError(f"unknown dimension kind {self.kind!r}")


LEARNING_RATE = Dimension("log", factor=10.0)
HALF_OR_DOUBLE = Dimension("scale", values=(0.5, 1.0, 2.0))
ONE_LAYER_MORE_OR_LESS = Dimension("step", values=(-1, 0, 1))
DROPOUT = Dimension("uniform", low=0.0, high=0.3)

#: family -> flag -> dimension
SPACES: dict[str, dict[str, Dimension]] = {
    "linear": {"learning_rate": LEARNING_RATE, "batch_size": HALF_OR_DOUBLE},
    "transformer": {"learning_rate": LEARNING_RATE, "batch_size": HALF_OR_DOUBLE, "d_model": HALF_OR_DOUBLE,
                    "d_ff": HALF_OR_DOUBLE, "e_layers": ONE_LAYER_MORE_OR_LESS, "dropout": DROPOUT},
    # CAPS derives its width from the data (`--d_model 0`, the paper's width rule) and has no d_ff.
    "caps": {"learning_rate": LEARNING_RATE, "batch_size": HALF_OR_DOUBLE, "e_layers": ONE_LAYER_MORE_OR_LESS,
             "dropout": DROPOUT},
}
#: model -> family (a model missing here cannot be tuned until it is given one)
FAMILIES: dict[str, str] = {
    "DLinear": "linear",
    "PatchTST": "transformer",
    "iTransformer": "transformer",
    "Transformer": "transformer",
    "CAPS": "caps",
}
#: flags of the space read by the experiment (not the model), so every model reads them
TRAINING_FLAGS = frozenset({"learning_rate", "batch_size"})


def space_for(model: str, argv: list[str] | tuple[str, ...]) -> dict[str, dict]:
    """flag -> Optuna-style range of `model`'s space, centred on the values in the run's `argv`."""
    family = FAMILIES.get(model)
    if family is None:
        raise UserInputError(f"{model} has no search space yet; add it to FAMILIES in compare/search_spaces.py "
                             f"(families: {', '.join(SPACES)})")
    args = parse_run_args(argv)
    return {flag: dim.around(getattr(args, flag)) for flag, dim in SPACES[family].items()}


def model_flags_read(args: argparse.Namespace) -> frozenset[str]:
    """The flags the model's constructor reads, built once from `args` on the CPU."""
    from exp.model_flags import ReadRecorder
    from exp.model_registry import MODEL_REGISTRY

    recorder = ReadRecorder(args)
    MODEL_REGISTRY[args.model](recorder)
    return recorder.names_read


def check_space(model: str, space: dict[str, dict], argv: list[str] | tuple[str, ...]) -> None:
    """Refuse a space naming a model flag the model ignores (one line naming the flag and the model)."""
    read = model_flags_read(parse_run_args(argv))
    ignored = sorted(flag for flag in space if flag not in TRAINING_FLAGS and flag not in read)
    if ignored:
        raise UserInputError(f"the search space of {model} names --{ignored[0]}, which {model} does not read; "
                             "drop it from its family in compare/search_spaces.py")
