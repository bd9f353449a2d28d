"""The CAPS checkpoint behind `python -m explain`: its `checkpoint.pth`, the check that the run splits into
additive CAPS paths, and the CAPS model with its weights (the run's flags: exp/saved_run_flags.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from exp.checkpointing import BEST_FILE, load_checkpoint, load_model_state
from models.CAPS import Model as CAPSModel
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

__all__ = ["DTYPES", "check_explainable", "checkpoint_file", "load_caps"]

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def checkpoint_file(path: Path) -> Path:
    """`<setting>/checkpoint.pth` for a setting folder, the file itself otherwise; UserInputError when absent."""
    file = path / BEST_FILE if path.is_dir() else path
    if not file.is_file():
        raise UserInputError(f"checkpoint {file} not found: pass <checkpoints>/<setting>/checkpoint.pth "
                             "or its folder")
    return file


def check_explainable(args: argparse.Namespace) -> None:
    """UserInputError, one line, for runs whose attention output does not split into additive paths here."""
    if args.model != "CAPS":
        raise UserInputError(f"--model {args.model}: python -m explain looks inside CAPS checkpoints only")
    if args.task_name != "long_term_forecast":
        raise UserInputError(f"--task_name {args.task_name}: python -m explain reads long_term_forecast test "
                             "windows only")
    if getattr(args, "caps_numerics", flag_default("caps_numerics")) != "paper":
        raise UserInputError("--caps_numerics official: its features carry the official arithmetic (global max, "
                             "+1e-8, clipped cumsum) that the naive path weights do not model; explain a "
                             "--caps_numerics paper run")
    for flag, paper in (("caps_path1_max", "running"), ("caps_path2_decay", "exact"), ("caps_rope_layout", "paper")):
        value = getattr(args, flag, flag_default(flag))
        if value not in ("auto", paper):
            raise UserInputError(f"--{flag} {value}: the official arithmetic is not modelled by the naive path "
                                 f"weights; explain a run with --{flag} {paper} (or auto)")
    if getattr(args, "caps_attn", flag_default("caps_attn")) != "linear":
        raise UserInputError(f"--caps_attn {args.caps_attn}: the softmax of the summed scores does not split into "
                             "per-path contributions; explain a --caps_attn linear run")
    if getattr(args, "caps_paths", flag_default("caps_paths")) in ("none", ""):
        raise UserInputError("--caps_paths none is plain linear attention: it has no CAPS paths to look at")
    if getattr(args, "caps_direction", flag_default("caps_direction")) == "bidirectional":
        raise UserInputError("--caps_direction bidirectional averages two directions per layer; python -m explain "
                             "shows causal layers only")


def load_caps(path: Path, args: argparse.Namespace, dtype: torch.dtype) -> CAPSModel:
    """The CAPS model of `args` with the weights of checkpoint `path`, in eval mode, on the CPU, in `dtype`."""
    state = load_checkpoint(path)
    if not isinstance(state, dict) or not any(str(key).endswith("attn.clock_proj.weight") for key in state):
        raise UserInputError(f"checkpoint {path} holds no CAPS attention weights (no *.attn.clock_proj.weight); "
                             "python -m explain looks inside CAPS checkpoints only")
    try:
        model = CAPSModel(args)
    except ValueError as err:
        raise UserInputError(f"--model CAPS: {err}") from None
    load_model_state(model, state, path)
    return model.to(dtype).eval()
