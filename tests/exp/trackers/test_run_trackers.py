"""`--logger tensorboard mlflow wandb` on a real run.py run, read back through each library's own reader
(tests/tracker_readers.py): the three trackers hold the same curves, equal to the run's results.jsonl record."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from tracker_readers import mlflow_runs, tensorboard_runs, wandb_runs

import run
from data_provider.data_factory import build_dataset
from exp.arguments import build_parser
from exp.trackers.run_trackers import RunTrackers, final_metrics

READERS = {"tensorboard": tensorboard_runs, "mlflow": mlflow_runs, "wandb": wandb_runs}
# TensorBoard stores scalars as float32.
RTOL = {"tensorboard": 1e-6, "mlflow": 1e-12, "wandb": 1e-12}


@pytest.fixture(scope="module")
def tracked_run(tmp_path_factory, toy, toy_csv, results):
    """One DLinear run of 2 epochs (cosine schedule: the second epoch's learning rate is half the first's)
    with all three trackers: (argv, its record, {tracker: {run: Tracked}})."""
    folder = tmp_path_factory.mktemp("tracked")
    toy_csv(folder / "toy.csv")
    argv = toy(folder, "--model", "DLinear", "--train_epochs", "2", "--lradj", "cosine", "--logger", "tensorboard,mlflow", "wandb",
               "--logger_dir", str(folder / "tracking"), "--checkpoints", str(folder / "checkpoints"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        assert run.main(argv) == 0
    [record] = results(folder)
    return argv, record, {name: read(folder / "tracking") for name, read in READERS.items()}


@pytest.mark.parametrize("tracker", READERS)
def test_each_tracker_holds_the_runs_epoch_curves_metrics_and_config(tracked_run, tracker):
    argv, record, tracked = tracked_run
    [(name, found)] = tracked[tracker].items()
    assert name == record["setting"] and found.group == "long_term_forecast"
    assert found.status.lower() == "finished"
    for key, field in (("train_loss", "train"), ("vali_loss", "vali"), ("test_loss", "test")):
        points = found.curves[f"epoch/{key}"]
        assert [x for x, _ in points] == [1, 2]
        np.testing.assert_allclose([v for _, v in points], [e[field] for e in record["curve"]], rtol=RTOL[tracker])
    # cosine: lr / 2 * (1 + cos(pi e / 2)) after epoch e = 1
    np.testing.assert_allclose([v for _, v in found.curves["epoch/lr"]], [1e-4, 5e-5], rtol=RTOL[tracker])
    np.testing.assert_allclose([found.summary[k] for k in ("final/mse", "final/mae")], [record["mse"], record["mae"]],
                               rtol=RTOL[tracker])
    assert str(found.config["model"]) == "DLinear" and float(found.config["learning_rate"]) == 1e-4
    assert any(image.startswith("forecast/0") for image in found.images)


def test_per_batch_losses_agree_and_average_to_the_epoch_train_loss(tracked_run):
    argv, record, tracked = tracked_run
    curves = {name: next(iter(runs.values())).curves for name, runs in tracked.items()}
    train = build_dataset(build_parser().parse_args(argv), "train")
    batch = 8
    steps = -(-len(train) // batch)
    sizes = np.array([min(batch, len(train) - i * batch) for i in range(steps)], dtype=float)
    for name, curve in curves.items():
        assert [x for x, _ in curve["batch/train_loss"]] == list(range(1, 2 * steps + 1)), name
        np.testing.assert_allclose([v for _, v in curve["batch/train_loss"]],
                                   [v for _, v in curves["mlflow"]["batch/train_loss"]], rtol=RTOL[name])
        losses = np.array([v for _, v in curve["batch/train_loss"]]).reshape(2, steps)
        np.testing.assert_allclose(losses @ sizes / sizes.sum(), [e["train"] for e in record["curve"]],
                                   rtol=max(RTOL[name], 1e-9))
        np.testing.assert_allclose([v for _, v in curve["batch/lr"]], [1e-4] * steps + [5e-5] * steps, rtol=RTOL[name])


def test_mlflow_keeps_the_forecast_pdf_run_py_wrote(tracked_run):
    _, _, tracked = tracked_run
    images = next(iter(tracked["mlflow"].values())).images
    assert "test_results/0.pdf" in images and "forecast/0.png" in images


def test_final_metrics_leave_out_the_run_flags():
    record = {"mse": 0.5, "seq_len": 96, "epochs_run": 3, "dtw": "Not calculated", "undefined": None, "ok": True}
    assert final_metrics(record, {"seq_len": 96}) == {"final/mse": 0.5, "final/epochs_run": 3.0}


class Broken:
    def scalars(self, values, axis, x):
        raise OSError("No space left on device")

    def close(self, status):
        self.closed = status


def test_a_tracker_that_fails_while_training_is_dropped_with_one_warning(caplog):
    trackers = RunTrackers({"mlflow": Broken()})
    with caplog.at_level(logging.WARNING):
        trackers.log_batch(1, 0.5, 1e-4)
        trackers.log_batch(2, 0.4, 1e-4)
    assert not trackers.enabled
    assert [r.getMessage() for r in caplog.records] == [
        "--logger mlflow stopped logging (OSError: No space left on device); the run goes on without it"]


def test_the_wandb_environment_is_restored_after_the_run(tracked_run):
    import os

    # the run pointed W&B's folders into its tracking/wandb/ while it ran
    assert not any(os.environ.get(v, "").startswith(str(Path(tracked_run[0][tracked_run[0].index("--logger_dir") + 1])))
                   for v in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR"))
