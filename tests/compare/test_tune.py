"""`python -m compare tune`: spaces centred on the recipes, one-line refusals writing nothing (default suite);
a real search through Ray Tune with Optuna in SQLite, then the default-vs-tuned comparison (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
from test_runner import TOY, write_toy_csv

from compare import search_spaces, tune
from compare.recipes import RECIPES


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


def test_spaces_are_centred_on_the_recipe_and_list_only_flags_the_model_reads():
    caps = list(RECIPES.recipe("CAPS", "ETTh1", 96).argv)
    space = search_spaces.space_for("CAPS", caps)
    assert space == {"learning_rate": {"log": (5e-05, 0.005)}, "batch_size": {"choice": [16, 32, 64]},
                     "e_layers": {"choice": [2, 3, 4]}, "dropout": {"uniform": (0.0, 0.3)}}
    search_spaces.check_space("CAPS", space, caps)
    dlinear = list(RECIPES.recipe("DLinear", "ETTh1", 96).argv)
    assert set(search_spaces.space_for("DLinear", dlinear)) == {"learning_rate", "batch_size"}


def test_optuna_distributions_follow_the_space():
    made = tune.optuna_distributions({"learning_rate": {"log": (1e-4, 1e-2)}, "e_layers": {"choice": [1, 2]},
                                      "dropout": {"uniform": (0.0, 0.3)}})
    assert made["learning_rate"] == optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True)
    assert made["e_layers"] == optuna.distributions.CategoricalDistribution([1, 2])
    assert made["dropout"] == optuna.distributions.FloatDistribution(0.0, 0.3)


@pytest.mark.parametrize(("extra", "expected"), [
    (("--trials", "0", "--epochs", "1"), "error: --trials 0: a budget of at least one trial per model is needed"),
    (("--trials", "2", "--epochs", "0"), "error: --epochs 0: trials need at least one epoch"),
], ids=["budget-zero", "no-epochs"])
def test_an_empty_budget_is_one_line_writing_nothing(data, tmp_path, capsys, extra, expected):
    out = tmp_path / "out"
    assert tune.main(tune_argv(data, out, *extra), TOY) == 2
    assert capsys.readouterr().err.strip() == expected and not out.exists()


def test_a_space_naming_a_flag_the_model_ignores_is_one_line(data, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(search_spaces.SPACES, "linear", {**search_spaces.SPACES["linear"],
                                                         "d_model": search_spaces.HALF_OR_DOUBLE})
    out = tmp_path / "out"
    assert tune.main(tune_argv(data, out, "--trials", "2", "--epochs", "1"), TOY) == 2
    assert capsys.readouterr().err.strip() == ("error: the search space of DLinear names --d_model, which DLinear "
                                               "does not read; drop it from its family in compare/search_spaces.py")
    assert not out.exists()


def test_a_model_without_a_space_is_one_line(data, tmp_path, capsys, monkeypatch):
    monkeypatch.delitem(search_spaces.FAMILIES, "iTransformer")
    assert tune.main(tune_argv(data, tmp_path / "out", "--trials", "2", "--epochs", "1"), TOY) == 2
    assert capsys.readouterr().err.strip().startswith("error: iTransformer has no search space yet")


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
    assert [c["trials"] for c in cells] == [3, 3] and all(c["budget_trials"] == 3 for c in cells)
    # A larger budget later runs only the missing trials; then the comparison of default and tuned rows.
    assert tune.main(tune_argv(data, out, "--trials", "4", "--epochs", "2", "--seeds", "1", "2",
                               "--final_epochs", "1"), TOY) == 0
    cells = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    assert [c["trials"] for c in cells] == [4, 4]
    assert [len(c["epochs_per_trial_this_invocation"]) for c in cells] == [1, 1]
    table = (out / "table.md").read_text()
    for row in ("DLinear", "DLinear (tuned)", "iTransformer", "iTransformer (tuned)"):
        assert f"| {row} MSE |" in table.replace(f"{row} MSE", f"| {row} MSE |").replace("|| ", "| ")
    assert "## Seeds: DLinear against each other row" in table
    assert "## Seeds: DLinear (tuned) against each other row" in table
    assert "## Tuning budget" in table and "| DLinear | toy | 12 | 4 × 2 | 4 |" in table
