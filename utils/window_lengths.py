"""The one rule on a window's decoder start: 0 <= label_len <= seq_len.

The decoder's start tokens are the last label_len input steps, so a label_len above seq_len would start the
decoder slice before the window (a negative index wraps around silently). Read by run.py's argument check
(through `layers.config_checks.check_label_len`), by the models that build their decoder input from the
encoder input, and by `data_provider.data_loader.WindowDataset` (a dataset built directly in Python).
"""

from __future__ import annotations

from utils.errors import UserInputError


def check_label_len(label_len: int, seq_len: int) -> None:
    """Raise a one-line `UserInputError` unless 0 <= `label_len` <= `seq_len`."""
    if not 0 <= label_len <= seq_len:
        raise UserInputError(f"--label_len must lie in [0, --seq_len={seq_len}], got {label_len}: "
                             "the decoder starts from the last label_len input steps, so use --label_len <= --seq_len")
