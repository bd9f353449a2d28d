"""exp/saved_run_flags.py: a run's flags rebuilt from the last.pth exp writes (run.py defaults, then the
saved flags, then the flags typed again), and one user error when neither names the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from exp.arguments import build_parser
from exp.checkpointing import LAST_FILE, LAST_FORMAT, run_fingerprint
from exp.saved_run_flags import run_arguments, saved_flags
from utils.errors import UserInputError
from utils.tools import atomic_torch_save

ARGV = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "toy", "--model", "DLinear",
        "--data", "custom", "--data_path", "toy.csv", "--features", "M", "--seq_len", "48", "--label_len", "24",
        "--pred_len", "12", "--enc_in", "3", "--dec_in", "3", "--c_out", "3", "--moving_avg", "13",
        "--learning_rate", "0.003"]


@pytest.fixture
def run_folder(tmp_path) -> Path:
    """A setting folder holding only the last.pth of a finished run, as exp's `mark_complete` writes it."""
    args = build_parser().parse_args(ARGV)
    atomic_torch_save({"format": LAST_FORMAT, "args": run_fingerprint(args), "complete": True},
                      tmp_path / LAST_FILE)
    return tmp_path


def test_saved_flags_replace_the_defaults(run_folder):
    args = run_arguments(run_folder, ["--root_path", "elsewhere"])
    assert (args.model, args.seq_len, args.pred_len, args.moving_avg, args.learning_rate) == \
        ("DLinear", 48, 12, 13, 0.003)
    assert (args.root_path, args.is_training) == ("elsewhere", 0)
    assert build_parser().parse_args(ARGV).moving_avg != build_parser().parse_args(ARGV[:-4]).moving_avg


def test_typed_flags_override_the_saved_ones_even_at_their_default_value(run_folder):
    default_lr = build_parser().parse_args(ARGV[:-2]).learning_rate
    args = run_arguments(run_folder, ["--learning_rate", str(default_lr), "--model", "TSMixer"])
    assert (args.learning_rate, args.model, args.seq_len) == (default_lr, "TSMixer", 48)


def test_a_folder_without_last_pth_needs_the_run_flags(tmp_path):
    assert saved_flags(tmp_path) == {}
    with pytest.raises(UserInputError, match="missing --task_name, --model_id, --model, --data"):
        run_arguments(tmp_path, [])
    args = run_arguments(tmp_path, ARGV)
    assert (args.model, args.is_training) == ("DLinear", 0)
