"""torchrun with 2 CPU processes (gloo on localhost): trains, writes one set of outputs from rank 0, and
scores every test window exactly once, so its metrics on a checkpoint equal one process's on the same one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import run
from data_provider.data_factory import build_dataset
from exp.arguments import build_parser, make_setting
from exp.naive_forecast import NAIVE_METHODS, naive_test_scores
from exp.samplers import ShardSampler, shard_bounds

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n, world", [(49, 2), (5, 3), (2, 4)], ids=["49-over-2", "5-over-3", "2-over-4"])
def test_shards_cover_every_index_once_in_order(n, world):
    shards = [list(ShardSampler(n, rank, world)) for rank in range(world)]
    assert sum(shards, []) == list(range(n))
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert [shard_bounds(n, r, world)[1] - shard_bounds(n, r, world)[0] for r in range(world)] == list(map(len, shards))


def test_torchrun_two_processes_match_one_process(in_tmp, toy, results):
    argv = toy(in_tmp, "--train_epochs", "1", model="DLinear")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # --standalone: a single-node rendezvous on localhost with a free port.
    launched = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         str(REPO / "run.py"), *argv],
        cwd=in_tmp, env=env, capture_output=True, text=True, timeout=300)
    assert launched.returncode == 0, launched.stderr[-3000:]
    # Rank 0 alone logs and writes: one metrics line, one record, one result entry.
    assert launched.stdout.count("mse:") == 1
    distributed = results(in_tmp)
    assert len(distributed) == 1 and distributed[0]["world_size"] == 2
    assert (in_tmp / "result_long_term_forecast.txt").read_text().count("mse:") == 1
    setting = make_setting(build_parser().parse_args(argv), 0)
    ddp_pred = np.load(in_tmp / "results" / setting / "pred.npy")
    shutil.move(in_tmp / "results", in_tmp / "results_ddp")

    test_windows = len(build_dataset(build_parser().parse_args(argv), "test"))
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 0
    single = results(in_tmp)[-1]
    single_pred = np.load(in_tmp / "results" / setting / "pred.npy")
    assert test_windows == 49 and ddp_pred.shape == single_pred.shape == (49, 12, 3)  # none dropped or doubled
    np.testing.assert_allclose(ddp_pred, single_pred, rtol=0, atol=1e-6)
    for key in ("mse", "mae", "rmse"):
        assert distributed[0][key] == pytest.approx(single[key], rel=1e-6, abs=1e-6)
    # The naive scores of the two ranks' shards, replayed from the flags alone: the recorded fields exactly.
    recorded = {method: distributed[0][method] for method in NAIVE_METHODS}
    assert naive_test_scores(build_parser().parse_args(argv), world_size=2) == recorded


@pytest.mark.parametrize("clean", [True, False], ids=["after-a-run", "after-an-error"])
def test_shutdown_leaves_the_process_group(tmp_path, clean):
    import torch.distributed as dist

    from exp import distributed

    distributed.shutdown(clean=clean)  # no group: nothing to leave
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    assert distributed.context().enabled is False and dist.is_initialized()
    distributed.shutdown(clean=clean)
    assert not dist.is_initialized()
