"""compare.run.runner under --time_budget, end to end on a generated CSV: a run is stopped mid-training at
the deadline (SIGTERM, last.pth saved, `interrupted` in the manifest, exit 3), the folder is packed and
restored elsewhere, the next invocation resumes the run from last.pth, and the final metrics and
forecasts equal an uninterrupted run's bit for bit. The deadline comes from an injected clock that
jumps once the run has written its first last.pth, so the stop always lands mid-training."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compare.grid import plan
from compare.recipes.tables import Dataset, ModelRecipe, RecipeBook
from compare.report.build import load_runs
from compare.run import archive, local_process
from compare.run import runner as compare
from exp.training_guards import StopSignals

# DLinear with batch size 1 and last.pth after every step: hundreds of quick steps per epoch, so the
# stop lands mid-epoch, and run.py --resume has a mid-epoch state to continue from.
FLAGS = {
    "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 24,
    "label_len": 12, "pred_len": "{pred_len}", "enc_in": "{channels}", "dec_in": "{channels}",
    "c_out": "{channels}", "batch_size": 1, "train_epochs": 2, "patience": 3, "seed": 3, "des": "Exp",
    "itr": 1, "save_every_steps": 1,
}
BOOK = RecipeBook(
    datasets={"toy": Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 2, fetch="toy", folder="Toy_script",
                             horizons=(8, 12))},
    models={"DLinear": ModelRecipe("DLinear", FLAGS, {"toy": {}})},
)


class CueClock:
    """Budget time that stands at 0 until `cue()` is true and then jumps past every deadline."""

    def __init__(self, cue: Callable[[], bool]) -> None:
        self.cue = cue
        self.fired = False

    def __call__(self) -> float:
        self.fired = self.fired or self.cue()
        return 1e9 if self.fired else 0.0


def write_csv(path: Path, rows: int = 200) -> None:
    rng = np.random.default_rng(1)
    t = np.arange(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({
        "date": pd.date_range("2022-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
        "x0": np.sin(t / 6) + 0.1 * rng.normal(size=rows),
        "OT": np.cos(t / 8) + 0.1 * rng.normal(size=rows),
    }).to_csv(path, index=False)


def invoke(argv: list[str], clock: Callable[[], float] = time.monotonic) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = compare.main(argv, BOOK, clock)
    return code, buffer.getvalue()


def argv_for(data: Path, out: Path, *extra: str, report: bool = False) -> list[str]:
    return ["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--num_workers", "0",
            "--root", str(data), "--out", str(out), "--no-timing" if report else "--no-report", *extra]


def manifest(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]


def results(out: Path) -> dict[str, dict]:
    lines = (out / "runs" / "results.jsonl").read_text().splitlines()
    return {r["setting"]: r for r in map(json.loads, lines)}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("budget") / "data"
    write_csv(root / "toy" / "toy.csv")
    return root


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    # The same arithmetic in every run.py process, so metrics compare bit for bit.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


def test_interrupt_pack_restore_resume_equals_an_uninterrupted_run(data, tmp_path):
    reference = tmp_path / "reference"
    code, log = invoke(argv_for(data, reference))
    assert code == 0, log
    assert "grid: 1 of 1 runs finished, 0 interrupted, 0 not started, 0 failed; nothing left to run" in log

    first = tmp_path / "slice1"
    clock = CueClock(lambda: any((first / "runs" / "checkpoints").glob("*/last.pth")))
    code, log = invoke(argv_for(data, first, "--time_budget", "10", "--grace", "30", "--min-start", "1"), clock)
    assert code == compare.EXIT_UNFINISHED, log
    assert "stopping the runs in flight (the time budget)" in log
    assert "grid: 0 of 1 runs finished, 1 interrupted, 0 not started, 0 failed; 1 remain" in log
    (entry,) = manifest(first)
    assert entry["status"] == "interrupted" and not entry["resumed"]
    assert entry["error"] == "interrupted by the time budget; the next invocation resumes from last.pth"
    setting = entry["settings"][0]
    assert not (first / "runs" / "results.jsonl").exists()
    # What the run had done is in the manifest, read from its last.pth: the curve of its finished epochs.
    saved = entry["progress"][setting]
    assert saved["epoch"] >= 1 and len(saved["curve"]) == saved["epoch"] - 1
    assert "interrupted: training stopped by signal 15 at epoch 1" in (first / entry["log"]).read_text()

    packed = tmp_path / "slices" / "grid.tar.gz"
    assert archive.main(["pack", "--out", str(first), str(packed), "--slim"]) == 0  # as gpu_slice.sh packs
    second = tmp_path / "machine2" / "grid"
    assert archive.main(["restore", str(packed), "--out", str(second)]) == 0
    assert (second / "runs" / "checkpoints" / setting / "last.pth").is_file()

    code, log = invoke(argv_for(data, second, "--time_budget", "10", "--grace", "30", "--min-start", "1",
                                report=True))
    assert code == 0, log
    assert "; 1 resume from last.pth" in log and "resuming from last.pth" in log
    assert "grid: 1 of 1 runs finished, 0 interrupted, 0 not started, 0 failed; nothing left to run" in log
    assert [e["status"] for e in manifest(second)] == ["interrupted", "ok"] and manifest(second)[1]["resumed"]
    # The resumed run.py continued mid-training (not from scratch) from the saved state.
    run_log = (second / entry["log"]).read_text()
    assert run_log.count("--resume: continuing " + setting + " at epoch 1, batch ") == 1
    assert "starting from scratch" not in run_log

    ours, theirs = results(second)[setting], results(reference)[setting]
    assert (ours["mse"], ours["mae"], ours["epochs_run"]) == (theirs["mse"], theirs["mae"], theirs["epochs_run"])
    table = (second / "table.md").read_text()
    assert f"| toy | 12 | **{ours['mse']:.3f}** |" in table and "Failed runs" not in table
    for name in ("pred.npy", "true.npy"):
        np.testing.assert_array_equal(np.load(second / "runs" / "results" / setting / name),
                                      np.load(reference / "runs" / "results" / setting / name))

    # A slim archive of the finished grid drops its weights and arrays but not the record: a third machine
    # skips the run and still writes the table.
    assert archive.main(["pack", "--out", str(second), str(packed), "--slim"]) == 0
    third = tmp_path / "machine3" / "grid"
    assert archive.main(["restore", str(packed), "--out", str(third)]) == 0
    assert not (third / "runs" / "checkpoints" / setting).exists()
    code, log = invoke(argv_for(data, third, "--time_budget", "10", report=True))
    assert code == 0, log
    assert "1 runs planned, 1 already finished, 0 to run" in log
    assert f"| toy | 12 | **{ours['mse']:.3f}** |" in (third / "table.md").read_text()


def test_sigterm_to_the_runner_stops_its_runs_the_same_way(data, tmp_path):
    """A pre-empted machine or a wall-time limit signals the runner: it forwards one SIGTERM to each run
    (which saves last.pth), records them as interrupted, skips the report and exits 128 + 15."""
    out = tmp_path / "preempted"
    sent = []

    def preempt_once() -> bool:
        if not sent and any((out / "runs" / "checkpoints").glob("*/last.pth")):
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)
        return False

    # A (long) budget, so the runner consults the clock, which sends the signal on cue.
    code, log = invoke([*argv_for(data, out, "--time_budget", "10", "--grace", "30", "--min-start", "1"),
                        "--pred_lens", "12", "8"], CueClock(preempt_once))
    assert code == 128 + signal.SIGTERM, log
    assert "stopping the runs in flight (signal 15 to the runner)" in log
    assert "grid: 0 of 2 runs finished, 1 interrupted, 1 not started, 0 failed; 2 remain" in log
    assert "report skipped: write it later with `python -m compare.report --out" in log
    (entry,) = manifest(out)
    assert entry["status"] == "interrupted" and entry["pred_len"] == 12
    assert entry["error"] == "interrupted by signal 15 to the runner; the next invocation resumes from last.pth"
    # The runner's own handler is gone again.
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_the_report_counts_interrupted_runs_as_unfinished_not_failed(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    entries = [{"row": "DLinear", "dataset": "toy", "pred_len": 12, "status": "failed", "error": "boom",
                "settings": ["a"]},
               {"row": "DLinear", "dataset": "toy", "pred_len": 12, "status": "interrupted", "settings": ["a"]},
               {"row": "DLinear", "dataset": "toy", "pred_len": 24, "status": "failed", "error": "boom",
                "settings": ["b"]}]
    (runs / "compare_runs.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    finished, failed = load_runs(runs)
    assert finished == [] and [f["pred_len"] for f in failed] == [24]


def test_a_budget_too_short_to_start_a_run_starts_none(data, tmp_path):
    out = tmp_path / "short"
    # 0.6 min - 30 s grace leaves 6 s before the stop time, less than --min-start 10.
    code, log = invoke([*argv_for(data, out, "--time_budget", "0.6", "--grace", "30", "--min-start", "10"),
                        "--pred_lens", "8", "12"])
    assert code == compare.EXIT_UNFINISHED, log
    assert "grid: 0 of 2 runs finished, 0 interrupted, 2 not started, 0 failed; 2 remain" in log
    assert "[1/" not in log and not (out / "runs" / "compare_runs.jsonl").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--time_budget", "1"], "--time_budget 1 leaves no time to run: it must exceed --grace 60 s + 0 s"),
    (["--time_budget", "0"], "--time_budget 0: give a positive number of minutes"),
    (["--max-crashes", "0"], "--max-crashes 0: use 1 or more"),
], ids=["budget-below-grace", "zero-budget", "zero-crashes"])
def test_budget_flags_are_checked_up_front(data, tmp_path, capsys, flags, message):
    assert compare.main(argv_for(data, tmp_path / "out", *flags), BOOK) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {message}") and "\n" not in err


def test_a_run_that_keeps_crashing_is_given_up(data, tmp_path, monkeypatch):
    """A crash is retried once by the next invocation, then not started again until --retry-failed.
    (run.py is replaced by a crash that costs no process start.)"""
    calls = []

    def crash(run, runs_dir, timeout, threads=None, *, resume=False, stopper=None):
        calls.append(resume)
        log = runs_dir / "logs" / f"{run.settings[0]}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("Traceback ...\n")
        return local_process.RunOutcome(1, "RuntimeError: CUDA error: an illegal memory access", log)

    monkeypatch.setattr(local_process, "execute_run", crash)
    out = tmp_path / "crash"
    for attempt in (1, 2):
        code, log = invoke(argv_for(data, out))
        assert code == 1 and "summary: 1 ran (1 failed)" in log, (attempt, log)
    code, log = invoke(argv_for(data, out))
    assert code == 1 and "[1/" not in log and len(calls) == 2
    assert "0 to run, 0 cannot run, 1 given up after crashes" in log
    assert "not started again: DLinear | toy | H=12 crashed 2 times" in log
    assert "FAILED DLinear | toy | H=12: given up after 2 crashes" in log
    assert "grid: 0 of 1 runs finished, 0 interrupted, 0 not started, 1 failed; nothing left to run" in log
    code, log = invoke([*argv_for(data, out), "--retry-failed"])
    assert code == 1 and len(calls) == 3
    assert [e["status"] for e in manifest(out)] == ["failed"] * 3
    assert manifest(out)[0]["error"] == "RuntimeError: CUDA error: an illegal memory access"


def test_a_run_ignoring_sigterm_is_killed_after_the_grace_period():
    """The stopper's second stage, on a child that ignores SIGTERM."""
    proc = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; signal.signal(signal.SIGTERM, "
                             "signal.SIG_IGN); sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(60)"],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    with StopSignals() as signals, local_process.RunStopper(0.0, 0.3, lambda: 1.0, signals) as stopper:
        stopper.register(proc)
        code = proc.wait(timeout=10)
        assert stopper.unregister(proc) == (True, True)
    assert code == -signal.SIGKILL and stopper.reason == "the time budget"


def test_a_run_log_follows_the_run_while_it_trains(tmp_path, monkeypatch):
    """Each line run.py prints reaches the run's log at once, so `tail -f` follows a run in flight.
    (run.py is replaced by a script that prints one line and waits for the test's go-ahead.)"""
    fake_root = tmp_path / "repo"
    fake_root.mkdir()
    go = tmp_path / "go"
    (fake_root / "run.py").write_text(
        "import pathlib, time\n"
        "print('\\tspeed: 3.0s/iter; left time: 99s')\n"
        "deadline = time.monotonic() + 20\n"
        f"while not pathlib.Path({str(go)!r}).exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
    )
    monkeypatch.setattr(plan, "RUN_PY", fake_root / "run.py")
    run = compare.PlannedRun(compare.Row("DLinear", "DLinear"), "toy", 12, argv=["--model", "DLinear"],
                             settings=["toy_setting"])
    outcome: list[local_process.RunOutcome] = []
    worker = threading.Thread(target=lambda: outcome.append(local_process.execute_run(run, tmp_path / "runs", 30.0)))
    worker.start()
    log = tmp_path / "runs" / "logs" / "toy_setting.log"
    deadline = time.monotonic() + 15
    while "speed: 3.0s/iter" not in (log.read_text() if log.is_file() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    seen_in_flight = "speed: 3.0s/iter" in log.read_text()
    go.touch()
    worker.join(timeout=30)
    assert seen_in_flight, "the run's printed line was not in its log while it ran"
    assert outcome and outcome[0].code == 0
