"""Equal-budget tuning: `python -m compare tune --data ETTh1 --models DLinear PatchTST CAPS --pred_lens 96
--trials 8 --epochs 2 --seeds 2021 2022 2023 --out DIR`.

For every (model row, dataset, horizon) cell, an Optuna search (TPE) run through Ray Tune, with **the same
budget for every model**: `--trials` trials, `--budget_minutes` of wall-clock time (Ray Tune's time budget),
or both (whichever ends first), of at most `--epochs` epochs each, trials stopped early by ASHA on their
per-epoch validation losses (`compare.tune_budget`). Selection reads the validation split only: a trial runs
`run.py --vali_only`, which never evaluates the test windows (its epoch lines say `Test Loss: skipped`), and
the study stores validation losses only. Spaces are data (`compare.search_spaces`), centred on the recipe.

Then each chosen setting is retrained as a row `<ROW> (tuned)` beside the recipe's row, over `--seeds`,
through the comparison runner into the same `--out`: the report shows script-default and tuned results side
by side (mean ± std over seeds) and the paired tests of `--focus` (default: the first row and its tuned row)
against every other row. `DIR/tuning.json` and the report's "Tuning budget" state the budget each cell had,
what it spent (trials, seconds, epochs per trial), what stopped it and the chosen flags.

Studies persist in `--storage` (default `sqlite:///DIR/studies.db`; any SQLAlchemy URL on a cluster, e.g.
PostgreSQL), with the seconds and epochs spent in their user attributes: a rerun counts the trials and
seconds each study has already spent and runs only the rest of the budget.
Trials run on a local Ray instance, or on `--address`'s cluster with `--cpus_per_run`/`--gpus_per_run` each.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import tempfile
import time
from pathlib import Path

from compare import runner
from compare.local_process import EPOCH_LINE, start_process
from compare.plan import PlannedRun, plan_runs, rows_from_args, run_py
from compare.provenance import shown_command
from compare.ray_executor import connect, disconnect
from compare.recipes import RECIPES, RecipeBook
from compare.run_args import merge_flags
from compare.search_spaces import space_for
from compare.tune_budget import Budget, Spent, budget_from_args, seconds_left, trials_left
from utils.errors import UserInputError
from utils.process_guard import PARENT_ENV

__all__ = ["TUNING_FILE", "build_parser", "main", "optuna_distributions", "study_name"]

logger = logging.getLogger("compare")

TUNING_FILE = "tuning.json"
TUNED_SUFFIX = " (tuned)"
#: the row the tuned report tests against every other, default and tuned, when it is among the tuned models
FOCUS_ROW = "CAPS"
METRIC = "vali_loss"


def build_parser() -> argparse.ArgumentParser:
    from utils.cli_parser import OneLineArgumentParser

    p = OneLineArgumentParser(prog="python -m compare tune", description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", required=True, help="datasets of compare/recipes.py")
    p.add_argument("--models", nargs="+", required=True, help="model rows to tune (each with the same budget)")
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96], help="horizons")
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
    """compare.search_spaces' ranges as Optuna distributions."""
    import optuna

    made = {}
    for flag, spec in space.items():
        (kind, value), = spec.items()
        if kind == "choice":
            made[flag] = optuna.distributions.CategoricalDistribution(list(value))
        else:
            made[flag] = optuna.distributions.FloatDistribution(value[0], value[1], log=kind == "log")
    return made


def _plan(args: argparse.Namespace, book: RecipeBook) -> tuple[Budget, list[tuple[PlannedRun, dict]]]:
    """The budget and the default runs of every cell (recipe argv with --epochs, --extra), checked, each
    with its search space."""
    budget = budget_from_args(args.trials, args.budget_minutes, args.epochs)
    runner_args = runner.build_parser().parse_args(
        ["--data", *args.data, "--models", *args.models, "--pred_lens", *map(str, args.pred_lens),
         "--epochs", str(args.epochs), "--num_workers", "0", *(["--root", args.root] if args.root else [])])
    runner_args.extra_flags = shlex.split(args.extra)
    runner_args.data = [book.dataset(name).name for name in runner_args.data]
    plan = plan_runs(runner_args, rows_from_args(runner_args, book), book)
    for run in plan:
        if run.error is not None:
            raise UserInputError(f"{run.label}: {run.error}")
    return budget, [(run, space_for(run.row.base, run.argv)) for run in plan]


def trial(config: dict, argv: list[str], threads: int) -> None:
    """One Ray Tune trial: run.py --vali_only with `config`'s flags in a scratch folder, reporting each
    epoch's validation loss (ASHA may stop it between epochs; run.py dies with this worker)."""
    import os

    from ray import tune

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
            raise RuntimeError(f"run.py exited with code {proc.returncode}: {' | '.join(tail)}")


def _search(run: PlannedRun, space: dict, budget: Budget, args: argparse.Namespace, storage: str) -> dict:
    """Run what is left of this cell's budget; returns its tuning.json entry."""
    import optuna
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    name = study_name(run)
    spent = Spent.of_study(_load_study(storage, name), len(_finished_trials(storage, name)))
    todo, time_left = trials_left(budget, spent), seconds_left(budget, spent)
    seconds, epochs_run, stopped_by = 0.0, [], "nothing left of the budget"
    if todo != 0 and time_left != 0:
        ray_dir = Path(args.out) / "ray"
        ray_dir.mkdir(parents=True, exist_ok=True)
        (ray_dir / ".gitignore").write_text("*\n")  # trial logs and pickled searcher state stay out of git
        searcher = OptunaSearch(space=optuna_distributions(space), metric=METRIC, mode="min", study_name=name,
                                storage=optuna.storages.RDBStorage(storage), seed=args.sampler_seed + spent.trials)
        trainable = tune.with_resources(tune.with_parameters(trial, argv=run.argv, threads=int(args.cpus_per_run)),
                                        {"cpu": args.cpus_per_run, "gpu": args.gpus_per_run})
        tuner = tune.Tuner(trainable, tune_config=tune.TuneConfig(
            search_alg=searcher, scheduler=ASHAScheduler(max_t=budget.epochs, grace_period=1, time_attr="epoch"),
            num_samples=-1 if todo is None else todo, time_budget_s=time_left, metric=METRIC, mode="min"),
            run_config=tune.RunConfig(name=name.replace("|", "_"), storage_path=str(Path(args.out).resolve() / "ray"),
                                      verbose=0))
        start = time.monotonic()
        epochs_run = [int(r.metrics.get("epoch", 0)) for r in tuner.fit()]
        seconds = time.monotonic() - start
        # Every sample of a trial budget ran, or Ray Tune's time budget ended the search first.
        stopped_by = "trials" if todo is not None and len(epochs_run) >= todo else "time budget"
    study = _load_study(storage, name)
    trials = _finished_trials(storage, name)
    if study is None or not trials:
        raise UserInputError(f"{run.label}: no trial finished within {budget.describe()}; see the trial logs under "
                             f"{args.out}/ray/ (a larger --budget_minutes leaves time for a trial to end)")
    spent = spent.plus(len(trials), seconds, epochs_run)
    spent.record(study)
    best = min(trials, key=lambda t: t.value)
    return {"row": run.row.name, "dataset": run.dataset, "pred_len": run.pred_len, "study": study.study_name,
            "space": space, "budget": {**budget.as_record(), "cpus_per_trial": args.cpus_per_run,
                                       "gpus_per_trial": args.gpus_per_run},
            "spent": {"trials": spent.trials, "seconds": round(spent.seconds, 1),
                      "epochs_per_trial": list(spent.epochs_per_trial)},
            "this_invocation": {"trials": len(epochs_run), "seconds": round(seconds, 1),
                                "epochs_per_trial": epochs_run, "stopped_by": stopped_by},
            "trials": len(trials), "best_vali_loss": best.value, "best_params": best.params}


def _load_study(storage: str, name: str):
    """The study `name` in `storage`, or None when there is none yet."""
    import optuna

    try:
        return optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        return None


def _finished_trials(storage: str, name: str) -> list:
    import optuna

    study = _load_study(storage, name)
    return [] if study is None else [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]


def _tuned_flags(entry: dict) -> str:
    params = entry["best_params"]
    return " ".join(f"--{flag} {value:.6g}" if isinstance(value, float) else f"--{flag} {value}"
                    for flag, value in sorted(params.items()))


def _compare(args: argparse.Namespace, entries: list[dict], book: RecipeBook) -> int:
    """Per (dataset, horizon) cell, one runner invocation into --out: every default row and its tuned row
    over --seeds (the report then holds every cell; the focus is CAPS and its tuned row when CAPS is tuned, so
    CAPS is tested against every baseline under both regimes, else the first model and its tuned row)."""
    rows = [e["row"] for e in entries]
    first = FOCUS_ROW if FOCUS_ROW in rows else rows[0]
    code = 0
    cells = dict.fromkeys((e["dataset"], e["pred_len"]) for e in entries)
    for dataset, pred_len in cells:
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
        code = max(code, runner.main(argv, book))
    return code


def main(argv: list[str] | None = None, book: RecipeBook = RECIPES) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    args = build_parser().parse_args(sys.argv[2:] if argv is None else argv)
    out = Path(args.out)
    storage = args.storage or f"sqlite:///{(out / 'studies.db').resolve()}"
    try:
        budget, plan = _plan(args, book)
        run_py()
        connect(args.address)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    try:
        entries = []
        for run, space in plan:
            logger.info("tune %s: %s (validation loss only)", run.label, budget.describe())
            entries.append(_search(run, space, budget, args, storage))
            logger.info("  best %s: vali %.4f with %s (stopped by %s)", run.label, entries[-1]["best_vali_loss"],
                        _tuned_flags(entries[-1]), entries[-1]["this_invocation"]["stopped_by"])
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        disconnect()
    command = "python -m compare tune " + shlex.join(sys.argv[2:] if argv is None else argv)
    (out / TUNING_FILE).write_text(json.dumps({"command": shown_command(command, out),
        "storage": args.storage or "sqlite:///OUT/studies.db",
        "cells": entries}, indent=2) + "\n")
    logger.info("tuning: %s", out / TUNING_FILE)
    return 0 if args.no_compare else _compare(args, entries, book)


if __name__ == "__main__":
    sys.exit(main())
