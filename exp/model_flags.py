"""Model-specific flags a model does not read: one warning line instead of silence.

run.py accepts every model's flags for every model (as TSLib does), so `--down_sampling_layers 3` given to
PatchTST (or OLinear's `--embed_size` given to DLinear) would change nothing without a word. Which flags are
model-specific is data: the flag groups listed in `exp.arguments.MODEL_FLAG_GROUPS`. The model is built from a namespace that records which
flags its constructor reads; a model-specific flag set away from its default and never read is named in
one warning line.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable

import torch.nn as nn

from exp.arguments import model_flag_actions

logger = logging.getLogger(__name__)

# Flags of the model groups that the data pipeline or the experiment reads whatever the model is.
SHARED_FLAGS = frozenset({"enc_in", "dec_in", "c_out", "embed"})


def model_flag_defaults() -> dict[str, object]:
    """dest -> run.py default of every model-specific flag (`exp.arguments.MODEL_FLAG_GROUPS`)."""
    return {action.dest: action.default for action in model_flag_actions() if action.dest not in SHARED_FLAGS}


class ReadRecorder(argparse.Namespace):
    """A copy of a run.py namespace that records the name of every attribute read from it."""

    def __init__(self, source: argparse.Namespace) -> None:
        super().__init__(**vars(source))
        object.__setattr__(self, "_names_read", set())

    def __getattribute__(self, name: str):
        if not name.startswith("_"):
            object.__getattribute__(self, "_names_read").add(name)
        return object.__getattribute__(self, name)

    @property
    def names_read(self) -> frozenset[str]:
        return frozenset(object.__getattribute__(self, "_names_read"))


def ignored_model_flags(args: argparse.Namespace, names_read: frozenset[str]) -> list[str]:
    """`--flag value` for each model-specific flag set away from its default that the model never read."""
    ignored = []
    for name, default in model_flag_defaults().items():
        value = getattr(args, name, default)
        if value != default and name not in names_read:
            shown = " ".join(map(str, value)) if isinstance(value, list) else value
            ignored.append(f"--{name} {shown}")
    return ignored


def build_model_warning_ignored_flags(model_cls: Callable[[argparse.Namespace], nn.Module],
                                      args: argparse.Namespace) -> nn.Module:
    """`model_cls(args)`, logging one warning line naming the model-specific flags it ignores."""
    recorder = ReadRecorder(args)
    model = model_cls(recorder)
    ignored = ignored_model_flags(args, recorder.names_read)
    if ignored:
        logger.warning("%s ignores %s (flags of other models; drop them)", args.model, ", ".join(ignored))
    return model
