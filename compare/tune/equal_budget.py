"""Equal-budget tuning: `python -m compare tune --data ETTh1 --models DLinear PatchTST CAPS --pred_lens 96
--trials 8 --epochs 2 --seeds 2021 2022 2023 --out DIR`.

For every (model row, dataset, horizon) cell, an Optuna search (TPE) run through Ray Tune, with **the same
budget for every model**: `--trials` trials, `--budget_minutes` of wall-clock time (Ray Tune's time budget),
or both (whichever ends first), of at most `--epochs` epochs each, trials stopped early by ASHA on their
per-epoch validation losses (`compare.grid.tune_budget`). Selection reads the validation split only: a trial runs
`run.py --vali_only`, which never evaluates the test windows (its epoch lines say `Test Loss: skipped`), and
the study stores validation losses only. Spaces are data (`compare.tune.search_spaces`), centred on the recipe.

Then each chosen setting is retrained as a row `<ROW> (tuned)` beside the recipe's row, over `--seeds`,
through the comparison runner into the same `--out`: the report shows script-default and tuned results side
by side (mean ± std over seeds) and the paired tests of `--focus` (default: the first row and its tuned row)
against every other row. `DIR/tuning.json` and the report's "Tuning budget" state the budget each cell had,
what it spent (trials, seconds, epochs per trial), what stopped it and the chosen flags.

Flags `--extra` sets are held fixed: they leave every space (`fixed_by_extra` in tuning.json), so each tuned row
runs exactly its study's best flags plus `--extra`. Before anything is spent, each cell's trial is timed here
(`exp.cost_probe`): a time budget that cannot hold one trial's first epoch is refused in one line. While a
search runs, a line per trial event (`compare.tune.progress`). A cell whose search finished no trial gets no
tuned row and one error line; the other cells still get theirs (exit code 1).

Studies persist in `--storage` (default `sqlite:///DIR/studies.db`; any SQLAlchemy URL on a cluster, e.g.
PostgreSQL), with the seconds and epochs spent in their user attributes, written while the search runs: a
rerun, even after a kill -9, counts the trials and seconds each study has already spent and runs only the rest
of the budget. A study continues only with the settings its trials ran (`compare.tune.study`).
Trials run on a local Ray instance, or on `--address`'s cluster with `--cpus_per_run`/`--gpus_per_run` each.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from compare.grid.plan import PlannedRun, plan_runs, rows_from_args, run_py
from compare.grid.provenance import shown_command
from compare.grid.run_args import flag_names, flag_value, merge_flags, parse_run_args, shown_flags
from compare.grid.tune_budget import Budget, Spent, budget_from_args, seconds_left, trials_left
from compare.grid.zero_shot import ZERO_SHOT_TASK
from compare.recipes.tables import RECIPES, RecipeBook
from compare.run import runner
from compare.run.eta import PROCESS_START_SECONDS
from compare.run.local_process import EPOCH_LINE, start_process
from compare.run.ray_executor import connect, disconnect
from compare.tune.search_spaces import space_for
from compare.tune.study import (
    check_identity,
    fail_abandoned_trials,
    finished_trials,
    load_study,
    open_storage,
    record_identity,
    trial_identity,
)
from exp.progress import duration, predicted_seconds
from utils.command_main import exit_code_of, log_to_stdout
from utils.errors import UserInputError
from utils.process_guard import PARENT_ENV

__all__ = ["TUNING_FILE", "Cell", "build_parser", "comparison_argvs", "main", "optuna_distributions", "study_name"]

logger = logging.getLogger("compare")

TUNING_FILE = "tuning.json"
TUNED_SUFFIX = " (tuned)"
#: the row the tuned report tests against every other, default and tuned, when it is among the tuned models
FOCUS_ROW = "CAPS"
METRIC = "vali_loss"


def build_parser() -> argparse.ArgumentParser:
    from utils.cli_parser import OneLineArgumentParser

    p = OneLineArgumentParser(prog="python -m compare tune", description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", required=True, help="datasets of compare/recipes/tables.py")
    p.add_argument("--models", nargs="+", required=True, help="model rows to tune (each with the same budget)")
    p.add_argument("--pred_lens", nargs="+", type=runner.horizon_arg, default=[96], help="horizons")
    p.add_argument("--trials", type=int, default=None,
                   help="finished trials per (model, dataset, horizon) cell: the budget (with or instead of "
                        "--budget_minutes)")
    p.add_argument("--budget_minutes", default=None, metavar="M",
                   help="wall-clock minutes of search per cell (Ray Tune's time budget; with or instead of --trials)")
    p.add_argument("--epochs", type=int, required=True, help="at most this many epochs per trial (ASHA's max_t)")
    p.add_argument("--seeds", nargs="+", type=int, default=[2021, 2022, 2023],
                   help="seeds of the final default-vs-tuned comparison")
    p.add_argument("--final_epochs", type=int, default=None,
                   help="--epochs of the final comparison (default: the recipes' own)")
    p.add_argument("--sampler_seed", type=int, default=0, help="seed of the TPE sampler")
    p.add_argument("--storage", default=None, help="Optuna storage URL (default: sqlite:///OUT/studies.db)")
    p.add_argument("--root", default=None, help="dataset root replacing the recipes' ./dataset")
    p.add_argument("--out", required=True, help="output folder: studies, tuning.json and the comparison")
    p.add_argument("--address", default=None, help="Ray cluster (default: a local Ray instance)")
    p.add_argument("--cpus_per_run", type=float, default=1.0, help="CPUs of each trial and final run")
    p.add_argument("--gpus_per_run", type=float, default=0.0, help="GPUs of each trial and final run")
    p.add_argument("--extra", default="", help="run.py flags for every trial and final run, after '='")
    p.add_argument("--no-compare", action="store_true", help="search only; skip the final comparison")
    return p


def study_name(run: PlannedRun) -> str:
    return f"{run.row.name}|{run.dataset}|{run.pred_len}"


def optuna_distributions(space: dict[str, dict]) -> dict:
    """compare.tune.search_spaces' ranges as Optuna distributions."""
    import optuna

    made = {}
    for flag, spec in space.items():
        (kind, value), = spec.items()
        if kind == "choice":
            made[flag] = optuna.distributions.CategoricalDistribution(list(value))
        else:
            made[flag] = optuna.distributions.FloatDistribution(value[0], value[1], log=kind == "log")
    return made


@dataclass
class Cell:
    """One (model row, dataset, horizon) of a search: its default run, its space, the flags --extra holds fixed
    (kept out of the space, so the tuned row runs exactly the chosen flags plus them), and its study's name."""

    run: PlannedRun
    space: dict
    fixed: dict[str, str]

    @property
    def name(self) -> str:
        return study_name(self.run)


def _plan(args: argparse.Namespace, book: RecipeBook) -> tuple[Budget, list[Cell]]:
    """The budget and every cell (recipe argv with --epochs, --extra), checked, each with its search space less
    the flags --extra sets (held fixed at --extra's value in every trial and in the tuned row)."""
    budget = budget_from_args(args.trials, args.budget_minutes, args.epochs)
    runner_args = runner.build_parser().parse_args(
        ["--data", *args.data, "--models", *args.models, "--pred_lens", *map(str, args.pred_lens),
         "--epochs", str(args.epochs), "--num_workers", "0", *(["--root", args.root] if args.root else [])])
    try:
        runner_args.extra_flags = shlex.split(args.extra)
    except ValueError as err:
        raise UserInputError(f"--extra {args.extra!r}: cannot split its flags ({err})") from None
    fixed = {name.removeprefix("--"): flag_value(runner_args.extra_flags, name.removeprefix("--")) or ""
             for name in flag_names(runner_args.extra_flags)}
    if args.final_epochs is not None and args.final_epochs < 1:
        raise UserInputError(f"--final_epochs {args.final_epochs}: the final comparison needs at least one epoch")
    runner_args.data = [book.dataset(name).name for name in runner_args.data]
    plan = plan_runs(runner_args, rows_from_args(runner_args, book), book)
    cells = []
    for run in plan:
        if run.error is not None:
            raise UserInputError(f"{run.label}: {run.error}")
        if flag_value(run.argv, "task_name") == ZERO_SHOT_TASK:
            raise UserInputError(f"{run.row.name} is a zero-shot row (a pretrained model, not trained): nothing to "
                                 "tune; drop it from --models and compare it with `python -m compare` instead")
        space = space_for(run.row.base, run.argv)
        held = {flag: value for flag, value in fixed.items() if flag in space}
        cells.append(Cell(run, {flag: r for flag, r in space.items() if flag not in held}, held))
    return budget, cells


def _trial_seconds(cell: Cell, budget: Budget, threads: int) -> tuple[float, float] | None:
    """(first epoch, whole trial) seconds of one trial at the recipe's values, from a probe of its training
    step here (`exp.cost_probe`); None when the probe fails. Raises UserInputError for flags run.py refuses."""
    from exp.cost_probe import probe_run

    try:
        cost = probe_run(parse_run_args([*cell.run.argv, "--vali_only"]), threads)
    except UserInputError:
        raise
    except Exception as err:  # noqa: BLE001 - a failed probe only costs the cell its estimate
        logger.info("  %s: no estimate (the probe failed: %s)", cell.run.label, str(err).splitlines()[0] if str(err)
                    else type(err).__name__)
        return None
    fixed = PROCESS_START_SECONDS + cost.setup_seconds

    def at(epochs: int) -> float:
        return fixed + predicted_seconds(cost.step_seconds, replace(cost.shape, epochs=epochs, test_batches=0))

    return at(1), at(budget.epochs)


def _check_fits(cell: Cell, budget: Budget, seconds: tuple[float, float] | None, left: float | None) -> None:
    """One line of the estimate; UserInputError before anything is spent when what is left of the time budget
    cannot hold one trial's first epoch (no trial could report a validation loss)."""
    if seconds is None:
        return
    first, whole = seconds
    logger.info("  estimate %s: one trial takes about %s here (%s to its first validation loss)", cell.run.label,
                duration(whole), duration(first))
    if left is None:
        return
    if left < first:
        minutes = max(1, int(-(-first * 1.5 // 60)))
        raise UserInputError(f"{cell.run.label}: {duration(left)} of --budget_minutes left cannot hold one trial's "
                             f"first epoch (about {duration(first)} here); give --budget_minutes {minutes} or more, "
                             "or a cheaper --extra")
    if left < whole:
        logger.info("  note %s: %s left holds less than one whole trial of %d epochs (about %s); trials will be cut "
                    "by the time budget", cell.run.label, duration(left), budget.epochs, duration(whole))


def trial(config: dict, argv: list[str], threads: int) -> None:
    """One Ray Tune trial: run.py --vali_only with `config`'s flags in a scratch folder, reporting each
    epoch's validation loss (ASHA may stop it between epochs; run.py dies with this worker)."""
    from ray import tune

    from compare.tune.progress import TRIAL_FAILED

    flags = [token for flag, value in config.items() for token in (f"--{flag}", str(value))]
    command = [sys.executable, "-u", str(run_py()), *merge_flags(argv, flags), "--vali_only"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": str(threads), PARENT_ENV: str(os.getpid())}
    with tempfile.TemporaryDirectory(prefix="caps-tslib-trial-") as scratch:
        proc = start_process(command, Path(scratch), env)
        tail: list[str] = []
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-5:]
            match = EPOCH_LINE.search(line)
            if match:
                tune.report({METRIC: float(match[3]), "epoch": int(match[1])})
        if proc.wait() != 0:
            raise RuntimeError(f"{TRIAL_FAILED} {proc.returncode}: {' | '.join(tail)}")


def _search(cell: Cell, budget: Budget, args: argparse.Namespace, storage, where: str) -> dict:
    """Run what is left of this cell's budget; returns its tuning.json entry, or raises UserInputError when no
    trial of its study has finished (with why: the trials' own error, or the time budget)."""
    import optuna
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    from compare.tune.progress import SearchProgress

    # Each failed trial is one line of SearchProgress (Ray Tune would print its traceback as well).
    os.environ.setdefault("TUNE_PRINT_ALL_TRIAL_ERRORS", "0")

    name, run = cell.name, cell.run
    identity = trial_identity(run.argv, cell.space)
    check_identity(storage, name, identity, where)
    abandoned = fail_abandoned_trials(storage, name, "left RUNNING by an invocation that did not end it")
    if abandoned:
        logger.info("  %s: %d trial(s) an earlier, killed invocation left running are marked FAIL", run.label,
                    abandoned)
    study = optuna.create_study(study_name=name, storage=storage, direction="minimize", load_if_exists=True)
    record_identity(study, identity)
    spent = Spent.of_study(study, len(finished_trials(storage, name)))
    todo, time_left = trials_left(budget, spent), seconds_left(budget, spent)
    seconds, epochs_run, stopped_by, progress = 0.0, [], "nothing left of the budget", None
    if todo != 0 and time_left != 0:
        ray_dir = Path(args.out) / "ray"
        ray_dir.mkdir(parents=True, exist_ok=True)
        (ray_dir / ".gitignore").write_text("*\n")  # trial logs and pickled searcher state stay out of git
        searcher = OptunaSearch(space=optuna_distributions(cell.space), metric=METRIC, mode="min", study_name=name,
                                storage=storage, seed=args.sampler_seed + spent.trials)
        trainable = tune.with_resources(tune.with_parameters(trial, argv=run.argv, threads=int(args.cpus_per_run)),
                                        {"cpu": args.cpus_per_run, "gpu": args.gpus_per_run})
        progress = SearchProgress(run.label, study, spent, budget.epochs)
        tuner = tune.Tuner(trainable, tune_config=tune.TuneConfig(
            search_alg=searcher, scheduler=ASHAScheduler(max_t=budget.epochs, grace_period=1, time_attr="epoch"),
            num_samples=-1 if todo is None else todo, time_budget_s=time_left, metric=METRIC, mode="min"),
            run_config=tune.RunConfig(name=name.replace("|", "_"), storage_path=str(Path(args.out).resolve() / "ray"),
                                      verbose=0, callbacks=[progress]))
        start = time.monotonic()
        epochs_run = [int(r.metrics.get("epoch", 0)) for r in tuner.fit()]
        seconds = time.monotonic() - start
        fail_abandoned_trials(storage, name, "ended by the time budget before it finished")
        # Every sample of a trial budget ran, or Ray Tune's time budget ended the search first.
        stopped_by = "trials" if todo is not None and len(epochs_run) >= todo else "time budget"
    trials = finished_trials(storage, name)
    spent = spent.plus(len(trials), seconds, epochs_run)
    spent.record(study)
    if not trials:
        raise UserInputError(_nothing_finished(run, budget, stopped_by, progress))
    best = min(trials, key=lambda t: t.value)
    return {"row": run.row.name, "dataset": run.dataset, "pred_len": run.pred_len, "study": name,
            "space": cell.space, "fixed_by_extra": cell.fixed,
            "budget": {**budget.as_record(), "cpus_per_trial": args.cpus_per_run, "gpus_per_trial": args.gpus_per_run},
            "spent": {"trials": spent.trials, "seconds": round(spent.seconds, 1),
                      "epochs_per_trial": list(spent.epochs_per_trial)},
            "this_invocation": {"trials": len(epochs_run), "seconds": round(seconds, 1),
                                "epochs_per_trial": epochs_run, "stopped_by": stopped_by},
            "trials": len(trials), "best_vali_loss": best.value, "best_params": best.params}


def _nothing_finished(run: PlannedRun, budget: Budget, stopped_by: str, progress) -> str:
    """Why a cell has no finished trial, and what to change."""
    errors = progress.errors if progress is not None else []
    if errors:
        return (f"{run.label}: no trial finished: {len(errors)} failed, the last with: {errors[-1]}; fix the flags "
                "it names (see --extra and the recipe)")
    if stopped_by == "time budget":
        return (f"{run.label}: no trial finished within {budget.describe()}: the time budget ended every trial "
                "before its first validation loss; give a larger --budget_minutes")
    return f"{run.label}: no trial finished within {budget.describe()}"


def _tuned_flags(entry: dict) -> str:
    """The best trial's flags as run.py flags, every float at full precision (repr round-trips), so the tuned
    row trains exactly what the study chose."""
    return " ".join(f"--{flag} {value!r}" if isinstance(value, float) else f"--{flag} {value}"
                    for flag, value in sorted(entry["best_params"].items()))


def comparison_argvs(args: argparse.Namespace, entries: list[dict]) -> list[list[str]]:
    """Per (dataset, horizon) cell, the runner's argv of the final comparison: every default row and its tuned
    row (`--variant '<row> (tuned)=<row>:<best flags>'`) over --seeds, with --extra for every run (its flags
    were held out of the spaces, so no tuned flag is replaced; the runner refuses any overlap). The focus is
    CAPS and its tuned row when CAPS is tuned, so CAPS is tested against every baseline under both regimes,
    else the first model and its tuned row."""
    rows = [e["row"] for e in entries]
    first = FOCUS_ROW if FOCUS_ROW in rows else rows[0]
    argvs = []
    for dataset, pred_len in dict.fromkeys((e["dataset"], e["pred_len"]) for e in entries):
        mine = [e for e in entries if (e["dataset"], e["pred_len"]) == (dataset, pred_len)]
        argv = ["--data", dataset, "--pred_lens", str(pred_len), "--models", *[e["row"] for e in mine],
                "--seeds", *map(str, args.seeds), "--out", args.out, "--num_workers", "0", "--no-timing",
                "--focus", first, first + TUNED_SUFFIX, "--executor", "ray", "--cpus_per_run", f"{args.cpus_per_run:g}"]
        for e in mine:
            argv += ["--variant", f"{e['row']}{TUNED_SUFFIX}={e['row']}:{_tuned_flags(e)}"]
        argv += ["--gpus_per_run", f"{args.gpus_per_run:g}"] if args.gpus_per_run else []
        argv += ["--address", args.address] if args.address else []
        argv += ["--root", args.root] if args.root else []
        argv += ["--epochs", str(args.final_epochs)] if args.final_epochs else []
        argv += [f"--extra={args.extra}"] if args.extra else []
        argvs.append(argv)
    return argvs


def _fit_check(cells: list[Cell], budget: Budget, args: argparse.Namespace, storage) -> None:
    """Before anything is spent: a study searched with other settings is one UserInputError; then each cell's
    estimate, and one UserInputError naming every cell whose time budget left cannot hold one trial's first
    epoch (the same budget for every model: no model searches on)."""
    refused = []
    for cell in cells:
        if storage is not None:
            # A study searched with other settings is refused before anything runs (_search checks again).
            check_identity(storage, cell.name, trial_identity(cell.run.argv, cell.space),
                           args.storage or str(Path(args.out) / "studies.db"))
        study = None if storage is None else load_study(storage, cell.name)
        spent = Spent.of_study(study, 0 if storage is None else len(finished_trials(storage, cell.name)))
        left = seconds_left(budget, spent)
        if trials_left(budget, spent) == 0 or left == 0:
            continue
        try:
            _check_fits(cell, budget, _trial_seconds(cell, budget, max(1, int(args.cpus_per_run))), left)
        except UserInputError as err:
            refused.append(str(err))
    if refused:
        raise UserInputError("; ".join(refused))


def _prepared_out(out: Path) -> bool:
    """Create --out (True when this call created it); one-line UserInputError when it cannot be created."""
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserInputError(f"--out {out}: cannot create it ({err.strerror or err}); give a folder you can "
                             "write") from None
    return created


def _storage_of(args: argparse.Namespace, out: Path, create: bool):
    """The study storage, or None when it is the default SQLite file, which does not exist yet and `create` is
    False (nothing is written before the checks pass)."""
    if args.storage is None and not create and not (out / "studies.db").is_file():
        return None
    return open_storage(args.storage or f"sqlite:///{(out / 'studies.db').resolve()}")


def _search_all(cells: list[Cell], budget: Budget, args: argparse.Namespace, storage) -> tuple[list[dict], list[str]]:
    """Every cell's search: (entries of the cells with a finished trial, one line per cell without)."""
    entries, failed = [], []
    where = args.storage or str(Path(args.out) / "studies.db")
    for cell in cells:
        logger.info("tune %s: %s (validation loss only)%s", cell.run.label, budget.describe(),
                    "; held fixed by --extra: " + " ".join(f"--{k} {v}" for k, v in cell.fixed.items())
                    if cell.fixed else "")
        try:
            entries.append(_search(cell, budget, args, storage, where))
        except UserInputError as err:
            failed.append(str(err))
            print(f"error: {err}", file=sys.stderr)
            continue
        logger.info("  best %s: vali %.4f with %s (stopped by %s)", cell.run.label, entries[-1]["best_vali_loss"],
                    shown_flags(entries[-1]["best_params"]), entries[-1]["this_invocation"]["stopped_by"])
    return entries, failed


def main(argv: list[str] | None = None, book: RecipeBook = RECIPES) -> int:
    """Tune every cell on one budget, then compare; 2 with one `error: ...` line on bad input."""
    log_to_stdout()
    argv = sys.argv[2:] if argv is None else argv
    args = build_parser().parse_args(argv)
    return exit_code_of(lambda: _tune(args, argv, book))


def _prepared(args: argparse.Namespace, book: RecipeBook, out: Path) -> tuple[Budget, list[Cell], object]:
    """(budget, cells, study storage) once every check passed, --out created; a UserInputError removes an
    --out this call created (and left empty)."""
    created = False
    try:
        budget, cells = _plan(args, book)
        run_py()
        if out.exists() and not out.is_dir():
            raise UserInputError(f"--out {out} is a file; give a folder (it holds the studies and the comparison)")
        _fit_check(cells, budget, args, _storage_of(args, out, create=False))
        created = _prepared_out(out)
        storage = _storage_of(args, out, create=True)
        connect(args.address)
    except UserInputError:
        if created and not any(out.iterdir()):
            out.rmdir()
        raise
    return budget, cells, storage


def _tune(args: argparse.Namespace, argv: list[str], book: RecipeBook) -> int:
    """main's work: the searches, tuning.json, then one comparison per tuned setting; 1 when a cell failed."""
    out = Path(args.out)
    budget, cells, storage = _prepared(args, book, out)
    try:
        entries, failed = _search_all(cells, budget, args, storage)
    finally:
        disconnect()
    command = "python -m compare tune " + shlex.join(argv)
    (out / TUNING_FILE).write_text(json.dumps({
        "command": shown_command(command, out), "storage": args.storage or "sqlite:///OUT/studies.db",
        "cells": entries, "failed": failed}, indent=2) + "\n")
    logger.info("tuning: %s (%d of %d cells with a tuned setting)", out / TUNING_FILE, len(entries), len(cells))
    if failed:
        logger.info("  no tuned row for: %s", "; ".join(line.split(":")[0] for line in failed))
    code = 0
    for compare_argv in [] if args.no_compare else comparison_argvs(args, entries):
        code = max(code, runner.main(compare_argv, book))
    return max(code, 1 if failed else 0)

