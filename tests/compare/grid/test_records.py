"""`compare.grid.records.records_dir` / `folder_runs`: which copy of a comparison folder's records is read (its
runs/ when that holds results, else the committed copies beside compare.json), and the one-line error without
either. Synthetic records, no training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare.grid.records import RUNS_DIR, folder_runs, records_dir
from utils.errors import UserInputError


def write_records(where: Path, mse: float) -> None:
    """One finished DLinear ETTh1-96 run with test MSE `mse` (results.jsonl and its manifest entry)."""
    where.mkdir(parents=True, exist_ok=True)
    setting = "long_term_forecast_ETTh1_96_96_DLinear"
    (where / "results.jsonl").write_text(json.dumps(
        {"setting": setting, "model": "DLinear", "pred_len": 96, "mse": mse, "mae": 0.5, "seed": 1}) + "\n")
    (where / "compare_runs.jsonl").write_text(json.dumps(
        {"row": "DLinear", "dataset": "ETTh1", "pred_len": 96, "seed": 1, "status": "ok", "settings": [setting],
         "argv": [], "seconds": 1.0, "error": None}) + "\n")


def test_the_local_runs_win_over_the_committed_copies(tmp_path):
    write_records(tmp_path, 0.40)
    assert records_dir(tmp_path) == tmp_path and [r.mse for r in folder_runs(tmp_path)] == [0.40]
    (tmp_path / RUNS_DIR).mkdir()  # an empty runs/ (no results yet) does not hide the committed copies
    assert records_dir(tmp_path) == tmp_path
    write_records(tmp_path / RUNS_DIR, 0.30)
    assert records_dir(tmp_path) == tmp_path / RUNS_DIR and [r.mse for r in folder_runs(tmp_path)] == [0.30]


def test_a_folder_without_records_is_a_one_line_error(tmp_path):
    with pytest.raises(UserInputError, match="no results.jsonl there or in its runs/") as err:
        folder_runs(tmp_path)
    assert "\n" not in str(err.value)
