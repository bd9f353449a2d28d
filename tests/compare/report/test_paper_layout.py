"""compare.report.paper_layout on a synthetic comparison: two models x two horizons of ETTh1, A with two seeds and B
with one (its second seed's latest attempt failed), a stale A run at H = 336, and a reference that also has H = 336
and a model we did not run. Checks `paper_layout.csv` against the inputs (means, sample std, Δ; empty where not run
or not reported), the LaTeX's structure, the markdown section only with --reference, and that a zero-shot run shown
apart never enters the table. No training: the record files are written by the tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from compare.grid.records import RunResult
from compare.report.build import write_report
from compare.report.forecast_cells import accuracy_cells, cell_samples
from compare.report.paper_layout import CSV_FIELDS, layout_values
from compare.report.ranking import AVG
from tests.compare.report.test_seeds import build_comparison
from tests.compare.report.test_zero_shot_report import build as build_zero_shot

SEEDS = (1, 2)
# (row, dataset, H) -> MSE for seeds 1, 2 (MAE = MSE + 0.1, as test_seeds writes); B's seed 2 fails on its rerun.
MSE = {
    ("A", "ETTh1", 96): (0.400, 0.420), ("A", "ETTh1", 192): (0.500, 0.540),
    ("B", "ETTh1", 96): (0.300, 0.900), ("B", "ETTh1", 192): (0.350, 0.900),
}
# A's H = 336 is reported by the paper but our run there is stale; B has no 336 and no Avg line (its Avg is the
# mean of its horizons); Z is no row of ours.
PAPER = {("A", 96): (0.400, 0.500), ("A", 192): (0.500, 0.550), ("A", 336): (0.600, 0.650),
         ("A", "Avg"): (0.500, 0.567), ("B", 96): (0.250, 0.420), ("B", 192): (0.500, 0.450), ("Z", 96): (0.1, 0.1)}
REFERENCE = "dataset,pred_len,model,mse,mae\n" + "".join(
    f"ETTh1,{h},{model},{mse},{mae}\n" for (model, h), (mse, mae) in PAPER.items())


def append_lines(path: Path, records: list[dict]) -> None:
    with path.open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def build(root: Path) -> Path:
    """The comparison above (rows A, B and C, C never run), with the reference CSV beside it."""
    build_comparison(root, MSE, SEEDS)
    runs = root / "runs"
    failed = [{"row": "B", "dataset": "ETTh1", "pred_len": h, "seed": 2, "status": "failed", "settings": [],
               "argv": [], "seconds": 1.0, "error": "killed"} for h in (96, 192)]
    stale = "long_term_forecast_ETTh1_24_336_s1_A_pl336_0"
    append_lines(runs / "results.jsonl", [{"setting": stale, "model": "DLinear", "pred_len": 336, "mse": 0.001,
                                           "mae": 0.001, "seed": 1, "epochs_run": 2, "time": "2026-01-01T00:00:00"}])
    append_lines(runs / "compare_runs.jsonl", [*failed, {
        "row": "A", "dataset": "ETTh1", "pred_len": 336, "seed": 1, "status": "ok", "settings": [stale], "argv": [],
        "seconds": 5.0, "error": None}])
    (root / "reference.csv").write_text(REFERENCE)
    return root


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, list[Path]]:
    root = build(tmp_path_factory.mktemp("layout"))
    return root, write_report(root, reference=root / "reference.csv", timing=False)


def layout_lines(root: Path) -> dict[tuple[str, str, str], dict]:
    with (root / "paper_layout.csv").open(newline="") as f:
        return {(r["pred_len"], r["model"], r["metric"]): r for r in csv.DictReader(f)}


def ours(row: str, h: int, metric: str, seeds: int) -> np.ndarray:
    values = np.asarray(MSE[(row, "ETTh1", h)][:seeds])
    return values + 0.1 if metric == "mae" else values


def delta(value: float, paper: float) -> float:
    return round(100.0 * (value - paper) / paper, 3)


def test_the_files_are_written_and_the_csv_is_tidy(report):
    root, paths = report
    assert {root / "paper_layout.csv", root / "paper_layout.tex"} <= set(paths)
    with (root / "paper_layout.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        order = [(r["pred_len"], r["model"], r["metric"]) for r in reader]
    assert tuple(reader.fieldnames) == CSV_FIELDS
    # Our horizons and the paper's, then Avg; the rows the reference has (not C, never run; not Z, not ours).
    assert order == [(h, model, metric) for h in ("96", "192", "336", "avg") for model in "AB"
                     for metric in ("mse", "mae")]


@pytest.mark.parametrize("row,seeds", [("A", 2), ("B", 1)], ids=["A-2-seeds", "B-1-seed"])
@pytest.mark.parametrize("h", [96, 192])
@pytest.mark.parametrize("metric", ["mse", "mae"])
def test_a_run_cell_holds_the_seed_mean_spread_and_difference(report, row, seeds, h, metric):
    line = layout_lines(report[0])[(str(h), row, metric)]
    values = ours(row, h, metric, seeds)
    paper = PAPER[(row, h)][metric == "mae"]
    assert line["dataset"] == "ETTh1" and int(line["seeds"]) == seeds
    assert float(line["ours_mean"]) == pytest.approx(values.mean())
    if seeds == 1:
        assert line["ours_std"] == ""
    else:
        assert float(line["ours_std"]) == pytest.approx(np.std(values, ddof=1))
    assert float(line["paper"]) == paper
    assert float(line["delta_pct"]) == pytest.approx(delta(values.mean(), paper))


def test_cells_not_run_show_the_paper_and_no_number_of_ours(report):
    lines = layout_lines(report[0])
    # The stale A run at 336 is no result: only the paper's number stands there.
    a336 = lines[("336", "A", "mse")]
    assert (a336["ours_mean"], a336["ours_std"], a336["seeds"], a336["delta_pct"]) == ("", "", "0", "")
    assert float(a336["paper"]) == PAPER[("A", 336)][0]
    b336 = lines[("336", "B", "mae")]
    assert (b336["ours_mean"], b336["paper"], b336["delta_pct"]) == ("", "", "")
    # A's Avg over our 96/192 is not the paper's Avg over 96/192/336: ours is left out, the paper's shows.
    a_avg = lines[("avg", "A", "mae")]
    assert (a_avg["ours_mean"], float(a_avg["paper"])) == ("", PAPER[("A", "Avg")][1])


def test_a_comparable_average_is_the_mean_over_the_horizons(report):
    line = layout_lines(report[0])[("avg", "B", "mse")]
    value = np.mean([ours("B", h, "mse", 1).mean() for h in (96, 192)])
    paper = np.mean([PAPER[("B", h)][0] for h in (96, 192)])
    assert (float(line["ours_mean"]), float(line["paper"])) == pytest.approx((value, paper))
    assert float(line["delta_pct"]) == pytest.approx(delta(value, paper))
    assert line["seeds"] == "1"


def test_the_markdown_section_prints_ours_the_paper_and_the_difference(report):
    root, _ = report
    text = (root / "table.md").read_text()
    section = text.split("## In the paper's layout: reference.csv")[1]
    a = ours("A", 96, "mse", 2)
    a_mae = ours("A", 96, "mae", 2)
    b, b_mae = ours("B", 96, "mse", 1)[0], ours("B", 96, "mae", 1)[0]
    assert (f"| ETTh1 | 96 | {a.mean():.3f} ± {np.std(a, ddof=1):.3f} (n=2) / 0.400 "
            f"({100 * (a.mean() - 0.4) / 0.4:+.1f}%) | {a_mae.mean():.3f} ± {np.std(a_mae, ddof=1):.3f} (n=2) / 0.500 "
            f"({100 * (a_mae.mean() - 0.5) / 0.5:+.1f}%) | {b:.3f} / 0.250 ({100 * (b - 0.25) / 0.25:+.1f}%) | "
            f"{b_mae:.3f} / 0.420 ({100 * (b_mae - 0.42) / 0.42:+.1f}%) |") in section
    assert "| ETTh1 | 336 | — / 0.600 | — / 0.650 | — / — | — / — |" in section
    assert section.index("| ETTh1 | 336 |") < section.index("| ETTh1 | Avg |")


def test_the_latex_has_one_line_per_cell_and_balanced_environments(report):
    tex = (report[0] / "paper_layout.tex").read_text()
    for env in ("table", "tabular"):
        assert tex.count(f"\\begin{{{env}}}") == tex.count(f"\\end{{{env}}}") == 1
    assert tex.count("\\toprule") == tex.count("\\midrule") == tex.count("\\bottomrule") == 1
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == 4  # H = 96, 192, 336, Avg
    # Two label columns and MSE / MAE of A and B: six cells on every line (a model's name spans its two).
    header = tex.split("\\toprule")[1].split("\\midrule")[0].strip().splitlines()
    assert header[0].count("\\multicolumn{2}{c}") == 2 and header[0].count("&") == 3
    assert all(line.count("&") == 5 and line.rstrip().endswith("\\\\") for line in body + header[1:])
    assert "\\multirow" in body[0] and "ETTh1" in body[0]
    assert "$\\pm$" in body[0] and "--" in body[2]


def test_without_a_reference_there_is_no_paper_layout(tmp_path):
    root = build_comparison(tmp_path, MSE, SEEDS)
    paths = write_report(root, timing=False)
    assert "In the paper's layout" not in (root / "table.md").read_text()
    assert not (root / "paper_layout.csv").exists() and not any(p.name.startswith("paper_layout") for p in paths)


def test_a_zero_shot_run_shown_apart_never_enters(tmp_path):
    root = build_zero_shot(tmp_path, every=5)
    (root / "reference.csv").write_text("dataset,pred_len,model,mse,mae\nETTh1,12,A,0.02,0.2\nETTh1,12,Fracast,0.04,"
                                        "0.2\nETTh1,12,Fracast (zero-shot; L=2048; every 5th of 49 windows),0.04,0.2\n")
    write_report(root, reference=root / "reference.csv", timing=False)
    models = {model for _, model, _ in layout_lines(root)}
    assert models == {"A"}
    assert "Fracast" not in (root / "paper_layout.tex").read_text()


def test_our_average_stands_where_the_paper_has_no_number_of_that_model_on_that_dataset():
    # The paper has B on ECL (H = 96) and A on ETTh1 (H = 96 and its Avg) only; both ran 96 and 192 on both.
    runs = [RunResult(row, dataset, h, [f"{row}_{dataset}_{h}"], mse + k * 0.01, mse + 0.1, seed=1)
            for k, row in enumerate("AB")
            for dataset, h, mse in (("ETTh1", 96, 0.3), ("ETTh1", 192, 0.5), ("ECL", 96, 0.2), ("ECL", 192, 0.4))]
    rows, datasets = ["A", "B"], ["ETTh1", "ECL"]
    reference = {("ecl", "b", 96): (0.2, 0.3), ("etth1", "a", 96): (0.25, 0.35), ("etth1", "a", AVG): (0.3, 0.4)}
    found = layout_values(rows, datasets, accuracy_cells(runs, rows, datasets), cell_samples(runs, rows, datasets),
                          reference)
    # Datasets in the reference's order (the paper's table), not the comparison's.
    assert list(dict.fromkeys(v.dataset for v in found)) == ["ECL", "ETTh1"]
    values = {(v.dataset, v.pred_len, v.model, v.metric): v for v in found}
    # No paper number of B on ETTh1 (nor of A on ECL): our Avg has nothing to differ from, so it shows.
    b_avg, a_avg = values[("ETTh1", AVG, "B", "mse")], values[("ECL", AVG, "A", "mse")]
    assert (b_avg.ours_mean, b_avg.paper, b_avg.delta_pct) == (pytest.approx(0.41), None, None)
    assert (a_avg.ours_mean, a_avg.paper) == (pytest.approx(0.3), None)
    # The paper's Avg of A on ETTh1 is over 96 alone, ours over 96 and 192: not comparable, ours is left out.
    assert (values[("ETTh1", AVG, "A", "mse")].ours_mean, values[("ETTh1", AVG, "A", "mse")].paper) == (None, 0.3)
    assert values[("ETTh1", 96, "A", "mae")].delta_pct == pytest.approx(delta(0.4, 0.35))


def test_a_difference_that_rounds_to_zero_has_no_minus_sign():
    from compare.report.markdown import percent_text
    from compare.report.reference import difference_pct

    assert percent_text(0.4499999, 0.45) == "+0.0%"
    assert str(difference_pct(0.44999999, 0.45)) == "0.0"
    assert percent_text(0.441, 0.45) == "-2.0%" and difference_pct(0.441, 0.45) == -2.0
