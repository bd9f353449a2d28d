"""Names that become one component of an output path (`--model_id`, `--des`, a variant tag, TSLib's setting
string): checked once, so no run writes outside `./checkpoints/`, `./results/`, `./test_results/` or the
runner's `<out>/`.

A component is safe when it holds no path separator, no NUL or other control character, is not `.` or
`..`, and fits a file name (255 bytes in UTF-8, the limit of ext4, XFS, APFS and NTFS).

`check_output_folder` checks a whole output folder flag (the runner's `--out`) before anything is written: not a
file, not inside a file, and writable.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from utils.errors import UserInputError

__all__ = ["MAX_COMPONENT_BYTES", "check_output_folder", "check_path_component", "path_component_problem"]

MAX_COMPONENT_BYTES = 255
_SEPARATORS = {"/", "\\", os.sep, *([os.altsep] if os.altsep else [])}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def path_component_problem(value: str) -> str | None:
    """Why `value` cannot be one path component, or None when it can."""
    if value in ("", ".", ".."):
        return f"{value!r} names a folder, not a file"
    separator = next((s for s in sorted(_SEPARATORS) if s in value), None)
    if separator is not None:
        return f"it contains the path separator {separator!r}"
    control = _CONTROL.search(value)
    if control is not None:
        return f"it contains the control character {control.group()!r}"
    size = len(value.encode("utf-8"))
    if size > MAX_COMPONENT_BYTES:
        return f"it is {size} bytes long; a file name holds at most {MAX_COMPONENT_BYTES}"
    return None


def check_path_component(flag: str, value: str, part_of: str = "") -> str:
    """Return `value` when it can be one path component, else raise a one-line UserInputError naming
    `flag` (e.g. ``--des``); `part_of` names the longer name it ends up in (the setting string)."""
    problem = path_component_problem(value)
    if problem is not None:
        inside = f" (it becomes part of {part_of})" if part_of else ""
        raise UserInputError(f"{flag} {value!r} cannot name an output folder{inside}: {problem}; use letters, "
                             "digits, '_', '-' and '.' only")
    return value


def check_output_folder(flag: str, folder: str | Path) -> Path:
    """`folder` as a Path once it is known to be a folder this process can create or write in: an existing file
    there or in its way, or a folder it cannot write in, is a one-line UserInputError naming `flag`. The write test
    (a temporary file in the nearest existing folder, removed at once) leaves nothing behind."""
    folder = Path(folder)
    existing = folder
    while not os.path.exists(existing):
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == folder else f"lies inside {existing}, which is a file"
        raise UserInputError(f"{flag} {folder} {where}, not a folder; give a folder (it is created when missing)")
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-test-", dir=existing)
    except OSError as err:
        nearest = "" if existing == folder else f" (the nearest existing folder on the way to {folder})"
        raise UserInputError(f"{flag} {folder}: cannot write in {existing}{nearest}: {err.strerror or err}; give a "
                             "folder you can write in") from None
    os.close(handle)
    os.unlink(probe)
    return folder
