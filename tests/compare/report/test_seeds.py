"""Seeds in the comparison: `--seeds` planning (one run per seed, distinct settings, finished seeds
skipped) and the seeded report on synthetic result files with known values: mean ± sample std per
cell, Welch's test deciding bold against ≈ (within seed noise), the paired focus statistics checked
against SciPy and hand numbers, and the single-seed report stating that significance cannot be
assessed. No training: results.jsonl and the manifest are written by the test."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread
from scipy import stats

from compare.grid.plan import rows_from_args
from compare.recipes.tables import Dataset, ModelRecipe, RecipeBook
from compare.report import significance
from compare.report.build import Cell, load_runs, mark_with_seeds, write_report
from compare.run import runner

# (row, dataset, H) -> per-seed MSE for seeds 1, 2, 3; MAE = MSE + 0.1 throughout.
# ETTh1 H=12: A is lowest and clearly apart from B and C (bold); B is apart from C (underline).
# ETTh1 H=24: B has the lowest mean 0.420, A's 0.430 is well inside the seeds' spread (≈, no bold);
# C is far above both.
# ECL H=12: A lowest, C's mean is 0.101 above A's but with a huge spread: A bold only if C is apart.
SEEDS = (1, 2, 3)
MSE = {
    ("A", "ETTh1", 12): (0.300, 0.310, 0.320), ("B", "ETTh1", 12): (0.400, 0.410, 0.420),
    ("C", "ETTh1", 12): (0.500, 0.520, 0.540),
    ("A", "ETTh1", 24): (0.400, 0.430, 0.460), ("B", "ETTh1", 24): (0.410, 0.420, 0.430),
    ("C", "ETTh1", 24): (0.600, 0.610, 0.620),
    ("A", "ECL", 12): (0.200, 0.200, 0.203), ("B", "ECL", 12): (0.250, 0.251, 0.252),
    ("C", "ECL", 12): (0.100, 0.302, 0.510),
}


def table_line(text: str, prefix: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(prefix))
    return [cell.strip() for cell in line.strip("|").split("|")]


def build_comparison(root: Path, metrics: dict, seeds: tuple, *, seeded: bool = True) -> Path:
    """A comparison folder as `python -m compare --seeds ...` leaves it (no arrays: no forecast plots).
    seeded=False writes the manifest of a run without --seeds (no `seed` key, TSLib's settings)."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    results, manifest = [], []
    for (row, dataset, horizon), values in metrics.items():
        for seed, mse in zip(seeds, values, strict=True):
            suffix = f"_s{seed}" if seeded else ""
            setting = f"long_term_forecast_{dataset}_24_{horizon}{suffix}_{row}_pl{horizon}_0"
            results.append({"setting": setting, "model": "DLinear", "pred_len": horizon, "mse": mse,
                            "mae": mse + 0.1, "seed": seed, "epochs_run": 2, "best_epoch": seed, "params": 600})
            entry = {"row": row, "dataset": dataset, "pred_len": horizon, "status": "ok", "settings": [setting],
                     "argv": [], "seconds": 5.0, "error": None}
            if seeded:
                entry["seed"] = seed
            manifest.append(entry)
    (runs / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (runs / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    config = {"data": ["ETTh1", "ECL"], "rows": [{"name": n, "base": "DLinear", "flags": []} for n in "ABC"],
              "invocations": [{"command": "python -m compare --data ETTh1 ECL", "seeds": list(seeds) if seeded
                               else None}]}
    (root / "compare.json").write_text(json.dumps(config))
    return root


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> tuple[Path, list[Path]]:
    root = build_comparison(tmp_path_factory.mktemp("seeds"), MSE, SEEDS)
    # efficiency.md needs run.py argv to build models; this comparison has none, so its table is all —.
    return root, write_report(root, timing=False)


def test_runs_are_kept_per_seed(seeded):
    runs, failed = load_runs(seeded[0] / "runs")
    assert not failed and len(runs) == len(MSE) * len(SEEDS)
    assert sorted(r.seed for r in runs if (r.row, r.dataset, r.pred_len) == ("A", "ETTh1", 12)) == [1, 2, 3]


def test_cells_show_mean_and_sample_std(seeded):
    text = (seeded[0] / "table.md").read_text()
    # A at ETTh1 H=12: mean 0.310, sample std 0.010 (n - 1 = 2: sqrt((0.01² + 0 + 0.01²) / 2)); MAE + 0.1.
    assert table_line(text, "| ETTh1 | 12 |")[2:4] == ["**0.310 ± 0.010**", "**0.410 ± 0.010**"]
    assert "mean ± sample standard deviation over n = 3 seeds (seeds 1, 2, 3)" in text
    assert "`--seeds 1 2 3` (one run per seed)" in text and "`_sS` ends its model_id" in text
    with (seeded[0] / "table.csv").open() as f:
        rows = {(r["dataset"], r["pred_len"], r["model"]): r for r in csv.DictReader(f)}
    cell = rows[("ETTh1", "24", "A")]
    assert float(cell["mse"]) == pytest.approx(0.43) and float(cell["mse_std"]) == pytest.approx(0.03)
    assert cell["n_seeds"] == "3" and cell["seeds"] == "1;2;3" and cell["best_epoch"] == "1;2;3"
    assert len(cell["settings"].split(";")) == 3


def test_clear_win_is_bold_and_second_underlined(seeded):
    text = (seeded[0] / "table.md").read_text()
    assert table_line(text, "| ETTh1 | 12 |")[2:] == [
        "**0.310 ± 0.010**", "**0.410 ± 0.010**", "_0.410 ± 0.010_", "_0.510 ± 0.010_",
        "0.520 ± 0.020", "0.620 ± 0.020"]


def test_difference_within_seed_noise_is_not_bolded(seeded):
    text = (seeded[0] / "table.md").read_text()
    # B's 0.420 is the lowest mean but A's 0.430 is within the seed noise: both ≈, nobody bold.
    assert table_line(text, "| ETTh1 | 24 |")[2:] == [
        "≈0.430 ± 0.030", "≈0.530 ± 0.030", "≈0.420 ± 0.010", "≈0.520 ± 0.010", "0.610 ± 0.010", "0.710 ± 0.010"]
    # ECL: A's mean is lowest by far, but C's seeds spread over 0.1 .. 0.51: A is tied with C, not bold,
    # and B (apart from A, within noise of C) gets no underline either.
    assert table_line(text, "| ECL | 12 |")[2:4] == ["≈0.201 ± 0.002", "≈0.301 ± 0.002"]
    assert table_line(text, "| ECL | 12 |")[4:6] == ["0.251 ± 0.001", "0.351 ± 0.001"]
    assert table_line(text, "| ECL | 12 |")[6:] == ["≈0.304 ± 0.205", "≈0.404 ± 0.205"]
    # 1st count: only bold lines. MSE: A at ETTh1 H=12 and ETTh1 Avg; MAE the same.
    assert table_line(text, "| 1st count |")[2:] == ["2", "2", "0", "0", "0", "0"]


def test_avg_line_uses_per_seed_horizon_averages(seeded):
    text = (seeded[0] / "table.md").read_text()
    # A's ETTh1 averages per seed: 0.35, 0.37, 0.39 (std 0.02); B's: 0.405, 0.415, 0.425 (std 0.01).
    assert table_line(text, "| ETTh1 | Avg |")[2] == "**0.370 ± 0.020**"
    assert table_line(text, "| ETTh1 | Avg |")[4] == "_0.415 ± 0.010_"


def test_welch_p_matches_the_formula():
    a, b = np.array([0.40, 0.43, 0.46]), np.array([0.41, 0.42, 0.43])
    va, vb = a.var(ddof=1) / 3, b.var(ddof=1) / 3
    t = (a.mean() - b.mean()) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 2)  # Welch–Satterthwaite
    assert significance.welch_p(a, b) == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-12)
    assert significance.welch_p(a, b) > significance.ALPHA
    assert significance.welch_p([0.3], b) is None
    assert significance.welch_p([0.3, 0.3], [0.3, 0.3]) == 1.0 and significance.welch_p([0.3, 0.3], [0.4, 0.4]) == 0.0


def test_cell_difference_interval_is_welch_over_the_other_mean():
    a, b = [0.40, 0.43, 0.46], [0.41, 0.42, 0.43]
    d = significance.relative_difference(a, b)
    welch = stats.ttest_ind(a, b, equal_var=False)
    interval = welch.confidence_interval(0.95)
    assert d.relative == pytest.approx((0.43 - 0.42) / 0.42)
    assert (d.low, d.high) == pytest.approx((interval.low / 0.42, interval.high / 0.42))
    assert d.low < 0 < d.high and d.within_noise is True and d.p == pytest.approx(welch.pvalue)
    assert significance.relative_difference([0.3, 0.31, 0.32], [0.4, 0.41, 0.42]).within_noise is False
    assert significance.relative_difference([0.3], [0.4, 0.41]).within_noise is None


def test_paired_statistics_against_scipy_and_hand_numbers():
    # The (dataset, horizon, seed) cells of A against B in MSE, in the report's order.
    keys = [("ETTh1", 12), ("ETTh1", 24), ("ECL", 12)]
    ours = np.array([v for k in keys for v in MSE[("A", *k)]])
    theirs = np.array([v for k in keys for v in MSE[("B", *k)]])
    pc = significance.paired_comparison(ours, theirs, decimals=3)
    # By hand: A is lower everywhere but at ETTh1 H=24 seed 1 (0.400 < 0.410 wins), seed 2 (0.430 > 0.420
    # loses) and seed 3 (0.460 > 0.430 loses): 7 wins, 2 losses.
    assert (pc.n, pc.wins, pc.losses, pc.ties) == (9, 7, 2, 0)
    relative = (ours - theirs) / theirs
    assert pc.mean_relative == pytest.approx(relative.mean(), rel=1e-12)
    assert pc.wilcoxon_p == pytest.approx(stats.wilcoxon(relative).pvalue, rel=1e-12)
    # The paired t-test of the relative differences is the one-sample t-test against 0, by hand:
    t = relative.mean() / (relative.std(ddof=1) / 3)
    assert pc.ttest_p == pytest.approx(2 * stats.t.sf(abs(t), 8), rel=1e-9)
    boot = stats.bootstrap((relative,), np.mean, confidence_level=0.95, method="percentile",
                           n_resamples=significance.BOOTSTRAP_RESAMPLES, rng=np.random.default_rng(0))
    assert (pc.low, pc.high) == pytest.approx((boot.confidence_interval.low, boot.confidence_interval.high))
    assert relative.min() < pc.low < pc.mean_relative < pc.high < relative.max()


def test_paired_statistics_of_identical_rows_are_not_invented():
    pc = significance.paired_comparison([0.3, 0.4], [0.3, 0.4])
    assert (pc.wins, pc.losses, pc.ties, pc.mean_relative, pc.low, pc.high) == (0, 0, 2, 0.0, 0.0, 0.0)
    assert math.isnan(pc.wilcoxon_p) and math.isnan(pc.ttest_p)
    one = significance.paired_comparison([0.3], [0.4])
    assert one.wins == 1 and math.isnan(one.low) and math.isnan(one.wilcoxon_p)


def test_report_section_on_the_focus_row(seeded):
    text = (seeded[0] / "table.md").read_text()
    section = text.split("## Seeds: A against each other row")[1]
    assert "95 % percentile bootstrap interval" in section and "Wilcoxon signed-rank" in section
    ours = np.array([v for k in [("ETTh1", 12), ("ETTh1", 24), ("ECL", 12)] for v in MSE[("A", *k)]])
    theirs = np.array([v for k in [("ETTh1", 12), ("ETTh1", 24), ("ECL", 12)] for v in MSE[("B", *k)]])
    mean = 100 * np.mean((ours - theirs) / theirs)
    line = table_line(section, "| B |")
    assert line[1:6] == ["9", "7", "2", "0", f"{mean:+.1f}%"]
    assert line[7] == f"{stats.wilcoxon((ours - theirs) / theirs).pvalue:.3g}"
    # Within seed noise against B: ETTh1 H=24 only, of the 3 cells.
    assert line[9] == "1 of 3"
    per_cell = section.split("### Per cell")[1]
    assert table_line(per_cell, "| Dataset |") == ["Dataset", "H", "vs B", "vs C"]
    assert table_line(per_cell, "| ETTh1 | 24 |")[2].startswith(f"≈ {100 * (0.43 - 0.42) / 0.42:+.1f}% [")
    assert table_line(per_cell, "| ETTh1 | 12 |")[2].startswith(f"{100 * (0.31 - 0.41) / 0.41:+.1f}% [")


def test_focus_picks_the_compared_row(tmp_path):
    root = build_comparison(tmp_path, MSE, SEEDS)
    write_report(root, timing=False, focus="b")
    text = (root / "table.md").read_text()
    assert "## Seeds: B against each other row" in text
    assert table_line(text.split("### Per cell")[1], "| Dataset |") == ["Dataset", "H", "vs A", "vs C"]
    with pytest.raises(runner.UserInputError, match="--focus 'Z' is not a row of this comparison; choose from A, B, C"):
        write_report(root, timing=False, focus="Z")


def test_several_focus_rows_get_a_section_and_a_plot_each(tmp_path):
    root = build_comparison(tmp_path, MSE, SEEDS)
    paths = write_report(root, timing=False, focus=["a", "C"])
    text = (root / "table.md").read_text()
    first = text.split("## Seeds: A against each other row")[1].split("## Seeds: C against each other row")[0]
    second = text.split("## Seeds: C against each other row")[1]
    assert "Plotted in `seed_differences.png`" in first and "Plotted in `seed_differences_c.png`" in second
    assert table_line(second.split("### Per cell")[1], "| Dataset |") == ["Dataset", "H", "vs A", "vs B"]
    ours = np.array([v for k in [("ETTh1", 12), ("ETTh1", 24), ("ECL", 12)] for v in MSE[("C", *k)]])
    theirs = np.array([v for k in [("ETTh1", 12), ("ETTh1", 24), ("ECL", 12)] for v in MSE[("B", *k)]])
    assert table_line(second, "| B |")[5] == f"{100 * np.mean((ours - theirs) / theirs):+.1f}%"
    assert {root / "seed_differences.png", root / "seed_differences_c.png"} <= set(paths)
    assert imread(root / "seed_differences_c.png").shape[0] >= 300


def test_seed_differences_plot_is_written(seeded):
    root, paths = seeded
    assert root / "seed_differences.png" in paths
    height, width, _ = imread(root / "seed_differences.png").shape
    assert height >= 300 and width >= 500


def test_single_seed_report_says_significance_cannot_be_assessed(tmp_path):
    one = {key: values[:1] for key, values in MSE.items()}
    root = build_comparison(tmp_path, one, SEEDS[:1], seeded=False)
    paths = write_report(root, timing=False)
    text = (root / "table.md").read_text()
    assert "significance" not in text.split("## Seeds")[0].lower()
    assert "(one seed), so whether a difference between models exceeds the variation between seeds " \
           "**cannot be assessed**" in text
    # Marks as before seeds existed: the lowest value bold, no ±, no ≈, no focus section or plot.
    assert table_line(text, "| ETTh1 | 24 |")[2:] == ["**0.400**", "**0.500**", "_0.410_", "_0.510_", "0.600", "0.700"]
    table = text.split("## Seeds")[0]
    assert "±" not in table and "≈" not in table and "against each other row" not in text
    assert not (root / "seed_differences.png").exists() and root / "seed_differences.png" not in paths


def test_a_single_seed_row_is_marked_untested():
    means, samples = [0.30, 0.40], [{1: 0.30, 2: 0.30}, {1: 0.40}]
    assert mark_with_seeds(means, samples) == ([Cell(0.30, "best"), Cell(0.40, "second")], False)
    tied = [{1: 0.30, 2: 0.50}, {1: 0.41, 2: 0.39}]
    assert mark_with_seeds([0.40, 0.40], tied) == ([Cell(0.40, "tied"), Cell(0.40, "tied")], True)


def test_mixed_seed_counts_show_n_and_dagger(tmp_path):
    root = build_comparison(tmp_path, MSE, SEEDS)
    runs_dir = root / "runs"
    # B's ECL seed 3 was interrupted (n = 2); C's ETTh1 H=12 seeds 2 and 3 failed (n = 1).
    manifest = [json.loads(line) for line in (runs_dir / "compare_runs.jsonl").read_text().splitlines()]
    for entry in manifest:
        if (entry["row"], entry["dataset"], entry["seed"]) == ("B", "ECL", 3):
            entry["status"] = "interrupted"
        if (entry["row"], entry["dataset"], entry["pred_len"]) == ("C", "ETTh1", 12) and entry["seed"] > 1:
            entry["status"] = "failed"
    (runs_dir / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    # B's ECL seeds: 0.250, 0.251 -> mean 0.2505, std 0.0007.
    assert table_line(text, "| ECL | 12 |")[4].endswith(" ± 0.001 (n=2)")
    # A single-seed cell: the line is marked † and its marks follow the means untested.
    assert table_line(text, "| ETTh1 | 12 † |")[2:] == [
        "**0.310 ± 0.010**", "**0.410 ± 0.010**", "_0.410 ± 0.010_", "_0.510 ± 0.010_", "0.500 (n=1)", "0.600 (n=1)"]
    assert "†: a model of that line has a single seed" in text
    assert table_line(text, "| C | ETTh1 | 12 (seed 2) |")[3:] == ["no result recorded", "—"]
    assert "| ETTh1 | 24 |" in text


# --- planning with --seeds (no training) -------------------------------------------------------------

TOY_FLAGS = {
    "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 24,
    "label_len": 12, "pred_len": "{pred_len}", "enc_in": "{channels}", "dec_in": "{channels}",
    "c_out": "{channels}", "d_model": 16, "d_ff": 16, "n_heads": 2, "e_layers": 1, "batch_size": 16,
    "train_epochs": 10, "seed": 7, "des": "Exp", "itr": 1,
}
TOY = RecipeBook(
    datasets={"toy": Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 3, fetch="toy", folder="Toy_script",
                             horizons=(12, 24))},
    models={m: ModelRecipe(m, TOY_FLAGS, {"toy": {}}) for m in ("DLinear", "iTransformer")},
)


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("seeds_data")
    (root / "toy").mkdir()
    pd.DataFrame({"date": pd.date_range("2021-01-01", periods=100, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
                  "x0": np.arange(100.0), "x1": np.arange(100.0), "OT": np.arange(100.0)}).to_csv(
        root / "toy" / "toy.csv", index=False)
    return root


def plan(data_root: Path, *extra: str) -> list[runner.PlannedRun]:
    args = runner.build_parser().parse_args(["--data", "toy", "--models", "DLinear", "iTransformer",
                                             "--pred_lens", "12", "24", "--root", str(data_root), *extra])
    args.extra_flags = []
    return runner.plan_runs(args, rows_from_args(args, TOY), TOY)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_seeds_repeat_every_run_with_distinct_settings(data_root):
    runs = plan(data_root, "--seeds", "2021", "2022", "--variant", "Wide=DLinear:--d_model 32")
    assert len(runs) == 2 * 2 * 3 and all(r.error is None for r in runs)
    settings = [s for r in runs for s in r.settings]
    assert len(set(settings)) == len(settings)
    # Seeds are the outer loop: the whole first seed's grid comes first.
    assert [r.seed for r in runs] == [2021] * 6 + [2022] * 6
    first = runs[0]
    assert first.label == "DLinear | toy | H=12 | seed 2021"
    assert flag(first.argv, "--seed") == "2021" and first.argv.count("--seed") == 1
    assert flag(first.argv, "--model_id") == "toy_24_12_s2021"
    wide = next(r for r in runs if r.row.name == "Wide" and r.seed == 2022 and r.pred_len == 24)
    assert flag(wide.argv, "--model_id") == "toy_24_24_Wide_s2022"
    assert wide.settings[0].startswith("long_term_forecast_toy_24_24_Wide_s2022_DLinear_")


def test_without_seeds_the_settings_are_unchanged(data_root):
    runs = plan(data_root)
    assert [r.seed for r in runs] == [None] * 4
    assert flag(runs[0].argv, "--model_id") == "toy_24_12" and flag(runs[0].argv, "--seed") == "7"
    assert runs[0].label == "DLinear | toy | H=12"
    assert runs[0].settings == ["long_term_forecast_toy_24_12_DLinear_custom_ftM_sl24_ll12_pl12_dm16_nh2_el1_dl1"
                                "_df16_expand2_dc4_fc1_ebtimeF_dtTrue_Exp_0"]


def invoke(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv, TOY)
    return code, buffer.getvalue()


def test_finished_seeds_are_skipped(data_root, tmp_path):
    out = tmp_path / "out"
    done = next(r for r in plan(data_root, "--seeds", "1", "2") if r.seed == 2 and r.row.name == "iTransformer"
                and r.pred_len == 24)
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "results.jsonl").write_text(json.dumps({"setting": done.settings[0], "mse": 0.5}) + "\n")
    code, log = invoke(["--data", "toy", "--models", "DLinear", "iTransformer", "--pred_lens", "12", "24",
                        "--root", str(data_root), "--out", str(out), "--seeds", "1", "2", "--dry-run"])
    assert code == 0
    assert "comparison: 8 runs planned, 1 already finished, 7 to run, 0 cannot run" in log
    assert "skip iTransformer | toy | H=24 | seed 2\n" in log
    assert "run  iTransformer | toy | H=24 | seed 1\n" in log


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--seeds", "1", "2", "1"], "error: --seeds repeats 1: give each seed once"),
     (["--focus", "PatchTST"], "error: --focus 'PatchTST' is not a row of this comparison; choose from DLinear, "
                               "iTransformer")],
    ids=["repeated-seed", "unknown-focus"],
)
def test_seed_flag_errors_are_usage_errors(data_root, tmp_path, capsys, extra, message):
    code = runner.main(["--data", "toy", "--models", "DLinear", "iTransformer", "--root", str(data_root),
                        "--out", str(tmp_path / "out"), *extra], TOY)
    assert code == 2 and capsys.readouterr().err.strip() == message
