"""utils.cli_parser: an unknown flag is answered with the flags it most likely meant, abbreviations of a flag's
words first (`--lr` -> `--learning_rate`), then what argparse's prefix matching expanded it to, then spellings."""

from __future__ import annotations

import pytest

from exp.arguments import build_parser
from utils.cli_parser import OneLineArgumentParser, closest_flags

RUN_FLAGS = build_parser().option_names()


@pytest.mark.parametrize(("typed", "meant"), [
    ("--lr", ["--learning_rate", "--lradj"]),
    ("--bs", ["--batch_size"]),
    ("--nh", ["--n_heads"]),
    ("--learning-rate", ["--learning_rate"]),
    ("--learning_rat", ["--learning_rate"]),
    ("--patiance", ["--patience"]),
    ("--xyz", []),
], ids=["word-initials", "batch-size", "n-heads", "dashes", "misspelt", "close-spelling", "nothing-close"])
def test_closest_flags_of_run_py(typed, meant):
    assert closest_flags(typed, RUN_FLAGS) == meant


def test_the_error_line_names_the_closest_flags(capsys):
    parser = OneLineArgumentParser(prog="tool")
    parser.add_argument("--learning_rate", type=float)
    parser.add_argument("--lradj")
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--lr", "0.001"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("error: unrecognized arguments: --lr 0.001; did you mean --learning_rate or "
                                       "--lradj?; see tool --help\n")
