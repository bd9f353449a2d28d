"""The ledger of code changes that changed what a run computes, and the records they make stale.

A record's `config` (every flag after defaults) catches a run made with other flags, but not one made by
older code with the same flags: the setting string and the flags stay the same when the code behind them
changes. This ledger lists each such change once, with the commit and the time it landed; a result record
written before a change that applies to it is *stale*: the report leaves it out of the table (listing it
under "Stale runs" with the reason) and the runner reruns it with `--rerun-stale`.

A record's time is its `time` field (run.py writes the machine's local time, UTC on the project's machines);
a record without one cannot be dated and is taken as it is. Add a change here when a commit changes the
numbers a finished run would produce, and say which records it concerns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CHANGES", "BehaviourChange", "stale_reason"]


def _trained(record: dict) -> bool:
    """Every record of a run that trained (a test-only rerun, `epochs_run` 0, is not one)."""
    return record.get("epochs_run", 1) != 0


@dataclass(frozen=True)
class BehaviourChange:
    """One change of what a finished run computes: `landed` as ISO time `YYYY-MM-DDTHH:MM:SS` (UTC)."""

    commit: str
    landed: str
    what: str
    applies: Callable[[dict], bool] = _trained


CHANGES: tuple[BehaviourChange, ...] = (
    BehaviourChange(
        commit="a79d9ee", landed="2026-11-22T20:33:19",
        what="--rng_stream tslib became the default (train shuffle and loader seeds drawn from the global RNG "
             "as TSLib's DataLoaders draw them; TimesNet built in TSLib's constructor order), so the same seed "
             "trains another stream"),
)


def stale_reason(record: dict, changes: tuple[BehaviourChange, ...] = CHANGES) -> str | None:
    """Why `record` is stale (the latest change made after it that applies to it), or None when it is current
    or cannot be dated."""
    made = record.get("time")
    if not isinstance(made, str) or not made:
        return None
    later = [c for c in changes if made < c.landed and c.applies(record)]
    if not later:
        return None
    change = max(later, key=lambda c: c.landed)
    return f"made {made}, before commit {change.commit} ({change.landed}): {change.what}"
