"""compare.report.skill_scores: skill = 1 − rel per cell and 1 − gmean(rel) over cells on hand-made errors, its
bootstrap interval over the cells, missing seasonal-naive scores left out with their reason (never a skill of 1),
and the section in a generated report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from compare.grid.records import RunResult
from compare.report.build import write_report
from compare.report.cell_bootstrap import cell_intervals
from compare.report.skill_scores import skill_scores, skill_section
from tests.compare.report.test_cell_statistics import DATASETS, HORIZONS, ROWS, build_comparison

SKIPPED = "--seq_len 48 is shorter than the seasonal period 96"


def run(row: str, dataset: str, h: int, mse: float, seasonal: float | None, seed: int = 1) -> RunResult:
    """A run with MAE = MSE / 2 whose seasonal naive scored `seasonal` (MAE seasonal / 4), or was skipped (None)."""
    scores = ({"mse": None, "mae": None, "period": 96, "skipped": SKIPPED} if seasonal is None else
              {"mse": seasonal, "mae": seasonal / 4, "period": 24})
    return RunResult(row=row, dataset=dataset, pred_len=h, settings=[f"{row}{dataset}{h}{seed}"], mse=mse,
                     mae=mse / 2, seed=seed, extra={"naive": [{"mse": 1.0, "mae": 1.0}], "seasonal_naive": [scores]})


# rel MSE of model A per (dataset, horizon) cell; B is seasonal naive itself (rel 1, skill 0).
RATIOS = {("D", 96): 0.5, ("D", 192): 0.8, ("E", 96): 1.25, ("E", 192): 0.9}


def hand_made() -> list[RunResult]:
    return ([run("A", d, h, r * 0.6, 0.6) for (d, h), r in RATIOS.items()]
            + [run("B", d, h, 0.6, 0.6) for (d, h) in RATIOS])


def test_skill_is_one_minus_rel_per_cell_and_one_minus_the_geometric_mean_over_cells():
    skill = skill_scores(hand_made(), ["A", "B"], ["D", "E"])
    for (d, h), r in RATIOS.items():
        assert skill.per_cell[(d, h, "mse")] == pytest.approx([1 - r, 0.0])
        # MAE: (0.6 r / 2) / (0.6 / 4) = 2 r
        assert skill.per_cell[(d, h, "mae")] == pytest.approx([1 - 2 * r, 1 - 2.0])
    assert skill.cells == list(RATIOS)
    product = 0.5 * 0.8 * 1.25 * 0.9
    assert skill.skill["mse"] == pytest.approx([1 - product ** (1 / 4), 0.0])
    assert skill.skill["mae"] == pytest.approx([1 - 2 * product ** (1 / 4), -1.0])
    # The interval resamples the cells' log rel with statistic 1 − exp(mean).
    log_rel = np.log([[r, 1.0] for r in RATIOS.values()])
    expected = cell_intervals(log_rel, lambda v, axis: 1 - np.exp(np.mean(v, axis=axis)))
    np.testing.assert_allclose(skill.interval["mse"], expected, rtol=1e-12)
    low, high = skill.interval["mse"][0]
    assert low < skill.skill["mse"][0] < high
    assert skill.interval["mse"][1] == (0.0, 0.0) and skill.missing == {}


def test_two_cells_give_the_point_without_an_interval_and_say_why():
    runs = [r for r in hand_made() if r.dataset == "D"]
    skill = skill_scores(runs, ["A", "B"], ["D"])
    assert skill.skill["mse"][0] == pytest.approx(1 - (0.5 * 0.8) ** 0.5)
    assert skill.interval == {"mse": [None, None], "mae": [None, None]}
    text = "\n".join(skill_section(skill, tall=False))
    summary = next(line for line in text.splitlines() if line.startswith("| Skill over cells"))
    assert summary.split("|")[3].strip() == f"{1 - (0.5 * 0.8) ** 0.5:.3f}"
    assert "No 95 % interval: it resamples the (dataset, horizon) cells and needs at least 3, here 2." in text


def test_missing_seasonal_naive_scores_leave_the_skill_out_with_the_reason():
    runs = hand_made() + [run("C", d, h, 0.3, None) for (d, h) in RATIOS]  # C: every seasonal naive skipped
    runs = [r for r in runs if (r.row, r.dataset, r.pred_len) != ("B", "E", 192)]  # B: no result in one cell
    skill = skill_scores(runs, ["A", "B", "C", "Z"], ["D", "E"])
    assert skill.per_cell[("D", 96, "mse")][2] is None and skill.skill["mse"][2] is None
    assert skill.missing == {"C": f"no seasonal-naive score in any cell: {SKIPPED}", "Z": "no finished run"}
    # B's missing cell leaves it out of the summary for every model, so A's skill is over the other three.
    assert skill.cells == [("D", 96), ("D", 192), ("E", 96)]
    assert skill.skill["mse"][0] == pytest.approx(1 - (0.5 * 0.8 * 1.25) ** (1 / 3))
    text = "\n".join(skill_section(skill, tall=False))
    line = next(line for line in text.splitlines() if line.startswith("| D | 96 |"))
    assert [c.strip() for c in line.split("|")[7:9]] == ["—", "—"]  # C's skills: missing, not 1 − 0 = 1.000
    assert f"C (no seasonal-naive score in any cell: {SKIPPED})" in text and "Z (no finished run)" in text
    nothing = skill_scores([run("C", "D", 96, 0.3, None)], ["C"], ["D"])
    assert skill_section(nothing, tall=False)[2] == f"No skill scores: no run has a seasonal-naive score (C: no " \
        f"seasonal-naive score in any cell: {SKIPPED})."


def test_a_model_scored_in_one_cell_is_left_out_rather_than_the_other_cells():
    runs = hand_made() + [run("C", "D", 96, 0.3, 0.6)]  # C ran in one cell of four
    skill = skill_scores(runs, ["A", "B", "C"], ["D", "E"])
    assert skill.cells == list(RATIOS)  # A and B keep their four cells
    assert skill.skill["mse"][0] == pytest.approx(1 - (0.5 * 0.8 * 1.25 * 0.9) ** (1 / 4))
    assert skill.skill["mse"][2] is None and skill.per_cell[("D", 96, "mse")][2] == pytest.approx(0.5)
    assert skill.missing == {"C": "scores in too few cells (counting it would drop more cells)"}
    text = "\n".join(skill_section(skill, tall=False))
    assert "over the 4 cells" in text and "C (scores in too few cells (counting it would drop more cells))" in text


def test_the_report_shows_the_skill_section_and_saves_its_numbers(tmp_path):
    root = build_comparison(tmp_path / "cmp", old_row="B")
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    records = [json.loads(line) for line in (root / "results.jsonl").read_text().splitlines()]
    section = text.split("## Skill vs seasonal naive")[1].split("\n## ")[0]
    a96 = next(r for r in records if r["setting"] == "long_term_forecast_ETTh1_A_pl96_0")
    line = next(line for line in section.splitlines() if line.startswith("| ETTh1 | 96 |"))
    assert line.split("|")[3].strip() == f"{1 - a96['mse'] / a96['seasonal_naive']['mse']:.3f}"
    assert line.split("|")[5].strip() == "—"  # B's records predate the naive scores
    rel = [r["mse"] / r["seasonal_naive"]["mse"] for r in records if r["model"] == "A"]
    point = 1 - np.prod(rel) ** (1 / len(rel))
    saved = json.loads((root / "cell_statistics.json").read_text())["skill_vs_seasonal_naive"]
    low, high = saved["interval"]["mse"][0]
    summary = next(line for line in section.splitlines() if line.startswith("| Skill over cells [95 % CI] |"))
    assert summary.split("|")[3].strip() == f"{point:.3f} [{low:.3f}, {high:.3f}]"
    assert saved["skill"]["mse"][0] == pytest.approx(point) and saved["skill"]["mse"][1] is None
    assert saved["rows"] == list(ROWS) and len(saved["cells"]) == len(DATASETS) * len(HORIZONS)
    assert "B (no seasonal-naive score in any cell: its record predates the naive scores" in section
    assert "9999 resamples, generator seed 0" in section
