"""`benchmarks/epoch_selection_gap.py`: the three epochs it reads from a run's curve, and its table on a synthetic
comparison folder (committed copies only) against a reference CSV. No training."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.epoch_selection_gap import epoch_choices, main  # noqa: E402

CURVE = [{"epoch": 1, "train": 0.9, "vali": 0.70, "test": 0.50},
         {"epoch": 2, "train": 0.8, "vali": 0.60, "test": 0.44},
         {"epoch": 3, "train": 0.7, "vali": 0.60, "test": 0.40},
         {"epoch": 4, "train": 0.6, "vali": 0.65, "test": 0.46}]


def test_best_validation_lowest_test_and_last_epochs():
    # Equal validation lows: early stopping keeps the first (epoch 2); the record's best_epoch wins when given.
    assert epoch_choices(CURVE) == {"best validation": (2, 0.44), "lowest test": (3, 0.40), "last": (4, 0.46)}
    assert epoch_choices(CURVE, best_epoch=3)["best validation"] == (3, 0.40)


def test_the_table_holds_each_choice_against_the_reference(tmp_path, capsys):
    setting = "long_term_forecast_ETTh1_96_96_DLinear"
    (tmp_path / "results.jsonl").write_text(json.dumps(
        {"setting": setting, "model": "DLinear", "pred_len": 96, "mse": 0.44, "mae": 0.5, "seed": 7, "epochs_run": 4,
         "best_epoch": 2, "curve": CURVE}) + "\n")
    (tmp_path / "compare_runs.jsonl").write_text(json.dumps(
        {"row": "DLinear", "dataset": "ETTh1", "pred_len": 96, "status": "ok", "settings": [setting], "argv": [],
         "seconds": 1.0, "error": None}) + "\n")
    reference = tmp_path / "reference.csv"
    reference.write_text("dataset,pred_len,model,mse,mae\nETTh1,96,DLinear,0.400,0.5\n")
    assert main([str(tmp_path), "--reference", str(reference)]) == 0
    out = capsys.readouterr().out
    assert f"| DLinear | ETTh1 | 96 | 7 | {tmp_path.name} | 4 | 2, 0.4400, +10.0 % | 3, 0.4000, +0.0 % | " \
           "4, 0.4600, +15.0 % | 0.400 |" in out
    assert "| DLinear | 1 | +10.0 % | +0.0 % | +15.0 % |" in out


def test_a_folder_without_records_is_a_one_line_error(tmp_path, capsys):
    reference = tmp_path / "reference.csv"
    reference.write_text("dataset,pred_len,model,mse,mae\n")
    assert main([str(tmp_path), "--reference", str(reference)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
