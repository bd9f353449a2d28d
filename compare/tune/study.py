"""The Optuna side of `python -m compare tune`: the storage, each cell's study and what makes a study the
same search.

A study is named `<row>|<dataset>|<horizon>` and holds, in its user attribute `trial_identity`, everything
that changes what one of its trials computes: the trial's run.py flags (less where the data lives) and the
search space. A later invocation continues the study only with the same identity; other settings (another
`--epochs`, `--extra`, recipe) are refused in one line naming the first difference, so old trials are never
reused as the result of a new search. Studies written before identities were recorded are continued as they
are, with one line saying so.

A trial an invocation left RUNNING (the driver was killed) can never finish; the next invocation marks it
FAIL before it searches, so the study holds no trial that looks alive.
"""

from __future__ import annotations

import json
import logging

from compare.grid.run_args import merge_flags
from utils.errors import UserInputError

__all__ = ["IDENTITY_ATTR", "check_identity", "fail_abandoned_trials", "finished_trials", "load_study",
           "open_storage", "record_identity", "trial_identity"]

logger = logging.getLogger("compare")

IDENTITY_ATTR = "trial_identity"
#: flags that say where files are, not what a trial computes
_WHERE_FLAGS = ("--root_path", "--checkpoints")


def open_storage(url: str):
    """Optuna's RDB storage at `url` (created when missing); one-line UserInputError for a URL SQLAlchemy
    cannot use or a file that is not a database."""
    import optuna
    import sqlalchemy.exc

    try:
        return optuna.storages.RDBStorage(url)
    except (sqlalchemy.exc.ArgumentError, sqlalchemy.exc.NoSuchModuleError, ValueError) as err:
        raise UserInputError(f"--storage {url}: not a database URL SQLAlchemy can open ({_first_line(err)}); "
                             "give e.g. sqlite:///OUT/studies.db or postgresql://user@host/db") from None
    except (sqlalchemy.exc.DatabaseError, sqlalchemy.exc.OperationalError, optuna.exceptions.StorageInternalError,
            RuntimeError) as err:
        raise UserInputError(f"--storage {url}: cannot use it as Optuna's study database ({_first_line(err)}); "
                             "move the file aside or give another --storage / --out") from None


def _first_line(err: BaseException) -> str:
    text = str(getattr(err, "orig", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def trial_identity(argv: list[str], space: dict) -> dict:
    """What a trial of this cell computes: its run.py flags without the data's location, and the space."""
    flags = merge_flags(argv, [])
    kept, skip = [], False
    for token in flags:
        if skip:
            skip = False
            continue
        if token in _WHERE_FLAGS:
            skip = True
            continue
        kept.append(token)
    return {"argv": kept, "space": json.loads(json.dumps(space))}


def _first_difference(old: dict, new: dict) -> str:
    """A phrase naming the first flag (or the space) that differs between two identities."""
    def pairs(argv: list[str]) -> dict[str, str]:
        found, flag = {}, None
        for token in argv:
            if token.startswith("--"):
                flag = token
                found[flag] = ""
            elif flag is not None:
                found[flag] = (found[flag] + " " + token).strip()
        return found

    before, now = pairs(old.get("argv", [])), pairs(new["argv"])
    for flag in [*before, *[f for f in now if f not in before]]:
        if before.get(flag) != now.get(flag):
            was = f"{flag} {before[flag]}".strip() if flag in before else f"no {flag}"
            asked = f"{flag} {now[flag]}".strip() if flag in now else f"no {flag}"
            return f"its trials ran {was}, this invocation asks {asked}"
    return f"its search space was {old.get('space')}, this invocation's is {new['space']}"


def load_study(storage, name: str):
    """The study `name` in `storage`, or None when there is none yet."""
    import optuna

    try:
        return optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        return None


def check_identity(storage, name: str, identity: dict, where: str) -> None:
    """Refuse (UserInputError) to continue study `name` when its trials computed something else; record the
    identity on a study that has none (a new one, or one of an older version, said in one line)."""
    study = load_study(storage, name)
    if study is None:
        return
    recorded = study.user_attrs.get(IDENTITY_ATTR)
    if recorded is None:
        if study.trials:
            logger.info("  study %s predates recorded trial settings: continued as it is", name)
        else:
            study.set_user_attr(IDENTITY_ATTR, identity)
        return
    if recorded != identity:
        raise UserInputError(f"tune {name}: the study in {where} was searched with other settings "
                             f"({_first_difference(recorded, identity)}); pass the same settings to continue it, "
                             "or give this search another --out (or --storage)")


def record_identity(study, identity: dict) -> None:
    """Store `identity` on `study` unless it holds one (check_identity has compared them)."""
    if IDENTITY_ATTR not in study.user_attrs:
        study.set_user_attr(IDENTITY_ATTR, identity)


def finished_trials(storage, name: str) -> list:
    """The COMPLETE trials of study `name` ([] when there is no such study)."""
    import optuna

    study = load_study(storage, name)
    return [] if study is None else [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]


def fail_abandoned_trials(storage, name: str, why: str) -> int:
    """Mark every RUNNING trial of study `name` FAIL (`why` in its user attribute `abandoned`); their count.
    Call it when no search of this study is running: before one starts, and after it ended."""
    import optuna

    study = load_study(storage, name)
    if study is None:
        return 0
    running = [t for t in study.trials if t.state == optuna.trial.TrialState.RUNNING]
    study_id = storage.get_study_id_from_name(name)
    for t in running:
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, t.number)
        storage.set_trial_user_attr(trial_id, "abandoned", why)
        storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
    return len(running)
