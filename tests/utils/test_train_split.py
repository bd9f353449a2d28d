"""utils/train_split.py: a training split of one series (ETT, custom CSVs) or of many (M4), its windows, its
fingerprint (a one-series split keeps the fingerprint model cards recorded before splits had segments) and
the one-line error when no series holds a whole window."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from utils.errors import UserInputError
from utils.train_split import TrainSplit, array_fingerprint, require_train_split


def series(*lengths: int, channels: int = 1) -> list[np.ndarray]:
    """Series numbered by their values: series k holds 100 k + 0, 1, 2, ... (so a window shows its source)."""
    return [(100 * k + np.arange(n, dtype=np.float32))[:, None].repeat(channels, axis=1)
            for k, n in enumerate(lengths)]


def test_one_array_is_one_segment_with_the_array_fingerprint():
    data = np.arange(24, dtype=np.float32).reshape(12, 2)
    split = TrainSplit(data)
    assert len(split.segments) == 1 and split.data is data
    assert split.fingerprint == array_fingerprint(data)
    assert split.n_windows(4, 3) == 12 - 4 - 3 + 1
    assert split.lookback_windows(4, 3).shape == (6, 4, 2)


def test_windows_never_cross_from_one_series_into_the_next():
    split = TrainSplit(series(9, 4, 7))
    # L = 3, H = 2: 9 - 4 = 5 windows, none in the series of 4 values, 7 - 4 = 3.
    assert split.n_windows(3, 2) == 5 + 0 + 3
    assert split.longest == 9 and split.channels == 1
    for k, expected in enumerate((5, 0, 3)):
        windows = split.lookback_windows(3, 2, segment=k)  # [n, 3, 1]
        assert windows.shape == (expected, 3, 1)
        # Every window holds consecutive values of series k only.
        assert ((windows[:, :, 0] // 100) == k).all()
        assert (np.diff(windows[:, :, 0], axis=1) == 1).all()


def test_several_series_fingerprint_depends_on_where_the_cuts_fall():
    a, b = series(5, 6)
    joined = np.concatenate([a, b])
    assert TrainSplit([a, b]).fingerprint != TrainSplit(joined).fingerprint
    assert TrainSplit([a, b]).fingerprint != TrainSplit([b, a]).fingerprint
    assert TrainSplit([a, b]).fingerprint == TrainSplit([a.copy(), b.copy()]).fingerprint


def test_a_split_of_several_series_has_no_single_data_array():
    with pytest.raises(ValueError, match="3 separate series; read .segments"):
        _ = TrainSplit(series(5, 6, 7)).data


@pytest.mark.parametrize("bad", [[], [np.zeros(5)], [np.zeros((5, 1)), np.zeros((5, 2))]],
                         ids=["no-series", "1-D", "channels-differ"])
def test_malformed_segments_are_refused(bad):
    with pytest.raises(ValueError, match="TrainSplit"):
        TrainSplit(bad)


def test_no_series_long_enough_is_one_line_naming_the_longest():
    configs = argparse.Namespace(train_split=TrainSplit(series(10, 17, 12)))
    with pytest.raises(UserInputError) as err:
        require_train_split(configs, "Koopa", 12, 6)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("--seq_len 12 + --pred_len 6 = 18 is longer than each of the 3 training series "
                              "given to Koopa (the longest has 17 values)")
    assert require_train_split(configs, "Koopa", 11, 6).n_windows(11, 6) == 1
