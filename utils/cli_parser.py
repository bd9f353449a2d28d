"""An `argparse.ArgumentParser` whose errors are one line with a "did you mean" where a close name exists.

Stock argparse prints the whole usage (67 lines for run.py) before the error, and expands unambiguous
prefixes (`--lr 0.001` silently became `--lradj`). This parser takes no abbreviations and says, e.g.:

    error: unrecognized arguments: --lr 0.001; did you mean --learning_rate or --lradj?; see run.py --help

An unknown flag is matched against every flag (`closest_flags`): first the flags whose words it abbreviates
(`--lr` -> `--learning_rate`, `--bs` -> `--batch_size`), then those it begins (what argparse's abbreviation expanded
to), then close spellings.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable
from typing import NoReturn

__all__ = ["OneLineArgumentParser", "closest_flags", "did_you_mean"]


def did_you_mean(value: str, choices: Iterable[str], n: int = 2) -> str:
    """``; did you mean X?`` for the closest of `choices` to `value` (case-insensitive), else ``""``."""
    choices = [str(c) for c in choices]
    by_lower = {c.lower(): c for c in choices}
    exact = by_lower.get(str(value).lower())
    if exact is not None:
        return f"; did you mean {exact}?"
    # What argparse's abbreviation would have expanded to comes first (`--lr` -> `--lradj`).
    close = [c for c in by_lower if c.startswith(str(value).lower())][:n]
    close = close or difflib.get_close_matches(str(value).lower(), list(by_lower), n=n, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {' or '.join(by_lower[c] for c in close)}?"


def _abbreviates(typed: str, words: list[str]) -> bool:
    """True when `typed` is every one of `words`, in order, each cut to a non-empty prefix (`lr`: learning, rate)."""
    if not words:
        return not typed
    word = words[0]
    return any(typed[:i] == word[:i] and _abbreviates(typed[i:], words[1:])
               for i in range(1, min(len(word), len(typed)) + 1))


def closest_flags(flag: str, options: Iterable[str], n: int = 2) -> list[str]:
    """Up to `n` of the `--options` an unknown `flag` most likely meant: those whose underscore-separated words it
    abbreviates, then those it is a prefix of, then close spellings (difflib); '-' and '_' count as equal."""
    typed = flag.lstrip("-").replace("-", "_").lower()
    names = {option.lstrip("-").lower(): option for option in options}
    found = [name for name in names if "_" in name and _abbreviates(typed, name.split("_"))]
    found += [name for name in names if name.startswith(typed) and name not in found]
    found += [name for name in difflib.get_close_matches(typed, list(names), n=n, cutoff=0.6) if name not in found]
    return [names[name] for name in found[:n]]


class OneLineArgumentParser(argparse.ArgumentParser):
    """ArgumentParser with `allow_abbrev=False` and one-line errors (exit code 2, as argparse)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def option_names(self) -> list[str]:
        return [opt for action in self._actions for opt in action.option_strings if opt.startswith("--")]

    def hint(self, message: str) -> str:
        """A "did you mean" for the first unknown flag or invalid choice named in `message`."""
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if unknown and unknown.group(1).startswith("-"):
            close = closest_flags(unknown.group(1).split("=", 1)[0], self.option_names())
            return f"; did you mean {' or '.join(close)}?" if close else ""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            options = [c.strip().strip("'") for c in choice.group(2).split(",")]
            return did_you_mean(choice.group(1), options)
        return ""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}{self.hint(message)}; see {self.prog} --help", file=sys.stderr)
        sys.exit(2)
