"""`python -m compare tune`: spaces centred on the recipes, one-line refusals writing nothing (default suite);
a real search through Ray Tune with Optuna in SQLite, then the default-vs-tuned comparison (slow)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import optuna
import pytest

from compare.recipes.tables import ModelRecipe, RecipeBook
from compare.tune import equal_budget as tune
from tests.compare.run.test_runner import TOY, TOY_FLAGS, write_toy_csv
from utils.errors import UserInputError
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
    assert [cell.run.row.name for cell in plan] == ["DLinear", "iTransformer"]
    assert set(plan[0].space) == {"learning_rate", "batch_size"} and "d_model" in plan[1].space


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


def test_extra_flags_are_held_fixed_and_each_tuned_row_runs_exactly_the_best_flags(data, tmp_path):
    """--extra's flags leave every space (tuning.json: fixed_by_extra); the final comparison's tuned rows run
    the best trial's values bit for bit (floats at full precision) beside --extra's, read from their argv."""
    from compare.grid.plan import plan_runs, rows_from_args
    from compare.grid.run_args import parse_run_args
    from compare.run.runner import build_parser as runner_parser

    args = tune.build_parser().parse_args(tune_argv(data, tmp_path / "out", "--trials", "2", "--epochs", "1",
                                                    "--seeds", "1", "2", "--extra=--batch_size 16 --dropout 0.3"))
    _, cells = tune._plan(args, TOY)
    assert [c.fixed for c in cells] == [{"batch_size": "16"}, {"batch_size": "16", "dropout": "0.3"}]
    assert all("batch_size" not in c.space and "learning_rate" in c.space for c in cells)
    assert "dropout" not in cells[1].space and "d_model" in cells[1].space
    best = {"DLinear": {"learning_rate": 0.00012345678912345678},
            "iTransformer": {"learning_rate": 0.0031, "d_model": 32, "e_layers": 2}}
    entries = [{"row": row, "dataset": "toy", "pred_len": 12, "best_params": params} for row, params in best.items()]
    (argv,) = tune.comparison_argvs(args, entries)
    runner_args = runner_parser().parse_args(argv)
    runner_args.extra_flags = ["--batch_size", "16", "--dropout", "0.3"]
    plan = plan_runs(runner_args, rows_from_args(runner_args, TOY), TOY)
    tuned = [run for run in plan if run.row.name.endswith(tune.TUNED_SUFFIX)]
    assert len(tuned) == 4  # two rows x two seeds
    for run in tuned:
        parsed = parse_run_args(run.argv)
        for flag, value in best[run.row.base].items():
            assert getattr(parsed, flag) == value, (run.label, flag)
        assert (parsed.batch_size, parsed.dropout) == (16, 0.3)
    # A best flag that --extra also set (impossible from the spaces) would be refused, not replaced.
    entries[0]["best_params"] = {"batch_size": 64}
    (argv,) = tune.comparison_argvs(args, entries)
    runner_args = runner_parser().parse_args(argv)
    runner_args.extra_flags = ["--batch_size", "16"]
    with pytest.raises(UserInputError, match="row 'DLinear \\(tuned\\)' sets --batch_size and --extra sets"):
        plan_runs(runner_args, rows_from_args(runner_args, TOY), TOY)


def test_a_time_budget_that_cannot_hold_one_trial_is_refused_before_anything_starts(data, tmp_path, capsys):
    out = tmp_path / "out"
    assert tune.main(tune_argv(data, out, "--budget_minutes", "0.02", "--epochs", "1"), TOY) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: DLinear | toy | H=12: 0m01s of --budget_minutes left cannot hold one trial's "
                          "first epoch (about ")
    assert "; iTransformer | toy | H=12: 0m01s" in err and "give --budget_minutes" in err
    assert "\n" not in err and not out.exists()


@pytest.mark.parametrize("case", ["out-is-a-file", "corrupt-studies-db", "bad-storage-url"])
def test_a_bad_out_or_storage_is_one_line_writing_nothing(data, tmp_path, capsys, case):
    out = tmp_path / "out"
    extra = ["--trials", "1", "--epochs", "1"]
    if case == "out-is-a-file":
        out.write_text("a file\n")
        expected = f"error: --out {out} is a file; give a folder (it holds the studies and the comparison)"
    elif case == "corrupt-studies-db":
        out.mkdir()
        (out / "studies.db").write_bytes(b"this is not a database" * 100)
        expected = f"error: --storage sqlite:///{out / 'studies.db'}: cannot use it as Optuna's study database"
    else:
        extra += ["--storage", "nosuchdb://somewhere/x"]
        expected = "error: --storage nosuchdb://somewhere/x: not a database URL SQLAlchemy can open"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert tune.main(tune_argv(data, out, *extra), TOY) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(expected) and "\n" not in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def _descendants_alive(pids: dict[int, int]) -> list[str]:
    """The command lines of the processes of `pids` ({pid: start time}) still alive (zombies count as ended)."""
    from compare.run.ray_reaper import _stat

    alive = []
    for pid, start in pids.items():
        found = _stat(pid)
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if found is not None and found[1] == start and state != "Z":
            alive.append(f"{pid} {command[:120]}")
    return alive


@pytest.mark.slow
def test_a_killed_search_resumes_spending_only_what_is_left_with_no_trial_left_running(data, tmp_path):
    """kill -9 of the driver mid-search: the seconds spent were written as the search ran, no Ray process of
    its local instance lives on, and the next invocation marks the killed trial FAIL and spends only the rest."""
    import os
    import signal
    import subprocess
    import sys

    from waiting import wait_for

    from compare.run.ray_reaper import descendants

    out = tmp_path / "out"
    argv = ["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--root", str(data), "--out", str(out),
            "--epochs", "3", "--budget_minutes", "2", "--no-compare"]
    script = tmp_path / "tune_driver.py"
    script.write_text("import sys\nfrom tests.compare.run.test_runner import TOY\nfrom compare.tune import equal_budget as tune\n"
                      f"sys.exit(tune.main({argv!r}, TOY))\n")
    repo = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(repo),
           "RAY_AUTH_MODE": "disabled", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    storage = f"sqlite:///{out / 'studies.db'}"

    def spent() -> float:
        if not (out / "studies.db").is_file():
            return 0.0
        try:
            study = optuna.load_study(study_name="DLinear|toy|12", storage=storage)
        except KeyError:  # the study is not created yet
            return 0.0
        return study.user_attrs.get("budget_seconds_spent", 0.0)

    seen: dict[int, int] = {}

    def searching() -> bool:
        seen.update(descendants(proc.pid))
        return spent() >= 10.0

    try:
        wait_for(searching, 240, "the search to spend 10 s")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        try:
            wait_for(lambda: not _descendants_alive(seen), 60, "every process of the killed driver's Ray to end")
        except AssertionError as err:
            raise AssertionError(f"{err}; alive: {_descendants_alive(seen)}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    before = spent()
    assert before >= 10.0
    killed = optuna.load_study(study_name="DLinear|toy|12", storage=storage)
    assert optuna.trial.TrialState.RUNNING in [t.state for t in killed.trials]
    assert tune.main(argv, TOY) == 0
    (cell,) = json.loads((out / tune.TUNING_FILE).read_text())["cells"]
    # The budget is 120 s in all: this invocation spent what was left of it, give or take Ray Tune's shutdown.
    assert cell["this_invocation"]["seconds"] < 120.0 - before + 30
    assert cell["spent"]["seconds"] == pytest.approx(before + cell["this_invocation"]["seconds"], abs=0.2)
    states = [t.state for t in optuna.load_study(study_name="DLinear|toy|12", storage=storage).trials]
    assert optuna.trial.TrialState.RUNNING not in states and optuna.trial.TrialState.FAIL in states


@pytest.mark.slow
def test_a_model_whose_trials_all_fail_leaves_the_other_models_tuned_row(tmp_path, capsys):
    """iTransformer at a learning rate around 1e30 gives a non-finite loss in every trial (run.py stops it);
    DLinear's study finishes and its tuned row is trained; the command exits 1 naming iTransformer's error."""
    root = tmp_path / "data"
    write_toy_csv(root / "toy" / "toy.csv")
    book = RecipeBook(TOY.datasets, {"DLinear": TOY.models["DLinear"], "iTransformer": ModelRecipe(
        "iTransformer", {**TOY_FLAGS, "learning_rate": 1e30}, {"toy": {}})})
    out = tmp_path / "out"
    code = tune.main(tune_argv(root, out, "--trials", "2", "--epochs", "1", "--seeds", "1", "--final_epochs", "1"),
                     book)
    assert code == 1
    err = capsys.readouterr().err
    assert "error: iTransformer | toy | H=12: no trial finished: 2 failed, the last with: " in err
    assert "non-finite training loss" in err and "Traceback" not in err
    record = json.loads((out / tune.TUNING_FILE).read_text())
    assert [c["row"] for c in record["cells"]] == ["DLinear"] and len(record["failed"]) == 1
    rows = {json.loads(line)["row"] for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()}
    assert rows == {"DLinear", "DLinear (tuned)"}


def test_a_failed_trial_is_named_by_its_own_error_line():
    from compare.tune.progress import TRIAL_FAILED, error_line

    report = ("Failure # 1 (occurred at 2026-12-04)\nray::ImplicitFunc.train() (pid=1, ip=127.0.0.1)\n"
              "Traceback (most recent call last):\n  File \"x.py\", line 3, in trial\n"
              f"RuntimeError: {TRIAL_FAILED} 1: epoch 1 | error: non-finite training loss (nan) at epoch 1\n")
    assert error_line(report) == f"{TRIAL_FAILED} 1: epoch 1 | error: non-finite training loss (nan) at epoch 1"
    assert error_line("worker died\nActorDiedError: the actor died unexpectedly\n") == \
        "ActorDiedError: the actor died unexpectedly"
    assert error_line("") == "no error text"


def test_a_rerun_with_other_settings_is_refused_before_anything_runs(data, tmp_path, capsys):
    """The study of an earlier invocation with --epochs 2 is not reused by one with --epochs 1: one line, exit 2,
    the study untouched (checked before Ray starts)."""
    from compare.tune.study import open_storage, record_identity, trial_identity

    out = tmp_path / "out"
    out.mkdir()
    earlier = tune.build_parser().parse_args(tune_argv(data, out, "--trials", "1", "--epochs", "2"))
    _, cells = tune._plan(earlier, TOY)
    storage = open_storage(f"sqlite:///{out / 'studies.db'}")
    for cell in cells:
        record_identity(optuna.create_study(study_name=cell.name, storage=storage),
                        trial_identity(cell.run.argv, cell.space))
    assert tune.main(tune_argv(data, out, "--trials", "1", "--epochs", "1"), TOY) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: tune DLinear|toy|12: the study in {out / 'studies.db'} was searched with other "
                          "settings (its trials ran --train_epochs 2, this invocation asks --train_epochs 1)")
    assert "\n" not in err and sorted(p.name for p in out.iterdir()) == ["studies.db"]
