"""exp/task_lengths.py: the lengths M4 and UEA derive from their data, resolved in one place."""

from __future__ import annotations

import pytest

from data_provider.m4 import FREQUENCIES, HORIZONS
from exp.arguments import build_parser, make_setting
from exp.task_lengths import resolve_task_lengths
from tests.data_provider.uea_files import toy_dataset
from tests.exp.test_exp_classification import toy_argv
from utils.errors import UserInputError


def _m4_args(group: str):
    return build_parser().parse_args([
        "--task_name", "short_term_forecast", "--is_training", "1", "--root_path", "./dataset/m4",
        "--seasonal_patterns", group, "--model_id", f"m4_{group}", "--model", "DLinear", "--data", "m4",
        "--enc_in", "1", "--dec_in", "1", "--c_out", "1"])


@pytest.mark.parametrize("group", ["Yearly", "Hourly"])
def test_m4_lengths_come_from_the_group_and_leave_the_caller_alone(group):
    args = _m4_args(group)
    typed = vars(args).copy()
    resolved = resolve_task_lengths(args)
    h = HORIZONS[group]
    assert (resolved.seq_len, resolved.label_len, resolved.pred_len) == (2 * h, h, h)
    assert resolved.frequency_map == FREQUENCIES[group]
    assert vars(args) == typed
    assert vars(resolve_task_lengths(resolved)) == vars(resolved)  # idempotent
    assert f"_sl{2 * h}_ll{h}_pl{h}_" in make_setting(resolved, 0)


def test_uea_lengths_come_from_the_train_and_test_files(tmp_path):
    toy_dataset(tmp_path / "Toy")
    args = build_parser().parse_args(toy_argv(tmp_path / "Toy"))
    resolved = resolve_task_lengths(args)
    assert (resolved.seq_len, resolved.pred_len, resolved.enc_in, resolved.num_class) == (20, 0, 3, 3)
    assert args.seq_len == 96 and vars(resolve_task_lengths(resolved)) == vars(resolved)


def test_long_term_flags_are_returned_unchanged():
    args = build_parser().parse_args(["--task_name", "long_term_forecast", "--is_training", "1", "--model", "DLinear",
                                      "--model_id", "x", "--data", "ETTh1"])
    assert vars(resolve_task_lengths(args)) == vars(args)


def test_an_unknown_m4_group_is_one_line():
    args = _m4_args("Yearly")
    args.seasonal_patterns = "Decadal"
    with pytest.raises(UserInputError, match="seasonal_patterns"):
        resolve_task_lengths(args)
