"""The shared tail of the command-line `main`s (utils/command_main.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from utils.command_main import USER_ERROR_EXIT, exit_code_of, run_command
from utils.errors import UserInputError


def test_bad_input_is_one_error_line_and_exit_code_2(capsys):
    def refuse() -> list[Path]:
        raise UserInputError("--window 9 is past the last test window (3)")

    assert run_command(refuse) == USER_ERROR_EXIT == 2
    captured = capsys.readouterr()
    assert captured.err == "error: --window 9 is past the last test window (3)\n" and captured.out == ""


def test_every_written_path_is_logged_once_and_the_exit_code_is_0(caplog):
    with caplog.at_level(logging.INFO, logger="command"):
        assert run_command(lambda: [Path("out/a.csv"), "out/b.json"]) == 0
    assert [r.getMessage() for r in caplog.records] == ["wrote out/a.csv", "wrote out/b.json"]


def test_nothing_returned_is_nothing_logged(caplog):
    with caplog.at_level(logging.INFO, logger="command"):
        assert run_command(lambda: None) == 0
    assert caplog.records == []


def test_other_errors_are_not_swallowed():
    def fail() -> None:
        raise RuntimeError("a bug, not bad input")

    with pytest.raises(RuntimeError, match="a bug"):
        run_command(fail)


def test_exit_code_of_passes_the_commands_own_code_and_refuses_bad_input_with_2(capsys):
    assert exit_code_of(lambda: 3) == 3

    def refuse() -> int:
        raise UserInputError("--jobs 0: give at least one")

    assert exit_code_of(refuse) == USER_ERROR_EXIT
    assert capsys.readouterr().err == "error: --jobs 0: give at least one\n"
