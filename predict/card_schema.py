"""The model card's schema (issue 65): every field predict reads is checked before a model is built from the card,
so a hand-edited `model_card.json` is one line naming the field, what it holds and what it must hold, instead of a
traceback deep in a forecast or a forecast that is silently wrong.

The card is written by exp/model_card.py; this file states what a reader needs of it:

- the top level: `task_name` (one this package serves), `model`, `setting`, `checkpoint` (`file`, `sha256`), `args`,
  `data` (`kind` and `format` are checked by `exp.model_card.read_model_card`, which reads the file);
- `args`: run.py's required flags; every run.py flag the card holds has its flag's type (and choices), a finite
  number where a number belongs; the sizes the model is built from are positive (`POSITIVE_FLAGS`), forecasting's
  pred_len too, and its label_len within seq_len; `task_name` and `model` equal the card's. Values the experiment
  derived (classification's `num_class`) are kept as they are;
- `data`: the fields of its kind (`DATA_FIELDS`), and their agreement with `args` (one scaler entry per input
  column, `enc_in` input columns, the forecast columns of `--features`, one class name per class).

Fields the checkout does not know are ignored, and named once in the log (a card of a later format, whose fields
may mean something else, is refused by `exp.model_card.read_model_card`).
"""

from __future__ import annotations

import argparse
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from data_provider.m4 import M4_GROUPS
from exp.arguments import FEATURES, build_parser
from exp.model_card import forecast_columns, recreate_hint
from layers.config_checks import EMBED_TYPES
from utils.errors import UserInputError
from utils.timefeatures import num_time_features

__all__ = ["DATA_FIELDS", "POSITIVE_FLAGS", "TASK_DATA_KINDS", "check_card"]

logger = logging.getLogger(__name__)

#: --task_name → the `data.kind` values its cards hold
TASK_DATA_KINDS: dict[str, tuple[str, ...]] = {
    "long_term_forecast": ("series",),
    "short_term_forecast": ("m4", "short_term_file"),
    "imputation": ("series",),
    "anomaly_detection": ("segments",),
    "classification": ("samples",),
}

#: the tasks that forecast pred_len steps (their decoder reads label_len of the seq_len input steps)
FORECASTING_TASKS = ("long_term_forecast", "short_term_forecast")

#: run.py flags the model and the windows are built from: whole numbers > 0 in any card
POSITIVE_FLAGS = ("seq_len", "enc_in", "dec_in", "c_out", "d_model", "n_heads", "e_layers", "d_ff", "batch_size")


@dataclass(frozen=True)
class Rule:
    """What a field must hold: `expected` as a message says it, `holds(value)` the test."""

    expected: str
    holds: Callable[[Any], bool]
    required: bool = True


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_frequency(value: Any) -> bool:
    """A pandas frequency string ("h", "15min", "MS")."""
    if not isinstance(value, str):
        return False
    try:
        pd.tseries.frequencies.to_offset(value)
    except ValueError:
        return False
    return True


def _is_time_features_freq(value: Any) -> bool:
    """A --freq value the time marks know ("h", "t", "15min")."""
    if not isinstance(value, str):
        return False
    try:
        num_time_features(value)
    except ValueError:  # UserInputError
        return False
    return True


def _names(value: Any) -> bool:
    return (isinstance(value, list) and len(value) > 0 and all(isinstance(v, str) and v for v in value)
            and len(set(value)) == len(value))


def _optional(rule: Rule) -> Rule:
    """`rule`, or null (the field may also be absent)."""
    return Rule(f"{rule.expected}, or null", lambda v: v is None or rule.holds(v), required=False)


TEXT = Rule("text", lambda v: isinstance(v, str) and v != "")
POSITIVE_INT = Rule("a whole number > 0", lambda v: _is_int(v) and v > 0)
OBJECT = Rule("an object ({...})", lambda v: isinstance(v, dict))
NAMES = Rule("a non-empty list of distinct names (text)", _names)
NUMBERS = Rule("a list of finite numbers", lambda v: isinstance(v, list) and all(_is_number(x) for x in v))
FREQUENCY = Rule("a pandas frequency such as h, 15min or MS", _is_frequency)
MARKS_FREQ = Rule("a --freq value such as h, t or 15min", _is_time_features_freq)

TOP_FIELDS: dict[str, Rule] = {
    "task_name": Rule(f"one of {', '.join(TASK_DATA_KINDS)}", lambda v: isinstance(v, str) and v in TASK_DATA_KINDS),
    "model": TEXT,
    "setting": TEXT,
    "checkpoint": OBJECT,
    "args": OBJECT,
    "data": OBJECT,
    "train_split_fingerprint": _optional(TEXT),
    # Checked by read_model_card.
    "kind": Rule("text", lambda v: True, required=False),
    "format": Rule("text", lambda v: True, required=False),
    # Written for the record, not read here.
    "config_hash": Rule("text", lambda v: True, required=False),
    "code_version": Rule("text", lambda v: True, required=False),
    "library_version": Rule("text", lambda v: True, required=False),
}

CHECKPOINT_FIELDS: dict[str, Rule] = {
    "file": Rule("the weights file's name, beside the card (checkpoint.pth)",
                 lambda v: isinstance(v, str) and v not in ("", ".", "..") and Path(v).name == v),
    "sha256": Rule("the weights file's sha256, 64 hexadecimal digits",
                   lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is not None),
}

SCALER = _optional(Rule("an object with mean and scale", lambda v: isinstance(v, dict)))
UNREAD = Rule("anything", lambda v: True, required=False)

#: data.kind → its fields (those predict reads are checked; the others are kept for the record)
DATA_FIELDS: dict[str, dict[str, Rule]] = {
    "series": {
        "input_columns": NAMES, "features": Rule("M, S or MS", lambda v: v in ("M", "S", "MS")),
        "forecast_columns": NAMES, "date_column": Rule("a column name (text), or null", lambda v: v is None or (
            isinstance(v, str) and v != "")),
        "freq": MARKS_FREQ,
        "timeenc": Rule("0 (calendar marks) or 1 (timeF)", lambda v: _is_int(v) and v in (0, 1)),
        "time_step": Rule(f"{FREQUENCY.expected}, or null", lambda v: v is None or _is_frequency(v)),
        "scaler": Rule("an object with mean and scale, or null", lambda v: v is None or isinstance(v, dict)),
        "file": UNREAD, "target": UNREAD,
    },
    "segments": {
        "input_columns": NAMES, "scaler": Rule("an object with mean and scale", lambda v: isinstance(v, dict)),
        "threshold": _optional(Rule("a finite number", _is_number)),
        "dataset": UNREAD, "stride": UNREAD, "anomaly_ratio": UNREAD,
    },
    "samples": {
        "n_channels": POSITIVE_INT, "class_names": NAMES, "feature_mean": NUMBERS,
        "feature_std": Rule("a list of finite numbers >= 0", lambda v: NUMBERS.holds(v) and all(x >= 0 for x in v)),
        "per_sample_norm": Rule("true or false", lambda v: isinstance(v, bool)),
        "dataset": UNREAD, "max_len": UNREAD,
    },
    "m4": {"seasonal_patterns": Rule(f"one of {', '.join(M4_GROUPS)}", lambda v: v in M4_GROUPS),
           "frequency": UNREAD},
    "short_term_file": {"file": UNREAD, "horizon": UNREAD, "frequency": UNREAD},
}


class _Card:
    """One card being checked: where it is, its flags (run.py's default for a flag it lacks, as
    `predict.trained.card_namespace` reads it), and the fields it holds that nothing reads."""

    def __init__(self, card: dict[str, Any], path: Path) -> None:
        self.card, self.path = card, path
        self.parser = build_parser()
        self.ignored: list[str] = []

    def flag(self, name: str) -> Any:
        flags = self.card["args"]
        return flags[name] if name in flags else self.parser.get_default(name)

    def refuse(self, field: str, value: Any, expected: str, missing: bool = False) -> UserInputError:
        shown = "is missing" if missing else f"is {_short(value)}"
        return UserInputError(f"{self.path}: field {field} {shown}; it must be {expected}: restore the value the "
                              f"run wrote, or {recreate_hint()}")

    def refuse_flag(self, name: str, expected: str) -> UserInputError:
        return self.refuse(f"args.{name}", self.flag(name), expected, missing=name not in self.card["args"])

    def fields(self, section: dict[str, Any], rules: dict[str, Rule], prefix: str = "") -> None:
        """Every rule of `rules` on `section`; unknown fields are noted in `ignored`."""
        for name, rule in rules.items():
            if name not in section:
                if rule.required:
                    raise self.refuse(f"{prefix}{name}", None, rule.expected, missing=True)
                continue
            if not rule.holds(section[name]):
                raise self.refuse(f"{prefix}{name}", section[name], rule.expected)
        self.ignored += [f"{prefix}{name}" for name in section if name not in rules]


def _short(value: Any) -> str:
    """`value` as JSON-ish text, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _flag_rule(action: argparse.Action) -> Rule:
    """The rule of a run.py flag's value: its type (a list of it for nargs + or *), its choices, null when its
    default is null."""
    if action.nargs == 0:
        rule = Rule("true or false", lambda v: isinstance(v, bool))
    else:
        kind = {int: ("a whole number", _is_int), float: ("a finite number", _is_number)}.get(
            action.type, ("text", lambda v: isinstance(v, str)))
        if action.choices is not None:
            choices = list(action.choices)
            kind = (f"one of {', '.join(map(str, choices))}", lambda v, c=choices, t=kind[1]: t(v) and v in c)
        if action.nargs in ("+", "*"):
            kind = (f"a list of {kind[0]}", lambda v, t=kind[1]: isinstance(v, list) and all(t(x) for x in v))
        rule = Rule(*kind)
    if action.default is None and not action.required:
        return Rule(f"{rule.expected}, or null", lambda v, r=rule: v is None or r.holds(v))
    return rule


#: run.py flags whose choices validate_args checks (their parser actions list none)
FLAG_RULES: dict[str, Rule] = {
    "features": Rule(f"one of {', '.join(FEATURES)}", lambda v: v in FEATURES),
    "embed": Rule(f"one of {', '.join(EMBED_TYPES)}", lambda v: v in EMBED_TYPES),
    "freq": MARKS_FREQ,
}


def _check_args(card: _Card) -> None:
    """The card's run.py flags: the required ones present, each flag's type, the sizes positive, the task and
    model those of the card. Other keys (values the experiment derived) are kept as they are."""
    flags, task = card.card["args"], card.card["task_name"]
    for action in card.parser._actions:
        if action.dest == "help":
            continue
        rule = _flag_rule(action)
        if action.dest not in flags:
            if action.required:
                raise card.refuse_flag(action.dest, rule.expected)
        elif not rule.holds(flags[action.dest]):
            raise card.refuse_flag(action.dest, rule.expected)
    for name, rule in FLAG_RULES.items():
        if not rule.holds(card.flag(name)):
            raise card.refuse_flag(name, rule.expected)
    for name in POSITIVE_FLAGS:
        if card.flag(name) <= 0:
            raise card.refuse_flag(name, POSITIVE_INT.expected)
    if card.flag("pred_len") < 0:
        raise card.refuse_flag("pred_len", "a whole number >= 0")
    # Only forecasting reads the horizon and the decoder's start tokens (classification resolves seq_len from its
    # files after --label_len was checked, so its label_len may exceed it).
    if task in FORECASTING_TASKS:
        seq_len = card.flag("seq_len")
        if card.flag("pred_len") <= 0:
            raise card.refuse_flag("pred_len", POSITIVE_INT.expected)
        if not 0 <= card.flag("label_len") <= seq_len:
            raise card.refuse_flag("label_len", f"a whole number from 0 to args.seq_len ({seq_len})")
    for name in ("task_name", "model"):
        if flags[name] != card.card[name]:
            raise card.refuse_flag(name, f"{card.card[name]!r}, the card's {name}")


def _check_scaler(card: _Card, scaler: dict[str, Any], columns: int, prefix: str) -> None:
    """mean and scale: one finite number per input column; each scale > 0 (values are divided by it)."""
    rules = {"mean": Rule(f"a list of {columns} finite numbers (one per input column)",
                          lambda v: NUMBERS.holds(v) and len(v) == columns),
             "scale": Rule(f"a list of {columns} finite numbers > 0 (one per input column; the data is divided by "
                           "them)", lambda v: NUMBERS.holds(v) and len(v) == columns and all(x > 0 for x in v))}
    card.fields(scaler, rules, prefix)


def _check_data(card: _Card) -> None:
    """`data`: the fields of its kind, and their agreement with the flags."""
    data, task = card.card["data"], card.card["task_name"]
    kinds = TASK_DATA_KINDS[task]
    kind = data.get("kind")
    if kind not in kinds:
        raise card.refuse("data.kind", kind, f"{' or '.join(kinds)} for a {task} card", missing="kind" not in data)
    card.fields(data, {"kind": UNREAD, **DATA_FIELDS[kind]}, "data.")
    if kind in ("series", "segments"):
        columns = data["input_columns"]
        if data["scaler"] is not None:
            _check_scaler(card, data["scaler"], len(columns), "data.scaler.")
        if card.flag("enc_in") != len(columns):
            raise card.refuse_flag("enc_in", f"{len(columns)}, the number of data.input_columns")
    if kind == "series":
        _check_series(card, data)
    if kind == "samples":
        channels = data["n_channels"]
        for name in ("feature_mean", "feature_std"):
            if len(data[name]) != channels:
                raise card.refuse(f"data.{name}", data[name], f"{channels} numbers, one per channel (data.n_channels)")
        if card.flag("enc_in") != channels:
            raise card.refuse_flag("enc_in", f"{channels}, data.n_channels")
        if card.flag("num_class") != len(data["class_names"]):
            raise card.refuse_flag("num_class", f"{len(data['class_names'])}, the number of data.class_names")


def _check_series(card: _Card, data: dict[str, Any]) -> None:
    """A forecasting or imputation table: features, forecast columns, date column and time step agree."""
    if data["features"] != card.flag("features"):
        raise card.refuse_flag("features", f"{data['features']!r}, data.features")
    expected = forecast_columns(data["features"], data["input_columns"])
    if data["forecast_columns"] != expected:
        raise card.refuse("data.forecast_columns", data["forecast_columns"],
                          f"{expected} (the columns --features {data['features']} forecasts)")
    if data["date_column"] in data["input_columns"]:
        raise card.refuse("data.date_column", data["date_column"], "a column that is not one of data.input_columns")
    if data["date_column"] is not None and data["time_step"] is None:
        raise card.refuse("data.time_step", None, f"{FREQUENCY.expected} (the step of the {data['date_column']} "
                                                  "column)")


def check_card(card: dict[str, Any], path: Path) -> dict[str, Any]:
    """`card` (read from `path`) when every field predict reads holds what it must; else one UserInputError line
    naming the field. Unknown fields are named in one log line and ignored."""
    checked = _Card(card, path)
    checked.fields(card, TOP_FIELDS)
    checked.fields(card["checkpoint"], CHECKPOINT_FIELDS, "checkpoint.")
    _check_args(checked)
    _check_data(checked)
    if checked.ignored:
        logger.info("%s: ignoring field(s) this checkout does not read: %s", path, ", ".join(checked.ignored))
    return card
