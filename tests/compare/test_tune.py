"""`python -m compare tune`: spaces centred on the recipes, one-line refusals writing nothing (default suite);
a real search through Ray Tune with Optuna in SQLite, then the default-vs-tuned comparison (slow)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import optuna
import pytest
from test_runner import TOY, TOY_FLAGS, write_toy_csv

from compare import tune
from compare.recipes import ModelRecipe, RecipeBook
from utils.record_paths import absolute_paths


@pytest.fixture(autouse=True)
def _no_ray_auth(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tune_data")
    write_toy_csv(root / "toy" / "toy.csv")
    return root


def tune_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--data", "toy", "--models", "DLinear", "iTransformer", "--pred_lens", "12", "--root", str(data),
            "--out", str(out), *extra]


def test_optuna_distributions_follow_the_space():
    made = tune.optuna_distributions({"learning_rate": {"log": (1e-4, 1e-2)}, "e_layers": {"choice": [1, 2]},
                                      "dropout": {"uniform": (0.0, 0.3)}})
    assert made["learning_rate"] == optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True)
    assert made["e_layers"] == optuna.distributions.CategoricalDistribution([1, 2])
    assert made["dropout"] == optuna.distributions.FloatDistribution(0.0, 0.3)


MINUTES_ERROR = ("the wall-clock budget per cell must be a positive, finite number of minutes, e.g. "
                 "--budget_minutes 30")


@pytest.mark.parametrize(("extra", "expected"), [
    (("--trials", "0", "--epochs", "1"), "error: --trials 0: a budget of at least one trial per model is needed"),
    (("--trials", "2", "--epochs", "0"), "error: --epochs 0: trials need at least one epoch"),
    (("--epochs", "1"), "error: no tuning budget: give --trials N, --budget_minutes M or both (the same budget "
                        "for every model)"),
    (("--budget_minutes", "0", "--epochs", "1"), f"error: --budget_minutes 0: {MINUTES_ERROR}"),
    (("--budget_minutes", "-2", "--trials", "3", "--epochs", "1"), f"error: --budget_minutes -2: {MINUTES_ERROR}"),
    (("--budget_minutes", "nan", "--epochs", "1"), f"error: --budget_minutes nan: {MINUTES_ERROR}"),
    (("--budget_minutes", "inf", "--trials", "3", "--epochs", "1"), f"error: --budget_minutes inf: {MINUTES_ERROR}"),
    (("--budget_minutes", "ten", "--epochs", "1"), "error: --budget_minutes 'ten' is not a number; give the "
                                                   "wall-clock minutes per cell, e.g. --budget_minutes 30"),
], ids=["budget-zero", "no-epochs", "no-budget", "minutes-zero", "minutes-negative", "minutes-nan", "minutes-inf",
        "minutes-text"])
def test_a_bad_budget_is_one_line_writing_nothing(data, tmp_path, capsys, extra, expected):
    out = tmp_path / "out"
    assert tune.main(tune_argv(data, out, *extra), TOY) == 2
    assert capsys.readouterr().err.strip() == expected and not out.exists()


@pytest.mark.parametrize(("extra", "trials", "seconds"), [
    (("--budget_minutes", "1.5"), None, 90.0),
    (("--trials", "4"), 4, None),
    (("--trials", "4", "--budget_minutes", "0.5"), 4, 30.0),
], ids=["minutes", "trials", "both"])
def test_a_budget_of_trials_minutes_or_both_plans_every_cell(data, tmp_path, extra, trials, seconds):
    args = tune.build_parser().parse_args(tune_argv(data, tmp_path / "out", "--epochs", "2", *extra))
    budget, plan = tune._plan(args, TOY)
    assert (budget.trials, budget.seconds, budget.epochs) == (trials, seconds, 2)
    assert [run.row.name for run, _ in plan] == ["DLinear", "iTransformer"]
    assert set(plan[0][1]) == {"learning_rate", "batch_size"} and "d_model" in plan[1][1]


def test_a_model_whose_space_cannot_be_derived_here_is_one_line(data, tmp_path, capsys):
    if importlib.util.find_spec("mamba_ssm") is not None:
        pytest.skip("mamba_ssm is installed: Mamba's space is derived here")
    book = RecipeBook(TOY.datasets, {**TOY.models, "Mamba": ModelRecipe("Mamba", TOY_FLAGS, {"toy": {}})})
    out = tmp_path / "out"
    argv = ["--data", "toy", "--models", "Mamba", "--pred_lens", "12", "--root", str(data), "--out", str(out),
            "--trials", "2", "--epochs", "1"]
    assert tune.main(argv, book) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot derive the search space of Mamba, which does not build here: ")
    assert "\n" not in err and not out.exists()


@pytest.mark.slow
def test_a_search_reads_validation_only_continues_its_study_and_compares_default_with_tuned(data, tmp_path):
    out = tmp_path / "out"
    assert tune.main(tune_argv(data, out, "--trials", "3", "--epochs", "2", "--seeds", "1", "2",
                               "--final_epochs", "1", "--no-compare"), TOY) == 0
    storage = f"sqlite:///{out / 'studies.db'}"
    for name in ("DLinear|toy|12", "iTransformer|toy|12"):
        study = optuna.load_study(study_name=name, storage=storage)
        finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        assert len(finished) == 3
        # The study holds validation losses only: no trial recorded anything about the test split.
        for t in finished:
            assert not any("test" in key for key in [*t.user_attrs, *t.system_attrs, *t.params])
    reported = [json.loads(line) for path in (out / "ray").rglob("result.json")
                for line in path.read_text().splitlines()]
    assert reported and all("vali_loss" in r and not any("test" in k for k in r) for r in reported)
    cells = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert [c["trials"] for c in cells] == [3, 3] and all(c["budget"]["trials"] == 3 for c in cells)
    assert all(c["this_invocation"]["stopped_by"] == "trials" for c in cells)
    # A larger budget later runs only the missing trials; then the comparison of default and tuned rows.
    assert tune.main(tune_argv(data, out, "--trials", "4", "--epochs", "2", "--seeds", "1", "2",
                               "--final_epochs", "1"), TOY) == 0
    cells = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert [c["trials"] for c in cells] == [4, 4]
    assert absolute_paths((out / tune.TUNING_FILE).read_text() + (out / "compare.json").read_text()) == []
    assert [len(c["this_invocation"]["epochs_per_trial"]) for c in cells] == [1, 1]
    assert [len(c["spent"]["epochs_per_trial"]) for c in cells] == [4, 4]
    table = (out / "table.md").read_text()
    for row in ("DLinear", "DLinear (tuned)", "iTransformer", "iTransformer (tuned)"):
        assert f"| {row} MSE |" in table.replace(f"{row} MSE", f"| {row} MSE |").replace("|| ", "| ")
    assert "## Seeds: DLinear against each other row" in table
    assert "## Seeds: DLinear (tuned) against each other row" in table
    assert "## Tuning budget" in table and "| DLinear | toy | 12 | 4 trials × ≤ 2 epochs | 1 CPU, 0 GPU | 4 |" in table


@pytest.mark.slow
def test_a_time_budget_stops_the_search_and_a_resume_spends_only_what_is_left(data, tmp_path):
    out = tmp_path / "out"
    argv = ["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--root", str(data), "--out", str(out),
            "--epochs", "1", "--no-compare"]
    budget_s = 45.0  # a trial (run.py start, one toy epoch) takes ~5-15 s here; several fit
    assert tune.main([*argv, "--budget_minutes", str(budget_s / 60)], TOY) == 0
    (c,) = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert c["budget"] == {"trials": None, "minutes": budget_s / 60, "epochs_per_trial": 1, "cpus_per_trial": 1.0,
                           "gpus_per_trial": 0.0}
    assert c["this_invocation"]["stopped_by"] == "time budget"
    # Ray Tune ends the search at the budget (give or take its shutdown), not after a fixed number of trials.
    assert budget_s <= c["spent"]["seconds"] < budget_s + 30
    # A trial the budget ended before its first epoch ran 0 epochs and is not a finished trial.
    epochs = c["spent"]["epochs_per_trial"]
    assert c["trials"] >= 1 and set(epochs) <= {0, 1} and epochs.count(1) == c["trials"] == c["spent"]["trials"]
    study = optuna.load_study(study_name="DLinear|toy|12", storage=f"sqlite:///{out / 'studies.db'}")
    assert study.user_attrs["budget_seconds_spent"] == pytest.approx(c["spent"]["seconds"], abs=0.1)
    assert study.user_attrs["budget_epochs_per_trial"] == c["spent"]["epochs_per_trial"]
    # The same budget again: nothing is left, so nothing runs and the record says so.
    assert tune.main([*argv, "--budget_minutes", str(budget_s / 60)], TOY) == 0
    (again,) = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert again["this_invocation"] == {"trials": 0, "seconds": 0.0, "epochs_per_trial": [],
                                        "stopped_by": "nothing left of the budget"}
    assert again["spent"] == c["spent"] and again["trials"] == c["trials"]
    # A larger budget later runs only the difference.
    assert tune.main([*argv, "--budget_minutes", str((budget_s + 15) / 60)], TOY) == 0
    (more,) = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert more["this_invocation"]["stopped_by"] == "time budget"
    left = budget_s + 15 - c["spent"]["seconds"]
    assert left <= more["this_invocation"]["seconds"] < left + 30
    assert more["spent"]["seconds"] == pytest.approx(c["spent"]["seconds"] + more["this_invocation"]["seconds"], abs=0.2)
    assert more["spent"]["epochs_per_trial"][:len(epochs)] == epochs and more["trials"] >= c["trials"]
