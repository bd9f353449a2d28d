"""compare.run.runner with a run another process is training (its run folder locked, exp/run_folder.py): the
runner leaves it to that process, says so in one line, records no failed attempt, exits with EXIT_UNFINISHED,
and the same command trains it once the folder is free."""

from __future__ import annotations

import json
import os
from pathlib import Path

from compare.run.runner import EXIT_UNFINISHED
from exp.run_folder import RunFolder
from tests.compare.run.test_runner import base_argv, invoke, results, write_toy_csv


def manifest(out: Path) -> list[dict]:
    path = out / "runs" / "compare_runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def test_a_run_training_in_another_process_is_left_to_it_and_picked_up_later(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    code, log = invoke([*base_argv(tmp_path, tmp_path / "first", "DLinear"), "--no-report"])
    assert code == 0, log
    setting = results(tmp_path / "first")[0]["setting"]
    out = tmp_path / "out"
    other = RunFolder(out / "runs" / "checkpoints" / setting)  # what run.py of another invocation holds
    other.acquire()
    try:
        code, log = invoke([*base_argv(tmp_path, out, "DLinear"), "--dry-run"])
        assert code == 0 and "elsewhere DLinear | toy | H=12" in log
        code, log = invoke([*base_argv(tmp_path, out, "DLinear"), "--no-report"])
    finally:
        other.release(failed=False)
    assert code == EXIT_UNFINISHED, log
    assert (f"left to process {os.getpid()}, which is training DLinear | toy | H=12 now (its run folder is locked)"
            in log)
    assert "0 to run, 0 cannot run, 1 training in another process" in log
    assert "1 training in another process; 1 remain: rerun the same command" in log
    assert not [e for e in manifest(out) if e.get("status") == "failed"]
    assert not (out / "runs" / "results.jsonl").exists()
    # Once the other process let go, the same command trains it.
    code, log = invoke([*base_argv(tmp_path, out, "DLinear"), "--no-report"])
    assert code == 0, log
    assert [r["model"] for r in results(out)] == ["DLinear"]
