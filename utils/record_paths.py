"""Paths as records write them: relative to the repository, never an absolute path of the machine that ran.

Runs are given absolute paths (the data root a runner resolved, a checkpoint's folder); the files kept as records
(`compare.json`, the runner's `compare_runs.jsonl` and `results.jsonl` copies, `table.md`, `tuning.json`,
`explain.json`) hold them as `record_path` shows them:

- a relative path as given;
- an absolute path inside the repository relative to it (`/x/caps-tslib/dataset/ETT-small/` -> `dataset/ETT-small/`);
- a path inside an installed package's folder as `<site-packages>/...` (where Python is installed says nothing
  about the run);
- any other absolute path as `../` plus its path below the nearest folder it shares with the repository: the
  layout the project documents for `../shared` beside a checkout (`/work/shared/datasets` -> `../shared/datasets`
  from any checkout under `/work`).

`absolute_paths` finds what is left to rewrite in a text; `relative_text` and `relative_record` rewrite a text or a
JSON value with `record_path`. A path read back from a record is taken relative to the repository
(`from_record`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["REPO_ROOT", "SITE_PACKAGES", "absolute_paths", "from_record", "record_path", "relative_record",
           "relative_text"]

#: The checkout this code runs from (installed as a package: the folder holding the packages).
REPO_ROOT = Path(__file__).resolve().parents[1]
SITE_PACKAGES = "<site-packages>"
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")

# An absolute POSIX path of at least two components, not the tail of a longer word, a URL ("https://x/y"), a
# relative path ("a/b", "../a/b"), a shell expansion ("$(cmd)/a/b", "${X}/a/b") or "<site-packages>/a/b".
_NAME = r"[\w.+@%~-]+"
_ABSOLUTE = re.compile(rf"(?<![\w./~:<>)}}$-])/{_NAME}(?:/{_NAME})+/?")


def record_path(path: str, repo: Path = REPO_ROOT) -> str:
    """`path` as a record holds it (module docstring); a trailing '/' is kept (TSLib's `--root_path ./x/`)."""
    if not PurePosixPath(path).is_absolute():
        return path
    slash = "/" if path.endswith("/") and path != "/" else ""
    target = PurePosixPath(os.path.normpath(path))
    root = PurePosixPath(os.path.normpath(os.path.abspath(repo)))
    # As written, then with symbolic links followed (a runner resolves its --out; the repository may be a link).
    for inside, folder in ((target, root), (PurePosixPath(os.path.realpath(target)), PurePosixPath(os.path.realpath(root)))):
        if inside == folder:
            return "." + slash
        if folder in inside.parents:
            return inside.relative_to(folder).as_posix() + slash
    for k, part in enumerate(target.parts):
        if part in _PACKAGE_FOLDERS:
            return PurePosixPath(SITE_PACKAGES, *target.parts[k + 1:]).as_posix() + slash
    common = PurePosixPath(os.path.commonpath([target, root]))
    return (PurePosixPath("..") / target.relative_to(common)).as_posix() + slash


def absolute_paths(text: str) -> list[str]:
    """The absolute paths written in `text` (see `_ABSOLUTE` for what counts as one)."""
    return _ABSOLUTE.findall(text)


def relative_text(text: str, repo: Path = REPO_ROOT, show: Callable[[str], str] | None = None) -> str:
    """`text` with every absolute path in it replaced by its `record_path` (or by `show(path)`)."""
    show = show or (lambda path: record_path(path, repo))
    return _ABSOLUTE.sub(lambda found: show(found.group(0)), text)


def relative_record(value: Any, repo: Path = REPO_ROOT) -> Any:
    """A JSON value (dicts, lists, strings, numbers) with every string passed through `relative_text`; numbers
    and keys are returned unchanged."""
    if isinstance(value, str):
        return relative_text(value, repo)
    if isinstance(value, dict):
        return {key: relative_record(item, repo) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_record(item, repo) for item in value]
    return value


def from_record(path: str | os.PathLike, repo: Path = REPO_ROOT) -> Path:
    """A path read from a record: relative ones are relative to the repository, absolute ones as they are."""
    return Path(repo, path)
