"""The committed comparison folders show current records only: no latest record older than a change of what a
run computes (`compare/behaviour_changes.py`), except in the folders kept as records of older code."""

import json
from pathlib import Path

import pytest

from compare.behaviour_changes import stale_reason

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
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
