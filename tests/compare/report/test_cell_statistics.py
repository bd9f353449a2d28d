"""compare.report.cell_statistics: ranks, best-in counts and win rates against plain loops, the win rates' bootstrap
intervals over the per-cell win shares, the Friedman test against SciPy and the textbook formula, the Nemenyi
p-values and CD against Demšar's, and the report's diagram."""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread
from scipy import stats

from compare.report.build import write_report
from compare.report.cell_bootstrap import cell_intervals
from compare.report.cell_statistics import (
    CD_FILE,
    average_ranks,
    best_counts,
    cell_statistics,
    critical_difference,
    win_rates,
    win_shares,
)

# [N cells, k models]; the second cell ties models 0 and 2, the fourth ties all three of 1..3.
MATRIX = np.array([[0.40, 0.30, 0.50, 0.45],
                   [0.20, 0.25, 0.20, 0.30],
                   [0.90, 0.70, 0.80, 0.60],
                   [0.10, 0.20, 0.20, 0.20],
                   [0.33, 0.31, 0.35, 0.32]])


def slow_rank(values: list[float], j: int) -> float:
    """1 + the number of lower values + half the number of other equal ones (the mean of the tied ranks)."""
    lower = sum(v < values[j] for v in values)
    equal = sum(v == values[j] for v in values) - 1
    return 1 + lower + equal / 2


def test_average_ranks_best_counts_and_win_rates_equal_plain_loops():
    n, k = MATRIX.shape
    cells = MATRIX.tolist()
    ranks = [sum(slow_rank(c, j) for c in cells) / n for j in range(k)]
    best = [sum(c[j] == min(c) for c in cells) for j in range(k)]
    wins = []
    for j in range(k):
        score = 0.0
        for c in cells:
            for other in range(k):
                if other != j:
                    score += 1.0 if c[j] < c[other] else 0.5 if c[j] == c[other] else 0.0
        wins.append(score / (n * (k - 1)))
    np.testing.assert_allclose(average_ranks(MATRIX), ranks)
    assert best_counts(MATRIX).tolist() == best == [2, 2, 1, 1]
    np.testing.assert_allclose(win_rates(MATRIX), wins)


def test_win_shares_count_each_cells_pairs_and_the_win_rates_intervals_resample_them():
    n, k = MATRIX.shape
    shares = [[(sum(c[j] < c[i] for i in range(k) if i != j) + 0.5 * sum(c[j] == c[i] for i in range(k) if i != j))
               / (k - 1) for j in range(k)] for c in MATRIX.tolist()]
    np.testing.assert_allclose(win_shares(MATRIX), shares)
    assert shares[1] == [2.5 / 3, 1 / 3, 2.5 / 3, 0.0]  # models 0 and 2 tie for the lowest error
    result = cell_statistics(cells_of(MATRIX), ["A", "B", "C", "D"], ["D1", "D2", "D3"])
    np.testing.assert_allclose(result.wins["mse"], np.mean(shares, axis=0))
    expected = cell_intervals(np.array(shares), lambda v, axis: np.mean(v, axis=axis))
    np.testing.assert_allclose(result.wins_ci["mse"], expected, rtol=1e-12)
    for (low, high), point in zip(result.wins_ci["mse"], result.wins["mse"], strict=True):
        assert low <= point <= high and low < high
    two_cells = cell_statistics(cells_of(MATRIX[:2]), ["A", "B", "C", "D"], ["D1"])
    assert two_cells.wins_ci["mse"] == [None] * 4 and two_cells.wins["mse"] is not None
    one_model = cell_statistics(cells_of(MATRIX[:, :1]), ["A"], ["D1", "D2", "D3"])
    assert one_model.wins == {"mse": [None], "mae": [None]} and one_model.wins_ci["mse"] == [None]


def cells_of(matrix: np.ndarray, datasets=("D1", "D2", "D3"), horizons=(96, 192)) -> dict:
    """`compare.report.forecast_cells.Cells` with the matrix's lines as (dataset, horizon) cells, MAE = MSE / 2."""
    keys = list(product(datasets, horizons))[: len(matrix)]
    cells = {}
    for (d, h), line in zip(keys, matrix.tolist(), strict=True):
        cells[(d, h, "mse")], cells[(d, h, "mae")] = line, [v / 2 for v in line]
    return cells


def test_friedman_equals_scipy_and_the_textbook_formula():
    rows = ["A", "B", "C", "D"]
    rng = np.random.default_rng(3)
    matrix = rng.uniform(0.2, 0.8, size=(6, 4))  # no ties: the tie correction is 1
    result = cell_statistics(cells_of(matrix), rows, ["D1", "D2", "D3"])
    expected = stats.friedmanchisquare(*matrix.T)
    assert result.friedman == pytest.approx((expected.statistic, expected.pvalue), rel=1e-12)
    n, k = matrix.shape
    r = np.array([sum(slow_rank(c, j) for c in matrix.tolist()) / n for j in range(k)])
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r**2) - k * (k + 1) ** 2 / 4)
    assert result.friedman[0] == pytest.approx(chi2, rel=1e-12)
    assert result.friedman[1] == pytest.approx(stats.chi2.sf(chi2, k - 1), rel=1e-9)
    # Nemenyi: |R_i - R_j| / sqrt(k(k+1)/(6N)) against the studentized range over sqrt 2 (Demšar 2006).
    se = np.sqrt(k * (k + 1) / (6 * n))
    for i, j in product(range(k), range(k)):
        if i != j:
            q = abs(r[i] - r[j]) / se * np.sqrt(2)
            assert result.nemenyi[i][j] == pytest.approx(stats.studentized_range.sf(q, k, np.inf), rel=1e-6)


def test_critical_difference_matches_demsars_table():
    # q_0.05 / sqrt 2 for k = 3, 4, 5 models: 2.343, 2.569, 2.728 (Demšar 2006, Table 5a).
    for k, q in ((3, 2.343), (4, 2.569), (5, 2.728)):
        assert critical_difference(k, 10) == pytest.approx(q * np.sqrt(k * (k + 1) / 60), rel=1e-3)


def test_too_few_models_or_datasets_skip_the_test_with_a_reason():
    two_models = cell_statistics(cells_of(MATRIX[:, :2]), ["A", "B"], ["D1", "D2", "D3"])
    assert two_models.friedman is None and "2 model(s)" in two_models.skipped
    assert two_models.ranks["mse"] == average_ranks(MATRIX[:, :2]).tolist()
    one_dataset = cell_statistics(cells_of(MATRIX[:2]), ["A", "B", "C", "D"], ["D1"])
    assert one_dataset.friedman is None and "1 dataset(s)" in one_dataset.skipped


def test_a_model_without_a_cell_drops_that_cell_and_a_model_without_any_is_left_out():
    cells = cells_of(MATRIX)
    cells[("D1", 192, "mse")][1] = None
    for key in cells:
        cells[key] = [*cells[key], None]  # a fifth row whose every run failed
    result = cell_statistics(cells, ["A", "B", "C", "D", "E"], ["D1", "D2", "D3"])
    assert result.left_out == [("D1", 192)] and result.rows_left_out == ["E"]
    np.testing.assert_allclose(result.ranks["mse"], average_ranks(np.delete(MATRIX, 1, axis=0)))


# --- the report -------------------------------------------------------------------------------------------------

ROWS = ("A", "B", "C", "D")
DATASETS = ("ETTh1", "ETTm1")
HORIZONS = (96, 192)


def build_comparison(root: Path, old_row: str | None = None) -> Path:
    """A comparison folder with MSE = base x factor per row, whose records hold naive scores (except `old_row`'s,
    written before they existed)."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    results, manifest = [], []
    for (d, dataset), (k, h), (j, row) in product(enumerate(DATASETS), enumerate(HORIZONS), enumerate(ROWS)):
        setting = f"long_term_forecast_{dataset}_{row}_pl{h}_0"
        mse = round(0.3 + 0.1 * d + 0.05 * k + 0.02 * ((j * (d + 2) + k) % 4), 4)
        record = {"setting": setting, "model": row, "model_id": f"{dataset}_96_{h}", "data": dataset,
                  "pred_len": h, "mse": mse, "mae": mse / 2}
        if row != old_row:
            record["naive"] = {"mse": 0.5 + 0.1 * d, "mae": 0.4}
            record["seasonal_naive"] = {"mse": 0.6, "mae": 0.5, "period": 24 * (1 + 3 * d),
                                        "period_from": "data step"}
        results.append(record)
        manifest.append({"row": row, "dataset": dataset, "pred_len": h, "status": "ok", "settings": [setting],
                         "argv": None, "seconds": 1.0})
    (runs / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (runs / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    (root / "compare.json").write_text(json.dumps({"data": list(DATASETS),
                                                   "rows": [{"name": r, "base": r, "flags": []} for r in ROWS]}))
    return root


def test_the_report_draws_the_diagram_and_states_relative_scores_and_ranks(tmp_path):
    root = build_comparison(tmp_path / "cmp")
    paths = write_report(root, timing=False)
    assert root / CD_FILE in paths
    height, width, _ = imread(root / CD_FILE).shape
    assert height >= 250 and width >= 600  # tests draw at 120 dpi (tests/conftest.py)
    assert (root / CD_FILE).with_suffix(".pdf").is_file()
    text = (root / "table.md").read_text()
    saved = json.loads((root / "cell_statistics.json").read_text())
    records = [json.loads(line) for line in (root / "results.jsonl").read_text().splitlines()]
    a96 = next(r for r in records if r["setting"] == "long_term_forecast_ETTh1_A_pl96_0")
    relative = text.split("## Relative to naive forecasts")[1]
    line = next(line for line in relative.splitlines() if line.startswith("| ETTh1 | 96 |"))
    assert f"| {a96['mse'] / 0.5:.3f} | {a96['mae'] / 0.4:.3f} |" in line
    geo = [r["mse"] / r["naive"]["mse"] for r in records if r["model"] == "A"]
    geo_line = next(line for line in relative.splitlines() if line.startswith("| Geo-mean vs naive |"))
    assert geo_line.split("|")[3].strip() == f"{np.prod(geo) ** (1 / len(geo)):.3f}"
    assert "Friedman test on the MSE ranks" in text and f"]({CD_FILE})" in text
    matrix = np.array([[r["mse"] for r in records if (r["data"], r["pred_len"]) == cell]
                       for cell in product(DATASETS, HORIZONS)])
    assert saved["friedman"][0] == pytest.approx(stats.friedmanchisquare(*matrix.T).statistic)
    # The win rates with their intervals, in the ranks table and the JSON.
    assert "| Win rate MSE [95 % CI] | Win rate MAE [95 % CI] |" in text
    assert "percentile bootstrap resampling the 4 (dataset, horizon) cells" in text
    assert saved["bootstrap"] == {"unit": "(dataset, horizon) cell", "method": "percentile", "confidence": 0.95,
                                  "resamples": 9999, "seed": 0, "min_cells": 3}
    expected = cell_intervals(win_shares(matrix), lambda v, axis: np.mean(v, axis=axis))
    np.testing.assert_allclose(saved["wins_ci"]["mse"], expected, rtol=1e-12)
    ranks = text.split("## Ranks over (dataset, horizon) cells")[1]
    a_line = next(line for line in ranks.splitlines() if line.startswith("| A | "))
    low, high = saved["wins_ci"]["mse"][0]
    assert f"| {100 * saved['wins']['mse'][0]:.0f}% [{100 * low:.0f}%, {100 * high:.0f}%] |" in a_line


def test_old_records_are_said_to_lack_naive_scores_and_a_stale_diagram_goes(tmp_path):
    root = build_comparison(tmp_path / "cmp", old_row="B")
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    assert "its record predates the naive scores" in text and "B on ETTh1 H=96" in text
    relative = text.split("## Relative to naive forecasts")[1]
    line = next(line for line in relative.splitlines() if line.startswith("| ETTh1 | 96 |"))
    assert line.split("|")[5].strip() == "—"  # B's rel MSE: missing, not 0
    geo_line = next(line for line in relative.splitlines() if line.startswith("| Geo-mean vs naive |"))
    assert geo_line.split("|")[5].strip() == "—" and geo_line.split("|")[3].strip() != "—"  # B none, A all cells
    # Fewer models than the test needs: the reason is stated and the earlier diagram removed.
    (root / CD_FILE).write_bytes(b"stale")
    config = json.loads((root / "compare.json").read_text())
    config["rows"] = config["rows"][:2]
    (root / "compare.json").write_text(json.dumps(config))
    records = [r for r in (root / "runs" / "results.jsonl").read_text().splitlines() if '"model": "A"' in r
               or '"model": "B"' in r]
    (root / "runs" / "results.jsonl").write_text("\n".join(records) + "\n")
    write_report(root, timing=False)
    assert not (root / CD_FILE).exists()
    assert "no critical-difference diagram: 2 model(s)" in (root / "table.md").read_text()
