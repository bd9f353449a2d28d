"""compare.grid.reuse through the runner: `--reuse DIR` takes a planned run's current record from another
comparison folder instead of training it, marks it, and the report says so; other flags, older code, a record
without its flags, or a run already recorded here are never taken, and the log says why; bad folders are
one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.compare.run.test_runner import base_argv, invoke, results, write_toy_csv


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, Path]:
    """(workspace, a folder where DLinear finished on the toy data)."""
    root = tmp_path_factory.mktemp("reuse")
    write_toy_csv(root / "data" / "toy" / "toy.csv")
    folder = root / "source"
    code, log = invoke([*base_argv(root, folder, "DLinear"), "--no-report"])
    assert code == 0, log
    return root, folder


def manifest(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]


def test_a_current_run_is_reused_not_trained_and_the_report_names_its_folder(source, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    root, folder = source
    out = root / "reusing"
    code, log = invoke([*base_argv(root, out, "DLinear", "iTransformer"), "--reuse", str(folder)])
    assert code == 0, log
    assert f"reuse DLinear | toy | H=12: finished in {folder} (made 20" in log and ", mse " in log
    assert "2 runs planned, 1 already finished, 1 to run" in log and "summary: 1 ran (0 failed)" in log
    mine = {r["model"]: r for r in results(out)}
    theirs = results(folder)[0]
    assert mine["DLinear"] == {**theirs, "reused_from": str(folder)}
    assert "reused_from" not in mine["iTransformer"]
    entries = {e["row"]: e for e in manifest(out)}
    assert entries["DLinear"]["reused_from"] == str(folder) and entries["DLinear"]["status"] == "ok"
    assert entries["DLinear"]["settings"] == [theirs["setting"]]
    assert not (out / "runs" / "checkpoints" / theirs["setting"]).exists()  # nothing trained here
    table = (out / "table.md").read_text()
    assert (f"Reused, not run here (`--reuse`: the same flags and no later behaviour change): DLinear on toy H=12, "
            f"finished in `{folder}`") in table
    # A second invocation has nothing to do or to reuse.
    code, log = invoke([*base_argv(root, out, "DLinear", "iTransformer"), "--reuse", str(folder), "--no-report"])
    assert code == 0 and "reuse " not in log and "2 already finished, 0 to run" in log


def test_a_dry_run_shows_the_reuse_and_writes_nothing(source):
    root, folder = source
    out = root / "dry"
    code, log = invoke([*base_argv(root, out, "DLinear"), "--reuse", str(folder), "--dry-run"])
    assert code == 0, log
    assert "reuse DLinear | toy | H=12" in log and "skip DLinear | toy | H=12" in log
    assert "1 already finished, 0 to run" in log and not (out / "runs" / "results.jsonl").exists()


def changed_copy(folder: Path, target: Path, change) -> Path:
    """A copy of `folder` whose records went through `change(record)`."""
    shutil.copytree(folder, target)
    path = target / "runs" / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        change(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return target


@pytest.mark.parametrize(("case", "why"), [
    ("other flags", "its record was made with other --learning_rate"),
    ("older code", "its record is stale (made 2026-11-20T10:00:00, before commit "),
    ("no flags kept", "its record keeps no flags (written before records kept them), so they cannot be checked"),
])
def test_a_record_that_is_not_current_is_not_reused_and_the_log_says_why(source, tmp_path, case, why):
    root, folder = source
    extra = []
    if case == "other flags":
        given, extra = folder, ["--extra=--learning_rate 0.5"]
    elif case == "older code":  # made before the behaviour change a79d9ee of compare/grid/behaviour_changes.py
        given = changed_copy(folder, tmp_path / "old", lambda r: r.update(time="2026-11-20T10:00:00"))
    else:
        given = changed_copy(folder, tmp_path / "bare", lambda r: r.pop("config"))
    code, log = invoke([*base_argv(root, tmp_path / "out", "DLinear"), *extra, "--reuse", str(given), "--dry-run"])
    assert code == 0, log
    assert "reuse DLinear" not in log and "0 already finished, 1 to run" in log
    assert f"not reused DLinear | toy | H=12 from {given}: {why}" in log and "; it is trained here" in log


def test_a_folder_without_the_run_is_passed_over_in_silence(source, tmp_path):
    root, folder = source
    code, log = invoke([*base_argv(root, tmp_path / "out", "iTransformer"), "--reuse", str(folder), "--dry-run"])
    assert code == 0, log
    assert "reuse " not in log and "0 already finished, 1 to run" in log


def test_a_run_recorded_here_is_never_replaced(source, tmp_path):
    root, folder = source
    out = changed_copy(folder, tmp_path / "here", lambda r: r["config"].update(learning_rate=0.5))
    code, log = invoke([*base_argv(root, out, "DLinear"), "--reuse", str(folder), "--dry-run"])
    # Its own record (other flags) stays stale here: reported, not silently swapped for the other folder's.
    assert code == 1 and "reuse " not in log and "recorded with other --learning_rate" in log


@pytest.mark.parametrize(("given", "expected"), [
    (["missing"], "error: --reuse {root}/missing: no results.jsonl there (nor under runs/); name a comparison "
                  "folder the runner wrote"),
    (["out"], "error: --reuse {root}/out: that is --out itself; name other comparison folders"),
    (["source", "source"], "error: --reuse names a folder twice ({root}/source, {root}/source): give each once"),
], ids=["missing", "itself", "twice"])
def test_bad_reuse_folders_are_one_line_errors_and_write_nothing(source, tmp_path, capsys, given, expected):
    root, folder = source
    out = tmp_path / "out"
    if "out" in given:
        shutil.copytree(folder, out)
    shutil.copytree(folder, tmp_path / "source")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, _ = invoke([*base_argv(root, out, "DLinear"), "--reuse", *(str(tmp_path / g) for g in given)])
    err = capsys.readouterr().err
    assert code == 2 and err == expected.format(root=tmp_path) + "\n"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
