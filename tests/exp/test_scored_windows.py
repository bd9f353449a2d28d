"""exp/scored_windows.py: the test windows a run scores, rebuilt from its arguments: the whole test split in file
order (every k-th window under --test_every k), each rank a contiguous shard, --batch_size a batch; the scored
channels and the original units under --inverse."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from data_provider.data_factory import build_dataset
from exp.arguments import build_parser
from exp.scored_windows import (
    inverts,
    scored_from,
    scored_test_windows,
    shard_loader,
    to_original_units,
    windows_every,
)
from tests.exp.conftest import toy_argv, write_toy_csv


@pytest.fixture
def args(tmp_path):
    write_toy_csv(tmp_path / "toy.csv")
    return build_parser().parse_args(toy_argv(tmp_path))


def window_inputs(loader) -> list[torch.Tensor]:
    return [batch[0] for batch in loader]


def test_the_test_windows_are_the_test_split(args):
    windows, split = scored_test_windows(args), build_dataset(args, "test")
    assert len(windows) == len(split) == 49
    np.testing.assert_array_equal(windows[48][1], split[48][1])


@pytest.mark.parametrize("every", [1, 5, 48, 49, 50])
def test_every_kth_window(args, every):
    args.test_every = every
    split, windows = build_dataset(args, "test"), scored_test_windows(args)
    assert len(windows) == len(windows_every(split, every)) == len(range(0, len(split), every))
    for k, start in enumerate(range(0, len(split), every)):
        np.testing.assert_array_equal(windows[k][0], split[start][0])


@pytest.mark.parametrize("world_size", [1, 2, 3, 50])
def test_the_shards_in_rank_order_are_every_window_in_file_order(args, world_size):
    windows = scored_test_windows(args)
    whole = torch.cat(window_inputs(shard_loader(args, windows, "test")))  # [N, L, C]
    shards = [window_inputs(shard_loader(args, windows, "test", rank, world_size)) for rank in range(world_size)]
    assert all(batch.shape[0] <= args.batch_size for shard in shards for batch in shard)
    joined = torch.cat([batch for shard in shards for batch in shard])
    torch.testing.assert_close(joined, whole, rtol=0, atol=0)
    torch.testing.assert_close(whole, torch.stack([torch.as_tensor(windows[i][0]) for i in range(len(windows))]),
                               rtol=0, atol=0)


def test_scored_channels_follow_features(args):
    assert scored_from(args) == 0
    args.features = "MS"
    assert scored_from(args) == -1


def test_original_units_are_the_csv_values(args, tmp_path):
    windows = scored_test_windows(args)
    assert not inverts(windows, args)
    args.inverse = True
    assert inverts(windows, args)
    csv = pd.read_csv(tmp_path / "toy.csv").drop(columns="date").to_numpy()
    n = len(csv)
    first_test_row = n - int(0.2 * n) - args.seq_len
    x = windows[0][0][None]  # [1, L, C]
    np.testing.assert_allclose(to_original_units(windows, x)[0], csv[first_test_row:first_test_row + args.seq_len],
                               rtol=1e-6, atol=1e-6)
