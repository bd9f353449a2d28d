"""`run.py` argument lists as data: read a flag's value, merge flag overrides into a recipe's argv, and
parse an argv with run.py's own parser (raising UserInputError instead of exiting)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from exp.arguments import build_parser, check_numbers, check_output_names
from utils.errors import UserInputError

__all__ = ["flag_names", "flag_value", "merge_flags", "parse_run_args", "shown_flags"]


def flag_value(argv: Sequence[str], name: str) -> str | None:
    """Last value given to `--name` in `argv` (`--name value` or `--name=value`), else None."""
    found = None
    for i, token in enumerate(argv):
        if token == f"--{name}" and i + 1 < len(argv):
            found = argv[i + 1]
        elif token.startswith(f"--{name}="):
            found = token.split("=", 1)[1]
    return found


def parse_run_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse run.py arguments with run.py's parser, raising UserInputError instead of exiting; the names
    that become output folders and the numbers are checked as run.py checks them."""
    parser = build_parser()
    parser.exit_on_error = False

    # argparse reports every other problem through parser.error, which would exit the process.
    def raise_user_error(message: str) -> None:
        raise UserInputError(message + parser.hint(message))

    parser.error = raise_user_error  # type: ignore[method-assign]
    try:
        parsed = parser.parse_args(list(argv))
    except argparse.ArgumentError as err:
        raise UserInputError(str(err) + parser.hint(str(err))) from None
    check_numbers(parsed)
    check_output_names(parsed)
    return parsed


def _split_flags(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[tuple[str, list[str]]]:
    """Group `argv` into (flag, values) pairs using each option's arity from `parser`."""
    arity = {opt: action.nargs for action in parser._actions for opt in action.option_strings}
    groups: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--"):
            raise UserInputError(f"unexpected argument {token!r}: run.py flags look like --name value")
        if "=" in token:
            flag, value = token.split("=", 1)
            groups.append((flag, [value]))
            i += 1
            continue
        if token not in arity:
            raise UserInputError(f"unknown run.py flag {token}; see `python run.py --help`")
        nargs = arity[token]
        if nargs == 0:
            groups.append((token, []))
            i += 1
        elif nargs in ("+", "*"):
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                j += 1
            groups.append((token, list(argv[i + 1 : j])))
            i = j
        else:
            count = 1 if nargs is None or nargs == "?" else int(nargs)
            groups.append((token, list(argv[i + 1 : i + 1 + count])))
            i += 1 + count
    return groups


def shown_flags(params: dict) -> str:
    """{flag: value} as run.py flags for reading (floats at 4 significant digits): `--batch_size 64 --dropout 0.1`."""
    return " ".join(f"--{flag} {value:.4g}" if isinstance(value, float) else f"--{flag} {value}"
                    for flag, value in sorted(params.items()))


def split_flags(argv: Sequence[str]) -> list[tuple[str, list[str]]]:
    """`argv` as (flag, values) pairs, by each run.py option's arity (`--use_amp --seq_len 96` ->
    [("--use_amp", []), ("--seq_len", ["96"])])."""
    return _split_flags(argv, build_parser())


def flag_names(argv: Sequence[str]) -> list[str]:
    """The flags `argv` sets, in order (`--e_layers 2 --use_amp` -> ["--e_layers", "--use_amp"])."""
    return [flag for flag, _ in _split_flags(argv, build_parser())]


def merge_flags(base: Sequence[str], overrides: Sequence[str]) -> list[str]:
    """`base` with every flag in `overrides` replacing the same flag (kept at its first position);
    new flags are appended. Switch flags (`--use_amp`) can be added but not removed."""
    parser = build_parser()
    merged = _split_flags(base, parser)
    for flag, values in _split_flags(overrides, parser):
        positions = [i for i, (f, _) in enumerate(merged) if f == flag]
        if positions:
            merged[positions[0]] = (flag, values)
            merged = [g for i, g in enumerate(merged) if i not in positions[1:]]
        else:
            merged.append((flag, values))
    return [token for flag, values in merged for token in (flag, *values)]
