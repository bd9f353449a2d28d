"""run.py's flag defaults as one table, generated from the parser (exp/arguments.py, their one home).

The table is written to utils/flag_defaults.py so that every floor reads it, models and data_provider included
(they may not import exp/), and a namespace without a flag (a TSLib checkout's, one a test builds) falls back to
run.py's default rather than a restated literal. tests/exp/test_flag_defaults.py checks the committed table equals
this one. After changing a flag's default: `python -m exp.flag_table`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from exp.arguments import build_parser

__all__ = ["TABLE_FILE", "parser_defaults", "table_source", "write_table"]

TABLE_FILE = Path(__file__).resolve().parents[1] / "utils" / "flag_defaults.py"

_HEADER = '''"""run.py's flag defaults, one table that every floor reads through `flag_default` (models and data_provider
included, which may not import exp/). Generated from exp/arguments.py's parser by `python -m exp.flag_table`;
do not edit (tests/exp/test_flag_defaults.py checks it is current).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["FLAG_DEFAULTS", "flag_default"]

#: flag (its dest) -> run.py's default
FLAG_DEFAULTS: dict[str, Any] = {
'''

_FOOTER = '''}


def flag_default(name: str) -> Any:
    """run.py's default of `--name` (a copy, so a list default is never shared); KeyError for an unknown flag."""
    return copy.deepcopy(FLAG_DEFAULTS[name])
'''


def parser_defaults(parser: argparse.ArgumentParser | None = None) -> dict[str, Any]:
    """{dest: default} of every flag of run.py's parser, sorted by name."""
    parser = build_parser() if parser is None else parser
    dests = {action.dest for action in parser._actions if action.option_strings and action.dest != "help"}
    return {dest: parser.get_default(dest) for dest in sorted(dests)}


def table_source() -> str:
    """The text of utils/flag_defaults.py for the current parser."""
    rows = "".join(f"    {_literal(name)}: {_literal(value)},\n" for name, value in parser_defaults().items())
    return _HEADER + rows + _FOOTER


def _literal(value: Any) -> str:
    """`value` as Python source, strings in double quotes (ruff's style)."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def write_table(path: Path = TABLE_FILE) -> None:
    """Write the table to `path` (utils/flag_defaults.py)."""
    path.write_text(table_source())


if __name__ == "__main__":
    write_table()
