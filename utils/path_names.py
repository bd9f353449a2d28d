"""Names that become one component of an output path (`--model_id`, `--des`, a variant tag, TSLib's setting
string): checked once, so no run writes outside `./checkpoints/`, `./results/`, `./test_results/` or the
runner's `<out>/`.

A component is safe when it holds no path separator, no NUL or other control character, is not `.` or
`..`, and fits a file name (255 bytes in UTF-8, the limit of ext4, XFS, APFS and NTFS).
"""

from __future__ import annotations

import os
import re

from utils.errors import UserInputError

__all__ = ["MAX_COMPONENT_BYTES", "check_path_component", "path_component_problem"]

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
