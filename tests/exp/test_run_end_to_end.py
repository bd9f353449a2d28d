"""End-to-end `run.py` runs: the TSLib output files on real ETTh1, test-only reload, determinism,
gradient accumulation and bad input ending in one error line with no output written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import run
from exp.arguments import build_parser, make_setting

SMALL = ["--num_workers", "0", "--no_progress", "--train_epochs", "1", "--des", "Exp"]


def etth1_argv(mirror: Path, *extra: str) -> list[str]:
    return [
        "--task_name", "long_term_forecast", "--is_training", "1", "--root_path", str(mirror / "ETT-small"),
        "--data_path", "ETTh1.csv", "--model_id", "ETTh1_96_96", "--model", "DLinear", "--data", "ETTh1",
        "--features", "M", "--seq_len", "96", "--label_len", "48", "--pred_len", "96", "--enc_in", "7",
        "--dec_in", "7", "--c_out", "7", "--batch_size", "64", *SMALL, *extra,
    ]


def custom_argv(root: Path, model: str, *extra: str) -> list[str]:
    return [
        "--task_name", "long_term_forecast", "--is_training", "1", "--root_path", str(root),
        "--data_path", "toy.csv", "--model_id", "toy", "--model", model, "--data", "custom", "--features", "M",
        "--seq_len", "24", "--label_len", "12", "--pred_len", "12", "--enc_in", "3", "--dec_in", "3",
        "--c_out", "3", "--d_model", "16", "--d_ff", "32", "--n_heads", "2", "--e_layers", "1", *SMALL, *extra,
    ]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_etth1_run_writes_every_tslib_file(in_tmp, data_mirror):
    argv = etth1_argv(data_mirror)
    assert run.main(argv) == 0
    setting = make_setting(build_parser().parse_args(argv), 0)
    assert setting == ("long_term_forecast_ETTh1_96_96_DLinear_ETTh1_ftM_sl96_ll48_pl96_dm512_nh8_el2_dl1"
                       "_df2048_expand2_dc4_fc1_ebtimeF_dtTrue_Exp_0")
    assert (in_tmp / "checkpoints" / setting / "checkpoint.pth").is_file()
    pred = np.load(in_tmp / "results" / setting / "pred.npy")
    true = np.load(in_tmp / "results" / setting / "true.npy")
    metrics = np.load(in_tmp / "results" / setting / "metrics.npy")
    assert pred.shape == true.shape == (2785, 96, 7)  # every test window, none dropped
    mae, mse = np.abs(pred - true).mean(), ((pred - true) ** 2).mean()
    np.testing.assert_allclose(metrics[:2], [mae, mse], rtol=1e-5)
    assert metrics.shape == (5,)
    pdfs = {p.name for p in (in_tmp / "test_results" / setting).glob("*.pdf")}
    assert pdfs == {"0.pdf", "20.pdf", "40.pdf"}  # every 20th of the 44 test batches
    text = (in_tmp / "result_long_term_forecast.txt").read_text()
    assert re.fullmatch(re.escape(setting) + r"  \nmse:[0-9.e-]+, mae:[0-9.e-]+, dtw:Not calculated\n\n", text)
    record = json.loads((in_tmp / "results.jsonl").read_text())
    assert record["setting"] == setting and record["seed"] == 2021 and record["epochs_run"] == 1
    assert record["mse"] == pytest.approx(metrics[1]) and record["params"] == 2 * (96 * 96 + 96)
    assert {"mae", "rmse", "mape", "mspe", "best_epoch", "train_seconds", "pred_len", "model", "data"} <= set(record)
    # The epoch's test loss in the curve is the test MSE of the same (best) weights over the same windows.
    (epoch,) = record["curve"]
    assert epoch["epoch"] == 1 and epoch["test"] == pytest.approx(record["mse"], rel=1e-5)
    assert 0.3 < record["mse"] < 0.6  # DLinear after one epoch on ETTh1-96 (TSLib full run: ~0.39)


def test_test_only_run_loads_from_checkpoints_flag(in_tmp, toy_csv):
    toy_csv(in_tmp / "toy.csv")
    ckpts = in_tmp / "elsewhere"
    argv = custom_argv(in_tmp, "DLinear", "--checkpoints", str(ckpts))
    assert run.main(argv) == 0
    first = json.loads((in_tmp / "results.jsonl").read_text().splitlines()[0])
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 0
    second = json.loads((in_tmp / "results.jsonl").read_text().splitlines()[1])
    assert second["mse"] == first["mse"] and second["mae"] == first["mae"]
    assert not (in_tmp / "checkpoints").exists()


def test_test_only_run_without_checkpoint_names_the_path(in_tmp, toy_csv, capsys):
    toy_csv(in_tmp / "toy.csv")
    argv = custom_argv(in_tmp, "DLinear")
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 2
    assert "no checkpoint at checkpoints/long_term_forecast_toy_DLinear" in capsys.readouterr().err


def test_caps_runs_with_tslibs_ms_flags(in_tmp, toy_csv):
    """--features MS --c_out 1 (TSLib's usual MS call): CAPS decodes the target channel only."""
    toy_csv(in_tmp / "toy.csv")
    assert run.main(custom_argv(in_tmp, "CAPS", "--features", "MS", "--c_out", "1")) == 0
    (pred,) = (in_tmp / "results").glob("*_CAPS_custom_ftMS_*/pred.npy")
    assert np.load(pred).shape[1:] == (12, 1)
    record = json.loads((in_tmp / "results.jsonl").read_text())
    assert record["model"] == "CAPS" and np.isfinite(record["mse"])


@pytest.mark.parametrize("task", ["long_term_forecast", "imputation"])
def test_compile_runs_the_step_through_the_compiled_wrapper(in_tmp, toy_csv, monkeypatch, task):
    """--compile --compile_mode: training and evaluation call torch.compile's wrapper (here with the eager
    backend, so the numbers must equal the uncompiled run's), built in the requested mode."""
    toy_csv(in_tmp / "toy.csv")
    real_compile, modes = torch.compile, []

    def eager_compile(model, mode=None):  # noqa: ANN001, ANN202
        modes.append(mode)
        return real_compile(model, backend="eager")

    monkeypatch.setattr(torch, "compile", eager_compile)
    argv = custom_argv(in_tmp, "DLinear", "--task_name", task)
    assert run.main(argv) == 0
    assert run.main([*argv, "--compile", "--compile_mode", "reduce-overhead"]) == 0
    assert modes and set(modes) == {"reduce-overhead"}
    plain, compiled = (json.loads(line) for line in (in_tmp / "results.jsonl").read_text().splitlines())
    assert compiled["mse"] == plain["mse"] and compiled["mae"] == plain["mae"]


def test_two_seeded_runs_give_identical_metrics(in_tmp, toy_csv):
    toy_csv(in_tmp / "toy.csv")
    argv = custom_argv(in_tmp, "PatchTST", "--train_epochs", "2", "--itr", "2")
    assert run.main(argv) == 0
    assert run.main(argv) == 0
    records = [json.loads(line) for line in (in_tmp / "results.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in records] == [2021, 2022, 2021, 2022]
    assert records[0]["mse"] == records[2]["mse"] and records[1]["mse"] == records[3]["mse"]
    assert records[0]["mse"] != records[1]["mse"]  # itr runs are reseeded differently


def test_gradient_accumulation_equals_the_large_batch(in_tmp, toy_csv):
    # 396 rows -> 277 train rows -> 242 windows = 30 * 8 + 2: with batch 4 and accum 2 every group matches a
    # batch of 8, and the last group is a single short batch of 2 that must still step.
    toy_csv(in_tmp / "toy.csv", rows=396)
    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
    from utils.seeding import seed_everything

    weights = []
    for batch, accum in ((8, 1), (4, 2)):
        args = build_parser().parse_args(custom_argv(in_tmp, "DLinear", "--batch_size", str(batch),
                                                     "--grad_accum", str(accum), "--learning_rate", "0.01"))
        seed_everything(0)
        exp = Exp_Long_Term_Forecast(args)
        train_windows = len(exp._get_data("train")[0])
        exp.train(f"accum{accum}")
        weights.append(torch.cat([p.detach().flatten() for p in exp.model.parameters()]))
    assert train_windows == 242
    torch.testing.assert_close(weights[0], weights[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "change,message",
    [
        (("--model", "NoSuchModel"), "--model 'NoSuchModel' is not supported"),
        (("--lradj", "type7"), "--lradj 'type7' is not supported"),
        (("--data_path", "missing.csv"), "missing.csv"),
        (("--n_heads", "3"), "--n_heads"),
    ],
    ids=["unknown-model", "unknown-lradj", "missing-file", "bad-heads"],
)
def test_bad_input_is_one_error_line_and_writes_nothing(in_tmp, toy_csv, capsys, change, message):
    toy_csv(in_tmp / "toy.csv")
    argv = custom_argv(in_tmp, "iTransformer")
    flag, value = change
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    assert run.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert sorted(p.name for p in in_tmp.iterdir()) == ["toy.csv"]
