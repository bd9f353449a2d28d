"""Checkpoint files: safe loading, the resume state in `last.pth`, and every RNG state a run touches.

`<checkpoints>/<setting>/checkpoint.pth` holds the best model's state_dict (TSLib's file, unchanged).
`<checkpoints>/<setting>/last.pth` holds everything `--resume` needs to continue bit-for-bit: model,
optimiser, scheduler, AMP scaler, early-stopping state and the best weights so far (`best_model`, the
contents of checkpoint.pth; absent in files of earlier versions), the epoch and the number of
micro-batches already trained in it, the running train-loss sums, the flags of the run, and the RNG
states of every rank. A resume therefore needs `last.pth` alone: a missing checkpoint.pth is written
again from it (a run copied to another machine, `compare --resume_copies`). When the run's test has
finished, `last.pth` is replaced by a small "complete" record so a resumed `--itr` loop skips finished
iterations. All files are written atomically (temp + rename), and
they are read with ``weights_only=True`` so a damaged or foreign file fails with a clear message.
"""

from __future__ import annotations

import argparse
import pickle
import random
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from exp.arguments import build_parser
from exp.run_config import RESULT_FREE_FLAGS, protocol_free
from utils.errors import UserInputError

BEST_FILE = "checkpoint.pth"
LAST_FILE = "last.pth"
#: bumped when the layout of last.pth changes
LAST_FORMAT = 2

# Flags that may differ between the interrupted run and the resumed one: those that do not change what a run
# computes (moving the data, more workers, another GPU index, ...), plus "device", "device_ids" and "run_seed",
# which earlier versions wrote into the namespace and may appear in an older last.pth.
_RESUME_FREE_FLAGS = RESULT_FREE_FLAGS | {"device", "device_ids", "run_seed"}


# Errors whose message says what is wrong with the file (others get their type's name).
_READABLE_ERRORS = (RuntimeError, EOFError, ValueError, OSError, pickle.UnpicklingError, zipfile.BadZipFile)


def load_checkpoint(path: str | Path) -> Any:
    """torch.load(path) onto the CPU; a missing, truncated or foreign file raises UserInputError naming it."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"checkpoint {path} not found")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    # A file that is not torch's zip format goes to the legacy unpickler, which garbage can make raise nearly
    # anything (IndexError, KeyError, MemoryError, ...): every failure to read the file means the same.
    except Exception as err:  # noqa: BLE001 - see above
        readable = isinstance(err, _READABLE_ERRORS) and str(err)
        reason = str(err).splitlines()[0][:120] if readable else f"not a file torch.save wrote: {type(err).__name__}"
        raise UserInputError(f"checkpoint {path} is truncated or corrupt ({reason}); delete it and train "
                             "again (without --resume when it is last.pth)") from None


def load_model_state(model: nn.Module, state: Any, path: str | Path) -> None:
    """model.load_state_dict(state); a state that does not fit the model raises UserInputError naming `path`."""
    if not isinstance(state, dict):
        raise UserInputError(f"checkpoint {path} does not hold a model state_dict")
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise UserInputError(f"checkpoint {path} does not fit the model built from these flags "
                             f"({str(err).splitlines()[-1].strip()[:160]}); pass the flags it was trained "
                             "with") from None


def capture_rng_state() -> dict[str, Any]:
    """Every RNG a run draws from: python, numpy, torch CPU and each CUDA device (tensors, tuples, ints)."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def restore_rng_state(state: dict[str, Any]) -> None:
    """Inverse of `capture_rng_state` (CUDA states are restored when this machine has CUDA)."""
    random.setstate(state["python"])
    np_state = state["numpy"]
    np.random.set_state((np_state["kind"], np_state["keys"].numpy().astype(np.uint32), np_state["pos"],
                         np_state["has_gauss"], np_state["cached_gaussian"]))
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def run_fingerprint(args: argparse.Namespace) -> dict[str, Any]:
    """The flags that determine what a run computes (resuming with different ones is refused)."""
    plain = (bool, int, float, str, type(None), list)
    free = _RESUME_FREE_FLAGS | protocol_free(vars(args))
    return {k: v for k, v in sorted(vars(args).items()) if k not in free and isinstance(v, plain)}


def check_fingerprint(saved: dict[str, Any], args: argparse.Namespace, path: Path) -> None:
    """Raise UserInputError naming the differing flags when `args` is not the run that wrote `path`.

    A flag the saved run does not record (added to the library after `path` was written) counts as equal
    when it is at run.py's default: new flags default to the earlier behaviour.
    """
    current = run_fingerprint(args)
    # A last.pth of an earlier version may record a flag that has since become resume-free (host_malloc).
    saved = {k: v for k, v in saved.items() if k not in _RESUME_FREE_FLAGS | protocol_free(saved)}
    parser = build_parser()
    newer = {k for k in set(current) - set(saved) if current[k] == parser.get_default(k)}
    differ = [k for k in sorted((set(saved) | set(current)) - newer) if saved.get(k) != current.get(k)]
    if differ:
        shown = ", ".join(f"--{k} {current.get(k)} (saved: {saved.get(k)})" for k in differ[:3])
        more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
        raise UserInputError(f"--resume: {path} was written by a run with other flags: {shown}{more}; "
                             "rerun with the original flags, or drop --resume to start over")


def read_last(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Load and check `last.pth` for --resume (format, flags)."""
    state = load_checkpoint(path)
    if not isinstance(state, dict) or state.get("format") != LAST_FORMAT:
        raise UserInputError(f"--resume: {path} is not a last.pth written by this version; drop --resume "
                             "to start over")
    check_fingerprint(state["args"], args, path)
    return state


def read_progress(path: Path) -> dict[str, Any] | None:
    """The `progress` of a run's `last.pth` (epoch, step, seconds, per-epoch `curve`), without the weights
    being checked against any flags; None when `path` is absent, damaged, of another version or a
    finished run's "complete" record (which keeps no progress)."""
    if not path.is_file():
        return None
    try:
        state = load_checkpoint(path)
    except UserInputError:
        return None
    if not isinstance(state, dict) or state.get("format") != LAST_FORMAT or "progress" not in state:
        return None
    return dict(state["progress"])
