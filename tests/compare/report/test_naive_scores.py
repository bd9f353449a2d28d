"""compare.report.naive_scores: relative scores per cell (each seed over its own run's naive error), their geometric
mean against a plain product, and missing scores named with their reason instead of read as 0."""

from __future__ import annotations

import math

import pytest

from compare.grid.records import RunResult
from compare.report.naive_scores import geometric_mean, relative_scores, run_naive


def run(row: str, dataset: str, h: int, mse: float, naive: float | None, seed: int = 1,
        seasonal: dict | None = None) -> RunResult:
    fields = {"naive": [None if naive is None else {"mse": naive, "mae": naive / 2}],
              "seasonal_naive": [seasonal]}
    return RunResult(row=row, dataset=dataset, pred_len=h, settings=[f"{row}{dataset}{h}{seed}"], mse=mse,
                     mae=mse / 4, seed=seed, extra=fields)


def test_each_seed_is_divided_by_its_own_runs_naive_error_then_averaged():
    runs = [run("A", "D", 96, 0.4, 0.8, seed=1), run("A", "D", 96, 0.3, 0.5, seed=2), run("B", "D", 96, 0.9, 0.9)]
    rel = relative_scores(runs, ["A", "B"], ["D"], "naive")
    assert rel.values[("D", 96, "mse")] == pytest.approx([(0.4 / 0.8 + 0.3 / 0.5) / 2, 1.0])
    assert rel.values[("D", 96, "mae")] == pytest.approx([(0.1 / 0.4 + 0.075 / 0.25) / 2, 0.225 / 0.45])


def test_geometric_mean_over_the_common_cells_equals_the_nth_root_of_the_product():
    ratios = {("D", 96): 0.5, ("D", 192): 0.8, ("E", 96): 1.25, ("E", 192): 0.9}
    runs = [run("A", d, h, r * 0.6, 0.6) for (d, h), r in ratios.items()]
    runs += [run("B", d, h, 0.6, 0.6) for (d, h) in ratios if (d, h) != ("E", 192)]  # B lacks one cell
    rel = relative_scores(runs, ["A", "B"], ["D", "E"], "naive")
    assert rel.common == [("D", 96), ("D", 192), ("E", 96)]
    product = 0.5 * 0.8 * 1.25
    assert rel.geomeans["mse"][0] == pytest.approx(product ** (1 / 3))
    assert rel.geomeans["mse"][1] == pytest.approx(1.0)
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0) and geometric_mean([1.0, 0.0]) is None
    assert math.isclose(geometric_mean([0.9]), 0.9)


def test_a_row_scored_in_one_cell_is_left_out_of_the_geometric_means_rather_than_the_cells():
    ratios = {("D", 96): 0.5, ("D", 192): 0.8, ("E", 96): 1.25}
    runs = [run(row, d, h, r * 0.6, 0.6) for (d, h), r in ratios.items() for row in ("A", "B")]
    runs.append(run("C", "D", 96, 0.3, 0.6))  # C ran in one cell of three
    rel = relative_scores(runs, ["A", "B", "C"], ["D", "E"], "naive")
    assert rel.common == list(ratios) and rel.rows_left_out == ["C"]
    assert rel.geomeans["mse"] == pytest.approx([(0.5 * 0.8 * 1.25) ** (1 / 3)] * 2 + [None])
    assert rel.values[("D", 96, "mse")][2] == pytest.approx(0.5)  # its cell still shows


OLD_RECORD = ("its record predates the naive scores (fill them in with `python -m compare.naive_backfill FOLDER`, or "
              "rerun the cell)")


def test_missing_and_skipped_scores_say_why():
    old = run("A", "D", 96, 0.4, None)
    assert run_naive(old, "naive") == (None, OLD_RECORD)
    skipped = run("A", "D", 96, 0.4, 0.5, seasonal={"mse": None, "mae": None, "period": 96,
                                                  "skipped": "--seq_len 48 is shorter than the seasonal period 96"})
    assert run_naive(skipped, "seasonal_naive") == (None, "--seq_len 48 is shorter than the seasonal period 96")
    rel = relative_scores([old, run("B", "D", 96, 0.5, 0.5)], ["A", "B"], ["D"], "naive")
    assert rel.values[("D", 96, "mse")] == [None, 1.0]
    assert rel.missing == {OLD_RECORD: ["A on D H=96"]}
