"""compare.report.zero_shot: a zero-shot row is labelled with its look-back and ranked beside the trained rows only
when it was scored on their test windows; an every-k-th-window estimate (or a run on other windows) is shown apart,
with the trained rows' scores on the same windows, and left out of ranks, win rates and significance tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compare.report.build import write_report
from compare.report.zero_shot import SIDECAR

HORIZON = 12
#: trained rows and the constant their forecasts are off by: MSE = offset², MAE = |offset|
OFFSET = {"A": 0.1, "B": -0.3}
LABEL = "Fracast (zero-shot, L=2048)"


def trained_argv() -> list[str]:
    return ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", f"ETTh1_24_{HORIZON}",
            "--model", "DLinear", "--data", "custom", "--seq_len", "24", "--label_len", "12", "--pred_len",
            str(HORIZON), "--enc_in", "2", "--dec_in", "2", "--c_out", "2"]


def zero_shot_argv(every: int) -> list[str]:
    return ["--task_name", "zero_shot_forecast", "--is_training", "0", "--model_id", f"ETTh1_2048_{HORIZON}",
            "--model", "Fracast", "--data", "custom", "--seq_len", "2048", "--pred_len", str(HORIZON),
            "--enc_in", "2", "--dec_in", "2", "--c_out", "2", "--test_every", str(every)]


def target_windows(shift: float = 0.0) -> np.ndarray:
    """49 overlapping target windows `[N, H, 2]` of a sine."""
    series = np.sin(np.arange(60) / 4.0) + shift
    one = np.stack([series[i : i + HORIZON] for i in range(len(series) - HORIZON + 1)])  # [N, H]
    return np.stack([one, one], axis=-1).astype(np.float32)


def save(folder: Path, pred: np.ndarray, true: np.ndarray) -> None:
    folder.mkdir(parents=True)
    np.save(folder / "pred.npy", pred)
    np.save(folder / "true.npy", true)


def build(root: Path, every: int, *, zero_shot_true: np.ndarray | None = None) -> Path:
    """A comparison folder with trained rows A, B and a Fracast zero-shot run scored on every `every`-th window
    (its forecast off by 0.2; its ground truth `zero_shot_true`, default the trained rows')."""
    runs = root / "runs"
    true = target_windows()
    results, manifest = [], []
    for row, offset in OFFSET.items():
        setting = f"long_term_forecast_ETTh1_{row}_pl{HORIZON}_0"
        save(runs / "results" / setting, true + offset, true)
        results.append({"setting": setting, "model": "DLinear", "model_id": f"ETTh1_24_{HORIZON}", "pred_len": HORIZON,
                        "mse": offset ** 2, "mae": abs(offset), "epochs_run": 2, "best_epoch": 1,
                        "train_seconds": 4.0, "params": 600, "naive": {"mse": 1.5, "mae": 1.0}})
        manifest.append({"row": row, "dataset": "ETTh1", "pred_len": HORIZON, "status": "ok", "settings": [setting],
                         "argv": trained_argv(), "seconds": 5.0, "error": None})
    own_true = (true if zero_shot_true is None else zero_shot_true)[::every]
    setting = f"zero_shot_forecast_ETTh1_Fracast_pl{HORIZON}_0" + (f"_every{every}" if every > 1 else "")
    save(runs / "results" / setting, own_true + 0.2, own_true)
    record = {"setting": setting, "model": "Fracast", "model_id": f"ETTh1_2048_{HORIZON}", "pred_len": HORIZON,
              "mse": 0.04, "mae": 0.2, "epochs_run": 0, "best_epoch": None, "train_seconds": 0.0, "params": 85001,
              "naive": {"mse": 1.5, "mae": 1.0}, "zero_shot": True, "lookback": 2048, "test_every": every}
    if every > 1:
        record["test_windows_of"] = len(true)
    results.append(record)
    manifest.append({"row": "Fracast", "dataset": "ETTh1", "pred_len": HORIZON, "status": "ok", "settings": [setting],
                     "argv": zero_shot_argv(every), "seconds": 30.0, "error": None})
    (runs / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (runs / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    rows = [{"name": n, "base": b, "flags": []} for n, b in (("A", "DLinear"), ("B", "DLinear"), ("Fracast", "Fracast"))]
    (root / "compare.json").write_text(json.dumps({"data": ["ETTh1"], "rows": rows, "invocations": []}))
    return root


def main_table(text: str) -> str:
    """table.md up to the zero-shot section."""
    return text.split("## Zero-shot rows")[0]


def test_a_run_on_every_window_is_labelled_and_ranked(tmp_path):
    root = build(tmp_path, every=1)
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    assert LABEL in main_table(text)
    assert f"Ranked above (scored on every test window the trained rows were): {LABEL}." in text
    assert "**Not ranked**" not in text and not (root / SIDECAR).exists()
    ranks = json.loads((root / "cell_statistics.json").read_text())
    assert LABEL in json.dumps(ranks) and '"Fracast"' not in json.dumps(ranks)
    efficiency = (root / "efficiency.md").read_text()
    line = next(line for line in efficiency.splitlines() if line.startswith(f"| {LABEL} |"))
    assert line == f"| {LABEL} | 85K | — | — | — | — | not trained |"


def test_an_every_kth_window_estimate_is_shown_apart_and_never_ranked(tmp_path):
    root = build(tmp_path, every=5)
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    label = "Fracast (zero-shot, L=2048, every 5th of 49 windows)"
    assert "Fracast" not in main_table(text) and "Fracast" not in (root / "cell_statistics.json").read_text()
    assert "Fracast" not in (root / "table.csv").read_text()
    assert (f"| {label} | ETTh1 | {HORIZON} | 0.040 | 0.200 | 10 of 49 | every 5th test window only: an estimate, "
            "not scored on the trained rows' windows |") in text
    # The trained rows on the same 10 windows: their forecasts are off by a constant, so MSE = offset².
    assert f"| {label} | 0.040 | 0.200 |\n| A | 0.010 | 0.100 |\n| B | 0.090 | 0.300 |" in text
    matched = json.loads((root / SIDECAR).read_text())
    assert matched[f"zero_shot_forecast_ETTh1_Fracast_pl{HORIZON}_0_every5"]["B"] == pytest.approx(
        {"mse": 0.09, "mae": 0.3})
    assert f"| {label} | 85K | — |" in (root / "efficiency.md").read_text()


def test_the_same_window_scores_survive_when_the_forecasts_are_gone(tmp_path):
    root = build(tmp_path, every=5)
    write_report(root, timing=False)
    first = (root / "table.md").read_text()
    for path in (root / "runs" / "results").rglob("*.npy"):
        path.unlink()
    write_report(root, timing=False)
    assert "| A | 0.010 | 0.100 |\n| B | 0.090 | 0.300 |" in (root / "table.md").read_text()
    assert first.split("## Zero-shot rows")[1] == (root / "table.md").read_text().split("## Zero-shot rows")[1]


def test_a_run_on_other_windows_is_not_ranked_silently(tmp_path):
    root = build(tmp_path, every=1, zero_shot_true=target_windows(shift=1.0))
    write_report(root, timing=False)
    text = (root / "table.md").read_text()
    assert "Fracast" not in main_table(text)
    assert f"| {LABEL} | ETTh1 | {HORIZON} | 0.040 | 0.200 | all of its own | other test targets than A |" in text


def test_focus_may_name_the_zero_shot_row_as_the_runner_knows_it(tmp_path):
    root = build(tmp_path, every=1)
    write_report(root, timing=False, focus="Fracast")
    assert f"Ranked above (scored on every test window the trained rows were): {LABEL}." in (
        root / "table.md").read_text()
