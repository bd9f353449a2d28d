"""compare.run.resume_copies: a stopped run's last.pth committed beside the report carries the run into a fresh
clone (no `runs/`), where the next invocation resumes it and ends with an uninterrupted run's metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compare.run import runner as compare
from compare.run.resume_copies import (
    RESUME_DIR,
    drop_resume_copies,
    keep_resume_copies,
    restore_resume_copies,
)
from tests.compare.run.test_time_budget import CueClock, argv_for, data, invoke, manifest, results  # noqa: F401
from utils.record_paths import relative_text


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


def committed_part(out: Path, clone: Path) -> None:
    """What a fresh clone of a commit of `out` holds: everything but the git-ignored runs/."""
    shutil.copytree(out, clone, ignore=lambda folder, names: ["runs"] if Path(folder) == out else [])


def test_a_committed_resume_copy_resumes_the_run_in_a_fresh_clone(data, tmp_path):  # noqa: F811
    reference = tmp_path / "reference"
    assert invoke(argv_for(data, reference))[0] == 0

    first = tmp_path / "session1"
    clock = CueClock(lambda: any((first / "runs" / "checkpoints").glob("*/last.pth")))
    code, log = invoke(argv_for(data, first, "--time_budget", "10", "--grace", "30", "--min-start", "1",
                                "--resume_copies", "16"), clock)
    assert code == compare.EXIT_UNFINISHED, log
    (entry,) = manifest(first)
    setting = entry["settings"][0]
    saved = first / "runs" / "checkpoints" / setting / "last.pth"
    copy = first / RESUME_DIR / setting / "last.pth"
    assert copy.read_bytes() == saved.read_bytes()
    # --no-report, yet the committed copies of the records follow runs/.
    assert (first / "compare_runs.jsonl").read_text() == relative_text((first / "runs" / "compare_runs.jsonl").read_text())

    second = tmp_path / "clone" / "zoo"
    committed_part(first, second)
    code, log = invoke(argv_for(data, second, "--resume_copies", "16"))
    assert code == 0, log
    assert "restored from the committed copy" in log and "; 1 resume from last.pth" in log
    assert [e["status"] for e in manifest(second)] == ["interrupted", "ok"] and manifest(second)[1]["resumed"]
    ours, theirs = results(second)[setting], results(reference)[setting]
    assert (ours["mse"], ours["mae"], ours["epochs_run"]) == (theirs["mse"], theirs["mae"], theirs["epochs_run"])
    # Finished: the copy is gone, so the next commit drops it, and the record it leaves is in the committed copy:
    # a fresh clone of this commit knows the run finished and does not run it again.
    assert not (second / RESUME_DIR).exists()
    third = tmp_path / "clone2" / "zoo"
    committed_part(second, third)
    code, log = invoke(argv_for(data, third, "--resume_copies", "16"))
    assert code == 0 and "1 already finished, 0 to run" in log, log
    assert results(third)[setting]["mse"] == ours["mse"]


def test_without_the_flag_no_copy_is_written(data, tmp_path):  # noqa: F811
    out = tmp_path / "grid"
    clock = CueClock(lambda: any((out / "runs" / "checkpoints").glob("*/last.pth")))
    code, log = invoke(argv_for(data, out, "--time_budget", "10", "--grace", "30", "--min-start", "1"), clock)
    assert code == compare.EXIT_UNFINISHED, log
    assert not (out / RESUME_DIR).exists()


def test_keep_restore_and_drop(tmp_path, caplog):
    runs = tmp_path / "runs" / "checkpoints"
    small, large, missing = runs / "a" / "last.pth", runs / "b" / "last.pth", runs / "c" / "last.pth"
    for path, size in ((small, 1000), (large, 3 * 2**20)):
        path.parent.mkdir(parents=True)
        path.write_bytes(bytes(range(256)) * (size // 256))
    out = tmp_path / "out"
    files = {"a": small, "b": large, "c": missing}

    written = keep_resume_copies(out, files, max_mib=2)
    assert written == [out / RESUME_DIR / "a" / "last.pth"] and written[0].read_bytes() == small.read_bytes()
    assert "b/last.pth is 3.0 MiB, more than --resume_copies 2" in caplog.text

    # A local last.pth is newer than any committed copy: it is never overwritten.
    small.write_bytes(b"newer")
    assert restore_resume_copies(out, files) == []
    assert small.read_bytes() == b"newer"
    small.unlink()
    assert restore_resume_copies(out, files) == [small]
    assert small.read_bytes() == written[0].read_bytes()

    assert drop_resume_copies(out, ["a", "b"]) == [out / RESUME_DIR / "a"]
    assert not (out / RESUME_DIR).exists()


def test_a_negative_size_is_a_one_line_error(data, tmp_path, capsys):  # noqa: F811
    assert compare.main(argv_for(data, tmp_path / "x", "--resume_copies", "-1")) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --resume_copies -1: give the largest last.pth to copy in MiB (0 copies none)"
