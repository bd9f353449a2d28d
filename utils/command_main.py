"""The tail every command-line `main` shares: log lines as plain messages on stdout, bad input as one
`error: ...` line on stderr with exit code 2, and one `wrote <path>` line per file the command wrote.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable

from utils.errors import UserInputError

logger = logging.getLogger("command")

#: the exit code of a command refused for its input (argparse's own code for bad arguments)
USER_ERROR_EXIT = 2


def log_to_stdout(level: int = logging.INFO) -> None:
    """Every log record as its bare message on stdout (the console lines TSLib printed)."""
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stdout, force=True)


def exit_code_of(work: Callable[[], int]) -> int:
    """Call `work` and return its exit code; 2 with one `error: <message>` line on stderr when it raises
    UserInputError (for commands whose own codes go beyond 0 and 2: failed runs, unfinished grids)."""
    try:
        return work()
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return USER_ERROR_EXIT


def run_command(work: Callable[[], Iterable[str | os.PathLike] | None]) -> int:
    """Call `work`; 2 with one `error: <message>` line on stderr when it raises UserInputError, else 0 after
    logging `wrote <path>` for each path it returned (None: nothing to report)."""

    def report_written() -> int:
        for path in work() or ():
            logger.info("wrote %s", path)
        return 0

    return exit_code_of(report_written)
