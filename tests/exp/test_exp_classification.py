"""`run.py --task_name classification`: TSLib's output files, data-driven seq_len/enc_in/num_class in the
setting, test-only reload, resume after a signal equal to an uninterrupted run, one-line errors."""

from __future__ import annotations

import csv
import os
import signal

import pytest
import torch

import run
from exp.exp_classification import Exp_Classification
from tests.data_provider.uea_files import sktime_data_folder, toy_dataset

SETTING = "classification_Toy_TimesNet_UEA_ftM_sl20_ll48_pl0_dm8_nh8_el1_dl1_df8_expand2_dc4_fc1_ebtimeF_dtTrue_Exp_0"


def toy_argv(root, *extra: str, model: str = "TimesNet", name: str = "Toy") -> list[str]:
    return ["--task_name", "classification", "--is_training", "1", "--root_path", str(root), "--model_id", name,
            "--model", model, "--data", "UEA", "--e_layers", "1", "--d_model", "8", "--d_ff", "8", "--top_k", "2",
            "--num_kernels", "2", "--batch_size", "4", "--learning_rate", "0.01", "--train_epochs", "2",
            "--patience", "5", "--des", "Exp", "--num_workers", "0", "--no_progress", *extra]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    toy_dataset(tmp_path / "Toy")
    return tmp_path


def test_run_writes_tslib_classification_files(in_tmp, results):
    assert run.main(toy_argv(in_tmp / "Toy")) == 0
    (record,) = results(in_tmp)
    assert record["setting"] == SETTING
    assert (record["seq_len"], record["enc_in"], record["num_class"], record["n_test"]) == (20, 3, 3, 12)
    accuracy = record["accuracy"]
    # The curve's test accuracy at the best-validation epoch is the scored checkpoint's accuracy.
    best = record["curve"][record["best_epoch"] - 1]
    assert best["epoch"] == record["best_epoch"] and best["test_accuracy"] == pytest.approx(accuracy, abs=1e-12)
    assert best["vali_accuracy"] == max(e["vali_accuracy"] for e in record["curve"])
    assert (in_tmp / "result_classification.txt").read_text() == f"{SETTING}  \naccuracy:{accuracy}\n\n"
    folder = in_tmp / "results" / SETTING
    assert (folder / "metrics.txt").read_text().startswith(f"{SETTING}  \naccuracy:{accuracy}\nmacro_f1:")
    rows = list(csv.DictReader((folder / "pred.csv").open()))
    assert len(rows) == 12 and set(rows[0]) == {"true_index", "pred_index", "true_label", "pred_label"}
    hits = sum(r["true_index"] == r["pred_index"] for r in rows)
    assert hits / 12 == pytest.approx(accuracy)
    cm = list(csv.reader((folder / "cm.csv").open()))
    assert cm[0] == ["", "a", "b", "c"] and sum(int(v) for row in cm[1:] for v in row[1:]) == 12
    assert (in_tmp / "checkpoints" / SETTING / "checkpoint.pth").is_file()
    assert (in_tmp / "test_results" / SETTING).is_dir()

    # Test only: reloads the checkpoint and scores the same.
    assert run.main([*toy_argv(in_tmp / "Toy"), "--is_training", "0"]) == 0
    assert results(in_tmp)[-1]["accuracy"] == accuracy and results(in_tmp)[-1]["curve"] is None
    # The recorded configuration is the command's (seq_len at its default, not the one read from the data), and
    # the test-only run records the same hash as the training run.
    assert record["config"]["seq_len"] == 96 and "num_class" not in record["config"]
    assert results(in_tmp)[-1]["config_hash"] == record["config_hash"]


def test_resume_after_sigterm_matches_uninterrupted(in_tmp, results, monkeypatch):
    argv = toy_argv(in_tmp / "Toy", "--rng_stream", "tslib")
    assert run.main(argv) == 0
    reference = results(in_tmp)[0]
    weights = torch.load(in_tmp / "checkpoints" / SETTING / "checkpoint.pth")
    (in_tmp / "results.jsonl").unlink()
    os.rename(in_tmp / "checkpoints", in_tmp / "reference_checkpoints")

    # 6 batches per epoch: the signal arrives during batch 2 of epoch 2.
    calls = {"train": 0}
    original = Exp_Classification._predict

    def predict(self, batch, runner=None):
        if runner is None:
            calls["train"] += 1
            if calls["train"] == 6 + 2:
                os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, runner)

    with monkeypatch.context() as patch:
        patch.setattr(Exp_Classification, "_predict", predict)
        assert run.main(argv) == 128 + signal.SIGTERM
    assert results(in_tmp) == []
    assert run.main([*argv, "--resume"]) == 0
    resumed = results(in_tmp)[0]
    assert (resumed["accuracy"], resumed["epochs_run"], resumed["best_epoch"]) == (
        reference["accuracy"], reference["epochs_run"], reference["best_epoch"])
    again = torch.load(in_tmp / "checkpoints" / SETTING / "checkpoint.pth")
    assert all(torch.equal(again[k], weights[k]) for k in weights)


def test_basic_motions_from_the_sktime_package(tmp_path, monkeypatch, results):
    monkeypatch.chdir(tmp_path)
    argv = toy_argv(sktime_data_folder("BasicMotions"), "--train_epochs", "1", model="DLinear", name="BasicMotions")
    assert run.main(argv) == 0
    (record,) = results(tmp_path)
    assert (record["seq_len"], record["enc_in"], record["num_class"], record["n_test"]) == (100, 6, 4, 40)
    assert record["params"] == 2 * (100 * 100 + 100) + 6 * 100 * 4 + 4


@pytest.mark.parametrize("extra,message", [
    (("--data", "custom"), "--task_name classification reads UEA .ts files: pass --data UEA"),
    (("--optimizer", "adamw"), "--optimizer adamw applies to forecasting"),
    (("--model_id", "Missing"), "Missing_TRAIN.ts not found: put Missing_TRAIN.ts and Missing_TEST.ts"),
], ids=["data", "optimizer", "missing-file"])
def test_bad_input_is_one_error_line_and_no_output(in_tmp, capsys, extra, message):
    assert run.main([*toy_argv(in_tmp / "Toy"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (in_tmp / "result_classification.txt").exists() and not (in_tmp / "checkpoints").exists()


# TSLib's JapaneseVowels blocks (scripts/classification/<Model>.sh) and its parameter counts there
# (docs: tslib_models/classification_JapaneseVowels.csv). iTransformer's block passes --enc_in 3, which
# the experiment overwrites with the data's 12 dimensions, as TSLib's does.
JV_BLOCKS = {
    "TimesNet": (["--e_layers", "2", "--d_model", "16", "--d_ff", "32", "--train_epochs", "60"], 591161),
    "PatchTST": (["--e_layers", "3", "--d_model", "128", "--d_ff", "256", "--train_epochs", "100"], 441225),
    "iTransformer": (["--e_layers", "3", "--d_model", "128", "--d_ff", "256", "--train_epochs", "100",
                      "--enc_in", "3"], 415369),
    "DLinear": (["--e_layers", "3", "--d_model", "128", "--d_ff", "256", "--train_epochs", "100"], 4881),
}


@pytest.mark.parametrize("model", list(JV_BLOCKS))
def test_tslib_japanese_vowels_block_builds_tslib_model(model):
    from exp.arguments import build_parser, make_setting, validate_args

    flags, params = JV_BLOCKS[model]
    args = build_parser().parse_args([
        "--task_name", "classification", "--is_training", "1", "--root_path", str(sktime_data_folder("JapaneseVowels")),
        "--model_id", "JapaneseVowels", "--model", model, "--data", "UEA", "--batch_size", "16", "--top_k", "3",
        "--des", "Exp", "--itr", "1", "--learning_rate", "0.001", "--patience", "10", "--no_use_gpu", *flags])
    validate_args(args)
    exp = Exp_Classification(args)
    assert (exp.args.seq_len, exp.args.pred_len, exp.args.enc_in, exp.args.num_class) == (29, 0, 12, 9)
    assert args.seq_len == 96  # the caller's flags are not rewritten
    assert sum(p.numel() for p in exp.model.parameters()) == params
    assert make_setting(exp.args, 0).startswith(f"classification_JapaneseVowels_{model}_UEA_ftM_sl29_ll48_pl0_")


@pytest.mark.parametrize("extra,clip,onecycle", [((), 4.0, False), (("--max_grad_norm", "1.5", "--lradj", "onecycle"),
                                                                     1.5, True)], ids=["tslib", "clip-onecycle"])
def test_training_uses_radam_and_the_classification_step(in_tmp, extra, clip, onecycle):
    from exp.arguments import build_parser
    from exp.exp_classification import ClassificationStep
    from exp.trainer import Trainer

    exp = Exp_Classification(build_parser().parse_args(toy_argv(in_tmp / "Toy", *extra)))
    t = Trainer(exp, "s", exp._load_datasets())
    assert isinstance(t.optimizer, torch.optim.RAdam) and isinstance(exp.step, ClassificationStep)
    assert exp.step.optimizer is t.optimizer and exp.step.max_grad_norm == clip
    assert (t.scheduler is not None) == onecycle
    if onecycle:
        assert t.scheduler.optimizer is t.optimizer and t.scheduler.total_steps == 3 * 6
