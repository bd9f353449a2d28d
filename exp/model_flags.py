"""Model-specific flags a model does not read: one warning line instead of silence.

run.py accepts every model's flags for every model (as TSLib does), so `--down_sampling_layers 3` given to
PatchTST would change nothing without a word. The model is built from a namespace that records which
flags its constructor reads; a model-specific flag set away from its default and never read is named in
one warning line.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable

import torch.nn as nn

from exp.arguments import build_parser

logger = logging.getLogger(__name__)

# Parser groups whose flags configure a model (rather than data, training or the machine).
MODEL_FLAG_GROUPS = ("model define", "CAPS")
# Flags of those groups that the data pipeline or the experiment reads whatever the model is.
SHARED_FLAGS = frozenset({"enc_in", "dec_in", "c_out", "embed"})


def model_flag_defaults() -> dict[str, object]:
    """dest -> run.py default of every model-specific flag."""
    parser = build_parser()
    defaults = {}
    for group in parser._action_groups:  # argparse keeps groups only here
        if group.title in MODEL_FLAG_GROUPS:
            for action in group._group_actions:
                if action.dest not in SHARED_FLAGS:
                    defaults[action.dest] = action.default
    return defaults


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
