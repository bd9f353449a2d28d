"""SIGKILL of the comparison runner: its run.py dies with it (parent-death signal), and an immediate rerun
finishes the grid with exactly one result row per run (issue 49)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import run_py_pids, wait_for

from compare.run import runner
from tests.compare.run.test_runner import TOY, base_argv, write_toy_csv

REPO = Path(__file__).resolve().parents[3]


def test_sigkill_of_the_runner_leaves_no_orphan_and_a_rerun_records_each_run_once(tmp_path):
    data = tmp_path / "data"
    write_toy_csv(data / "toy" / "toy.csv")
    # run.py takes seconds to import torch and load: killed then, it is surely still running.
    argv = [*base_argv(tmp_path, tmp_path / "out", "DLinear", "iTransformer"), "--no-timing"]
    argv[argv.index("--root") + 1] = str(data)
    script = tmp_path / "runner.py"
    script.write_text("import sys\nfrom tests.compare.run.test_runner import TOY\nfrom compare.run import runner\n"
                      f"sys.exit(runner.main({argv!r}, TOY))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: run_py_pids(str(data)), 120, "the runner to start a run.py")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not run_py_pids(str(data)), 10, "run.py to die with the SIGKILLed runner")
    finally:
        if proc.poll() is None:
            proc.kill()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv, TOY)
    assert code == 0, buffer.getvalue()
    settings = [json.loads(line)["setting"] for line in
                (tmp_path / "out" / "runs" / "results.jsonl").read_text().splitlines()]
    assert len(settings) == 2 and len(set(settings)) == 2
