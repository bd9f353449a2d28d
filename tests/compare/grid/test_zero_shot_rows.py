"""compare.grid.zero_shot: a foundation model named in --models is planned as a zero-shot row (run.py's
`--task_name zero_shot_forecast --is_training 0` at the model's look-back) beside the trained rows, which keep their
recipes; flags that only training reads never reach it silently; --seeds and misplaced --test_every are refused in
one line and write nothing."""

from __future__ import annotations

import pytest

from compare.grid.run_args import flag_value
from compare.grid.zero_shot import every_run_flags, not_read, zero_shot_label
from models.foundation import LOOKBACK
from tests.compare.run.test_runner import base_argv, invoke, write_toy_csv


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("zero_shot_rows")
    write_toy_csv(root / "data" / "toy" / "toy.csv")
    return root


def planned_argv(log: str, row: str) -> list[str]:
    """The run.py argv the dry run prints under `row`'s plan line."""
    lines = log.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("run ") and f" {row} |" in line)
    return lines[at + 1].split("run.py ", 1)[1].split()


def test_a_foundation_model_is_planned_as_a_zero_shot_row_beside_a_trained_one(workspace):
    out = workspace / "plan"
    code, log = invoke([*base_argv(workspace, out, "DLinear", "fracast"), "--dry-run"])
    assert code == 0
    zero, trained = planned_argv(log, "Fracast"), planned_argv(log, "DLinear")
    assert flag_value(zero, "task_name") == "zero_shot_forecast" and flag_value(zero, "is_training") == "0"
    assert flag_value(zero, "seq_len") == str(LOOKBACK["Fracast"]) == "2048"
    assert flag_value(zero, "pred_len") == "12" and flag_value(zero, "enc_in") == "3"
    assert flag_value(zero, "data_path") == "toy.csv" and "--test_every" not in zero
    # The trained row keeps its recipe's look-back and its --epochs; the zero-shot row gets no training flag.
    assert flag_value(trained, "seq_len") == "24" and flag_value(trained, "train_epochs") == "1"
    assert "--train_epochs" not in zero
    assert "zero-shot row Fracast: not trained, so --train_epochs (set for every run) apply to the trained rows only" in log


def test_test_every_reaches_the_zero_shot_row_only(workspace):
    out = workspace / "every"
    code, log = invoke([*base_argv(workspace, out, "DLinear", "Fracast"), "--test_every", "25",
                        "--extra=--learning_rate 0.01 --batch_size 8", "--dry-run"])
    assert code == 0
    zero, trained = planned_argv(log, "Fracast"), planned_argv(log, "DLinear")
    assert flag_value(zero, "test_every") == "25" and "--test_every" not in trained
    assert flag_value(zero, "batch_size") == "8" and "--learning_rate" not in zero
    assert flag_value(trained, "learning_rate") == "0.01"
    assert "--train_epochs --learning_rate (set for every run)" in log


@pytest.mark.parametrize(("extra", "expected"), [
    (["--seeds", "1", "2"],
     "error: --seeds does not apply to zero-shot row(s) Fracast: a pretrained model is scored once and its forecast "
     "does not depend on a seed; run them in an invocation without --seeds (the same --out is fine)"),
    (["--variant", "Fracast tuned=Fracast:--learning_rate 0.01"],
     "error: row 'Fracast tuned' sets --learning_rate, which a zero-shot run never reads (it is not trained); drop "
     "it from the row"),
    (["--variant", "Fracast wide=Fracast:--d_model 64"],
     "error: row 'Fracast wide' sets --d_model, which a zero-shot run never reads (it is not trained); drop it "
     "from the row"),
    (["--test_every", "0"], "error: --test_every 0 must be at least 1 (1 scores every test window)"),
], ids=["seeds", "training-flag", "architecture-flag", "test-every-0"])
def test_a_bad_zero_shot_combination_is_refused_in_one_line(workspace, capsys, extra, expected):
    out = workspace / "bad"
    code, _ = invoke([*base_argv(workspace, out, "DLinear", "Fracast"), *extra])
    assert code == 2
    assert capsys.readouterr().err.strip() == expected and not out.exists()


def test_test_every_without_a_zero_shot_row_is_refused(workspace, capsys):
    out = workspace / "no_zero_shot"
    code, _ = invoke([*base_argv(workspace, out, "DLinear"), "--test_every", "5"])
    assert code == 2
    assert capsys.readouterr().err.strip() == ("error: --test_every 5 is read by zero-shot rows only (a foundation "
                                               "model such as Fracast in --models); drop it")
    assert not out.exists()


def test_an_unknown_row_names_the_zero_shot_models_too(workspace, capsys):
    code, _ = invoke(base_argv(workspace, workspace / "unknown", "Fracasst"))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown model row 'Fracasst'") and "Fracast" in err.split("zero-shot")[-1]
    assert "\n" not in err


def test_a_variant_of_a_zero_shot_row_may_set_what_it_reads(workspace):
    out = workspace / "short"
    code, log = invoke([*base_argv(workspace, out, "Fracast"), "--variant", "Fracast L96=Fracast:--seq_len 96",
                        "--dry-run"])
    assert code == 0
    short = planned_argv(log, "Fracast L96")
    assert flag_value(short, "seq_len") == "96" and flag_value(short, "task_name") == "zero_shot_forecast"
    assert flag_value(short, "model_id").endswith("_Fracast-L96")


def test_not_read_names_training_and_architecture_flags_but_keeps_the_data_ones():
    assert not_read(["--train_epochs", "--d_model", "--enc_in", "--batch_size", "--embed", "--jitter"]) == [
        "--train_epochs", "--d_model", "--jitter"]
    kept, dropped = every_run_flags(["--no_progress", "--train_epochs", "3", "--num_workers", "0", "--use_norm", "0"])
    assert kept == ["--no_progress", "--num_workers", "0"] and dropped == ["--train_epochs", "--use_norm"]


@pytest.mark.parametrize(("every", "of", "label"), [
    (1, None, "Fracast (zero-shot, L=2048)"),
    (25, 2785, "Fracast (zero-shot, L=2048, every 25th of 2785 windows)"),
], ids=["all-windows", "every-25"])
def test_the_label_names_the_look_back_and_a_window_subset(every, of, label):
    assert zero_shot_label("Fracast", 2048, every, of) == label
