"""compare.report.build for the other tasks, from synthetic results.jsonl records and a runner manifest: each task's
metrics with their direction (higher accuracy and F1 win), M4's weighted summary lines and OWA, seeds with
mean ± sd and the significance section, and the significance helpers with a higher-is-better metric."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from compare.report import build as report
from compare.report import significance
from compare.report.build import mark_best, mark_with_seeds
from compare.report.ranking import competition_ranks
from compare.report.task_lines import OTHERS


def write_comparison(out: Path, task: str, runs: list[tuple[str, str, float | int, int | None, dict]],
                     rows: list[str]) -> None:
    """compare.json, the manifest and results.jsonl of `runs` = (row, dataset, axis point, seed, record fields)."""
    (out / "runs").mkdir(parents=True)
    (out / "compare.json").write_text(json.dumps({"task": task, "rows": [{"name": r, "base": r, "flags": []}
                                                                          for r in rows]}))
    manifest, results = [], []
    for k, (row, dataset, point, seed, fields) in enumerate(runs):
        setting = f"{task}_{row}_{dataset}_{point}_{seed}_{k}"
        manifest.append({"row": row, "dataset": dataset, "task": task, "axis": point, "seed": seed, "status": "ok",
                         "settings": [setting], "argv": [], "seconds": 1.0})
        results.append({"setting": setting, "model": row, "seed": seed, "epochs_run": 2, **fields})
    (out / "runs" / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    (out / "runs" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))


def table_line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_classification_bolds_the_highest_accuracy(tmp_path):
    runs = [("A", "JapaneseVowels", 0, None, {"accuracy": 0.9, "macro_f1": 0.5}),
            ("B", "JapaneseVowels", 0, None, {"accuracy": 0.95, "macro_f1": 0.4}),
            ("C", "JapaneseVowels", 0, None, {"accuracy": 0.8, "macro_f1": 0.6})]
    write_comparison(tmp_path, "classification", runs, ["A", "B", "C"])
    paths = report.write_report(tmp_path)
    text = (tmp_path / "table.md").read_text()
    assert table_line(text, "| JapaneseVowels |") == (
        "| JapaneseVowels | 0 | _0.900_ | _0.500_ | **0.950** | 0.400 | 0.800 | **0.600** |")
    assert table_line(text, "| Avg rank |") == "| Avg rank | | 2.0 | 2.0 | 1.0 | 3.0 | 3.0 | 1.0 |"
    assert "**cannot be assessed**" in text and "No `efficiency.md` for this task" in text
    assert {p.name for p in paths} >= {"table.md", "table.csv", "accuracy_by_dataset.png"}
    assert not (tmp_path / "efficiency.md").exists() and not (tmp_path / "mse_by_horizon.png").exists()
    with (tmp_path / "table.csv").open() as f:
        b = next(r for r in csv.DictReader(f) if r["model"] == "B")
    assert (b["accuracy"], b["accuracy_rank"], b["accuracy_mark"], b["macro_f1_rank"]) == ("0.95", "1", "best", "3")


def test_anomaly_shows_unadjusted_f1_first_then_ap_and_the_point_adjusted_f1(tmp_path):
    def scores(f1: float, raw: float, ap: float | None = None) -> dict:
        return {"f_score": f1, "unadjusted_f_score": raw, "precision": f1 + 0.01, "recall": f1 - 0.01,
                "unadjusted_precision": raw + 0.01, "unadjusted_recall": raw - 0.01, "average_precision": ap}

    write_comparison(tmp_path, "anomaly_detection", [("A", "MSL", 0, None, scores(0.8, 0.3, 0.5)),
                                                     ("B", "MSL", 0, None, scores(0.7, 0.4, 0.6)),
                                                     ("A", "SWAT", 0, None, scores(0.9, 0.2)),
                                                     ("A", "SWAT", 1, None, scores(0.85, 0.25)),
                                                     ("B", "SWAT", 0, None, scores(0.6, 0.1))], ["A", "B"])
    report.write_report(tmp_path)
    text = (tmp_path / "table.md").read_text()
    head = table_line(text, "| Dataset | Block | A F1 |")
    assert head == "| Dataset | Block | A F1 | A AP | A F1 (PA) | B F1 | B AP | B F1 (PA) |"
    assert table_line(text, "| MSL | 0 |") == "| MSL | 0 | _0.300_ | _0.500_ | **0.800** | **0.400** | **0.600** | _0.700_ |"
    # A block only A ran (SWaT's second width) is a line of its own with B missing; records without AP show —.
    assert table_line(text, "| SWAT | 1 |") == "| SWAT | 1 | **0.250** | — | **0.850** | — | — | — |"
    assert "| Dataset | Block | A P | A R | A P (PA) | A R (PA) | B P | B R | B P (PA) | B R (PA) |" in text
    assert (tmp_path / "unadjusted_f_score_by_dataset.png").is_file()
    assert (tmp_path / "unadjusted_f_score_by_dataset.pdf").is_file()
    # Each of the two tables is a LaTeX table of its own, marked as its markdown.
    first, second = (tmp_path / "table.tex").read_text(), (tmp_path / "table_2.tex").read_text()
    assert r"\multicolumn{3}{c}{A}" in first and r"\multicolumn{8}{c}{A}" not in first
    assert (r"MSL & 0 & \underline{0.300} & \underline{0.500} & \textbf{0.800} & \textbf{0.400} & \textbf{0.600} & "
            r"\underline{0.700}") in first
    assert r"\multicolumn{4}{c}{A}" in second and r"\caption{Precision and recall" in second


def m4_record(smape: float, mase: float, series: int, summary: dict | None = None) -> dict:
    return {"smape": smape, "mape": 1.0, "mase": mase, "series": series, "m4_summary": summary}


def test_m4_pools_the_groups_by_their_series_and_takes_owa_from_the_summary(tmp_path):
    counts = {"Monthly": 4, "Yearly": 2, "Quarterly": 2, "Weekly": 1, "Daily": 1, "Hourly": 2}
    runs = []
    for row, scale in (("A", 1.0), ("B", 2.0)):
        for k, group in enumerate(counts):
            summary = None
            if group == "Hourly":
                summary = {"owa": {"Yearly": 0.9 * scale, "Quarterly": 0.8 * scale, "Monthly": 0.7 * scale,
                                   OTHERS: 0.6 * scale, "Average": 0.5 * scale}}
            runs.append((row, group, 0, None, m4_record(scale * (10 + k), scale * (1 + k), counts[group], summary)))
    write_comparison(tmp_path, "short_term_forecast", runs, ["A", "B"])
    report.write_report(tmp_path)
    text = (tmp_path / "table.md").read_text()
    # Others = (Weekly 13 x 1 + Daily 14 x 1 + Hourly 15 x 2) / 4 = 14.25; MASE (4 + 5 + 12) / 4 = 5.25.
    assert table_line(text, "| M4 | Others |") == ("| M4 | Others | **14.250** | **5.250** | **0.600** | _28.500_ | _10.500_ | _1.200_ |")
    # Average over the 12 series: SMAPE (40 + 22 + 24 + 13 + 14 + 30) / 12.
    smape = (10 * 4 + 11 * 2 + 12 * 2 + 13 + 14 + 15 * 2) / 12
    assert table_line(text, "| M4 | Average |").startswith(f"| M4 | Average | **{smape:.3f}** |")
    assert table_line(text, "| Monthly | 0 |") == ("| Monthly | 0 | **10.000** | **1.000** | **0.700** | _20.000_ | _2.000_ | _1.400_ |")
    assert table_line(text, "| Weekly | 0 |") == "| Weekly | 0 | **13.000** | **4.000** | — | _26.000_ | _8.000_ | — |"
    assert table_line(text, "| Avg rank |") == "| Avg rank | | 1.0 | 1.0 | 1.0 | 2.0 | 2.0 | 2.0 |"


def test_a_short_term_set_outside_m4_is_a_ranked_line_of_its_own_without_m4s_summary(tmp_path):
    runs = [("A", "sktime_monthly", 0, None, {"smape": 12.0, "mape": 1.0, "mase": 1.5, "owa": 0.9, "series": 3}),
            ("B", "sktime_monthly", 0, None, {"smape": 10.0, "mape": 1.0, "mase": 1.8, "owa": 0.95, "series": 3})]
    write_comparison(tmp_path, "short_term_forecast", runs, ["A", "B"])
    report.write_report(tmp_path)
    text = (tmp_path / "table.md").read_text()
    assert table_line(text, "| sktime_monthly | 0 |") == (
        "| sktime_monthly | 0 | _12.000_ | **1.500** | **0.900** | **10.000** | _1.800_ | _0.950_ |")
    assert "| M4 |" not in text and "*Others*" not in text
    assert table_line(text, "| Avg rank |") == "| Avg rank | | 2.0 | 1.0 | 1.0 | 1.0 | 2.0 | 2.0 |"


def test_m4_rows_of_one_model_keep_their_own_owa(tmp_path):
    """Rows of one model (a variant) write separate m4_results folders, so each gets its own OWA."""
    runs = [(row, g, 0, None, {**m4_record(10.0, 1.0, 1, {"owa": {"Average": owa}} if g == "Hourly" else None),
                               "model": "DLinear"})
            for row, owa in (("A", 0.5), ("B", 0.6)) for g in ("Monthly", "Yearly", "Quarterly", "Weekly", "Daily", "Hourly")]
    write_comparison(tmp_path, "short_term_forecast", runs, ["A", "B"])
    text = (report.write_report(tmp_path)[0]).read_text()
    assert "OWA is left out" not in text
    assert table_line(text, "| M4 | Average |") == "| M4 | Average | **10.000** | **1.000** | **0.500** | **10.000** | **1.000** | _0.600_ |"


def test_imputation_averages_the_mask_rates_and_tests_seeds(tmp_path):
    runs = [(row, "ETTh1", rate, seed, {"mse": base * rate + 0.001 * seed * (1 + rate), "mae": base})
            for seed in (1, 2, 3) for rate in (0.125, 0.25) for row, base in (("A", 1.0), ("B", 2.0))]
    write_comparison(tmp_path, "imputation", runs, ["A", "B"])
    text = (report.write_report(tmp_path)[0]).read_text()
    assert table_line(text, "| ETTh1 | Avg |").startswith("| ETTh1 | Avg | **0.190 ± 0.001** |")
    assert "## Seeds: A against each other row (MSE, lower is better)" in text
    line = table_line(text, "| B | 6 |")
    assert line.startswith("| B | 6 | 6 | 0 | 0 | -49.")


def test_higher_is_better_in_the_seed_section(tmp_path):
    runs = [(row, "JapaneseVowels", 0, seed, {"accuracy": acc + 0.01 * seed, "macro_f1": 0.5})
            for seed in (1, 2, 3) for row, acc in (("A", 0.9), ("B", 0.8))]
    write_comparison(tmp_path, "classification", runs, ["A", "B"])
    text = (report.write_report(tmp_path)[0]).read_text()
    assert table_line(text, "| JapaneseVowels | 0 |").startswith("| JapaneseVowels | 0 | **0.920 ± 0.010** |")
    # A's accuracy is 10 points higher on all three seeds: three wins, Δ in points.
    assert table_line(text, "| B | 3 |").startswith("| B | 3 | 3 | 0 | 0 | +10.0 pt | [+10.0 pt, +10.0 pt] |")


def test_marks_and_ranks_follow_the_direction():
    assert [c.mark for c in mark_best([0.5, 0.9, 0.7], higher_is_better=True)] == ["", "best", "second"]
    assert [c.mark for c in mark_best([0.5, 0.9, 0.7])] == ["best", "", "second"]
    cells, tested = mark_with_seeds([0.9, 0.5], [{1: 0.89, 2: 0.91}, {1: 0.49, 2: 0.51}], higher_is_better=True)
    assert tested and [c.mark for c in cells] == ["best", "second"]
    assert competition_ranks([0.5, 0.9, 0.9], higher_is_better=True) == [3, 1, 1]


def test_significance_with_a_higher_is_better_metric():
    focus, other = [0.9, 0.8, 0.7, 0.95], [0.85, 0.82, 0.6, 0.9]
    lower = significance.paired_comparison(focus, other, decimals=3)
    higher = significance.paired_comparison(focus, other, decimals=3, higher_is_better=True, relative=False)
    assert (lower.wins, lower.losses) == (1, 3) and (higher.wins, higher.losses) == (3, 1)
    assert higher.mean_relative == pytest.approx((0.05 - 0.02 + 0.1 + 0.05) / 4)
    assert lower.mean_relative == pytest.approx((0.05 / 0.85 - 0.02 / 0.82 + 0.1 / 0.6 + 0.05 / 0.9) / 4)
    # An F1 of 0 on the other side: points work where a relative difference cannot.
    d = significance.cell_difference([0.5, 0.6], [0.0, 0.0], relative=False)
    assert d.relative == pytest.approx(0.55) and d.p is not None and not math.isnan(d.low)
    with pytest.raises(ValueError, match="mean of 0"):
        significance.cell_difference([0.5, 0.6], [0.0, 0.0])
    # The default is the long-term report's relative difference, unchanged.
    assert significance.relative_difference([2.0, 2.2], [1.0, 1.1]) == significance.cell_difference([2.0, 2.2], [1.0, 1.1])


def test_tall_layout_transposes_a_task_table(tmp_path):
    """--layout tall on a task table: a line per model with the wide lines' cells, then its average rank and
    first-place count per metric."""
    runs = [(row, "ETTh1", rate, None, {"mse": base * rate, "mae": base}) for rate in (0.125, 0.25)
            for row, base in (("A", 1.0), ("B", 2.0))]
    write_comparison(tmp_path, "imputation", runs, ["A", "B"])
    wide = report.write_report(tmp_path)[0].read_text()
    tall = report.write_report(tmp_path, layout="tall")[0].read_text()
    heads = table_line(tall, "| Model |").strip("|").split("|")
    assert [h.strip() for h in heads[1:4]] == ["ETTh1 0.125 MSE", "ETTh1 0.125 MAE", "ETTh1 0.25 MSE"]
    for i, row in enumerate("AB"):
        cells = [c.strip() for c in table_line(tall, f"| {row} |").strip("|").split("|")][1:]
        expected = []
        for start in ("| ETTh1 | 0.125 |", "| ETTh1 | 0.25 |", "| ETTh1 | Avg |", "| Avg rank |", "| 1st count |"):
            expected += [c.strip() for c in table_line(wide, start).strip("|").split("|")][2 + 2 * i : 4 + 2 * i]
        assert cells == expected
    assert table_line(tall, "| A |").endswith("| 1.0 | 1.0 | 3 | 3 |")


def test_task_reports_draw_learning_curves_and_list_unfinished_runs(tmp_path):
    curve = [{"epoch": e, "train": 1.0 / e, "vali": 1.0 / e, "test": 1.1 / e, "vali_accuracy": 0.5 + e / 10,
              "test_accuracy": 0.4 + e / 10} for e in (1, 2)]
    runs = [("A", "JapaneseVowels", 0, None, {"accuracy": 0.9, "macro_f1": 0.5, "curve": curve, "best_epoch": 2}),
            ("B", "JapaneseVowels", 0, None, {"accuracy": 0.8, "macro_f1": 0.4})]
    write_comparison(tmp_path, "classification", runs, ["A", "B", "C"])
    stopped = {"row": "C", "dataset": "JapaneseVowels", "task": "classification", "axis": 0, "seed": None,
               "status": "interrupted", "settings": ["c"], "argv": [], "log": "runs/logs/c.log",
               "progress": {"c": {"epoch": 2, "batch": 3, "curve": curve[:1]}}}
    with (tmp_path / "runs" / "compare_runs.jsonl").open("a") as f:
        f.write(json.dumps(stopped) + "\n")
    paths = report.write_report(tmp_path)
    assert tmp_path / "learning_curves.png" in paths
    text = (tmp_path / "table.md").read_text()
    assert ("| C | JapaneseVowels | 0 | epoch 2, batch 3 | 1 | accuracy 0.6000 (epoch 1) | accuracy 0.5000 | "
            "runs/logs/c.log |") in text.split("## Unfinished runs")[1]
