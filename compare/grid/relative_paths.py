"""`python -m compare.relative_paths FOLDER...`: rewrite the absolute paths an existing results folder holds
(written before records kept paths relative, `utils.record_paths`) as repository-relative ones.

The records were written in some checkout of the machine that ran them (`/work/main`, say): a path inside it
becomes relative to it (`/work/main/dataset/ETT-small/` -> `dataset/ETT-small/`), any other one as
`utils.record_paths.record_path` shows it from there (`/work/shared/datasets` -> `../shared/datasets`; a path into
an installed package as `<site-packages>/...`, also one already made relative: `../../opt/x/site-packages/y`).
That checkout is found from the paths themselves (`find_checkouts`: the folder above a `dataset/`, `scripts/...`
or a source file of this repository), or given with `--checkout`. A runner command's `--out` names the folder
itself, as the report shows it (`compare.grid.provenance.shown_command`).

Only the paths change: each file is rewritten in place as text, and a JSON or JSON-lines file must parse after
it with every key, number and list length as before (`same_but_strings`), else nothing of it is written.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.record_paths import REPO_ROOT, SITE_PACKAGES, absolute_paths, record_path, relative_text
from utils.tools import atomic_write_text

__all__ = ["find_checkouts", "main", "relative_file_text", "rewrite_folder", "same_but_strings"]

logger = logging.getLogger("compare")

#: Top-level folders of a checkout whose files this repository also has (a path into one names its checkout).
CODE_FOLDERS = ("benchmarks", "compare", "data_provider", "exp", "explain", "layers", "models", "predict", "scripts",
                "utils")
#: Top-level folders of a checkout whose contents are not in git: TSLib's data and output folders.
RUN_FOLDERS = ("dataset", "checkpoints", "results", "test_results")
_OUT = re.compile(r"(--out[= ])(/[^\s'\"`]+)")
# A path into an installed package that an earlier rewrite (or pytest) made relative: `../root/.pyenv/.../site-packages/x`.
_RELATIVE_PACKAGES = re.compile(r"(?<![\w./~:<>)}$-])(?:\.\./)+[^\s'\"`]*?/(?:site|dist)-packages/")


def find_checkouts(paths: Iterable[str], repo: Path = REPO_ROOT) -> list[str]:
    """The checkouts `paths` were written in, most named first: the folder above a `RUN_FOLDERS` folder, or above
    a `CODE_FOLDERS` path that exists in `repo` too (`/x/main/exp/train_step.py` -> `/x/main`)."""
    found: Counter[str] = Counter()
    for path in paths:
        parts = PurePosixPath(path).parts
        for k in range(2, len(parts)):
            rest = parts[k:]
            if rest[0] in RUN_FOLDERS or (rest[0] in CODE_FOLDERS and repo.joinpath(*rest).exists()):
                found[PurePosixPath(*parts[:k]).as_posix()] += 1
                break
    return [checkout for checkout, _ in found.most_common()]


def _shown(path: str, checkouts: Sequence[str], mapping: dict[str, str]) -> str:
    """`path` relative to the checkout holding it, else to the first one (`record_path`); a `mapping` prefix first."""
    for prefix, shown in mapping.items():
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return shown + path[len(prefix.rstrip("/")):]
    holding = [c for c in checkouts if path == c or path.startswith(c + "/")]
    return record_path(path, Path(max(holding, key=len) if holding else checkouts[0]))


def relative_file_text(text: str, folder: str, checkouts: Sequence[str], mapping: dict[str, str] | None = None) -> str:
    """`text` with a runner's `--out ABSOLUTE` naming `folder` and every other absolute path shown by `_shown`."""
    text = _OUT.sub(lambda m: m.group(1) + folder, text)
    text = _RELATIVE_PACKAGES.sub(SITE_PACKAGES + "/", text)
    return relative_text(text, show=lambda path: _shown(path, checkouts, mapping or {}))


def same_but_strings(old: Any, new: Any) -> bool:
    """True when two JSON values differ at most in strings: same keys in the same order, same list lengths, and
    every number, bool and null equal."""
    if isinstance(old, dict):
        return (isinstance(new, dict) and list(old) == list(new)
                and all(same_but_strings(old[key], new[key]) for key in old))
    if isinstance(old, list):
        return isinstance(new, list) and len(old) == len(new) and all(map(same_but_strings, old, new))
    if isinstance(old, str):
        return isinstance(new, str)
    return type(old) is type(new) and old == new


def _check_json(path: Path, old: str, new: str) -> None:
    """UserInputError unless the rewritten JSON / JSON-lines text parses to the old values but for strings."""
    if path.suffix == ".json":
        pairs = [(old, new)]
    elif path.suffix == ".jsonl":
        old_lines, new_lines = old.splitlines(), new.splitlines()
        if len(old_lines) != len(new_lines):
            raise UserInputError(f"{path}: rewriting changed its number of lines; nothing written")
        pairs = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a.strip()]
    else:
        return
    for before, after in pairs:
        try:
            same = same_but_strings(json.loads(before), json.loads(after))
        except ValueError as err:
            raise UserInputError(f"{path} does not parse after rewriting ({err}); nothing written") from None
        if not same:
            raise UserInputError(f"{path}: rewriting changed more than paths; nothing written")


def _text_files(folder: Path) -> list[tuple[Path, str]]:
    """(path, text) of every UTF-8 text file under `folder`, the git-ignored `runs/` left out."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "runs" not in p.relative_to(folder).parts):
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            found.append((path, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return found


def rewrite_folder(folder: Path, checkouts: Sequence[str] = (), mapping: dict[str, str] | None = None,
                   repo: Path = REPO_ROOT, dry_run: bool = False) -> list[Path]:
    """Rewrite the absolute paths of every text file under `folder` (module docstring); returns the files changed
    (with `dry_run`: that would change). checkouts: where the records were written (default: `find_checkouts`)."""
    if not folder.is_dir():
        raise UserInputError(f"{folder} is not a folder; pass a results folder such as docs/results/ETTh_cpu")
    files = _text_files(folder)
    checkouts = list(checkouts) or find_checkouts((p for _, t in files for p in absolute_paths(t)), repo)
    shown_folder = record_path(str(folder.resolve()), repo)
    changed = []
    for path, text in files:
        new = relative_file_text(text, shown_folder, checkouts or [str(repo)], mapping)
        if new == text:
            continue
        _check_json(path, text, new)
        if not dry_run:
            atomic_write_text(path, new)
        changed.append(path)
    return changed


def _mapping(values: Sequence[str]) -> dict[str, str]:
    pairs = [value.partition("=") for value in values]
    bad = [value for value, (prefix, eq, _) in zip(values, pairs, strict=True) if not eq or not prefix.startswith("/")]
    if bad:
        raise UserInputError(f"--map {bad[0]!r} must look like /ABSOLUTE/PREFIX=SHOWN, e.g. /tmp/site=<site-packages>")
    return {prefix: shown for prefix, _, shown in pairs}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compare.relative_paths",
                                description="Rewrite the absolute paths of results folders as repository-relative "
                                            "ones (numbers untouched; JSON checked to parse the same).")
    p.add_argument("folders", nargs="+", type=Path, help="results folders, e.g. docs/results/ETTh_cpu")
    p.add_argument("--checkout", action="append", default=[],
                   help="absolute path of the checkout that wrote the records (default: found from the paths)")
    p.add_argument("--map", action="append", default=[], metavar="PREFIX=SHOWN",
                   help="show paths under PREFIX as SHOWN (e.g. /tmp/site=<site-packages> for a pip --target)")
    p.add_argument("--dry-run", action="store_true", help="list the files that would change; write nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    """Rewrite the absolute paths of each folder; 2 with one `error: ...` line on bad input."""
    log_to_stdout()
    args = build_parser().parse_args(argv)
    return run_command(lambda: _rewrite_folders(args))


def _rewrite_folders(args: argparse.Namespace) -> None:
    """main's work: each folder rewritten (or with --dry-run, listed), one log line a folder."""
    mapping = _mapping(args.map)
    for folder in args.folders:
        changed = rewrite_folder(folder, args.checkout, mapping, dry_run=args.dry_run)
        left = sum(len(absolute_paths(t)) for _, t in _text_files(folder)) if not args.dry_run else None
        logger.info("%s: %d file(s) %s%s", folder, len(changed), "would change" if args.dry_run else "rewritten",
                    "" if left is None else f", {left} absolute path(s) left")

