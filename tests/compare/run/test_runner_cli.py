"""Issue 65: `python -m compare` ends a bad command line in one line, exit code 2, no traceback and nothing
written: an --out that is a file, lies inside a file or cannot be written (it used to end in a traceback), and
every parser error (a bad value, a missing or unknown flag), which used to follow the 21-line usage.

The main cases run through the package's __main__ in this process (runpy) and as a real subprocess; a subprocess
pays torch's import (about 15 s on a busy core), so the default suite runs one of them that way and `-m slow`
all three."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from compare.run import runner

REPO = Path(__file__).resolve().parents[3]
HELP = "; see python -m compare --help"


def run_cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "compare", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def assert_one_line_and_nothing_written(done: subprocess.CompletedProcess, folder: Path, before: set) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 3, done.stderr
    assert done.stdout == ""
    assert set(folder.iterdir()) == before
    return done.stderr.strip()


@pytest.fixture
def unwritable(tmp_path) -> Path:
    """A folder this process cannot write in: a read-only folder; as root, whom permissions do not bind, sysfs
    (which takes no new files)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):
        folder.chmod(0o700)
        if not Path("/sys/kernel").is_dir():
            pytest.skip("running as root without sysfs: no folder this process cannot write in")
        yield Path("/sys")
        return
    yield folder
    folder.chmod(0o700)


def out_is_a_file(work: Path, unwritable: Path) -> tuple[list[str], str]:
    (work / "comparison.txt").write_text("notes\n")
    return (["--data", "ETTh1", "--models", "DLinear", "--out", "comparison.txt"],
            "error: --out comparison.txt is a file, not a folder; give a folder (it is created when missing)")


def out_cannot_be_written(work: Path, unwritable: Path) -> tuple[list[str], str]:
    out = unwritable / "comparison"
    return (["--data", "ETTh1", "--models", "DLinear", "--out", str(out)],
            f"error: --out {out}: cannot write in {unwritable} (the nearest existing folder on the way to {out}): "
            "Permission denied; give a folder you can write in")


def bad_value(work: Path, unwritable: Path) -> tuple[list[str], str]:
    return ["--data", "ETTh1", "--jobs", "two"], f"error: argument --jobs: invalid int value: 'two'{HELP}"


# (the command line and its one stderr line, given the working folder and a folder this process cannot write in)
CASES = {"out-is-a-file": out_is_a_file, "out-cannot-be-written": out_cannot_be_written, "bad-value": bad_value}


def run_in_process(monkeypatch, capsys, cwd: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """`python -m compare ARGV` through the package's __main__ in this process (the imports are paid once)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["compare", *argv])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module("compare", run_name="__main__")
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(argv, stop.value.code, captured.out, captured.err)


# A subprocess pays torch's import (about 15 s on a busy core): one case in the default suite, all under -m slow.
@pytest.mark.parametrize("case", [pytest.param(name, marks=() if name == "out-is-a-file" else pytest.mark.slow)
                                  for name in CASES])
def test_bad_command_lines_end_in_one_line_in_a_subprocess(tmp_path, unwritable, case):
    work = tmp_path / "work"
    work.mkdir()
    argv, expected = CASES[case](work, unwritable)
    before = set(work.iterdir())
    done = run_cli(work, *argv)
    assert assert_one_line_and_nothing_written(done, work, before) == expected


@pytest.mark.parametrize("case", list(CASES))
def test_bad_command_lines_end_in_one_line(tmp_path, unwritable, monkeypatch, capsys, case):
    work = tmp_path / "work"
    work.mkdir()
    argv, expected = CASES[case](work, unwritable)
    before = set(work.iterdir())
    done = run_in_process(monkeypatch, capsys, work, argv)
    assert assert_one_line_and_nothing_written(done, work, before) == expected
    assert not (unwritable / "comparison").exists()


@pytest.mark.parametrize(("argv", "expected"), [
    (["--data", "ETTh1", "--task", "forecast"], "error: argument --task: invalid choice: 'forecast' (choose from "
     "'long_term_forecast', 'imputation', 'anomaly_detection', 'classification', 'short_term_forecast')"),
    (["--data", "ETTh1", "--job", "2"], f"error: unrecognized arguments: --job 2; did you mean --jobs?{HELP}"),
    (["--data", "ETTh1", "--time_budget", "soon"], f"error: argument --time_budget/--time-budget: invalid float "
     f"value: 'soon'{HELP}"),
], ids=["bad-choice", "misspelt-flag", "bad-float"])
def test_parser_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        runner.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(expected) and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_no_data_is_one_line(tmp_path, monkeypatch, capsys):
    """--data is optional for the parser (--data_path may replace it); having neither is still one line."""
    monkeypatch.chdir(tmp_path)
    assert runner.main(["--models", "DLinear"]) == 2
    assert capsys.readouterr().err == ("error: nothing to run on: pass --data NAME [NAME ...] (datasets of "
                                       "compare/recipes/tables.py) or --data_path FILE --name NAME (your own CSV)\n")
    assert list(tmp_path.iterdir()) == []


def test_out_inside_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes").write_text("")
    assert runner.main(["--data", "ETTh1", "--models", "DLinear", "--out", "notes/comparison", "--dry-run"]) == 2
    assert capsys.readouterr().err == ("error: --out notes/comparison lies inside notes, which is a file, not a "
                                       "folder; give a folder (it is created when missing)\n")
    assert [p.name for p in tmp_path.iterdir()] == ["notes"]
