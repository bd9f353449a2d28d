"""compare.grid.tune_budget: a budget of trials and/or minutes, what a study spent of it (in its user attributes,
read back from a real Optuna storage) and what is left for a resumed invocation."""

from __future__ import annotations

import optuna
import pytest

from compare.grid.tune_budget import (
    MIN_SECONDS_LEFT,
    Budget,
    Spent,
    budget_from_args,
    seconds_left,
    trials_left,
)
from utils.errors import UserInputError


def test_budgets_read_as_one_phrase_and_round_trip_through_the_record():
    for budget, text in [(Budget(8, None, 2), "8 trials × ≤ 2 epochs"), (Budget(None, 300.0, 1), "5 min × ≤ 1 epochs"),
                         (Budget(8, 90.0, 3), "8 trials or 1.5 min × ≤ 3 epochs"),
                         (Budget(None, 20.0, 1), "20 s × ≤ 1 epochs")]:
        assert budget.describe() == text
        assert Budget.from_record(budget.as_record()) == budget
    assert budget_from_args(None, "0.5", 1) == Budget(None, 30.0, 1)
    assert budget_from_args(3, None, 2) == Budget(3, None, 2)


@pytest.mark.parametrize("minutes", ["0", "-1", "nan", "inf", "-inf", "1e400", "x", ""])
def test_bad_minutes_are_one_line(minutes):
    with pytest.raises(UserInputError) as err:
        budget_from_args(None, minutes, 1)
    assert str(err.value).startswith("--budget_minutes ") and "\n" not in str(err.value)


def test_spending_persists_in_the_study_and_leaves_the_rest(tmp_path):
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    study = optuna.create_study(study_name="DLinear|toy|12", storage=storage)
    assert Spent.of_study(None, 0) == Spent()
    first = Spent.of_study(study, 0).plus(finished=3, seconds=40.0, epochs_per_trial=[2, 1, 2])
    first.record(study)
    again = Spent.of_study(optuna.load_study(study_name="DLinear|toy|12", storage=storage), finished=3)
    assert again == Spent(3, 40.0, (2, 1, 2))
    budget = Budget(trials=5, seconds=60.0, epochs=2)
    assert trials_left(budget, again) == 2 and seconds_left(budget, again) == pytest.approx(20.0)
    # A later invocation adds to what was spent; a budget spent to under MIN_SECONDS_LEFT starts nothing.
    later = again.plus(finished=4, seconds=60.0 - 40.0 - MIN_SECONDS_LEFT / 2, epochs_per_trial=[1])
    assert later.epochs_per_trial == (2, 1, 2, 1) and seconds_left(budget, later) == 0.0
    assert trials_left(Budget(None, 60.0, 1), later) is None and seconds_left(Budget(9, None, 1), later) is None
    assert trials_left(Budget(3, None, 1), later) == 0
