"""`--logger` names (space or comma lists), the flags' one-line errors, and the argument printout."""

from __future__ import annotations

import pytest

import run
from exp.arguments import build_parser
from exp.trackers import options
from exp.trackers.options import check_logger_flags, split_logger_names
from utils.errors import UserInputError


@pytest.mark.parametrize(("values", "names"), [
    (["tensorboard"], ["tensorboard"]),
    (["tensorboard,mlflow", "wandb"], ["tensorboard", "mlflow", "wandb"]),
    (["MLflow", "mlflow,", "tensorboard"], ["mlflow", "tensorboard"]),
])
def test_names_split_on_spaces_and_commas(values, names):
    assert split_logger_names(values) == names


def test_an_empty_name_list_is_refused():
    with pytest.raises(UserInputError, match="--logger needs a tracker name"):
        split_logger_names([","])


def test_an_unknown_tracker_is_a_one_line_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x",
                                   "--model", "DLinear", "--data", "ETTh1", "--logger", "tensorbord"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "--logger 'tensorbord' is not a tracker" in err and "did you mean tensorboard?" in err


@pytest.mark.parametrize(("extra", "message"), [
    (["--logger_group", "grid"], "--logger_group belongs to the tracked runs of --logger"),
    (["--logger_dir", "logs"], "--logger_dir belongs to the tracked runs of --logger"),
    (["--logger", "mlflow", "--logger_group", "../up"], "--logger_group '../up' cannot name an output folder"),
])
def test_tracker_flags_that_would_do_nothing_or_leave_the_folder_are_refused(in_tmp, toy, capsys, extra, message):
    assert run.main(toy(in_tmp, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (in_tmp / "tracking").exists() and not (in_tmp / "checkpoints").exists()


def test_a_tracker_whose_package_is_missing_names_the_install(monkeypatch):
    monkeypatch.setitem(options.TRACKERS, "wandb", ("no_such_module_for_this_test", "wandb"))
    args = build_parser().parse_args(["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x",
                                      "--model", "DLinear", "--data", "ETTh1", "--logger", "wandb"])
    with pytest.raises(UserInputError, match=r"--logger wandb needs the wandb package: pip install"):
        check_logger_flags(args)


def test_the_printout_shows_the_arguments_off_their_defaults(in_tmp, toy, capsys):
    argv = toy(in_tmp, "--model", "DLinear", "--train_epochs", "1", "--is_training", "0")
    run.main(argv)
    out = capsys.readouterr().out
    head = out.split(">>>>>>>")[0]
    assert "Args in experiment (the " in head and "--print_all_args shows all" in head
    assert "  model: DLinear" in head and "  train_epochs: 1" in head
    assert "  moving_avg:" not in head and "  dropout:" not in head
    run.main([*argv, "--print_all_args"])
    head = capsys.readouterr().out.split(">>>>>>>")[0]
    assert head.startswith("Args in experiment:\n") and "  moving_avg: 25" in head and "  dropout: 0.1" in head
