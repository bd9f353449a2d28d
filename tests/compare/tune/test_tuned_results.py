"""The committed equal-budget tuning (docs/results/tuned_ETTh1) is consistent with its own study database: the
budget it states was spent on every model, the studies hold validation losses only, and the tuned rows of the
comparison trained the best trial's flags."""

import json
from pathlib import Path

import optuna
import pytest

from compare.tune.equal_budget import TUNED_SUFFIX, TUNING_FILE

FOLDER = Path(__file__).resolve().parents[3] / "docs" / "results" / "tuned_ETTh1"


@pytest.fixture(scope="module")
def tuning():
    return json.loads((FOLDER / TUNING_FILE).read_text())


def _study(name: str):
    return optuna.load_study(study_name=name, storage=f"sqlite:///{FOLDER / 'studies.db'}")


def test_every_model_had_the_stated_budget_and_only_validation_losses(tuning):
    assert {c["row"] for c in tuning["cells"]} == {"DLinear", "PatchTST", "CAPS"}
    budgets = {(c["budget_trials"], c["budget_epochs"]) for c in tuning["cells"]}
    assert len(budgets) == 1, "every model must get the same budget"
    for cell in tuning["cells"]:
        finished = [t for t in _study(cell["study"]).trials if t.state == optuna.trial.TrialState.COMPLETE]
        assert len(finished) == cell["budget_trials"] == cell["trials"]
        for t in finished:
            assert not any("test" in key for key in [*t.user_attrs, *t.system_attrs, *t.params])
            assert set(t.params) == set(cell["space"])
        best = min(finished, key=lambda t: t.value)
        assert best.value == pytest.approx(cell["best_vali_loss"], rel=1e-6)
        assert best.params == pytest.approx(cell["best_params"])


def test_the_tuned_rows_trained_the_best_trials_flags(tuning):
    rows = {row["name"]: row for row in json.loads((FOLDER / "compare.json").read_text())["rows"]}
    for cell in tuning["cells"]:
        flags = rows[cell["row"] + TUNED_SUFFIX]["flags"]
        given = dict(zip(flags[::2], flags[1::2], strict=True))
        assert set(given) == {f"--{name}" for name in cell["best_params"]}
        for name, value in cell["best_params"].items():
            assert float(given[f"--{name}"]) == pytest.approx(value, rel=1e-5)
    records = [json.loads(line) for line in (FOLDER / "results.jsonl").read_text().splitlines()]
    for cell in tuning["cells"]:
        tuned = [r for r in records if r["model"] == cell["row"] and all(
            r["config"][name] == pytest.approx(value, rel=1e-5) for name, value in cell["best_params"].items())]
        assert sorted(r["seed"] for r in tuned) == [2021, 2022, 2023]
        assert all(r["protocol"] == "strict" and r["mse"] == r["mse"] for r in tuned)


def test_todays_report_reads_the_first_layout_of_tuning_json():
    """tuning.json written before --budget_minutes still renders the Tuning budget section."""
    from compare.report.forecast_tables import tuning_section

    section = "\n".join(tuning_section(FOLDER / TUNING_FILE))
    for row in ("DLinear", "PatchTST", "CAPS"):
        assert f"| {row} | ETTh1 | 96 | 4 trials × ≤ 1 epochs | — (not recorded) | 4 |" in section
