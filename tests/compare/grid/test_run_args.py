"""compare.grid.run_args: reading a flag, merging flag overrides into a recipe's argv, parsing with run.py's
parser without exiting."""

from __future__ import annotations

import pytest

from compare.grid.run_args import flag_value, merge_flags, parse_run_args
from utils.errors import UserInputError


def test_merge_flags_replaces_in_place_drops_duplicates_and_appends():
    base = ["--model", "CAPS", "--train_epochs", "100", "--use_amp", "--p_hidden_dims", "64", "64",
            "--des", "Exp", "--train_epochs", "50"]
    merged = merge_flags(base, ["--train_epochs", "1", "--p_hidden_dims", "8", "--no_progress", "--des=X"])
    assert merged == ["--model", "CAPS", "--train_epochs", "1", "--use_amp", "--p_hidden_dims", "8",
                      "--des", "X", "--no_progress"]
    assert flag_value(merged, "des") == "X" and flag_value(merged, "missing") is None


def test_flag_value_takes_the_last_value_in_either_spelling():
    assert flag_value(["--seed", "1", "--seed=2"], "seed") == "2"
    assert flag_value(["--seed=2", "--seed", "3"], "seed") == "3"
    assert flag_value(["--seed"], "seed") is None  # no value follows


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--nope", "1"], "unknown run.py flag --nope"), (["stray"], "unexpected argument 'stray'")],
    ids=["unknown-flag", "positional"],
)
def test_merge_flags_rejects_bad_overrides(argv, message):
    with pytest.raises(UserInputError, match=message):
        merge_flags(["--model", "DLinear"], argv)


def test_parse_run_args_raises_instead_of_exiting():
    required = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x", "--model",
                "DLinear", "--data", "ETTh1"]
    assert parse_run_args([*required, "--pred_len", "7"]).pred_len == 7
    with pytest.raises(UserInputError, match="invalid choice: 'maybe'"):
        parse_run_args([*required, "--caps_paths", "maybe"])
    with pytest.raises(UserInputError, match="required"):
        parse_run_args(["--model", "DLinear"])
