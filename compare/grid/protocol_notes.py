"""What the runner prints and every report's header says about the evaluation protocol of its runs
(run.py's `--protocol`, data_provider/protocol.py).

A run's protocol is read from its argv (the manifest's); a run recorded before `--protocol` existed ran
TSLib's protocol. Rows of one report may differ (a `--variant ...:--protocol tslib`): the header then names
each protocol with its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from compare.grid.run_args import flag_value
from data_provider.protocol import RUNNER_DEFAULT, STRICT_CHANGES
from utils.flag_defaults import flag_default

__all__ = ["protocol_header", "protocol_summary", "run_protocol"]

_SAME = "validation on its own split, every test window scored"


def protocol_summary(protocol: str, task: str, runner: bool = False) -> str:
    """`protocol` and what it means for `task`, in one line; runner: add that strict is the runner's default."""
    if protocol == "strict":
        what = STRICT_CHANGES.get(task, f"for this task the same computation as tslib: {_SAME}")
        text = f"strict (no TEST sample reaches training, early stopping or a threshold; {what})"
    elif task in STRICT_CHANGES:
        text = f"tslib (TSLib's protocol and numbers; strict would change: {STRICT_CHANGES[task]})"
    else:
        text = f"tslib (TSLib's protocol; for this task strict computes the same: {_SAME})"
    if runner and protocol == RUNNER_DEFAULT:
        text += "; the comparison runner's default (--protocol tslib runs TSLib's protocol)"
    return text


def run_protocol(argv: Sequence[str] | None) -> str:
    """The protocol a recorded run's argv asked for (none named: run.py's default, tslib)."""
    return flag_value(list(argv or []), "protocol") or flag_default("protocol")


def protocol_header(runs: Iterable[tuple[str, Sequence[str] | None]], task: str) -> str:
    """The report header line for (row, argv) of every run shown: the protocol, or each with its rows."""
    rows_of: dict[str, list[str]] = {}
    for row, argv in runs:
        names = rows_of.setdefault(run_protocol(argv), [])
        if row not in names:
            names.append(row)
    if len(rows_of) <= 1:
        protocol = next(iter(rows_of), "tslib")
        return f"**Protocol:** {protocol_summary(protocol, task)}."
    parts = [f"{protocol_summary(protocol, task)} for {', '.join(rows)}" for protocol, rows in sorted(rows_of.items())]
    return "**Protocols:** " + "; ".join(parts) + "."
