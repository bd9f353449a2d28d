"""Arguments resolved once, before anything runs: run.py and the comparison plan call `resolve_args` after parsing
and validation, and every experiment reads the result (exp/task_lengths.py holds the lengths a task derives from
its data). An experiment handed unparsed-and-unresolved arguments (a test, the cost probe) resolves them through
the same function; resolved arguments pass through unchanged, so no file is read twice.
"""

from __future__ import annotations

import argparse

from exp.task_lengths import resolve_task_lengths

__all__ = ["ResolvedArgs", "resolve_args"]


class ResolvedArgs(argparse.Namespace):
    """run.py's arguments after `resolve_args`: the task's derived lengths are set; read them, never rewrite them."""


def resolve_args(args: argparse.Namespace) -> ResolvedArgs:
    """A resolved copy of `args` (the lengths M4, the custom short-term files and UEA take from their data); `args`
    itself when it is already resolved. Raises UserInputError on unusable M4 flags or unreadable UEA files."""
    if isinstance(args, ResolvedArgs):
        return args
    return ResolvedArgs(**vars(resolve_task_lengths(args)))
