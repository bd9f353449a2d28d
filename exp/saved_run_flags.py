"""The run.py flags of a finished or interrupted run, rebuilt from the `last.pth` exp writes in its setting
folder: run.py's defaults, then the flags saved there, then flags given on a later command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from exp.arguments import build_parser, validate_args
from exp.checkpointing import LAST_FILE, load_checkpoint
from utils.errors import UserInputError

__all__ = ["REQUIRED_FLAGS", "run_arguments", "saved_flags"]

# The run.py flags without a default: read from last.pth, or given on the command line.
REQUIRED_FLAGS = ("task_name", "model_id", "model", "data")


def saved_flags(folder: Path) -> dict:
    """The run.py flags that exp saved in `<folder>/last.pth` ({} without one)."""
    last = folder / LAST_FILE
    if not last.is_file():
        return {}
    state = load_checkpoint(last)
    flags = state.get("args") if isinstance(state, dict) else None
    return flags if isinstance(flags, dict) else {}


def run_arguments(folder: Path, flags: list[str]) -> argparse.Namespace:
    """run.py's namespace for the run in `folder`: run.py defaults, then the flags saved in last.pth, then
    `flags` (run.py flags given on this command line). is_training is 0 (a test run)."""
    saved = saved_flags(folder)
    missing = [name for name in REQUIRED_FLAGS if name not in saved and f"--{name}" not in flags]
    if missing:
        raise UserInputError(f"{folder} has no {LAST_FILE} with the run's flags: pass the run.py flags of that "
                             f"run (missing --{', --'.join(missing)})")
    head = [item for name in REQUIRED_FLAGS if name in saved for item in (f"--{name}", str(saved[name]))]
    head += ["--is_training", "0"]
    # Later occurrences win in argparse, so flags typed here override the head taken from last.pth.
    args = build_parser().parse_args(head + flags)
    # Which flags were typed: parse again with a marker as every default.
    unset = object()
    marker = build_parser()
    marker.set_defaults(**dict.fromkeys(vars(args), unset))
    given = {name for name, value in vars(marker.parse_args(head + flags)).items() if value is not unset}
    for name, value in saved.items():
        if hasattr(args, name) and name not in given:
            setattr(args, name, value)
    args.is_training = 0
    validate_args(args)
    return args
