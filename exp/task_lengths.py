"""The lengths a task derives from its data, resolved in one place before anything reads them.

TSLib's short-term and classification experiments overwrite flags inside `_build_model`: M4 sets
`seq_len = 2·H`, `label_len = pred_len = H` and `frequency_map = m` from `--seasonal_patterns` (the custom
short-term files, data_provider/short_term_files.py: the same rule with H = --pred_len, m = --seasonality);
classification sets `seq_len` = the longest series of the TRAIN and TEST files, `pred_len = 0`, `enc_in` = the
files' channel count and `num_class` = the TRAIN file's label count. Done in place, the setting string depended
on whether it was made before or after the experiment was built. Here the rule lives once:
`resolve_task_lengths(args)` returns a copy with those values set; `exp.resolved_args.resolve_args`, the one step
run.py, the comparison plan and every experiment go through, calls it, so all three name the same setting.
"""

from __future__ import annotations

import argparse
import copy

from data_provider.data_factory import build_dataset
from data_provider.m4 import FREQUENCIES, HORIZONS, check_m4_args
from data_provider.protocol import is_strict
from data_provider.short_term_files import check_short_term_file_args, short_term_file_lengths
from utils.errors import UserInputError


def m4_lengths(seasonal_patterns: str) -> dict[str, int]:
    """`{pred_len: H, seq_len: 2·H, label_len: H, frequency_map: m}` of an M4 group (TSLib's rule)."""
    horizon = HORIZONS[seasonal_patterns]
    return {"pred_len": horizon, "seq_len": 2 * horizon, "label_len": horizon,
            "frequency_map": FREQUENCIES[seasonal_patterns]}


def uea_lengths(args: argparse.Namespace) -> dict[str, int]:
    """`{seq_len, pred_len: 0, enc_in, num_class}` read from the UEA TRAIN and TEST files of `args` (under
    `--protocol strict` seq_len is the longest TRAIN series)."""
    if args.data != "UEA":
        raise UserInputError(f"--task_name classification reads UEA .ts files: pass --data UEA, not "
                             f"--data {args.data}")
    train = build_dataset(args, "train")
    # strict: the TEST file is read once, after training, so its lengths cannot size the model.
    seq_len = (train.longest_train if is_strict(args)
               else max(train.max_seq_len, build_dataset(args, "test").max_seq_len))
    return {"seq_len": seq_len, "pred_len": 0,
            "enc_in": train.n_channels, "num_class": len(train.class_names)}


def resolve_task_lengths(args: argparse.Namespace) -> argparse.Namespace:
    """A copy of `args` with the lengths the task takes from its data (see the module docstring); the
    other tasks' flags are returned unchanged (as a copy). Raises UserInputError on unusable M4 flags or
    unreadable UEA files."""
    resolved = copy.copy(args)
    if args.task_name == "short_term_forecast":
        check_m4_args(args)
        check_short_term_file_args(args)
        lengths = m4_lengths(args.seasonal_patterns) if args.data == "m4" else short_term_file_lengths(args)
        vars(resolved).update(lengths)
    elif args.task_name == "classification":
        vars(resolved).update(uea_lengths(args))
    return resolved
