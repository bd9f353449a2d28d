"""compare/run/eta.py: the grid's ETA from each run's probed step time and, while it trains, its own estimate."""

from __future__ import annotations

import pytest

from compare.grid.plan import plan_runs, rows_from_args
from compare.grid.run_args import parse_run_args
from compare.run.eta import PROCESS_START_SECONDS, RunTimes, logged_estimate
from compare.run.runner import build_parser
from exp.cost_probe import probe_run
from exp.progress import predicted_seconds
from tests.compare.run.test_runner import TOY, write_toy_csv


@pytest.fixture
def toy_plan(tmp_path):
    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    args = build_parser().parse_args(["--data", "toy", "--models", "DLinear", "iTransformer", "--pred_lens", "12",
                                      "--epochs", "2", "--num_workers", "0", "--root", str(tmp_path / "data"),
                                      "--out", str(tmp_path / "out")])
    args.extra_flags = []
    return plan_runs(args, rows_from_args(args, TOY), TOY)


def test_the_probe_reads_the_runs_shape_and_times_its_steps(toy_plan):
    cost = probe_run(parse_run_args(toy_plan[0].argv), threads=1)
    # 300 rows: 210 train rows -> 175 windows of L=24, H=12 -> 11 batches of 16; val 19 + test 49 windows
    assert (cost.shape.steps_per_epoch, cost.shape.eval_batches, cost.shape.test_batches, cost.shape.epochs) == \
        (11, 2 + 4, 4, 2)
    assert cost.step_seconds > 0 and cost.predicted_seconds() == pytest.approx(
        cost.setup_seconds + predicted_seconds(cost.step_seconds, cost.shape))


def test_a_runs_own_estimate_replaces_its_prediction(toy_plan, tmp_path):
    times = RunTimes(parallel=1, runs_dir=tmp_path / "runs")
    first, second = toy_plan
    times.predicted = {id(first): 100.0, id(second): 40.0}
    assert times.seconds_left(toy_plan, 0.0, []) == 140.0
    log = tmp_path / "runs" / "logs" / f"{first.settings[0]}.log"
    log.parent.mkdir(parents=True)
    log.write_text("an earlier attempt: this run: about 16m40s (1000 s)\n")
    times.started(first)
    now = times._started[id(first)][0]
    # the earlier attempt's line is not this attempt's estimate
    assert times.seconds_left(toy_plan, now + 10.0, []) == pytest.approx(90.0 + 40.0)
    with log.open("a") as f:
        f.write("estimate: ...; this run: about 0m30s (30 s) at 2 epochs\n")
    assert times.seconds_left(toy_plan, now + 10.0, []) == pytest.approx(30.0 + PROCESS_START_SECONDS - 10.0 + 40.0)
    assert times.seconds_left(toy_plan, now + 10.0, [second]) == pytest.approx(30.0 + PROCESS_START_SECONDS - 10.0)
    times.ended(first)
    assert times.seconds_left(toy_plan, now + 10.0, []) == 40.0


def test_finished_runs_scale_the_waiting_runs_predictions(toy_plan, tmp_path):
    times = RunTimes(parallel=2, runs_dir=tmp_path / "runs")
    first, second = toy_plan
    fixed = PROCESS_START_SECONDS
    times.predicted = {id(first): fixed + 100.0, id(second): fixed + 40.0}
    times.started(first)
    times.ended(first, fixed + 50.0)  # it trained at twice the probed speed
    assert times.seconds_left(toy_plan, 0.0, []) == pytest.approx((fixed + 40.0) * 0.5 / 2)
    times.ended(second, fixed + 4000.0)
    assert times._scale() == 5.0  # bounded


def test_tiny_finished_runs_do_not_scale_the_predictions(toy_plan, tmp_path):
    times = RunTimes(parallel=1, runs_dir=tmp_path / "runs")
    first, second = toy_plan
    times.predicted = {id(first): PROCESS_START_SECONDS + 2.0, id(second): 300.0}
    times.ended(first, PROCESS_START_SECONDS + 6.0)  # 3x, but 2 s of predicted training say little
    assert times.seconds_left(toy_plan, 0.0, []) == 300.0


def test_logged_estimate_takes_the_last_line_after_the_offset(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("this run: about 1m00s (60 s)\nx\ntime: epoch 1 took 0m20s; this run: about 0m50s (50 s)\n")
    assert logged_estimate(log, 0) == 50.0
    assert logged_estimate(log, log.stat().st_size) is None
    assert logged_estimate(tmp_path / "missing.log", 0) is None


def test_estimate_prints_each_runs_time_and_the_grids_and_writes_nothing(tmp_path):
    from tests.compare.run.test_runner import base_argv, invoke

    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    code, log = invoke([*base_argv(tmp_path, tmp_path / "out", "DLinear", "iTransformer"), "--estimate"])
    assert code == 0
    assert "  probe DLinear | toy | H=12: " in log and "  probe iTransformer | toy | H=12: " in log
    assert "estimate: the 2 runs take about " in log and "[1/2]" not in log
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--dry-run", "--no-probe"])
def test_estimate_with_a_flag_it_would_ignore_is_a_usage_error(tmp_path, capsys, flag):
    from tests.compare.run.test_runner import base_argv, invoke

    code, _ = invoke([*base_argv(tmp_path, tmp_path / "out", "DLinear"), "--estimate", flag])
    assert code == 2 and f"drop {flag}" in capsys.readouterr().err
