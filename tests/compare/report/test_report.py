"""compare.report.build on a synthetic comparison: bold/underline placement with ties, average rank and
first-place count, horizon averages with missing runs, reference differences, and every file written."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from matplotlib.image import imread

from compare.grid.efficiency import TensorMemoryTracker
from compare.grid.provenance import production_notes
from compare.report import build as report
from compare.report.build import Cell, load_runs, mark_best, write_report
from compare.report.plots import series_of

REPO = Path(__file__).resolve().parents[3]

# (row, dataset, H) -> (mse, mae). C has no ECL H=24 run (it failed).
METRICS = {
    ("A", "ETTh1", 12): (0.300, 0.30), ("B", "ETTh1", 12): (0.200, 0.40), ("C", "ETTh1", 12): (0.250, 0.50),
    ("A", "ETTh1", 24): (0.400, 0.30), ("B", "ETTh1", 24): (0.4004, 0.20), ("C", "ETTh1", 24): (0.500, 0.20),
    ("A", "ECL", 12): (0.100, 0.10), ("B", "ECL", 12): (0.200, 0.20), ("C", "ECL", 12): (0.300, 0.30),
    ("A", "ECL", 24): (0.300, 0.30), ("B", "ECL", 24): (0.100, 0.10),
}
OFFSET = {"A": 0.1, "B": -0.2, "C": 0.3}
REFERENCE = """dataset,pred_len,model,mse,mae
ETTh1,12,A,0.250,0.200
ETTh1,24,A,0.500,0.400
ETTh1,Avg,A,0.375,0.300
Electricity,12,B,0.250,0.250
ETTh1,12,Z,0.1,0.1
"""


def dlinear_argv(dataset: str, horizon: int) -> list[str]:
    return ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", f"{dataset}_24_{horizon}",
            "--model", "DLinear", "--data", "custom", "--seq_len", "24", "--label_len", "12", "--pred_len",
            str(horizon), "--enc_in", "3", "--dec_in", "3", "--c_out", "3", "--batch_size", "4"]


def windows(series: np.ndarray, horizon: int) -> np.ndarray:
    """Overlapping target windows `[N, H, 2]` of a 1-D series (two identical channels)."""
    count = len(series) - horizon + 1
    one = np.stack([series[i : i + horizon] for i in range(count)])  # [N, H]
    return np.stack([one, one], axis=-1).astype(np.float32)


def build_comparison(root: Path) -> Path:
    """A comparison folder as compare.run.runner leaves it, with known metrics and forecasts."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    series = np.sin(np.arange(60) / 4.0)
    results, manifest = [], []
    for (row, dataset, horizon), (mse, mae) in METRICS.items():
        setting = f"long_term_forecast_{dataset}_{row}_pl{horizon}_0"
        results.append({"setting": setting, "model": "DLinear", "model_id": f"{dataset}_24_{horizon}",
                        "data": "custom", "pred_len": horizon, "mse": mse, "mae": mae, "epochs_run": 2,
                        "best_epoch": 1, "train_seconds": 4.0, "params": 600})
        manifest.append({"row": row, "dataset": dataset, "pred_len": horizon, "status": "ok", "settings": [setting],
                         "argv": dlinear_argv(dataset, horizon), "seconds": 5.0, "error": None})
        folder = runs / "results" / setting
        folder.mkdir(parents=True)
        true = windows(series, horizon)
        np.save(folder / "true.npy", true)
        np.save(folder / "pred.npy", true + OFFSET[row])
    manifest.append({"row": "C", "dataset": "ECL", "pred_len": 24, "status": "failed", "settings": [],
                     "argv": [], "seconds": 1.0, "error": "error: --d_model 30 is not divisible by --n_heads 4",
                     "log": "runs/logs/c.log"})
    (runs / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (runs / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    config = {"data": ["ETTh1", "ECL"], "rows": [{"name": n, "base": "DLinear", "flags": []} for n in "ABC"],
              "invocations": [{"command": "python -m compare --data ETTh1 ECL --epochs 2", "epochs": 2}]}
    (root / "compare.json").write_text(json.dumps(config))
    (root / "reference.csv").write_text(REFERENCE)
    return root


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> tuple[Path, list[Path]]:
    root = build_comparison(tmp_path_factory.mktemp("cmp"))
    paths = write_report(root, reference=root / "reference.csv", timing=False)
    return root, paths


def table_line(text: str, prefix: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(prefix))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_every_report_file_is_written(comparison):
    root, paths = comparison
    names = sorted(p.name for p in paths)
    figures = [f"{stem}.{ext}" for stem in ("critical_difference", "forecast_ECL_12", "forecast_ECL_24",
                                            "forecast_ETTh1_12", "forecast_ETTh1_24", "mse_by_horizon")
               for ext in ("pdf", "png")]
    assert names == sorted(["cell_statistics.json", "compare_runs.jsonl", "efficiency.csv", "efficiency.md",
                            "efficiency.tex", *figures, "paper_layout.csv", "paper_layout.tex", "results.jsonl",
                            "table.csv", "table.md", "table.tex"])
    # The run records are copied beside the report (runs/ is git-ignored), byte for byte.
    for name in ("results.jsonl", "compare_runs.jsonl"):
        assert (root / name).read_text() == (root / "runs" / name).read_text()
    for name in names:
        if name.endswith(".png"):
            height, width, _ = imread(root / name).shape
            assert height >= 400 and width >= 600


def test_make_demo_prints_the_reports_first_table(comparison):
    root, _ = comparison
    done = subprocess.run(["make", "-s", "demo-table", f"DEMO_OUT={root}"], cwd=REPO, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.strip().splitlines()
    table = (root / "table.md").read_text().splitlines()
    start = next(i for i, line in enumerate(table) if line.startswith("| Dataset |"))
    assert shown == table[start:start + len(shown)] and shown[-1].startswith("| 1st count |")
    assert len(shown) >= 5 and all(line.startswith("|") for line in shown)


def test_bold_best_underline_second_with_ties_at_printed_precision(comparison):
    text = (comparison[0] / "table.md").read_text()
    assert table_line(text, "| Dataset |") == ["Dataset", "H", "A MSE", "A MAE", "B MSE", "B MAE", "C MSE", "C MAE"]
    assert table_line(text, "| ETTh1 | 12 |")[2:] == ["0.300", "**0.300**", "**0.200**", "_0.400_", "_0.250_", "0.500"]
    # 0.400 and 0.4004 print alike, so both are best and C's 0.500 is second.
    assert table_line(text, "| ETTh1 | 24 |")[2:] == ["**0.400**", "_0.300_", "**0.400**", "**0.200**", "_0.500_",
                                                      "**0.200**"]
    assert table_line(text, "| ETTh1 | Avg |")[2:] == ["_0.350_", "**0.300**", "**0.300**", "**0.300**", "0.375",
                                                       "_0.350_"]
    # C lacks ECL H=24, so it has no ECL average rather than one over fewer horizons.
    assert table_line(text, "| ECL | Avg |")[2:] == ["_0.200_", "_0.200_", "**0.150**", "**0.150**", "—", "—"]


def accuracy_cells_of(text: str) -> list[str]:
    """The cells of the accuracy table (the first markdown table) of a table.md."""
    block = next(b for b in text.split("\n\n") if b.startswith("|")).splitlines()
    return [cell.strip() for line in block[2:] for cell in line.strip("|").split("|")]


def test_the_latex_table_marks_the_cells_the_markdown_marks(comparison):
    """table.tex (pandas' Styler, booktabs) has every number of the markdown table, bold where the markdown is
    bold and underlined where it is underlined."""
    root, paths = comparison
    assert root / "table.tex" in paths
    tex = (root / "table.tex").read_text()
    assert all(rule in tex for rule in (r"\toprule", r"\midrule", r"\bottomrule"))
    cells = accuracy_cells_of((root / "table.md").read_text())
    bold = [c.strip("*") for c in cells if c.startswith("**")]
    underlined = [c.strip("_") for c in cells if c.startswith("_") and c.endswith("_")]
    assert bold and underlined
    assert tex.count(r"\textbf{") == len(bold) and tex.count(r"\underline{") == len(underlined)
    assert sorted(tex.split(r"\textbf{")[k + 1].split("}")[0] for k in range(len(bold))) == sorted(bold)
    assert r"\multicolumn{2}{c}{A}" in tex and "Avg rank" in tex


def test_efficiency_is_also_csv_and_latex(comparison):
    root, _ = comparison
    rows = list(csv.DictReader((root / "efficiency.csv").open()))
    assert [(r["Dataset"], r["Model"]) for r in rows] == [(d, m) for d in ("ETTh1", "ECL") for m in "ABC"]
    md_a = table_line((root / "efficiency.md").read_text(), "| A |")
    assert [rows[0][k] for k in ("H = 12 Params", "H = 12 FLOPs", "s/epoch")] == [md_a[1], md_a[2], md_a[-1]]
    assert r"\toprule" in (root / "efficiency.tex").read_text()


def test_tall_layout_is_the_wide_table_transposed(comparison, tmp_path):
    """--layout tall: a line per model with the wide table's cells, ranks and first counts; auto turns tall
    only from TALL_FROM models on; an unknown layout is a one-line user error."""
    wide = (comparison[0] / "table.md").read_text()
    root = build_comparison(tmp_path)
    write_report(root, timing=False, layout="tall")
    tall = (root / "table.md").read_text()
    columns = [(d, h) for d in ("ETTh1", "ECL") for h in ("12", "24", "Avg")]
    assert table_line(tall, "| Model |") == (["Model"] + [f"{d} {h} {m}" for d, h in columns for m in ("MSE", "MAE")]
                                             + ["Avg rank MSE", "Avg rank MAE", "1st count MSE", "1st count MAE"])
    for i, row in enumerate("ABC"):
        cells = table_line(tall, f"| {row} |")[1:]
        expected = [c for d, h in columns for c in table_line(wide, f"| {d} | {h} |")[2 + 2 * i : 4 + 2 * i]]
        expected += table_line(wide, "| Avg rank |")[2 + 2 * i : 4 + 2 * i]
        expected += table_line(wide, "| 1st count |")[2 + 2 * i : 4 + 2 * i]
        assert cells == expected
    assert report.TALL_FROM > 3 and "| Dataset | H |" in wide
    with pytest.raises(report.UserInputError, match="table layout 'long' is not one of auto, wide, tall"):
        write_report(root, timing=False, layout="long")


def test_tall_layout_drops_the_average_of_a_single_horizon(tmp_path):
    root = build_comparison(tmp_path)
    records = [json.loads(line) for line in (root / "runs" / "results.jsonl").read_text().splitlines()]
    keep = [r for r in records if r["pred_len"] == 12]
    (root / "runs" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    write_report(root, timing=False, layout="tall")
    head = table_line((root / "table.md").read_text(), "| Model |")
    assert head[1:5] == ["ETTh1 12 MSE", "ETTh1 12 MAE", "ECL 12 MSE", "ECL 12 MAE"] and "ETTh1 Avg MSE" not in head
    # B is best on ETTh1 12 MSE only (0.200), A on ECL 12 (0.100 / 0.10) and ETTh1 12 MAE: counted once each.
    assert table_line((root / "table.md").read_text(), "| A |")[-2:] == ["1", "2"]
    assert table_line((root / "table.md").read_text(), "| B |")[-2:] == ["1", "0"]


def test_average_rank_and_first_place_count(comparison):
    text = (comparison[0] / "table.md").read_text()
    # Ranks of the averages. MSE: ETTh1 B1 A2 C3, ECL B1 A2 (C unranked). MAE: ETTh1 A1 B1 (tie) C3, ECL B1 A2.
    assert table_line(text, "| Avg rank |")[2:] == ["2.0", "1.5", "1.0", "1.0", "3.0", "3.0"]
    # Best cells per metric over the 6 rows (horizons + Avg), ties counting for each: MSE A 2, B 5, C 0;
    # MAE A 3, B 4, C 1.
    assert table_line(text, "| 1st count |")[2:] == ["2", "3", "5", "4", "0", "1"]


def test_reference_sections_show_relative_difference(comparison):
    root = comparison[0]
    text = (root / "table.md").read_text()
    section_a = text.split("### A")[1].split("###")[0]
    assert table_line(section_a, "| ETTh1 | 12 |")[2:] == ["0.300", "0.250", "+20.0%", "0.300", "0.200", "+50.0%"]
    assert table_line(section_a, "| ETTh1 | Avg |")[2:] == ["0.350", "0.375", "-6.7%", "0.300", "0.300", "+0.0%"]
    section_b = text.split("### B")[1].split("##")[0]
    # The reference has only H=12 for B on Electricity (= ECL), so no average is compared.
    assert table_line(section_b, "| ECL | 12 |")[2:] == ["0.200", "0.250", "-20.0%", "0.200", "0.250", "-20.0%"]
    assert "| ECL | Avg |" not in section_b and "### C" not in text
    with (root / "table.csv").open() as f:
        rows = {(r["dataset"], r["pred_len"], r["model"]): r for r in csv.DictReader(f)}
    assert float(rows[("ETTh1", "12", "A")]["mse_diff_pct"]) == pytest.approx(20.0)
    assert rows[("ETTh1", "avg", "B")]["mse_rank"] == "1" and rows[("ECL", "24", "C")]["mse"] == ""
    assert rows[("ETTh1", "12", "A")]["epochs_run"] == "2"


def test_failed_runs_and_conditions_are_listed(comparison):
    text = (comparison[0] / "table.md").read_text()
    assert "`--train_epochs 2` (scripts' epochs overridden)" in text
    assert table_line(text, "| C | ECL | 24 |") == ["C", "ECL", "24", "error: --d_model 30 is not divisible by "
                                                    "--n_heads 4", "runs/logs/c.log"]


def test_efficiency_lists_params_and_flops_per_horizon(comparison):
    text = (comparison[0] / "efficiency.md").read_text()
    # DLinear: two shared Linear(L -> H) layers: 2 (24 H + H) parameters and 2 x 24 H multiply-adds per
    # channel (3 channels, 2 FLOPs each): H=12 -> 600 and 3456, H=24 -> 1200 and 6912.
    # No train step measured (timing off), but s/epoch is the runs' own measured time per epoch.
    assert table_line(text, "| A |") == ["A", "600", "3.46K", "1.2K", "6.91K", "—", "—", "—", "2.0"]
    assert "## ECL (L = 24, 3 variates)" in text


def test_measured_efficiency_fills_step_time_and_memory(tmp_path):
    root = build_comparison(tmp_path)
    report.write_efficiency(root, load_runs(root / "runs")[0], {"data": ["ETTh1"]}, timing=True, steps=2)
    cells = table_line((root / "efficiency.md").read_text(), "| B |")
    assert cells[5] == "4" and float(cells[6]) > 0 and cells[7].endswith("MiB") and cells[8] == "2.0"


def test_mark_best_handles_missing_and_single_values():
    assert mark_best([None, 0.5, 0.5004, 0.7]) == [Cell(None, ""), Cell(0.5, "best"), Cell(0.5004, "best"),
                                                   Cell(0.7, "second")]
    assert mark_best([0.2]) == [Cell(0.2, "best")]


def test_series_is_rebuilt_from_overlapping_windows():
    series = np.arange(30, dtype=np.float32)
    np.testing.assert_array_equal(series_of(windows(series, 7), -1), series)


def test_a_forecast_figure_is_kept_when_a_finished_rows_predictions_are_gone(tmp_path):
    """A fresh clone has the records but not runs/: the committed figure stays rather than being redrawn
    without the rows whose pred.npy is gone; with no figure yet, the rows at hand are drawn."""
    root = build_comparison(tmp_path)
    lost = root / "runs" / "results" / "long_term_forecast_ETTh1_B_pl12_0" / "pred.npy"
    lost.unlink()
    runs, _ = load_runs(root / "runs")
    config = json.loads((root / "compare.json").read_text())
    drawn = report.plot_forecasts(root, runs, config, root / "runs")
    cells = ("ECL_12", "ECL_24", "ETTh1_12", "ETTh1_24")
    assert sorted(p.name for p in drawn) == sorted(f"forecast_{c}.{ext}" for c in cells for ext in ("png", "pdf"))
    figure = root / "forecast_ETTh1_12.png"
    figure.write_bytes(b"committed figure")
    drawn = report.plot_forecasts(root, runs, config, root / "runs")
    assert figure.read_bytes() == b"committed figure" and figure not in drawn and len(drawn) == 6


def test_plain_run_py_results_without_manifest_still_report(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    record = {"setting": "s0", "model": "DLinear", "model_id": "ETTh1_96_96", "pred_len": 96, "mse": 0.4, "mae": 0.5}
    (runs / "results.jsonl").write_text(json.dumps(record) + "\n{partial")
    found, failed = load_runs(runs)
    assert [(r.row, r.dataset, r.pred_len, r.mse) for r in found] == [("DLinear", "ETTh1", 96, 0.4)] and not failed


def test_cli_reports_an_empty_folder_as_user_error(tmp_path, capsys):
    assert report.main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no finished runs in")


def test_tensor_memory_tracker_counts_new_storage_until_freed():
    tracker = TensorMemoryTracker()
    existing = torch.zeros(256, 256)
    with tracker:
        a = torch.empty(1024, 256)  # 1 MiB
        b = a[:10].mul_(2)  # an in-place op on a view allocates nothing
        c = existing + 1  # 0.25 MiB
        del a, b
        d = torch.empty(512, 256)  # 0.5 MiB, after `a` is freed
        existing.add_(1)  # in place on a tensor from before: not counted
    assert tracker.peak == int(1.25 * 2**20)
    assert tracker.live == int(0.75 * 2**20)
    del c, d
    assert tracker.live == 0


def test_overrides_are_attributed_to_their_invocation():
    """Two runner invocations with different overrides: each Runner line names its own, none is
    claimed for every run."""
    config = {"invocations": [
        {"command": "python -m compare --models CAPS --epochs 2", "epochs": 2},
        {"command": "python -m compare --models TimesNet", "epochs": None},
    ]}
    lines = production_notes(config, [], [])
    assert lines[0].endswith("overrides for the runs it started: `--train_epochs 2` (scripts' epochs overridden).")
    assert lines[1].endswith("overrides for the runs it started: none.")
    assert not any("every run" in line for line in lines)


def test_machines_that_print_alike_share_one_line_with_their_invocation_count():
    """Invocations whose machines differ only in a field the report does not print (the kernel build) are
    one line, counted; a machine with another thread count gets its own line."""
    def machine(platform: str, threads: int) -> dict:
        return {"platform": platform, "processor": "x86_64", "cpu_count": 2, "torch_threads": threads,
                "torch": "2.13.0+cpu", "python": "3.11.7"}
    config = {"invocations": [
        {"command": "a", "machine": machine("Linux-v1", 1)},
        {"command": "b", "machine": machine("Linux-v2", 2)},
        {"command": "c", "machine": machine("Linux-v3", 1)},
    ]}
    lines = [line for line in production_notes(config, [], []) if line.startswith("Runs executed on")]
    assert lines == [
        "Runs executed on x86_64 (2 CPUs, torch 2.13.0+cpu, 1 torch thread(s)): 2 invocations.",
        "Runs executed on x86_64 (2 CPUs, torch 2.13.0+cpu, 2 torch thread(s)): 1 invocation.",
    ]


def test_unfinished_runs_show_where_they_stopped_and_the_best_validation_so_far(tmp_path):
    """An interrupted latest attempt is listed with the progress the runner read from last.pth; a later
    finished attempt of the same run removes it, and an entry from before progress was recorded says so."""
    root = build_comparison(tmp_path / "cmp")
    curve = [{"epoch": 1, "train": 0.5, "vali": 0.80, "test": 0.45},
             {"epoch": 2, "train": 0.4, "vali": 0.72, "test": 0.39},
             {"epoch": 3, "train": 0.3, "vali": 0.75, "test": 0.41}]
    argv = [*dlinear_argv("ETTh1", 48), "--train_epochs", "10"]
    extra = [{"row": "A", "dataset": "ETTh1", "pred_len": 48, "status": "interrupted", "settings": ["s48"],
              "argv": argv, "log": "runs/logs/s48.log", "progress": {"s48": {"epoch": 4, "batch": 7, "curve": curve}}},
             {"row": "B", "dataset": "ETTh1", "pred_len": 48, "status": "interrupted", "settings": ["b48"],
              "argv": argv, "log": "runs/logs/b48.log"},
             {"row": "C", "dataset": "ETTh1", "pred_len": 12, "status": "interrupted", "settings": ["c12"],
              "argv": argv, "log": None, "progress": {}}]
    with (root / "runs" / "compare_runs.jsonl").open("a") as f:
        f.writelines(json.dumps(e) + "\n" for e in extra)
    write_report(root, timing=False)
    table = (root / "table.md").read_text()
    unfinished = table.split("## Unfinished runs")[1].splitlines()
    assert "| A | ETTh1 | 48 | epoch 4 of 10, batch 7 | 3 | 0.7200 (epoch 2) | 0.3900 | runs/logs/s48.log |" in unfinished
    assert "| B | ETTh1 | 48 | not recorded (runner older than 2026-11-28) | — | — | — | runs/logs/b48.log |" in unfinished
    assert "| C | ETTh1 | 12 | no last.pth | — | — | — | — |" in unfinished
    # C's ETTh1 H=12 was finished before its interrupted attempt: the latest attempt decides, so it is unfinished.
    assert "## Failed runs" in table and table.index("## Failed runs") < table.index("## Unfinished runs")


def test_a_classification_curve_is_ranked_by_validation_accuracy():
    entry = {"row": "M", "dataset": "JapaneseVowels", "axis": "accuracy", "status": "interrupted", "settings": ["s"],
             "argv": None, "progress": {"s": {"epoch": 3, "batch": 0, "curve": [
                 {"epoch": 1, "train": 1.0, "vali": 0.9, "test": 0.9, "vali_accuracy": 0.7, "test_accuracy": 0.6},
                 {"epoch": 2, "train": 0.8, "vali": 0.95, "test": 0.9, "vali_accuracy": 0.8, "test_accuracy": 0.75}]}}}
    lines = report.run_status_sections([], [entry], "Metric", "axis")
    assert "| M | JapaneseVowels | accuracy | epoch 3, batch 0 | 2 | accuracy 0.8000 (epoch 2) | accuracy 0.7500 | — |" in lines


def test_learning_curves_are_drawn_from_the_records_that_have_them(tmp_path):
    root = build_comparison(tmp_path / "cmp")
    write_report(root, timing=False)
    assert not (root / "learning_curves.png").exists()  # no record has a curve
    records = [json.loads(line) for line in (root / "runs" / "results.jsonl").read_text().splitlines()]
    for record in records[:2]:
        record["curve"] = [{"epoch": e, "train": 1.0 / e, "vali": 1.0 / e + 0.1, "test": 1.0 / e + 0.2}
                           for e in (1, 2, 3)]
        record["best_epoch"] = 3
    (root / "runs" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    runs, _ = load_runs(root / "runs")
    assert sum(r.curve is not None for r in runs) == 2
    paths = write_report(root, timing=False)
    assert root / "learning_curves.png" in paths
    image = imread(root / "learning_curves.png")
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_a_resumed_runs_wall_time_adds_the_attempts_it_continued():
    """A run finished by resuming counts its interrupted predecessors; a restart (not resumed) counts only
    itself, and another run's entries in between are skipped."""
    def entry(row: str, status: str, seconds: float, resumed: bool) -> dict:
        return {"row": row, "dataset": "ETTh1", "pred_len": 96, "seed": None, "status": status,
                "seconds": seconds, "resumed": resumed}
    manifest = [
        entry("A", "interrupted", 100.0, False),   # lost: the next attempt restarted
        entry("A", "interrupted", 10.0, False),
        entry("B", "ok", 5.0, False),
        entry("A", "interrupted", 20.0, True),
        entry("A", "ok", 1.0, True),
    ]
    assert report.attempt_seconds(manifest, report.forecast_key, 4) == 31.0
    assert report.attempt_seconds(manifest, report.forecast_key, 2) == 5.0
    assert report.attempt_seconds(manifest, report.forecast_key, 1) == 10.0
