"""Shared checks for model configurations (the argparse namespace of `run.py`), and the choice lists they check.

Each model calls these once in `__init__`, so a bad flag fails before any tensor is built, with a
`UserInputError` (a `ValueError`) that names the flag, the value given and how to fix it. This file imports no
torch: run.py's parser reads its choice lists without importing a layer or a model.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from utils.errors import UserInputError
from utils.window_lengths import check_label_len as check_window_label_len

FORECAST_TASKS = ("long_term_forecast", "short_term_forecast")
IMPUTATION = "imputation"
ANOMALY_DETECTION = "anomaly_detection"
CLASSIFICATION = "classification"
#: the tasks that work on the input window (no horizon)
WINDOW_TASKS = (IMPUTATION, ANOMALY_DETECTION, CLASSIFICATION)
#: every TSLib task a model can serve
ALL_TASKS = FORECAST_TASKS + WINDOW_TASKS
EMBED_TYPES = ("timeF", "fixed", "learned")
ACTIVATIONS = ("relu", "gelu")
#: --attn_output_layout (`layers/HeadLayout.py`): our per-step layout, or TSLib's head-major one
OUTPUT_LAYOUTS = ("per_step", "tslib")
#: --prob_eval_sampling: ProbSparse key sampling in eval mode, a fixed generator (seed 0) or the global stream (TSLib)
PROB_EVAL_SAMPLING = ("fixed", "global")
#: --embed_size's default: the width d of OLinear's dimension extension in the paper's ETTh1 setting
OLINEAR_EMBED_SIZE = 16


def peek(configs: argparse.Namespace, name: str):
    """`configs.<name>` read by a check, which does not count as the model reading the flag
    (`exp.model_flags.ReadRecorder` records attribute reads only): a check every model runs, such as
    0 <= dropout < 1, says nothing about whether this model uses the flag."""
    values = vars(configs)
    return values[name] if name in values else getattr(configs, name)


def check_task(configs: argparse.Namespace, model: str, tasks: Iterable[str] = FORECAST_TASKS) -> None:
    """Reject a `--task_name` the model does not implement (TSLib silently returns None there)."""
    tasks = tuple(tasks)
    if peek(configs, "task_name") not in tasks:
        raise UserInputError(
            f"--task_name {peek(configs, 'task_name')!r} is not supported by {model}; use one of {', '.join(tasks)}")


def check_positive(configs: argparse.Namespace, *names: str) -> None:
    """Require every named flag to be a positive integer (e.g. `--seq_len`, `--pred_len`, `--d_model`)."""
    for name in names:
        value = peek(configs, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UserInputError(f"--{name} {value!r} must be a positive integer")


def check_non_negative(configs: argparse.Namespace, *names: str) -> None:
    """Require every named flag to be an integer ≥ 0 (e.g. `--label_len`)."""
    for name in names:
        value = peek(configs, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UserInputError(f"--{name} {value!r} must be an integer >= 0")


def check_dropout(configs: argparse.Namespace) -> None:
    """Require 0 ≤ `--dropout` < 1."""
    dropout = peek(configs, "dropout")
    if not 0.0 <= dropout < 1.0:
        raise UserInputError(f"--dropout {dropout!r} must lie in [0, 1)")


def check_heads(configs: argparse.Namespace) -> None:
    """Require `--n_heads` > 0 dividing `--d_model` (each head gets d_model / n_heads features)."""
    check_positive(configs, "d_model", "n_heads")
    d_model, n_heads = peek(configs, "d_model"), peek(configs, "n_heads")
    if d_model % n_heads != 0:
        raise UserInputError(
            f"--d_model {d_model} is not divisible by --n_heads {n_heads}; "
            "choose --d_model as a multiple of --n_heads")


def check_choice(configs: argparse.Namespace, name: str, choices: Iterable[str]) -> None:
    """Require the flag `name` to be one of `choices` (e.g. `--embed`, `--activation`)."""
    _require_choice(name, peek(configs, name), tuple(choices))


def read_choice(configs: argparse.Namespace, name: str, choices: Iterable[str]) -> str:
    """The flag `name`, required to be one of `choices`; the first choice (run.py's default) when the
    namespace lacks it (a namespace not built by run.py's parser, e.g. another checkout's)."""
    choices = tuple(choices)
    return _require_choice(name, getattr(configs, name, choices[0]), choices)


def _require_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UserInputError(f"--{name} {value!r} is not supported; use one of {', '.join(choices)}")
    return value


def check_output_channels(configs: argparse.Namespace, model: str) -> None:
    """For models whose output variates are their input variates: require `--c_out` ≤ `--enc_in`.

    With `--c_out` < `--enc_in` (features MS) the model returns the last `--c_out` variates, which is
    where the target sits (TSLib's MS convention).
    """
    if configs.c_out > configs.enc_in:
        raise UserInputError(
            f"--c_out {configs.c_out} exceeds --enc_in {configs.enc_in}: {model} forecasts its input "
            "variates, so use --c_out equal to --enc_in (M) or 1 (S, MS)")


def check_label_len(configs: argparse.Namespace) -> None:
    """0 <= `--label_len` <= `--seq_len` (`utils.window_lengths.check_label_len`, the rule's one home) on a
    configuration: run.py's argument check (exp/arguments.py) and the models that build their decoder from the
    encoder input (a model built directly, as in a TSLib checkout) call it."""
    check_window_label_len(configs.label_len, configs.seq_len)


def check_decoder_from_encoder(configs: argparse.Namespace, model: str, reason: str) -> None:
    """For models whose decoder input is built from the encoder input: require `--dec_in` = `--enc_in` and
    `check_label_len`.

    reason: what the decoder takes from the encoder input, for the message (e.g. "embeds the seasonal
    part of the encoder input").
    """
    if configs.dec_in != configs.enc_in:
        raise UserInputError(f"--dec_in {configs.dec_in} differs from --enc_in {configs.enc_in}: {model}'s "
                             f"decoder {reason}, so use --dec_in equal to --enc_in")
    check_label_len(configs)


def check_task_config(configs: argparse.Namespace, model: str, tasks: Iterable[str]) -> None:
    """`check_forecast_config` for a model serving `tasks`: --pred_len must be positive only when
    forecasting (the other tasks work on the input window; TSLib's scripts pass --pred_len 0 there);
    classification checks `num_class` instead of the output channels."""
    check_task(configs, model, tasks)
    if configs.task_name in FORECAST_TASKS:
        check_forecast_config(configs, model)
        return
    if configs.task_name == CLASSIFICATION:
        check_classification_config(configs, model)
        return
    check_positive(configs, "seq_len", "enc_in", "c_out")
    check_dropout(configs)


def check_attention_config(configs: argparse.Namespace, model: str, tasks: Iterable[str], *positive: str) -> None:
    """The checks the Transformer family shares: `check_task_config`, `--n_heads` dividing `--d_model`, the
    flags named in `positive` positive, `--activation` and `--embed` among their choices."""
    check_task_config(configs, model, tasks)
    check_heads(configs)
    check_positive(configs, *positive)
    check_choice(configs, "activation", ACTIVATIONS)
    check_choice(configs, "embed", EMBED_TYPES)


def check_variate_task_config(configs: argparse.Namespace, model: str, tasks: Iterable[str]) -> None:
    """`check_task_config` for a model whose outputs are its input variates: also `--c_out` ≤ `--enc_in`
    (`check_output_channels`), except for classification, which outputs classes."""
    check_task_config(configs, model, tasks)
    if configs.task_name != CLASSIFICATION:
        check_output_channels(configs, model)


def check_forecast_config(configs: argparse.Namespace, model: str) -> None:
    """The checks every forecasting model shares: task, window lengths, channel counts, dropout."""
    check_task(configs, model)
    check_positive(configs, "seq_len", "pred_len", "enc_in", "c_out")
    check_non_negative(configs, "label_len")
    check_dropout(configs)



def check_classification_config(configs: argparse.Namespace, model: str) -> None:
    """The checks a classification head shares: `--seq_len`, `--enc_in` and `num_class` (set by the
    experiment from the data) are positive, and dropout is valid."""
    check_positive(configs, "seq_len", "enc_in")
    num_class = getattr(configs, "num_class", None)
    if isinstance(num_class, bool) or not isinstance(num_class, int) or num_class < 2:
        raise UserInputError(f"{model} classification needs num_class >= 2 (the experiment sets it from the "
                             f"data), got {num_class!r}")
    check_dropout(configs)
