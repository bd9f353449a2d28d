"""Issue 49 §2-§4: the run folder `<checkpoints>/<setting>/` belongs to one process at a time, records the
configuration it was made with, refuses another configuration in one line, and is not left behind empty by a
run that fails before training wrote anything."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import wait_for

import run
from exp.arguments import build_parser, make_setting
from exp.checkpointing import BEST_FILE
from exp.exp_long_term_forecasting import RESULT_FILE
from exp.run_config import CONFIG_FILE, code_version, config_hash, run_config
from exp.run_folder import LOCK_FILE, RunFolder, lock_holder
from exp.trainer import Trainer
from tests.exp.conftest import REPO
from utils.errors import UserInputError


def fail_in_training(self) -> None:
    raise UserInputError("the first training batch found something wrong")


def test_a_run_failing_before_training_wrote_anything_leaves_no_folder(in_tmp, toy, capsys, monkeypatch):
    monkeypatch.setattr(Trainer, "train_epoch", fail_in_training)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="DLinear")) == 2
    assert capsys.readouterr().err == "error: the first training batch found something wrong\n"
    assert sorted(p.name for p in in_tmp.iterdir()) == ["toy.csv"]


def launch(folder: Path, argv: list[str]) -> subprocess.Popen:
    """run.py in its own process (and session) inside `folder`."""
    return subprocess.Popen([sys.executable, "-u", str(REPO / "run.py"), *argv], cwd=folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)



def test_a_second_copy_of_a_running_command_is_refused_and_writes_nothing(in_tmp, toy):
    argv = toy(in_tmp, "--train_epochs", "100000", "--patience", "100000", "--save_every_steps", "0",
               model="DLinear")
    folder = Path("checkpoints") / make_setting(build_parser().parse_args(argv), 0)
    first, second = launch(in_tmp, argv), None
    try:
        wait_for(lambda: (in_tmp / folder / BEST_FILE).is_file() or first.poll() is not None)
        assert first.poll() is None, first.communicate()
        second = launch(in_tmp, argv)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2
        assert err == (f"error: {folder} is in use by process {first.pid} (the same run started twice?); wait for "
                       "it to finish, or give this run another --des or --model_id\n")
        assert first.poll() is None
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.communicate(timeout=120)
    assert not (in_tmp / "results.jsonl").exists() and not (in_tmp / RESULT_FILE).exists()


def test_records_and_config_json_carry_the_configuration(in_tmp, toy, results):
    argv = toy(in_tmp, "--train_epochs", "1", "--learning_rate", "0.003", model="DLinear")
    assert run.main(argv) == 0
    (record,) = results(in_tmp)
    config = run_config(build_parser().parse_args(argv))
    assert record["config"] == config and record["config"]["learning_rate"] == 0.003
    assert record["config_hash"] == config_hash(config)
    assert record["code_version"] == code_version()
    saved = json.loads((in_tmp / "checkpoints" / record["setting"] / CONFIG_FILE).read_text())
    assert saved["config"] == config and saved["config_hash"] == record["config_hash"]


def files(folder: Path) -> dict[str, bytes]:
    """The contents of the files in `folder` (the lock file holds the pid of its last holder: left out)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_FILE}


def test_another_configuration_in_the_same_folder_is_refused_and_overwrites_nothing(in_tmp, toy, results, capsys):
    argv = toy(in_tmp, "--train_epochs", "1", model="DLinear")
    assert run.main(argv) == 0
    folder = Path("checkpoints") / results(in_tmp)[0]["setting"]
    before = files(in_tmp / folder)
    rows = (in_tmp / "results.jsonl").read_bytes()
    capsys.readouterr()
    for extra in ([], ["--resume"]):
        assert run.main([*argv, "--learning_rate", "0.01", "--seed", "3", *extra]) == 2
        assert capsys.readouterr().err == (
            f"error: {folder} holds a run with other flags: --learning_rate 0.01 (there: 0.0001), --seed 3 (there: "
            "2021); give this run another --des or --model_id, or delete that folder to start over\n")
        assert files(in_tmp / folder) == before
        assert (in_tmp / "results.jsonl").read_bytes() == rows
    # The same configuration (flags that do not change results aside) proceeds, with --resume too.
    assert run.main([*argv, "--save_every_steps", "7"]) == 0
    assert run.main([*argv, "--resume"]) == 0
    assert len(results(in_tmp)) == 2


def test_lock_holder_names_the_process_holding_a_folder_and_never_creates_the_lock(tmp_path):
    folder = tmp_path / "setting"
    assert lock_holder(folder) is None and not folder.exists()
    held = RunFolder(folder)
    held.acquire()
    try:
        assert lock_holder(folder) == f"process {os.getpid()}"
    finally:
        held.release(failed=False)
    assert lock_holder(folder) is None and (folder / LOCK_FILE).is_file()
