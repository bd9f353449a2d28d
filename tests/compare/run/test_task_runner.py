"""compare.run.runner --task: planning from TASK_RECIPES (the block's argv plus the overrides, unique settings,
the axis of each task), one-line errors for missing data and misused flags, skipping finished settings,
and whole grids with a stand-in for run.py that writes each task's results.jsonl record (no training)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from compare.grid.plan import rows_from_args
from compare.grid.run_args import merge_flags
from compare.recipes.tables import MASK_RATES, TASK_RECIPES
from compare.run import local_process, runner
from data_provider.m4 import M4_SERIES_FILES
from tests.data_provider.uea_files import toy_dataset


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """A dataset root with the files planning checks: ETTh1, MSL, SWaT, M4, Yahoo, sktime_monthly (empty files)
    and a small generated JapaneseVowels (planning reads its series lengths)."""
    root = tmp_path_factory.mktemp("task_data")
    (root / "ETT-small").mkdir()
    (root / "ETT-small" / "ETTh1.csv").write_text("date,OT\n")
    for folder, files in (("MSL", ("MSL_train.npy", "MSL_test.npy", "MSL_test_label.npy")),
                          ("SWaT", ("swat_train2.csv", "swat2.csv")),
                          ("m4", ("M4-info.csv", *M4_SERIES_FILES)), ("Yahoo", ("yahoo.csv",)),
                          ("sktime_monthly", ("sktime_monthly.csv",))):
        (root / folder).mkdir()
        for name in files:
            (root / folder / name).write_text("")
    toy_dataset(root / "JapaneseVowels", name="JapaneseVowels", n_train=6, n_test=3)
    return root


def plan(root: Path, task: str, data: list[str], models: list[str], *extra: str) -> list[runner.PlannedRun]:
    args = runner.build_parser().parse_args(["--task", task, "--data", *data, "--models", *models,
                                             "--root", str(root), *extra])
    args.extra_flags = []
    return runner.plan_runs(args, rows_from_args(args), TASK_RECIPES)


def flag(argv: list[str], name: str) -> str:
    return argv[len(argv) - 1 - argv[::-1].index(name) + 1]


@pytest.mark.parametrize(("task", "dataset", "model", "block"), [
    ("imputation", "ETTh1", "TimesNet", 1),
    ("anomaly_detection", "MSL", "TimesNet", 0),
    ("classification", "JapaneseVowels", "iTransformer", 0),
    ("short_term_forecast", "Monthly", "DLinear", 0),
    ("anomaly_detection", "Yahoo", "CAPS", 0),
    ("short_term_forecast", "sktime_monthly", "iTransformer", 0),
], ids=["imputation", "anomaly", "classification", "m4", "real-anomaly", "real-short-term"])
def test_a_task_run_is_its_block_plus_the_overrides(data_root, task, dataset, model, block):
    extra = ["--mask_rates", str(MASK_RATES[block])] if task == "imputation" else []
    (run,) = plan(data_root, task, [dataset], [model], "--epochs", "1", "--patience", "2", *extra)
    assert run.error is None and run.task == task and run.block == block
    # The runner's --protocol (default strict) comes right after the block's flags.
    expected = merge_flags(TASK_RECIPES.argv(task, model, dataset, block),
                           ["--protocol", "strict", "--no_progress", "--train_epochs", "1", "--patience", "2"])
    # Only --root_path differs: it points into --root.
    assert run.argv == merge_flags(expected, ["--root_path", run.argv[run.argv.index("--root_path") + 1]])
    assert flag(run.argv, "--root_path").startswith(str(data_root))
    assert run.settings[0].startswith(f"{task}_") and len(run.settings) == 1
    assert run.recipe.script == TASK_RECIPES.script(task, model, dataset)


def test_imputation_runs_the_requested_mask_rates(data_root):
    runs = plan(data_root, "imputation", ["ETTh1"], ["TimesNet", "CAPS"], "--mask_rates", "0.125", "0.25")
    assert [(r.row.name, r.point, flag(r.argv, "--mask_rate")) for r in runs] == [
        ("TimesNet", 0.125, "0.125"), ("CAPS", 0.125, "0.125"), ("TimesNet", 0.25, "0.25"), ("CAPS", 0.25, "0.25")]
    assert flag(runs[0].argv, "--model_id") == "ETTh1_mask_0.125"
    assert runs[0].label == "TimesNet | ETTh1 | mask rate 0.125"
    assert len({s for r in runs for s in r.settings}) == 4


def test_blocks_only_some_models_have_are_lines_of_their_own(data_root):
    runs = plan(data_root, "anomaly_detection", ["SWAT"], ["TimesNet", "Autoformer"])
    assert [(r.row.name, r.point) for r in runs] == [("TimesNet", 0), ("Autoformer", 0),
                                                     *(("TimesNet", b) for b in range(1, 8))]
    assert len({s for r in runs for s in r.settings}) == 9
    assert [r.point for r in plan(data_root, "anomaly_detection", ["SWAT"], ["TimesNet"], "--blocks", "2")] == [2]


def test_seeds_and_variants_get_distinct_settings(data_root):
    runs = plan(data_root, "classification", ["JapaneseVowels"], ["DLinear"], "--seeds", "1", "2",
                "--variant", "Wide=DLinear:--d_model 32")
    assert all(r.error is None for r in runs)
    settings = [s for r in runs for s in r.settings]
    assert len(set(settings)) == len(settings) == 4
    wide = next(r for r in runs if r.row.name == "Wide" and r.seed == 2)
    # The UEA loader reads <model_id>_TRAIN.ts, so classification runs are told apart by --des.
    assert flag(wide.argv, "--model_id") == "JapaneseVowels" and flag(wide.argv, "--des") == "Exp_Wide_s2"
    # The experiment sets seq_len from the files (toy series are 10..20 steps) and pred_len 0; so does the plan.
    assert "_pl0_" in wide.settings[0] and "_sl" in wide.settings[0]
    m4 = plan(data_root, "short_term_forecast", ["Yearly"], ["DLinear"], "--seeds", "3")[0]
    assert flag(m4.argv, "--model_id") == "m4_Yearly_s3"
    # M4's lengths come from the seasonal pattern (Yearly: H = 6, seq_len 12, label_len 6).
    assert "_sl12_ll6_pl6_" in m4.settings[0]


@pytest.mark.parametrize(("task", "dataset", "model", "message"), [
    ("imputation", "ETTm2", "TimesNet", "python -m data_provider.fetch ETTm2 --root ./dataset"),
    ("anomaly_detection", "PSM", "TimesNet", "PSM cannot be downloaded automatically: copy train.csv"),
    ("classification", "Heartbeat", "DLinear", "Heartbeat cannot be fetched here: copy Heartbeat_TRAIN.ts"),
    ("short_term_forecast", "Monthly", "TimesNet", "python -m data_provider.fetch m4 --root ./dataset"),
    ("anomaly_detection", "MITDB", "DLinear", "python -m data_provider.fetch MITDB --root ./dataset"),
    ("short_term_forecast", "sktime_monthly", "DLinear",
     "sktime_monthly.csv missing: run `python -m data_provider.fetch sktime_monthly --root ./dataset`"),
], ids=["imputation", "anomaly", "classification", "m4", "real-anomaly", "real-short-term"])
def test_missing_data_is_a_one_line_error_with_the_hint(tmp_path, task, dataset, model, message):
    (run,) = plan(tmp_path, task, [dataset], [model], *(["--mask_rates", "0.5"] if task == "imputation" else []))
    assert run.error is not None and "\n" not in run.error and message in run.error, run.error


def invoke(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv)
    return code, buffer.getvalue()


@pytest.mark.parametrize(("argv", "message"), [
    (["--task", "classification", "--data", "ETTh1", "--models", "DLinear"],
     "error: --data ETTh1 is not a classification dataset; choose from EthanolConcentration"),
    (["--task", "imputation", "--data", "ETTh1", "--models", "PatchTST"],
     "error: PatchTST has no imputation recipe; choose from TimesNet"),
    (["--task", "classification", "--data", "JapaneseVowels", "--models", "DLinear", "--mask_rates", "0.5"],
     "error: --mask_rates belongs to --task imputation, not classification"),
    (["--task", "imputation", "--data", "ETTh1", "--models", "DLinear", "--mask_rates", "0.3"],
     "error: --mask_rates 0.3: the imputation recipes have blocks for 0.125 0.25 0.375 0.5"),
    (["--task", "imputation", "--data", "ETTh1", "--models", "DLinear", "--pred_lens", "96"],
     "error: --pred_lens belongs to --task long_term_forecast; imputation runs its recipes' blocks"),
    (["--task", "classification", "--data", "JapaneseVowels", "--models", "DLinear", "--reference", "x.csv"],
     "error: --reference holds long-term MSE/MAE numbers; classification reports have no reference column"),
], ids=["dataset", "model", "mask-rates", "rate", "pred-lens", "reference"])
def test_misused_flags_are_usage_errors(data_root, tmp_path, capsys, argv, message):
    assert runner.main([*argv, "--root", str(data_root), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().startswith(message)


def test_a_real_set_runs_the_block_of_the_set_it_stands_in_for_with_its_own_data_flags(data_root):
    """Yahoo runs each model's MSL block with its own file and a window its 80 validation rows hold; sktime_monthly
    the M4 Monthly block as a long CSV with its horizon and seasonality, no M4 pattern."""
    yahoo, msl = (plan(data_root, "anomaly_detection", [d], ["TimesNet"])[0] for d in ("Yahoo", "MSL"))
    assert (flag(yahoo.argv, "--data"), flag(yahoo.argv, "--seq_len"), flag(msl.argv, "--seq_len")) == (
        "Yahoo", "50", "100")
    assert flag(yahoo.argv, "--d_model") == flag(msl.argv, "--d_model") == "8" and yahoo.recipe.script == ""
    short = plan(data_root, "short_term_forecast", ["sktime_monthly"], ["TimesNet"], "--seeds", "3")[0]
    assert [flag(short.argv, f) for f in ("--data", "--data_path", "--pred_len", "--seasonality", "--model_id")] == [
        "short_term_csv", "sktime_monthly.csv", "12", "12", "sktime_monthly_s3"]
    assert "--seasonal_patterns" not in short.argv and "_sl24_ll12_pl12_" in short.settings[0]


def test_a_model_without_a_recipe_for_the_dataset_cannot_run(data_root):
    (run,) = plan(data_root, "imputation", ["ETTh1"], ["iTransformer"], "--mask_rates", "0.25")
    assert run.error == "iTransformer has no imputation recipe for ETTh1; it has ETTh2, ECL"


def test_finished_settings_are_skipped(data_root, tmp_path):
    out = tmp_path / "out"
    argv = ["--task", "imputation", "--data", "ETTh1", "--models", "TimesNet", "CAPS", "--mask_rates", "0.125", "0.25",
            "--root", str(data_root), "--out", str(out), "--dry-run"]
    done = plan(data_root, "imputation", ["ETTh1"], ["CAPS"], "--mask_rates", "0.25")[0]
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "results.jsonl").write_text(json.dumps({"setting": done.settings[0], "mse": 0.5}) + "\n")
    code, log = invoke(argv)
    assert code == 0
    assert "comparison: 4 runs planned, 1 already finished, 3 to run, 0 cannot run" in log
    assert "skip CAPS | ETTh1 | mask rate 0.25\n" in log and "run  CAPS | ETTh1 | mask rate 0.125\n" in log


def fake_record(run: runner.PlannedRun, setting: str) -> dict:
    """A results.jsonl record as the task's experiment writes it, with numbers set by row, point and seed."""
    base = {"DLinear": 0.5, "TimesNet": 0.6, "CAPS": 0.7}[run.row.base] + 0.01 * (run.seed or 0)
    record = {"setting": setting, "task_name": run.task, "model": run.row.base, "seed": run.seed, "epochs_run": 1,
              "train_seconds": 1.0, "params": 100}
    if run.task == "imputation":
        return {**record, "mse": base * run.point, "mae": base, "mask_rate": run.point}
    return {**record, "accuracy": base, "precision": base, "recall": base, "f_score": base,
            "unadjusted_precision": base / 2, "unadjusted_recall": base / 2, "unadjusted_f_score": base / 2,
            "macro_f1": base - 0.1}


@pytest.fixture
def fake_run_py(monkeypatch):
    """Replace the run.py subprocess by one that appends the run's record (no training)."""
    started = []

    def execute(run, runs_dir, timeout, threads=None, *, resume=False, stopper=None):
        started.append(run.label)
        log = runs_dir / "logs" / f"{run.settings[0]}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("fake\n")
        with (runs_dir / "results.jsonl").open("a") as f:
            for setting in run.settings:
                f.write(json.dumps(fake_record(run, setting)) + "\n")
        return local_process.RunOutcome(0, None, log)

    monkeypatch.setattr(local_process, "execute_run", execute)
    return started


def test_an_imputation_grid_runs_reports_and_is_not_rerun(data_root, tmp_path, fake_run_py):
    out = tmp_path / "out"
    argv = ["--task", "imputation", "--data", "ETTh1", "--models", "TimesNet", "DLinear", "--mask_rates", "0.125",
            "0.25", "--seeds", "1", "2", "--root", str(data_root), "--out", str(out)]
    code, log = invoke(argv)
    assert code == 0 and len(fake_run_py) == 8, log
    assert "done in" in log and "mse 0.0762  mae 0.6100  epochs 1" in log
    config = json.loads((out / "compare.json").read_text())
    assert config["task"] == "imputation" and config["points"] == [0.125, 0.25] and "pred_lens" not in config
    manifest = [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]
    assert {(m["task"], m["axis"], m["status"]) for m in manifest} == {("imputation", 0.125, "ok"),
                                                                       ("imputation", 0.25, "ok")}
    table = (out / "table.md").read_text()
    # DLinear's errors are lower: bold on every line, the average over the two rates included.
    assert "| ETTh1 | Avg | _0.115 ± 0.001_ | _0.615 ± 0.007_ | **0.097 ± 0.001** | **0.515 ± 0.007** |" in table
    assert (out / "mse_by_dataset.png").is_file() and not (out / "efficiency.md").exists()
    code, log = invoke(argv)
    assert code == 0 and len(fake_run_py) == 8 and "8 already finished, 0 to run" in log


def test_a_folder_holds_one_task(data_root, tmp_path, fake_run_py, capsys):
    out = tmp_path / "out"
    assert runner.main(["--task", "anomaly_detection", "--data", "MSL", "--models", "DLinear", "--root",
                        str(data_root), "--out", str(out)]) == 0
    assert runner.main(["--data", "ETTh1", "--models", "DLinear", "--out", str(out)]) == 2
    assert "holds a anomaly_detection comparison" in capsys.readouterr().err


def test_jobs_failed_rows_and_the_focus_in_a_task_grid(data_root, tmp_path, fake_run_py):
    out = tmp_path / "out"
    code, log = invoke(["--task", "anomaly_detection", "--data", "MSL", "SWAT", "--models", "DLinear", "TimesNet",
                        "--blocks", "0", "--seeds", "1", "2", "--jobs", "2", "--focus", "timesnet", "dlinear",
                        "--root", str(data_root), "--out", str(out)])
    # DLinear has no SWAT recipe: its runs cannot run, the others finish, the exit code says some failed.
    assert code == 1 and len(fake_run_py) == 6, log
    assert "cannot run DLinear | SWAT | block 0 | seed 1: DLinear has no anomaly_detection recipe for SWAT" in log
    table = (out / "table.md").read_text()
    assert "## Seeds: TimesNet against each other row (F1, higher is better)" in table
    assert "## Seeds: DLinear against each other row (F1, higher is better)" in table
    # DLinear's F1 ((0.5 + 0.01 seed) / 2) is below TimesNet's ((0.6 + ...) / 2): TimesNet wins both seeds on MSL.
    assert table_line(table, "| DLinear | 2 |").startswith("| DLinear | 2 | 2 | 0 | 0 | +5.0 pt |")
    assert "## Failed runs" in table and "| DLinear | SWAT | 0 (seed 1) |" in table


def table_line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_an_interrupted_task_run_is_resumed_by_the_next_invocation(data_root, tmp_path, monkeypatch):
    out = tmp_path / "out"
    argv = ["--task", "classification", "--data", "JapaneseVowels", "--models", "DLinear", "TimesNet",
            "--root", str(data_root), "--out", str(out)]
    started = []

    def execute(run, runs_dir, timeout, threads=None, *, resume=False, stopper=None):
        started.append(run.row.name)
        log = runs_dir / "logs" / "x.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        if run.row.name == "TimesNet" and started.count("TimesNet") == 1:
            # run.py saved last.pth after SIGTERM and exited 128 + 15
            return local_process.RunOutcome(143, "interrupted: saved last.pth", log)
        with (runs_dir / "results.jsonl").open("a") as f:
            f.write(json.dumps(fake_record(run, run.settings[0])) + "\n")
        return local_process.RunOutcome(0, None, log)

    monkeypatch.setattr(local_process, "execute_run", execute)
    code, log = invoke(argv)
    assert code == runner.EXIT_UNFINISHED and "1 remain: rerun the same command" in log
    table = (out / "table.md").read_text()
    # As in the forecasting report, a row with no finished or failed run has no column yet.
    assert table_line(table, "| JapaneseVowels | 0 |") == "| JapaneseVowels | 0 | **0.500** | **0.400** |"
    code, log = invoke(argv)
    assert code == 0 and started == ["DLinear", "TimesNet", "TimesNet"]
    assert table_line((out / "table.md").read_text(), "| JapaneseVowels | 0 |") == (
        "| JapaneseVowels | 0 | _0.500_ | _0.400_ | **0.600** | **0.500** |")


def test_the_protocol_is_strict_by_default_recorded_and_one_per_folder(data_root, tmp_path, fake_run_py, capsys):
    from data_provider.uea import read_ts

    out = tmp_path / "out"
    base = ["--task", "classification", "--data", "JapaneseVowels", "--models", "DLinear", "--root", str(data_root),
            "--out", str(out)]
    code, log = invoke([*base, "--variant", "DLinear (TSLib)=DLinear:--protocol tslib"])
    assert code == 0, log
    assert "protocol: strict (" in log and "the comparison runner's default" in log
    config = json.loads((out / "compare.json").read_text())
    assert config["protocol"] == "strict" and config["invocations"][-1]["protocol"] == "strict"
    settings = {m["row"]: m["settings"][0] for m in map(json.loads, (out / "runs" / "compare_runs.jsonl").open())}
    # Strict: its own setting, seq_len from the TRAIN file alone; the variant runs TSLib's protocol.
    longest = max(len(s) for s in read_ts(data_root / "JapaneseVowels" / "JapaneseVowels_TRAIN.ts")[0])
    assert settings["DLinear"].endswith("_strict") and f"_sl{longest}_" in settings["DLinear"]
    assert not settings["DLinear (TSLib)"].endswith("_strict")
    table = (out / "table.md").read_text()
    assert "**Protocols:** strict (" in table and "for DLinear; tslib (TSLib's protocol and numbers" in table

    # One folder holds one protocol where the protocols compute different results, and --extra cannot set it.
    assert runner.main([*base, "--protocol", "tslib"]) == 2
    assert "holds a --protocol strict comparison" in capsys.readouterr().err
    assert runner.main([*base, "--extra=--protocol tslib"]) == 2
    assert "--extra sets --protocol" in capsys.readouterr().err

    # Imputation computes the same under both: its finished strict runs count for a tslib invocation.
    imputation = ["--task", "imputation", "--data", "ETTh1", "--models", "DLinear", "--mask_rates", "0.125",
                  "--root", str(data_root), "--out", str(tmp_path / "imp")]
    assert invoke(imputation)[0] == 0
    code, log = invoke([*imputation, "--protocol", "tslib"])
    assert code == 0 and "1 already finished, 0 to run" in log and "finished earlier with different" not in log
