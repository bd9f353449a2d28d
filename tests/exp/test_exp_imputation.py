"""Imputation end to end through run.py: TSLib's files on the ETTh1 mirror, seeded reproducibility under
both RNG streams, every head, and bad input ending in one error line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import run
from exp.arguments import build_parser, make_setting

SMALL = ["--num_workers", "0", "--no_progress", "--train_epochs", "1", "--des", "Exp"]


def etth1_imputation_argv(mirror, *extra: str) -> list[str]:
    """TSLib's DLinear_ETTh1 imputation block at mask rate 0.125, one epoch, batch 256 (the script: 16)."""
    return [
        "--task_name", "imputation", "--is_training", "1", "--root_path", str(mirror / "ETT-small"),
        "--data_path", "ETTh1.csv", "--model_id", "ETTh1_mask_0.125", "--mask_rate", "0.125", "--model", "DLinear",
        "--data", "ETTh1", "--features", "M", "--seq_len", "96", "--label_len", "0", "--pred_len", "0",
        "--e_layers", "2", "--d_layers", "1", "--factor", "3", "--enc_in", "7", "--dec_in", "7", "--c_out", "7",
        "--batch_size", "256", "--d_model", "128", "--d_ff", "128", "--top_k", "5", "--learning_rate", "0.001",
        *SMALL, *extra,
    ]


def toy_imputation_argv(root, model: str, *extra: str) -> list[str]:
    return [
        "--task_name", "imputation", "--is_training", "1", "--root_path", str(root), "--data_path", "toy.csv",
        "--model_id", "toy_mask_0.25", "--mask_rate", "0.25", "--model", model, "--data", "custom",
        "--features", "M", "--seq_len", "24", "--label_len", "0", "--pred_len", "0", "--enc_in", "3",
        "--dec_in", "3", "--c_out", "3", "--d_model", "16", "--d_ff", "16", "--n_heads", "2", "--e_layers", "1",
        "--top_k", "2", "--batch_size", "16", "--learning_rate", "0.001", *SMALL, *extra,
    ]


def test_etth1_run_writes_tslibs_imputation_files(in_tmp, data_mirror):
    argv = etth1_imputation_argv(data_mirror)
    assert run.main(argv) == 0
    setting = make_setting(build_parser().parse_args(argv), 0)
    assert setting == ("imputation_ETTh1_mask_0.125_DLinear_ETTh1_ftM_sl96_ll0_pl0_dm128_nh8_el2_dl1_df128"
                       "_expand2_dc4_fc3_ebtimeF_dtTrue_Exp_0")
    assert (in_tmp / "checkpoints" / setting / "checkpoint.pth").is_file()
    folder = in_tmp / "results" / setting
    pred, true, mask = (np.load(folder / f"{name}.npy") for name in ("pred", "true", "mask"))
    metrics = np.load(folder / "metrics.npy")
    assert pred.shape == true.shape == mask.shape == (2881, 96, 7)  # every test window of L=96, H=0
    hidden = mask == 0
    assert abs(hidden.mean() - 0.125) < 0.002
    err = (pred.astype(np.float64) - true)[hidden]
    np.testing.assert_allclose(metrics[:3], [np.abs(err).mean(), (err**2).mean(), np.sqrt((err**2).mean())],
                               rtol=1e-6)
    assert {p.name for p in (in_tmp / "test_results" / setting).glob("*.pdf")} == {"0.pdf"}  # every 20th of 12 test batches
    text = (in_tmp / "result_imputation.txt").read_text()
    assert re.fullmatch(re.escape(setting) + r"  \nmse:[0-9.e-]+, mae:[0-9.e-]+\n\n", text)
    record = json.loads((in_tmp / "results.jsonl").read_text())
    assert record["task_name"] == "imputation" and record["setting"] == setting and record["mask_rate"] == 0.125
    assert record["mse"] == pytest.approx(metrics[1]) and record["masked_points"] == int(hidden.sum())
    assert record["params"] == 2 * (96 * 96 + 96)
    assert 0.02 < record["mse"] < 0.5  # DLinear after one epoch (TSLib's paper: ~0.15 at 12.5 %)


@pytest.mark.parametrize("stream", ["tslib", "epoch"])
def test_seeded_runs_are_identical(in_tmp, toy_csv, stream):
    toy_csv(in_tmp / "toy.csv")
    argv = toy_imputation_argv(in_tmp, "TimesNet", "--rng_stream", stream, "--dropout", "0.3")
    assert run.main(argv) == 0
    assert run.main(argv) == 0
    setting = make_setting(build_parser().parse_args(argv), 0)
    records = [json.loads(line) for line in (in_tmp / "results.jsonl").read_text().splitlines()]
    assert records[0]["mse"] == records[1]["mse"] and records[0]["mae"] == records[1]["mae"]
    assert records[0]["rng_stream"] == stream
    assert np.load(in_tmp / "results" / setting / "mask.npy").min() == 0.0


def test_epoch_stream_test_masks_do_not_depend_on_training(in_tmp, toy_csv):
    """Under --rng_stream epoch the test masks are a function of the seed alone."""
    toy_csv(in_tmp / "toy.csv")
    masks = []
    for epochs in ("1", "2"):
        # Other flags in one setting need their own checkpoint folder (its config.json refuses them otherwise).
        argv = toy_imputation_argv(in_tmp, "DLinear", "--rng_stream", "epoch", "--train_epochs", epochs,
                                   "--checkpoints", f"./checkpoints_{epochs}/")
        assert run.main(argv) == 0
        setting = make_setting(build_parser().parse_args(argv), 0)
        masks.append(np.load(in_tmp / "results" / setting / "mask.npy"))
    np.testing.assert_array_equal(*masks)


@pytest.mark.parametrize("model", ["TimesNet", "PatchTST", "iTransformer"])
def test_every_head_runs_through_run_py(in_tmp, toy_csv, model):
    toy_csv(in_tmp / "toy.csv")
    assert run.main(toy_imputation_argv(in_tmp, model)) == 0
    (pred,) = (in_tmp / "results").glob(f"imputation_*_{model}_custom_*/pred.npy")
    assert np.load(pred).shape[1:] == (24, 3)
    assert np.isfinite(json.loads((in_tmp / "results.jsonl").read_text())["mse"])


def test_ms_scores_the_target_channel(in_tmp, toy_csv):
    toy_csv(in_tmp / "toy.csv")
    assert run.main(toy_imputation_argv(in_tmp, "DLinear", "--features", "MS")) == 0
    (folder,) = (in_tmp / "results").glob("imputation_*_ftMS_*")
    assert np.load(folder / "pred.npy").shape[1:] == np.load(folder / "mask.npy").shape[1:] == (24, 1)


@pytest.mark.parametrize(("flags", "message"), [
    (("--mask_rate", "0"), "--mask_rate must lie in (0, 1)"),
    (("--mask_rate", "1.5"), "--mask_rate must lie in (0, 1)"),
    (("--pred_len", "-1"), "--pred_len must be >= 0"),
    (("--model", "FreTS"), "--task_name 'imputation' is not supported by FreTS"),
])
def test_bad_input_is_one_line_and_writes_nothing(in_tmp, toy_csv, capsys, flags, message):
    toy_csv(in_tmp / "toy.csv")
    argv = toy_imputation_argv(in_tmp, "DLinear")
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        argv[argv.index(flag) + 1] = value
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (in_tmp / "results").exists() and not (in_tmp / "result_imputation.txt").exists()


@pytest.mark.parametrize("stream", ["tslib", "epoch"])
def test_sigterm_then_resume_matches_the_uninterrupted_run(tmp_path, monkeypatch, toy_csv, capsys, stream):
    """Masks, shuffle and dropout all survive a restart: 12 train batches per epoch, SIGTERM in batch 5 of
    epoch 2, then --resume ends with the uninterrupted run's metrics."""
    import os
    import signal

    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

    records = []
    for name, interrupt in (("reference", False), ("resumed", True)):
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        toy_csv(folder / "toy.csv")
        argv = toy_imputation_argv(folder, "TimesNet", "--rng_stream", stream, "--train_epochs", "2",
                                   "--dropout", "0.3")
        if interrupt:
            calls = {"train": 0}
            original = Exp_Long_Term_Forecast._predict

            def predict(self, batch, runner=None, calls=calls, original=original):
                if runner is None:
                    calls["train"] += 1
                    if calls["train"] == 12 + 5:
                        os.kill(os.getpid(), signal.SIGTERM)
                return original(self, batch, runner)

            with monkeypatch.context() as patch:
                patch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
                assert run.main(argv) == 128 + signal.SIGTERM
            assert "at epoch 2, batch 5" in capsys.readouterr().err
            assert not (folder / "results.jsonl").exists()
            argv = [*argv, "--resume"]
        assert run.main(argv) == 0
        records.append(json.loads((folder / "results.jsonl").read_text()))
    assert (records[0]["mse"], records[0]["mae"]) == (records[1]["mse"], records[1]["mae"])


def test_test_only_runs_reload_the_checkpoint_and_repeat_exactly(in_tmp, toy_csv):
    toy_csv(in_tmp / "toy.csv")
    argv = toy_imputation_argv(in_tmp, "DLinear")
    assert run.main(argv) == 0
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 0 and run.main(argv) == 0
    records = [json.loads(line) for line in (in_tmp / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and records[1]["mse"] == records[2]["mse"]
    assert records[1]["epochs_run"] is None and np.isfinite(records[1]["mse"])
