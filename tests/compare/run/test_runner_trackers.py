"""`python -m compare --logger tensorboard mlflow wandb` on a real 2-run comparison (two run.py processes at
once), read back through each library's own reader: one run per cell, grouped by the grid, each with the curves
of its results.jsonl record."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from tracker_readers import mlflow_runs, tensorboard_runs, wandb_runs

from tests.compare.run.test_runner import base_argv, invoke, write_toy_csv

READERS = {"tensorboard": tensorboard_runs, "mlflow": mlflow_runs, "wandb": wandb_runs}
RTOL = {"tensorboard": 1e-6, "mlflow": 1e-12, "wandb": 1e-12}


@pytest.fixture(scope="module")
def tracked_grid(tmp_path_factory):
    root = tmp_path_factory.mktemp("tracked_grid")
    write_toy_csv(root / "data" / "toy" / "toy.csv")
    out = root / "grid_a"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_NUM_THREADS", "1")
        code, log = invoke([*base_argv(root, out, "DLinear", "iTransformer"), "--epochs", "2", "--jobs", "2",
                            "--no-report", "--logger", "tensorboard,mlflow,wandb"])
    assert code == 0, log
    records = [json.loads(line) for line in (out / "runs" / "results.jsonl").read_text().splitlines()]
    tracking = out / "runs" / "tracking"
    return records, {name: read(tracking) for name, read in READERS.items()}


@pytest.mark.slow
@pytest.mark.parametrize("tracker", READERS)
def test_each_cell_is_one_run_of_the_grids_group_with_its_curves(tracked_grid, tracker):
    records, tracked = tracked_grid
    runs = tracked[tracker]
    assert sorted(runs) == sorted(r["setting"] for r in records)
    for record in records:
        found = runs[record["setting"]]
        assert found.group == "grid_a" and found.status.lower() == "finished"
        for key, field in (("train_loss", "train"), ("vali_loss", "vali"), ("test_loss", "test")):
            np.testing.assert_allclose([v for _, v in found.curves[f"epoch/{key}"]],
                                       [e[field] for e in record["curve"]], rtol=RTOL[tracker])
        np.testing.assert_allclose(found.summary["final/mse"], record["mse"], rtol=RTOL[tracker])
        assert len(found.curves["batch/train_loss"]) == len(found.curves["batch/lr"]) > 2
        assert str(found.config["model"]) == record["model"]


@pytest.mark.slow
def test_the_three_trackers_hold_the_same_batch_curves(tracked_grid):
    _, tracked = tracked_grid
    for setting, run in tracked["mlflow"].items():
        for name in ("tensorboard", "wandb"):
            other = tracked[name][setting].curves["batch/train_loss"]
            assert [x for x, _ in other] == [x for x, _ in run.curves["batch/train_loss"]]
            np.testing.assert_allclose([v for _, v in other], [v for _, v in run.curves["batch/train_loss"]],
                                       rtol=RTOL[name])


def test_mlflow_under_ray_is_refused_in_one_line(tmp_path, capsys):
    code, _ = invoke([*base_argv(tmp_path, tmp_path / "out", "DLinear"), "--executor", "ray", "--logger", "mlflow"])
    err = capsys.readouterr().err
    assert code == 2 and "--logger mlflow writes one SQLite store" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_grid_is_named_in_every_run_command(tmp_path):
    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    code, log = invoke([*base_argv(tmp_path, tmp_path / "my_grid", "DLinear"), "--dry-run", "--logger", "wandb"])
    assert code == 0 and "--logger wandb --logger_group my_grid" in log
    assert os.listdir(tmp_path) == ["data"]
