"""exp.recipe_hint: `--model CAPS` at TSLib's optimisation defaults is named in one line at the start of run.py,
pointing to the paper's recipe; a run that chose its own loop, another model or another task gets no line."""

from __future__ import annotations

import pytest

import run
from exp.recipe_hint import RECIPE_FLAGS, RECIPE_SCRIPT, tslib_defaults_hint
from tests.exp.conftest import REPO
from utils.errors import UserInputError


def test_caps_at_the_tslib_defaults_is_pointed_to_the_recipe(make_configs):
    hint = tslib_defaults_hint(make_configs(model="CAPS"))
    assert hint is not None and "\n" not in hint
    assert RECIPE_SCRIPT in hint and "compare/recipes/tables.py" in hint and "--learning_rate 0.0001" in hint


@pytest.mark.parametrize("overrides", [
    {"model": "CAPS", "optimizer": "adamw"}, {"model": "CAPS", "learning_rate": 5e-4},
    {"model": "CAPS", "lradj": "onecycle"}, {"model": "CAPS", "is_training": 0},
    {"model": "CAPS", "task_name": "imputation"}, {"model": "DLinear"},
], ids=["optimizer-chosen", "learning-rate-chosen", "schedule-chosen", "test-only", "other-task", "other-model"])
def test_no_hint_when_the_loop_was_chosen_or_does_not_apply(make_configs, overrides):
    assert tslib_defaults_hint(make_configs(**overrides)) is None


def test_the_named_script_sets_every_recipe_flag():
    script = (REPO / RECIPE_SCRIPT).read_text()
    assert all(f"--{flag} " in script for flag in RECIPE_FLAGS)
    assert "--optimizer adamw" in script and "--lradj onecycle" in script


def test_run_py_logs_it_once_before_the_experiment_starts(in_tmp, toy, capsys, monkeypatch):
    """The experiment is replaced by one that stops at once: the line comes first, and only once."""

    def stop_here(*args: object, **kwargs: object) -> None:
        raise UserInputError("stopped by the test")

    monkeypatch.setattr(run, "experiment_class", lambda task: stop_here)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="CAPS")) == 2
    out = capsys.readouterr().out
    assert out.count("--model CAPS is training with TSLib's defaults") == 1
    assert run.main(toy(in_tmp, "--train_epochs", "1", "--optimizer", "adamw", model="CAPS")) == 2
    assert "TSLib's defaults" not in capsys.readouterr().out
