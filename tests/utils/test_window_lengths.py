"""utils.window_lengths.check_label_len: the one rule 0 <= label_len <= seq_len, at both ends."""

from __future__ import annotations

import pytest

from utils.errors import UserInputError
from utils.window_lengths import check_label_len


@pytest.mark.parametrize(("label_len", "seq_len"), [(0, 1), (48, 96), (96, 96)])
def test_label_len_inside_the_window_passes(label_len, seq_len):
    check_label_len(label_len, seq_len)


@pytest.mark.parametrize(("label_len", "seq_len"), [(-1, 96), (97, 96), (1, 0)])
def test_label_len_outside_the_window_is_one_line(label_len, seq_len):
    with pytest.raises(UserInputError, match=rf"^--label_len must lie in \[0, --seq_len={seq_len}\], got {label_len}: "
                       r".*use --label_len <= --seq_len$"):
        check_label_len(label_len, seq_len)
