"""End-to-end `run.py` with TSLib's augmentation flags: the train split is augmented, the setting
string and output files are TSLib's, and label-dependent presets stop with one line."""

from __future__ import annotations

import json

import pytest

import run
from exp.arguments import build_parser, make_setting
from tests.exp.test_run_end_to_end import custom_argv


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_augmented_run_writes_tslib_files_and_trains_on_other_data(in_tmp, toy_csv):
    toy_csv(in_tmp / "toy.csv")
    plain = custom_argv(in_tmp, "DLinear")
    assert run.main(plain) == 0
    # The same setting with other flags needs its own checkpoint folder (its config.json refuses them otherwise).
    augmented = custom_argv(in_tmp, "DLinear", "--augmentation_ratio", "1", "--jitter", "--timewarp",
                            "--checkpoints", "./checkpoints_augmented/")
    assert run.main(augmented) == 0
    setting = make_setting(build_parser().parse_args(augmented), 0)
    assert setting == make_setting(build_parser().parse_args(plain), 0)  # TSLib adds no augmentation tag
    assert (in_tmp / "results" / setting / "metrics.npy").is_file()
    first, second = (json.loads(line) for line in (in_tmp / "results.jsonl").read_text().splitlines())
    assert first["mse"] != second["mse"]


def test_label_preset_on_forecasting_is_one_error_line(in_tmp, toy_csv, capsys):
    toy_csv(in_tmp / "toy.csv")
    assert run.main(custom_argv(in_tmp, "DLinear", "--augmentation_ratio", "1", "--dtwwarp")) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("--dtwwarp needs class labels (--task_name classification); "
                            "--task_name long_term_forecast has none")
    assert not (in_tmp / "results").exists()
