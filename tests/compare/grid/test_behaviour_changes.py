"""compare.grid.behaviour_changes: which result records a later change of what a run computes made stale."""

from __future__ import annotations

from compare.grid.behaviour_changes import CHANGES, BehaviourChange, stale_reason

LATER = BehaviourChange(commit="abc1234", landed="2026-11-25T12:00:00", what="the loss changed")


def test_a_record_made_before_a_change_is_stale_and_says_which_change():
    reason = stale_reason({"time": "2026-11-25T11:59:59", "epochs_run": 3}, (LATER,))
    assert reason == "made 2026-11-25T11:59:59, before commit abc1234 (2026-11-25T12:00:00): the loss changed"


def test_a_record_made_after_every_change_or_without_a_time_is_current():
    assert stale_reason({"time": "2026-11-25T12:00:01"}, (LATER,)) is None
    assert stale_reason({"epochs_run": 3}, (LATER,)) is None
    assert stale_reason({"time": None}, (LATER,)) is None


def test_the_latest_applicable_change_is_named():
    earlier = BehaviourChange(commit="0000001", landed="2026-11-01T00:00:00", what="first")
    only_caps = BehaviourChange(commit="0000002", landed="2026-12-01T00:00:00", what="caps",
                                applies=lambda r: r.get("model") == "CAPS")
    record = {"time": "2026-10-01T00:00:00", "model": "DLinear"}
    assert "commit 0000001" in stale_reason(record, (earlier, only_caps))
    assert "commit 0000002" in stale_reason({**record, "model": "CAPS"}, (earlier, only_caps))


def test_a_test_only_record_is_not_made_stale_by_a_training_change():
    assert stale_reason({"time": "2026-11-01T00:00:00", "epochs_run": 0}, (LATER,)) is None


def test_the_ledger_is_ordered_and_dated():
    assert [c.landed for c in CHANGES] == sorted(c.landed for c in CHANGES)
    assert all(len(c.landed) == 19 and c.landed[10] == "T" and len(c.commit) >= 7 for c in CHANGES)
