"""The committed comparison folders show current records only: no latest record older than a change of what a
run computes (`compare/grid/behaviour_changes.py`), except in the folders kept as records of older code; and no
committed file under docs/results holds an absolute path of the machine that wrote it."""

import json
import subprocess
from pathlib import Path

import pytest

from compare.grid.behaviour_changes import stale_reason
from utils.record_paths import absolute_paths

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"
# Kept as committed, as records of the code before a79d9ee (docs/results/README.md, "Records of older code").
OLDER_CODE = {"ETTh_gpu", "ETTh_cpu"}
FOLDERS = sorted(p.parent for p in RESULTS.rglob("results.jsonl")
                 if "runs" not in p.relative_to(RESULTS).parts and p.parent.name not in OLDER_CODE)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_no_committed_record_is_stale(folder):
    """The latest record of each setting is the one a table shows (a rerun keeps the old record beside it)."""
    latest: dict[str, dict] = {}
    for line in (folder / "results.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            if record["setting"] not in latest or record.get("time", "") >= latest[record["setting"]].get("time", ""):
                latest[record["setting"]] = record
    stale = [f"{r['model']} {r.get('model_id')}: {stale_reason(r)}" for r in latest.values() if stale_reason(r)]
    assert stale == []


def test_the_older_code_folders_are_what_they_claim():
    for name in OLDER_CODE:
        records = [json.loads(line) for line in (RESULTS / name / "results.jsonl").read_text().splitlines()]
        assert records and all(stale_reason(r) for r in records)


def committed_files() -> dict[str, list[Path]]:
    """docs/results files as git tracks them (a local runs/ folder is git-ignored), by top-level folder."""
    listed = subprocess.run(["git", "ls-files", "-z", "docs/results"], cwd=RESULTS.parents[1], capture_output=True,
                            text=True, check=False)
    paths = ([RESULTS.parents[1] / name for name in listed.stdout.split("\0") if name] if listed.returncode == 0
             else [p for p in RESULTS.rglob("*") if p.is_file() and "runs" not in p.relative_to(RESULTS).parts])
    by_folder: dict[str, list[Path]] = {}
    for path in sorted(paths):
        by_folder.setdefault(path.relative_to(RESULTS).parts[0] if path.parent != RESULTS else ".", []).append(path)
    return by_folder


COMMITTED = committed_files()


@pytest.mark.parametrize("folder", sorted(COMMITTED))
def test_no_committed_file_holds_an_absolute_path(folder):
    """Records name paths relative to the repository (utils/record_paths.py); binary files are not read."""
    found = {}
    for path in COMMITTED[folder]:
        data = path.read_bytes()
        if b"\0" not in data:
            paths = absolute_paths(data.decode("utf-8", errors="replace"))
            if paths:
                found[str(path.relative_to(RESULTS))] = paths[:3]
    assert found == {}, f"rewrite them: python -m compare.relative_paths docs/results/{folder}"
