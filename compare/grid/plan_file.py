"""The comparison's plan as a YAML file a person edits: `python -m compare --plan plan.yaml [flags]`.

The file's keys are the runner's own flags, spelled with underscores (`data`, `models`, `pred_lens`, `seeds`,
`epochs`, `out`, `jobs`, ...: every flag of `python -m compare --help` except --plan), plus two structured forms
of the flags that carry other flags:

    task: long_term_forecast
    data: [ETTh1]
    models: [CAPS, DLinear, PatchTST]
    pred_lens: [96, 192]
    seeds: [2021, 2022]
    epochs: 3
    variants:                      # --variant NAME=BASE:FLAGS
      LinAttn+RoPE (official):
        base: CAPS
        flags: {caps_paths: none, learning_rate: 0.0006}
    overrides:                     # --extra: run.py flags for every run
      d_model: 16
    logger: [tensorboard]

A list gives a flag several values; `true` turns a switch on (`false` leaves it off); run.py flags in `flags`
and `overrides` take the same forms. Your own data files (`--data_path`, `--name`, `--data_flags`;
`compare.grid.own_data`) are a `datasets` block, a list of entries or a mapping by name, whose keys besides `name` and
`data_path` are the file's data flags:

    datasets:
      - {name: ILI, data_path: data/national_illness.csv}
      - {name: Sales, data_path: data/sales.csv, target: units}

The file becomes flags placed before the command line's own, so a flag on the command line overrides the file's
(and a `--variant` there adds a row). The file is read as UTF-8 text with `yaml.SafeLoader` only, which here
also refuses a key given twice in one mapping (YAML would keep the last silently). An unknown key is a one-line
error with the closest key.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from utils.cli_parser import did_you_mean
from utils.errors import UserInputError

__all__ = ["expand_plan_file", "plan_flags"]

#: what a person may write for a key, and the key meant
SYNONYMS = {"dataset": "data", "horizons": "pred_lens", "horizon": "pred_lens",
            "seed": "seeds", "model": "models", "variant": "variants", "extra": "overrides",
            "mask_rate": "mask_rates", "block": "blocks", "loggers": "logger"}
#: the runner's flags that only the structured keys write (`variants`, `overrides`, `datasets`)
STRUCTURED = {"variants": "variant", "overrides": "extra", "datasets": "data_flags"}
#: the keys of a `datasets` entry that are not data flags
DATASET_KEYS = ("name", "data_path")


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The runner's flags by key (dest), --plan and --help aside."""
    return {a.dest: a for a in parser._actions
            if a.option_strings and a.dest not in ("plan", "help", "scripts") and a.dest not in STRUCTURED.values()}


def _unknown(where: str, key: str, known: list[str]) -> UserInputError:
    hint = f"; did you mean {SYNONYMS[key]}?" if SYNONYMS.get(key) in known else did_you_mean(key, known)
    return UserInputError(f"{where}: unknown key {key!r}{hint or '; valid keys: ' + ', '.join(known)}")


def _words(value: Any, where: str) -> list[str]:
    """The command-line words of one value: a list's items, a scalar's text."""
    if value is None or isinstance(value, Mapping):
        raise UserInputError(f"{where}: give a value, or a list of values")
    items = value if isinstance(value, list) else [value]
    if any(item is None or isinstance(item, (list, Mapping)) for item in items):
        raise UserInputError(f"{where}: a list of plain values is expected, got {value!r}")
    return [str(item) for item in items]


def run_flag_words(flags: Any, where: str) -> list[str]:
    """run.py flags as a mapping ({flag: value, switch: true}) or a string ("--flag value") -> words."""
    if flags is None:
        return []
    if isinstance(flags, str):
        try:
            return shlex.split(flags)
        except ValueError as err:
            raise UserInputError(f"{where}: cannot split {flags!r} ({err})") from None
    if not isinstance(flags, Mapping):
        raise UserInputError(f"{where}: give run.py flags as a mapping (flag: value) or a string ('--flag value')")
    words: list[str] = []
    for flag, value in flags.items():
        name = f"--{str(flag).removeprefix('--')}"
        if value is True:
            words.append(name)
        elif value is not False:
            words += [name, *_words(value, f"{where}.{flag}")]
    return words


def _variant(name: str, spec: Any, where: str) -> str:
    if not isinstance(spec, Mapping) or "base" not in spec:
        raise UserInputError(f"{where}.{name}: give the variant's base row and flags, e.g. "
                             "{base: CAPS, flags: {caps_paths: none}}")
    for key in spec:
        if key not in ("base", "flags"):
            raise _unknown(f"{where}.{name}", str(key), ["base", "flags"])
    return f"{name}={spec['base']}:{shlex.join(run_flag_words(spec.get('flags'), f'{where}.{name}.flags'))}"


def _dataset_entries(value: Any, where: str) -> list[Mapping]:
    """The entries of a `datasets` block: a list of {name, data_path, ...} or a mapping NAME: {data_path, ...}."""
    if isinstance(value, Mapping):
        value = [{"name": name, **spec} if isinstance(spec, Mapping) else spec for name, spec in value.items()]
    if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
        raise UserInputError(f"{where}: give a list of {{name: NAME, data_path: FILE, ...}} (or a mapping "
                             "NAME: {data_path: FILE, ...})")
    for entry in value:
        missing = [key for key in DATASET_KEYS if key not in entry]
        if missing:
            raise UserInputError(f"{where}: the entry {dict(entry)!r} lacks {' and '.join(missing)}")
    return value


def _datasets(value: Any, where: str) -> list[str]:
    """The runner's words of a `datasets` block: --data_path, --name and one --data_flags per entry with flags."""
    entries = _dataset_entries(value, where)
    words = ["--data_path", *[str(e["data_path"]) for e in entries], "--name", *[str(e["name"]) for e in entries]]
    for entry in entries:
        flags = {k: v for k, v in entry.items() if k not in DATASET_KEYS}
        if flags:
            name = entry["name"]
            words += ["--data_flags", f"{name}={shlex.join(run_flag_words(flags, f'{where}.{name}'))}"]
    return words


def plan_flags(plan: Mapping[str, Any], parser: argparse.ArgumentParser, source: str = "the plan") -> list[str]:
    """The runner's command-line words equivalent to the plan mapping `plan` (keys in file order)."""
    options = _options(parser)
    known = sorted([*options, *STRUCTURED])
    words: list[str] = []
    for key, value in plan.items():
        key = str(key).replace("-", "_")
        if key == "variants":
            if not isinstance(value, Mapping):
                raise UserInputError(f"{source}: variants is a mapping NAME: {{base: ..., flags: ...}}")
            words += [w for name, spec in value.items() for w in ("--variant", _variant(str(name), spec, f"{source}: variants"))]
        elif key == "overrides":
            words.append(f"--extra={shlex.join(run_flag_words(value, f'{source}: overrides'))}")
        elif key == "datasets":
            words += _datasets(value, f"{source}: datasets")
        elif key not in options:
            raise _unknown(source, key, known)
        else:
            action, flag = options[key], options[key].option_strings[0]
            if action.nargs == 0:
                if not isinstance(value, bool):
                    raise UserInputError(f"{source}: {key} is a switch: write true or false")
                words += [flag] if value else []
            elif action.nargs in ("+", "*"):
                words += [flag, *_words(value, f"{source}: {key}")]
            else:
                one = _words(value, f"{source}: {key}")
                if len(one) != 1:
                    raise UserInputError(f"{source}: {key} takes one value, got {value!r}")
                words += [flag, one[0]]
    return words


class _DuplicateKey(yaml.constructor.ConstructorError):
    """A key given twice in one mapping of the plan file."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a key given twice in one mapping instead of keeping the last silently."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                continue  # an unhashable key: SafeLoader's own error names it
            if key in seen:
                raise _DuplicateKey(None, None, f"the key {key!r} is given twice (first on line {seen[key] + 1})",
                                    key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def _text(file: Path, path: str) -> str:
    """The plan file's text; one line naming the first byte that is not UTF-8."""
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise UserInputError(f"--plan {path}: not UTF-8 text (byte 0x{data[err.start]:02x} on line {line}); save the "
                             "file as UTF-8") from None


def _read(path: str) -> dict[str, Any]:
    file = Path(path)
    if not file.is_file():
        raise UserInputError(f"--plan {path}: no such file")
    text = _text(file, path)
    try:
        plan = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader that also refuses repeated keys
    except _DuplicateKey as err:
        raise UserInputError(f"--plan {path}: line {err.problem_mark.line + 1}: {err.problem}; YAML would keep the "
                             "last silently: keep one") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise UserInputError(f"--plan {path}: not valid YAML{where}: {getattr(err, 'problem', None) or err}") from None
    if not isinstance(plan, dict):
        raise UserInputError(f"--plan {path}: the file must be a mapping of keys (data: [ETTh1], models: [...], ...)")
    return plan


def expand_plan_file(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], dict | None]:
    """argv with `--plan FILE` replaced by the file's flags (placed first, so the command line's own override
    them), and the record of the plan for compare.json ({"path", "plan"}; None without --plan)."""
    found = [i for i, word in enumerate(argv) if word == "--plan" or word.startswith("--plan=")]
    if not found:
        return argv, None
    if len(found) > 1:
        raise UserInputError("--plan is given twice: merge the files into one")
    i = found[0]
    if argv[i] == "--plan":
        if i + 1 >= len(argv):
            raise UserInputError("--plan needs the plan file: --plan plan.yaml")
        path, rest = argv[i + 1], argv[:i] + argv[i + 2 :]
    else:
        path, rest = argv[i].split("=", 1)[1], argv[:i] + argv[i + 1 :]
    plan = _read(path)
    return plan_flags(plan, parser, f"--plan {path}") + rest, {"path": path, "plan": plan}
