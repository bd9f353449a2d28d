"""Zero-shot rows of a comparison: a pretrained foundation model (`models.foundation`) scored beside trained rows.

A row named after a foundation model (`--models DLinear Fracast`) runs run.py's `--task_name zero_shot_forecast`
with `--is_training 0` on the dataset's file, horizon and channels, at the model's look-back
(`models.foundation.LOOKBACK`: 2 048 for Fracast); the trained rows keep their recipes' `--seq_len`. The ETT and
custom loaders start the test split `--seq_len` rows early, so the test targets, and their number of windows, do
not depend on `--seq_len`: the zero-shot row is scored on the trained rows' windows (`exp.exp_zero_shot_forecasting`;
the report checks it from the naive scores each run records, `compare.report.zero_shot`).

Flags that only training or a trained model's architecture read (`not_read`) make no sense for such a row: a row's
own flags that set one are refused; the flags the runner sets for every run (`--epochs`, `--patience`, `--extra`)
reach the trained rows only, and the runner says which it kept from the zero-shot rows (`dropped_note`). The
runner's `--test_every K` scores every K-th test window of the zero-shot rows only: an estimate, which the report
shows apart and never ranks. A foundation model is scored once: its forecast does not depend on a seed, so
`--seeds` with a zero-shot row is refused instead of repeating one number as fake seed spread.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from compare.grid.run_args import flag_names, merge_flags, split_flags
from compare.recipes.recipe_book import Dataset
from exp.arguments import AUGMENTATIONS, model_flag_actions
from models.foundation import FOUNDATION_NAMES, LOOKBACK
from utils.errors import UserInputError

__all__ = ["TRAINING_FLAGS", "ZERO_SHOT_TASK", "check_zero_shot_rows", "dropped_note", "every_run_flags",
           "foundation_name", "not_read", "zero_shot_argv", "zero_shot_label"]

ZERO_SHOT_TASK = "zero_shot_forecast"

#: run.py flags only training reads: a zero-shot run has no optimiser, no epochs, no training batches
TRAINING_FLAGS = ("--train_epochs", "--patience", "--learning_rate", "--lradj", "--pct_start", "--use_amp",
                  "--amp_dtype", "--optimizer", "--weight_decay", "--max_grad_norm", "--grad_accum", "--vali_loss",
                  "--train_loop", "--compile", "--compile_mode", "--resume", "--save_every_steps", "--detect_anomaly",
                  "--augmentation_ratio", "--vali_only", "--loss", *(f"--{name}" for name in AUGMENTATIONS))
#: model-define flags the data loader reads too, so a zero-shot run keeps them (channels, time features)
_DATA_MODEL_FLAGS = ("--enc_in", "--dec_in", "--c_out", "--embed")


def foundation_name(name: str) -> str | None:
    """The foundation model `name` spells (any case), else None."""
    key = name.lower()
    return next((model for model in FOUNDATION_NAMES if model.lower() == key), None)


def not_read(flags: Sequence[str]) -> list[str]:
    """The flags of `flags` (`--name` strings) a zero-shot run never reads: training's and the trained models'
    architecture flags."""
    model_flags = {opt for action in model_flag_actions() for opt in action.option_strings}
    unread = (set(TRAINING_FLAGS) | model_flags) - set(_DATA_MODEL_FLAGS)
    return [flag for flag in dict.fromkeys(flags) if flag in unread]


def check_zero_shot_rows(args: argparse.Namespace, rows: Sequence, zero_shot: set[str]) -> None:
    """UserInputError (one line) for a combination that cannot give a zero-shot row its meaning: --seeds (a
    foundation model is scored once; a seed changes nothing), a row's own flag that only training reads, or
    --test_every with no zero-shot row to read it."""
    every = args.test_every
    if every is not None and every < 1:
        raise UserInputError(f"--test_every {every} must be at least 1 (1 scores every test window)")
    if not zero_shot:
        if every is not None:
            raise UserInputError(f"--test_every {every} is read by zero-shot rows only (a foundation model such as "
                                 "Fracast in --models); drop it")
        return
    named = ", ".join(sorted(zero_shot))
    if getattr(args, "seeds", None):
        raise UserInputError(f"--seeds does not apply to zero-shot row(s) {named}: a pretrained model is scored "
                             "once and its forecast does not depend on a seed; run them in an invocation without "
                             "--seeds (the same --out is fine)")
    for row in rows:
        if row.base in zero_shot:
            unread = not_read(flag_names(row.flags))
            if unread:
                raise UserInputError(f"row {row.name!r} sets {unread[0]}, which a zero-shot run never reads (it is "
                                     "not trained); drop it from the row")


def zero_shot_argv(model: str, data: Dataset, pred_len: int, every: int | None) -> list[str]:
    """run.py's argv of `model` scored zero-shot on `data` at horizon `pred_len` (TSLib's flag order), at its
    look-back; `--test_every` when `every` is given."""
    lookback = LOOKBACK[model]
    argv = ["--task_name", ZERO_SHOT_TASK, "--is_training", "0", "--root_path", data.root_path,
            "--data_path", data.data_path, "--model_id", f"{data.name}_{lookback}_{pred_len}", "--model", model,
            "--data", data.data, "--features", "M", "--seq_len", str(lookback), "--label_len", "48",
            "--pred_len", str(pred_len), "--enc_in", str(data.channels), "--dec_in", str(data.channels),
            "--c_out", str(data.channels), "--des", "Exp", "--itr", "1"]
    for flag, value in data.flags.items():
        values = value if isinstance(value, tuple) else () if value is None else (value,)
        argv = merge_flags(argv, [f"--{flag}", *map(str, values)])
    return argv + (["--test_every", str(every)] if every is not None else [])


def every_run_flags(overrides: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the runner's every-run flags `overrides` less those a zero-shot run never reads, the names of those)."""
    groups = split_flags(overrides)
    unread = set(not_read([flag for flag, _ in groups]))
    kept = [token for flag, values in groups if flag not in unread for token in (flag, *values)]
    return kept, [flag for flag in dict.fromkeys(flag for flag, _ in groups) if flag in unread]


def dropped_note(row: str, dropped: Sequence[str]) -> str:
    """The runner's line naming the every-run flags a zero-shot row does not get."""
    return (f"zero-shot row {row}: not trained, so {' '.join(dropped)} (set for every run) apply to the trained "
            "rows only")


def zero_shot_label(row: str, lookback: int | None, every: int | None = None, of: int | None = None) -> str:
    """The report's label of a zero-shot row: `Fracast (zero-shot, L=2048)`; with every k-th window scored,
    `Fracast (zero-shot, L=2048, every 25th of 2785 windows)`."""
    parts = ["zero-shot"] + ([f"L={lookback}"] if lookback else [])
    if every and every > 1:
        parts.append(f"every {every}th of {of} windows" if of else f"every {every}th window")
    return f"{row} ({', '.join(parts)})"
