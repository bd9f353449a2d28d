"""The run behind a checkpoint: its `checkpoint.pth`, the run.py flags exp saved in `last.pth` (flags given on
the command line override them), the check that the run splits into additive CAPS paths, and the CAPS model
with its weights."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from exp.arguments import build_parser as build_run_parser
from exp.arguments import validate_args
from exp.checkpointing import BEST_FILE, LAST_FILE, load_checkpoint, load_model_state
from models.CAPS import Model as CAPSModel
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

__all__ = ["DTYPES", "REQUIRED_FLAGS", "check_explainable", "checkpoint_file", "load_caps", "run_arguments",
           "saved_flags"]

# The run.py flags without a default: read from last.pth, or given on this command line.
REQUIRED_FLAGS = ("task_name", "model_id", "model", "data")
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def checkpoint_file(path: Path) -> Path:
    """`<setting>/checkpoint.pth` for a setting folder, the file itself otherwise; UserInputError when absent."""
    file = path / BEST_FILE if path.is_dir() else path
    if not file.is_file():
        raise UserInputError(f"checkpoint {file} not found: pass <checkpoints>/<setting>/checkpoint.pth "
                             "or its folder")
    return file


def saved_flags(folder: Path) -> dict:
    """The run.py flags that exp saved in `<folder>/last.pth` ({} without one)."""
    last = folder / LAST_FILE
    if not last.is_file():
        return {}
    state = load_checkpoint(last)
    flags = state.get("args") if isinstance(state, dict) else None
    return flags if isinstance(flags, dict) else {}


def run_arguments(folder: Path, flags: list[str]) -> argparse.Namespace:
    """run.py's namespace for the checkpoint in `folder`: run.py defaults, then the flags saved in
    last.pth, then `flags` (run.py flags given on this command line). is_training is 0 (a test run)."""
    saved = saved_flags(folder)
    missing = [name for name in REQUIRED_FLAGS if name not in saved and f"--{name}" not in flags]
    if missing:
        raise UserInputError(f"{folder} has no {LAST_FILE} with the run's flags: pass the run.py flags of that "
                             f"run (missing --{', --'.join(missing)})")
    head = [item for name in REQUIRED_FLAGS if name in saved for item in (f"--{name}", str(saved[name]))]
    head += ["--is_training", "0"]
    # Later occurrences win in argparse, so flags typed here override the head taken from last.pth.
    args = build_run_parser().parse_args(head + flags)
    # Which flags were typed: parse again with a marker as every default.
    unset = object()
    marker = build_run_parser()
    marker.set_defaults(**dict.fromkeys(vars(args), unset))
    given = {name for name, value in vars(marker.parse_args(head + flags)).items() if value is not unset}
    for name, value in saved.items():
        if hasattr(args, name) and name not in given:
            setattr(args, name, value)
    args.is_training = 0
    validate_args(args)
    return args


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
