"""Exceptions for bad user input.

`run.py` turns every `UserInputError` into a single ``error: ...`` line and exit code 2,
so messages must say what was wrong, where, and how to fix it.
"""

from __future__ import annotations


class UserInputError(ValueError):
    """A flag, a data file or a configuration that cannot be used as given."""


class MissingDataError(UserInputError, FileNotFoundError):
    """A dataset file that is not on disk (the message names the fetch command)."""
