"""compare.tune.study on a real Optuna SQLite storage: a study continues only with the settings its trials ran,
trials a killed invocation left RUNNING are marked FAIL, and a storage that cannot be used is one line."""

from __future__ import annotations

import optuna
import pytest

from compare.tune.study import (
    IDENTITY_ATTR,
    check_identity,
    fail_abandoned_trials,
    finished_trials,
    open_storage,
    record_identity,
    trial_identity,
)
from utils.errors import UserInputError

ARGV = ["--model", "DLinear", "--root_path", "/data/a/", "--data_path", "toy.csv", "--train_epochs", "2",
        "--batch_size", "32"]
SPACE = {"learning_rate": {"log": (1e-4, 1e-2)}}


@pytest.fixture
def storage(tmp_path):
    return open_storage(f"sqlite:///{tmp_path / 'studies.db'}")


def _study_with_identity(storage, argv=ARGV, space=SPACE):
    study = optuna.create_study(study_name="DLinear|toy|12", storage=storage, direction="minimize")
    record_identity(study, trial_identity(argv, space))
    study.add_trial(optuna.trial.create_trial(params={"learning_rate": 1e-3}, value=0.5, distributions={
        "learning_rate": optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True)}))
    return study


def test_the_identity_ignores_where_the_data_lives_and_keeps_what_a_trial_computes():
    moved = trial_identity([*ARGV[:2], "--root_path", "/elsewhere/", *ARGV[4:]], SPACE)
    assert moved == trial_identity(ARGV, SPACE)
    assert "--root_path" not in moved["argv"] and "--train_epochs" in moved["argv"]
    assert trial_identity([*ARGV[:-1], "64"], SPACE) != trial_identity(ARGV, SPACE)


def test_the_same_settings_continue_the_study(storage):
    _study_with_identity(storage)
    check_identity(storage, "DLinear|toy|12", trial_identity(ARGV, SPACE), "studies.db")
    assert len(finished_trials(storage, "DLinear|toy|12")) == 1


@pytest.mark.parametrize(("argv", "space", "expected"), [
    ([*ARGV[:7], "1", *ARGV[8:]], SPACE, "its trials ran --train_epochs 2, this invocation asks --train_epochs 1"),
    ([*ARGV, "--e_layers", "1"], SPACE, "its trials ran no --e_layers, this invocation asks --e_layers 1"),
    (ARGV, {"learning_rate": {"log": (1e-5, 1e-1)}}, "its search space was"),
], ids=["other-epochs", "extra-flag", "other-space"])
def test_other_settings_are_refused_in_one_line(storage, argv, space, expected):
    _study_with_identity(storage)
    with pytest.raises(UserInputError) as err:
        check_identity(storage, "DLinear|toy|12", trial_identity(argv, space), "OUT/studies.db")
    text = str(err.value)
    assert text.startswith("tune DLinear|toy|12: the study in OUT/studies.db was searched with other settings (")
    assert expected in text and "\n" not in text


def test_a_study_without_identity_is_continued_and_a_new_empty_one_gets_it(storage, caplog):
    study = optuna.create_study(study_name="old", storage=storage)
    study.add_trial(optuna.trial.create_trial(params={}, value=1.0, distributions={}))
    with caplog.at_level("INFO", logger="compare"):
        check_identity(storage, "old", trial_identity(ARGV, SPACE), "studies.db")
    assert "predates recorded trial settings" in caplog.text
    assert IDENTITY_ATTR not in optuna.load_study(study_name="old", storage=storage).user_attrs
    optuna.create_study(study_name="empty", storage=storage)
    check_identity(storage, "empty", trial_identity(ARGV, SPACE), "studies.db")
    assert optuna.load_study(study_name="empty", storage=storage).user_attrs[IDENTITY_ATTR] == \
        trial_identity(ARGV, SPACE)


def test_trials_left_running_by_a_killed_invocation_are_marked_failed(storage):
    study = _study_with_identity(storage)
    study.ask()  # what a killed driver leaves behind: a trial asked, never told
    study.ask()
    assert fail_abandoned_trials(storage, "DLinear|toy|12", "left RUNNING") == 2
    states = [t.state for t in optuna.load_study(study_name="DLinear|toy|12", storage=storage).trials]
    assert states == [optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL, optuna.trial.TrialState.FAIL]
    assert fail_abandoned_trials(storage, "DLinear|toy|12", "again") == 0
    assert fail_abandoned_trials(storage, "no such study", "none") == 0
