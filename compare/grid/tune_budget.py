"""The tuning budget of one (model, dataset, horizon) cell of `python -m compare tune`, and what a study has
spent of it.

A budget is `--trials N` trials, `--budget_minutes M` of wall-clock time (Ray Tune's `time_budget_s`), or
both (whichever ends first), each trial at most `--epochs E` epochs. What a cell has spent persists in its
Optuna study's user attributes (`SPENT_ATTRS`), so a resumed invocation runs only what is left:

    trials left  = N - finished trials in the study
    seconds left = 60 M - seconds spent by earlier invocations
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from utils.errors import UserInputError

__all__ = ["Budget", "Spent", "budget_from_args"]

#: study user attribute -> meaning
SPENT_ATTRS = {
    "budget_seconds_spent": "wall-clock seconds of every invocation's search (Ray Tune's fit)",
    "budget_epochs_per_trial": "epochs each trial ran, every invocation's trials in order",
}
#: a time budget with less than this left starts no search (a Ray Tune start alone takes longer)
MIN_SECONDS_LEFT = 1.0


@dataclass(frozen=True)
class Budget:
    """trials: at most this many finished trials (None: no limit); seconds: at most this much wall-clock
    time (None: no limit); epochs: at most this many epochs per trial."""

    trials: int | None
    seconds: float | None
    epochs: int

    def describe(self) -> str:
        """One phrase: `8 trials`, `5 min` (under a minute: `30 s`) or `8 trials or 5 min`, then `× ≤ 2 epochs`."""
        parts = [f"{self.trials} trials"] if self.trials is not None else []
        if self.seconds is not None:
            parts.append(f"{self.seconds / 60:.4g} min" if self.seconds >= 60 else f"{self.seconds:.3g} s")
        return f"{' or '.join(parts)} × ≤ {self.epochs} epochs"

    def as_record(self) -> dict:
        """As tuning.json states it: {"trials", "minutes", "epochs_per_trial"} (None: no such limit)."""
        return {"trials": self.trials, "minutes": None if self.seconds is None else self.seconds / 60,
                "epochs_per_trial": self.epochs}

    @classmethod
    def from_record(cls, record: dict) -> Budget:
        minutes = record["minutes"]
        return cls(record["trials"], None if minutes is None else 60.0 * minutes, record["epochs_per_trial"])


@dataclass(frozen=True)
class Spent:
    """What a study's earlier invocations used: finished trials, seconds, epochs of each trial run."""

    trials: int = 0
    seconds: float = 0.0
    epochs_per_trial: tuple[int, ...] = field(default_factory=tuple)

    @classmethod
    def of_study(cls, study, finished: int) -> Spent:
        """The spending recorded in `study`'s user attributes (None: no study yet)."""
        attrs = {} if study is None else study.user_attrs
        return cls(finished, float(attrs.get("budget_seconds_spent", 0.0)),
                   tuple(int(e) for e in attrs.get("budget_epochs_per_trial", ())))

    def plus(self, finished: int, seconds: float, epochs_per_trial: list[int]) -> Spent:
        """This spending after an invocation that ran `epochs_per_trial` in `seconds`, leaving `finished`."""
        return Spent(finished, self.seconds + seconds, (*self.epochs_per_trial, *epochs_per_trial))

    def record(self, study) -> None:
        """Write this spending into `study`'s user attributes."""
        study.set_user_attr("budget_seconds_spent", round(self.seconds, 3))
        study.set_user_attr("budget_epochs_per_trial", list(self.epochs_per_trial))


def trials_left(budget: Budget, spent: Spent) -> int | None:
    """Trials still to run (None: no trial limit)."""
    return None if budget.trials is None else max(0, budget.trials - spent.trials)


def seconds_left(budget: Budget, spent: Spent) -> float | None:
    """Seconds still to spend (None: no time limit); 0 once less than MIN_SECONDS_LEFT remains."""
    if budget.seconds is None:
        return None
    left = budget.seconds - spent.seconds
    return left if left >= MIN_SECONDS_LEFT else 0.0


def _positive_minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        raise UserInputError(f"--budget_minutes {text!r} is not a number; give the wall-clock minutes per cell, "
                             "e.g. --budget_minutes 30") from None
    if not math.isfinite(minutes) or minutes <= 0:
        raise UserInputError(f"--budget_minutes {text}: the wall-clock budget per cell must be a positive, finite "
                             "number of minutes, e.g. --budget_minutes 30")
    return minutes


def budget_from_args(trials: int | None, budget_minutes: str | None, epochs: int) -> Budget:
    """The budget of `--trials`, `--budget_minutes` (either or both) and `--epochs`; one-line errors."""
    if trials is None and budget_minutes is None:
        raise UserInputError("no tuning budget: give --trials N, --budget_minutes M or both (the same budget for "
                             "every model)")
    if trials is not None and trials < 1:
        raise UserInputError(f"--trials {trials}: a budget of at least one trial per model is needed")
    if epochs < 1:
        raise UserInputError(f"--epochs {epochs}: trials need at least one epoch")
    seconds = None if budget_minutes is None else 60.0 * _positive_minutes(budget_minutes)
    return Budget(trials, seconds, epochs)


def current_cell(cell: dict) -> dict:
    """A tuning.json cell in the current layout (`budget`, `spent`, `this_invocation`). Cells written before
    `--budget_minutes` existed (`budget_trials`, `budget_epochs`, `*_this_invocation`) had a trial budget only,
    no recorded resources per trial, and one invocation; they are read as such."""
    if "budget" in cell:
        return cell
    epochs = list(cell["epochs_per_trial_this_invocation"])
    seconds = cell["seconds_this_invocation"]
    return {**cell,
            "budget": {"trials": cell["budget_trials"], "minutes": None, "epochs_per_trial": cell["budget_epochs"],
                       "cpus_per_trial": None, "gpus_per_trial": None},
            "spent": {"trials": cell["trials"], "seconds": seconds, "epochs_per_trial": epochs},
            "this_invocation": {"trials": len(epochs), "seconds": seconds, "epochs_per_trial": epochs,
                                "stopped_by": "trials" if cell["trials"] >= cell["budget_trials"] else "—"}}
