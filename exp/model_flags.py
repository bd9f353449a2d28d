"""Model-specific flags a model does not read: one warning line instead of silence.

run.py accepts every model's flags for every model (as TSLib does), so `--down_sampling_layers 3` given to
PatchTST (or OLinear's `--embed_size` given to DLinear) would change nothing without a word. Which flags are
model-specific is data: the flag groups listed in `exp.arguments.MODEL_FLAG_GROUPS`. The model is built from a namespace that records which
flags its constructor reads; a model-specific flag set away from its default and never read is named in
one warning line.

This is the one home of "which flags does a model read": `flags_read(args)` builds the model once on the
meta device and returns the names its constructor read (the equal-budget search spaces of
`compare.tune.search_spaces` list only those). A shared check's read (`layers.config_checks.peek`, e.g. every
forecasting model's 0 <= dropout < 1) does not count.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable

import torch
import torch.nn as nn

from exp.arguments import model_flag_actions
from exp.model_registry import MODEL_REGISTRY
from utils.train_split import TRAIN_SPLIT_ATTR, needs_train_split, synthetic_train_split, with_train_split

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
        if not name.startswith("_") and name != "names_read":
            object.__getattribute__(self, "_names_read").add(name)
        return object.__getattribute__(self, name)

    @property
    def names_read(self) -> frozenset[str]:
        return frozenset(object.__getattribute__(self, "_names_read"))


def flags_read(args: argparse.Namespace) -> frozenset[str]:
    """The names `MODEL_REGISTRY[args.model](args)` reads, from one build on the meta device (shapes only:
    no weights are allocated, so an ECL-wide model costs what a tiny one does). A model built from training
    statistics (`utils.train_split`) gets a synthetic split of enc_in channels when `args` carries none:
    which flags a constructor reads does not depend on the values of the data. A model that cannot be
    built here raises its own error (e.g. Mamba without mamba_ssm)."""
    model_class = MODEL_REGISTRY[args.model]
    if needs_train_split(model_class) and getattr(args, TRAIN_SPLIT_ATTR, None) is None:
        rows = max(2048, 4 * (args.seq_len + args.pred_len))
        args = with_train_split(args, synthetic_train_split(rows=rows, channels=args.enc_in))
    recorder = ReadRecorder(args)
    with torch.device("meta"):
        model_class(recorder)
    return recorder.names_read


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
