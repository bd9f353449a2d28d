"""compare.run.runner end to end on a generated CSV: two cheap models run from a toy recipe table with
`--epochs 1`, every report file is produced, a second invocation runs nothing, and failing rows
(a bad flag, a model that rejects its config) are reported while the others finish."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compare.grid import plan
from compare.grid.plan import resolve_root, rows_from_args
from compare.recipes.tables import RECIPES, Dataset, ModelRecipe, RecipeBook
from compare.run import runner as compare
from utils.errors import UserInputError
from utils.record_paths import REPO_ROOT, absolute_paths, record_path

# Tiny widths so a test can train it; the same recipe for both models.
TOY_FLAGS = {
    "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 24,
    "label_len": 12, "pred_len": "{pred_len}", "enc_in": "{channels}", "dec_in": "{channels}",
    "c_out": "{channels}", "d_model": 16, "d_ff": 16, "n_heads": 2, "e_layers": 1, "batch_size": 16,
    "train_epochs": 10, "seed": 7, "des": "Exp", "itr": 1,
}
TOY = RecipeBook(
    datasets={"toy": Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 3, fetch="toy", folder="Toy_script",
                             horizons=(12,))},
    models={m: ModelRecipe(m, TOY_FLAGS, {"toy": {}}) for m in ("DLinear", "iTransformer")},
)


def write_toy_csv(path: Path, rows: int = 300) -> None:
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({
        "date": pd.date_range("2021-01-01", periods=rows, freq="h").strftime("%Y-%m-%d %H:%M:%S"),
        "x0": np.sin(t / 5) + 0.1 * rng.normal(size=rows),
        "x1": np.sin(t / 9) + 0.1 * rng.normal(size=rows),
        "OT": np.cos(t / 7) + 0.1 * rng.normal(size=rows),
    }).to_csv(path, index=False)


def invoke(argv: list[str], book: RecipeBook = TOY) -> tuple[int, str]:
    """Run the runner in-process on `book` and return (exit code, its log)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = compare.main(argv, book)
    return code, buffer.getvalue()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    write_toy_csv(root / "data" / "toy" / "toy.csv")
    return root


def base_argv(root: Path, out: Path, *models: str) -> list[str]:
    return ["--data", "toy", "--models", *models, "--pred_lens", "12", "--epochs", "1", "--num_workers", "0",
            "--root", str(root / "data"), "--out", str(out)]


@pytest.fixture(scope="module")
def first_run(workspace):
    out = workspace / "out"
    old = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        code, log = invoke([*base_argv(workspace, out, "DLinear", "iTransformer"),
                            "--variant", "Broken=iTransformer:--n_heads 3",
                            "--variant", "Typo=DLinear:--learning_rat 0.1"])
    finally:
        if old is None:
            os.environ.pop("OMP_NUM_THREADS")
        else:
            os.environ["OMP_NUM_THREADS"] = old
    return out, code, log


def results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs" / "results.jsonl").read_text().splitlines()]


def test_two_models_finish_and_every_report_file_exists(first_run):
    out, code, _ = first_run
    assert code == 1  # two rows failed, the comparison itself completed
    for name in ("table.md", "table.csv", "mse_by_horizon.png", "forecast_toy_12.png", "efficiency.md",
                 "compare.json", "runs/.gitignore"):
        assert (out / name).is_file(), name
    records = results(out)
    assert [r["model"] for r in records] == ["DLinear", "iTransformer"]
    # The recipe's seed and shapes reach run.py; --epochs overrides the script's 10 epochs.
    assert all(r["seed"] == 7 and r["pred_len"] == 12 and r["seq_len"] == 24 and r["epochs_run"] == 1
               for r in records)
    for r in records:
        assert (out / "runs" / "checkpoints" / r["setting"] / "checkpoint.pth").is_file()
        assert np.load(out / "runs" / "results" / r["setting"] / "pred.npy").shape[1:] == (12, 3)


def test_table_holds_measured_metrics_and_failures(first_run):
    out, _, _ = first_run
    text = (out / "table.md").read_text()
    by_model = {r["model"]: r for r in results(out)}
    line = next(line for line in text.splitlines() if line.startswith("| toy | 12 |"))
    cells = [c.strip().strip("*_") for c in line.strip("|").split("|")][2:]
    assert cells == [f"{by_model['DLinear']['mse']:.3f}", f"{by_model['DLinear']['mae']:.3f}",
                     f"{by_model['iTransformer']['mse']:.3f}", f"{by_model['iTransformer']['mae']:.3f}",
                     "—", "—", "—", "—"]
    failed = text.split("## Failed runs")[1]
    assert "| Broken | toy | 12 | error: --model iTransformer: --d_model 16 is not divisible by --n_heads 3" in failed
    assert "| Typo | toy | 12 | unknown run.py flag --learning_rat" in failed
    assert "`--train_epochs 1` (scripts' epochs overridden)" in text


def test_progress_lines_and_summary(first_run):
    _, _, log = first_run
    assert "comparison: 4 runs planned, 0 already finished, 3 to run, 1 cannot run" in log
    # the ETA comes from each run's probed step time (compare/run/eta.py), known before the first run starts
    assert "  probe DLinear | toy | H=12: " in log and " s/step x " in log
    assert "[1/3] DLinear | toy | H=12  (ETA " in log and "ETA ?)" not in log
    assert "DLinear | toy | H=12  epoch 1/1  train " in log
    assert "summary: 3 ran (1 failed), 0 skipped as finished, 1 could not start" in log


def test_variant_runs_under_a_tagged_model_id(first_run):
    out, _, _ = first_run
    entries = [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]
    broken = next(e for e in entries if e["row"] == "Broken")
    assert broken["status"] == "failed" and "_toy_24_12_Broken_iTransformer_" in broken["settings"][0]
    assert Path(broken["argv"][broken["argv"].index("--root_path") + 1]).is_absolute()


def test_the_report_folder_holds_repository_relative_paths(first_run):
    """What is committed (compare.json, the records' copies, table.md) names no absolute path of this machine;
    run.py itself was given the absolute data root (runs/ is git-ignored)."""
    out = first_run[0]
    for name in ("compare.json", "compare_runs.jsonl", "results.jsonl", "table.md", "efficiency.md"):
        assert absolute_paths((out / name).read_text()) == [], name
    (invocation,) = json.loads((out / "compare.json").read_text())["invocations"][:1]
    assert f"--out {record_path(str(out.resolve()))}" in invocation["command"]
    assert absolute_paths((out / "runs" / "compare_runs.jsonl").read_text()) != []
    copied = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["mse"] for r in copied] == [r["mse"] for r in results(out)]


def test_second_invocation_runs_nothing_new(first_run, workspace):
    out = first_run[0]
    before = (out / "runs" / "results.jsonl").read_text()
    checkpoint = out / "runs" / "checkpoints" / results(out)[0]["setting"] / "checkpoint.pth"
    stamp = checkpoint.stat().st_mtime_ns
    code, log = invoke([*base_argv(workspace, out, "DLinear", "iTransformer"), "--no-timing"])
    assert code == 0
    assert "comparison: 2 runs planned, 2 already finished, 0 to run, 0 cannot run" in log
    assert "[1/" not in log and "different flags" not in log
    assert (out / "runs" / "results.jsonl").read_text() == before and checkpoint.stat().st_mtime_ns == stamp
    # The report keeps every invocation's command and the rows of the first one.
    config = json.loads((out / "compare.json").read_text())
    assert len(config["invocations"]) == 2 and [r["name"] for r in config["rows"]] == [
        "DLinear", "iTransformer", "Broken", "Typo"]
    text = (out / "table.md").read_text()
    assert text.count("Runner: `python -m compare") == 2 and "| Broken | toy | 12 |" in text


def test_resumed_run_with_changed_flags_is_flagged(first_run, workspace):
    out = first_run[0]
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--extra=--learning_rate 0.5", "--dry-run"])
    # Its record was made with the old learning rate: stale, listed, never taken as current.
    assert code == 1
    assert "DLinear | toy | H=12: recorded with other --learning_rate: not current; pass --rerun-stale" in log


def test_parallel_jobs_give_the_sequential_results(first_run, workspace, monkeypatch):
    """--jobs 2: both runs finish concurrently, one manifest line each, the same metrics as one at a time
    (each run is its own seeded single-threaded process)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # as in first_run, so the arithmetic is the same
    out = workspace / "parallel"
    code, log = invoke([*base_argv(workspace, out, "DLinear", "iTransformer"), "--jobs", "2", "--no-report"])
    assert code == 0, log
    assert "summary: 2 ran (0 failed)" in log
    manifest = [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]
    assert sorted(e["row"] for e in manifest) == ["DLinear", "iTransformer"]
    assert all(e["status"] == "ok" for e in manifest)
    parallel = {r["setting"]: r["mse"] for r in results(out)}
    sequential = {r["setting"]: r["mse"] for r in results(first_run[0]) if r["setting"] in parallel}
    assert parallel == sequential and len(parallel) == 2


def test_without_run_py_beside_the_packages_runs_do_not_start(workspace, tmp_path, monkeypatch, capsys):
    """Installed with pip, the library has no run.py: one line saying to run inside a clone, nothing written."""
    monkeypatch.setattr(plan, "RUN_PY", tmp_path / "site-packages" / "run.py")
    code, _ = invoke(base_argv(workspace, tmp_path / "out", "DLinear"))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: runs execute run.py from a checkout") and err.count("\n") == 1
    assert "run this command inside a clone" in err and not (tmp_path / "out" / "runs").exists()


def test_jobs_below_one_is_a_usage_error(workspace, capsys):
    assert compare.main([*base_argv(workspace, workspace / "nojobs", "DLinear"), "--jobs", "0"], TOY) == 2
    assert capsys.readouterr().err.strip() == "error: --jobs 0: use 1 or more"


@pytest.mark.parametrize(("extra", "expected"), [
    ("--des a/b", "error: --extra's --des 'a/b' cannot name an output folder: it contains the path separator '/'; "
                  "use letters, digits, '_', '-' and '.' only"),
    ("--model_id ..", "error: --extra's --model_id '..' cannot name an output folder: '..' names a folder, not a "
                      "file; use letters, digits, '_', '-' and '.' only"),
    ("--des 'a", "error: --extra \"--des 'a\": cannot split its flags (No closing quotation)"),
], ids=["des-separator", "model_id-dotdot", "unbalanced-quote"])
def test_extra_names_that_leave_the_output_folder_are_usage_errors(workspace, capsys, extra, expected):
    out = workspace / "escape"
    assert compare.main([*base_argv(workspace, out, "DLinear"), f"--extra={extra}"], TOY) == 2
    assert capsys.readouterr().err.strip() == expected
    assert not out.exists()


def test_a_variant_flag_that_leaves_the_output_folder_cannot_run(workspace):
    code, log = invoke([*base_argv(workspace, workspace / "escape_variant", "DLinear"),
                        "--variant", "Up=DLinear:--des ../../up", "--dry-run"])
    assert code == 1
    assert "cannot run Up | toy | H=12: --des '../../up' cannot name an output folder" in log


def test_dry_run_prints_commands_and_writes_nothing(workspace):
    out = workspace / "dry"
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--dry-run"])
    assert code == 0 and not out.exists()
    command = log.split("run  DLinear | toy | H=12\n")[1]
    assert command.strip().startswith("python -u run.py --task_name long_term_forecast")
    # The script's --train_epochs 10 is replaced in place; runner flags are appended once.
    assert " --train_epochs 1 " in command and command.count("--train_epochs") == 1
    assert command.rstrip().endswith("--no_progress --num_workers 0")


def test_a_grid_where_no_run_can_run_is_a_one_line_error_and_writes_nothing(workspace, capsys):
    out = workspace / "nothing_runs"
    argv = base_argv(workspace, out, "DLinear")
    code, log = invoke([*argv[:argv.index("--pred_lens") + 1], "48", *argv[argv.index("--pred_lens") + 2:]])
    assert code == 2 and not out.exists()
    assert "cannot run DLinear | toy | H=48" in log
    assert capsys.readouterr().err.strip() == (f"error: none of the 1 planned runs can run (DLinear | toy | H=48: DLinear on "
                                            f"toy has no horizon 48; choose from 12); nothing was run or recorded in {out}")


@pytest.mark.parametrize("horizon", ["-5", "0", "ten"])
def test_a_horizon_that_is_not_positive_is_a_usage_error(workspace, horizon, capsys):
    out = workspace / "bad_horizon"
    argv = base_argv(workspace, out, "DLinear")
    with pytest.raises(SystemExit) as stop:
        invoke([*argv[:argv.index("--pred_lens") + 1], horizon, *argv[argv.index("--pred_lens") + 2:]])
    assert stop.value.code == 2 and not out.exists()
    assert f"--pred_lens: '{horizon}' is not a horizon: give positive integers (e.g. 96 192)" in capsys.readouterr().err


def test_missing_data_is_reported_with_the_fetch_command(workspace):
    code, log = invoke([*base_argv(workspace, workspace / "nodata", "DLinear"), "--root", str(workspace / "none"),
                        "--dry-run"])
    assert code == 1
    assert "cannot run DLinear | toy | H=12: data file" in log
    assert "run `python -m data_provider.fetch toy --root ./dataset`" in log


def test_duplicate_rows_are_a_usage_error(workspace, capsys):
    code = compare.main([*base_argv(workspace, workspace / "dup", "DLinear"), "--variant", "DLinear=DLinear:"], TOY)
    assert code == 2
    assert capsys.readouterr().err.strip() == "error: row names must be unique; repeated: DLinear"


@pytest.mark.parametrize(
    ("text", "name", "base", "flags", "tag"),
    [
        ("LinAttn=CAPS:--caps_paths none --learning_rate 6e-4", "LinAttn", "CAPS",
         ("--caps_paths", "none", "--learning_rate", "6e-4"), "LinAttn"),
        ("CAPS (official)=CAPS:--caps_numerics official", "CAPS (official)", "CAPS",
         ("--caps_numerics", "official"), "CAPS-official"),
        ("Same=DLinear:", "Same", "DLinear", (), "Same"),
    ],
    ids=["flags", "spaces-in-name", "no-flags"],
)
def test_parse_variant(text, name, base, flags, tag):
    assert compare.parse_variant(text) == compare.Row(name, base, flags, tag)


@pytest.mark.parametrize("text", ["CAPS:--x 1", "=CAPS:--x", "X=CAPS", "X=CAPS:--des 'open"],
                         ids=["no-name", "empty-name", "no-colon", "bad-quote"])
def test_parse_variant_rejects_malformed(text):
    with pytest.raises(UserInputError, match="--variant"):
        compare.parse_variant(text)


def test_root_path_mapping(tmp_path):
    mirror = tmp_path / "mirror"
    assert resolve_root("./dataset/ETT-small/", mirror) == str(mirror / "ETT-small") + os.sep
    assert resolve_root("./dataset/ETT-small/", None) == str(REPO_ROOT / "dataset" / "ETT-small") + os.sep
    assert resolve_root("/abs/data/", mirror) == "/abs/data"


@pytest.mark.slow
def test_real_scripts_on_etth1(tmp_path, data_mirror):
    """The done-criterion on the real recipes and real ETTh1 (one epoch, iTransformer narrowed)."""
    out = tmp_path / "out"
    code, log = invoke(["--data", "ETTh1", "--models", "DLinear", "iTransformer", "--pred_lens", "96",
                        "--epochs", "1", "--num_workers", "0", "--root", str(data_mirror), "--out", str(out),
                        "--extra=--d_model 16 --d_ff 16", "--no-timing"], RECIPES)
    assert code == 0, log
    records = results(out)
    assert [(r["model"], r["model_id"], r["pred_len"]) for r in records] == [
        ("DLinear", "ETTh1_96_96", 96), ("iTransformer", "ETTh1_96_96", 96)]
    assert all(0.3 < r["mse"] < 0.7 for r in records)
    assert (out / "forecast_ETTh1_96.png").is_file() and (out / "efficiency.md").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--data", "toy", "--models", "DLinaer"],
         "unknown model row 'DLinaer'; choose from DLinear, iTransformer (or define it with --variant"),
        (["--data", "toys", "--models", "DLinear"], "unknown dataset 'toys'; choose from toy"),
        (["--data", "toy", "--variant", "X=Nope:--seed 1"], "unknown model row 'Nope'; choose from DLinear"),
        (["--data", "toy", "--models", "DLinear", "--scripts", "scripts"], "--scripts is gone: recipes come from"),
    ],
    ids=["unknown-row", "unknown-dataset", "unknown-variant-base", "scripts-flag"],
)
def test_unknown_rows_and_datasets_are_one_line_usage_errors(tmp_path, capsys, argv, message):
    assert compare.main([*argv, "--out", str(tmp_path / "out")], TOY) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {message}") and "\n" not in err


def test_a_fresh_clone_knows_the_committed_runs(first_run, workspace, tmp_path):
    """runs/ is git-ignored; the report's committed results.jsonl and manifest restore what finished."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("results.jsonl", "compare_runs.jsonl", "compare.json"):
        (clone / name).write_text((first_run[0] / name).read_text())
    code, log = invoke([*base_argv(workspace, clone, "DLinear", "iTransformer"), "--dry-run"])
    assert code == 0
    assert "comparison: 2 runs planned, 2 already finished, 0 to run, 0 cannot run" in log
    assert (clone / "runs" / "results.jsonl").read_text() == (first_run[0] / "results.jsonl").read_text()


def test_unknown_horizon_is_reported_with_the_valid_ones(workspace):
    code, log = invoke([*base_argv(workspace, workspace / "horizon", "DLinear"), "--pred_lens", "12", "96",
                        "--dry-run"])
    assert code == 1
    assert "cannot run DLinear | toy | H=96: DLinear on toy has no horizon 96; choose from 12" in log


def test_rows_are_found_by_name_in_the_recipe_table(tmp_path):
    args = compare.build_parser().parse_args(["--data", "electricity", "--models", "CAPS", "linattn_rope",
                                              "--pred_lens", "96", "--root", str(tmp_path)])
    args.extra_flags = []
    rows = rows_from_args(args)
    assert [(r.name, r.tag) for r in rows] == [("CAPS", ""), ("LinAttn+RoPE", "")]
    caps, linattn = compare.plan_runs(args, rows)
    assert caps.dataset == "ECL" and caps.recipe.argv == tuple(RECIPES.argv("CAPS", "ECL", 96))
    assert linattn.recipe.script == "scripts/long_term_forecast/CAPS_ablation/LinAttn_RoPE.sh"
    assert linattn.recipe.env == {"CUDA_VISIBLE_DEVICES": "0"}
    # No data under the empty root: the error names the table's fetch name for ECL.
    assert "run `python -m data_provider.fetch electricity --root ./dataset`" in caps.error


def test_a_record_made_with_other_flags_is_stale_not_reused(workspace):
    out = workspace / "stale"
    assert invoke(base_argv(workspace, out, "DLinear"))[0] == 0
    first = results(out)
    assert len(first) == 1 and first[0]["config"]["learning_rate"] == 0.0001 and first[0]["config_hash"]
    # Same setting string, another learning rate: the old result is not this run's.
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--extra=--learning_rate 0.01"])
    assert code == 1 and len(results(out)) == 1
    assert "DLinear | toy | H=12: recorded with other --learning_rate: not current; pass --rerun-stale" in log
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--extra=--learning_rate 0.01", "--rerun-stale"])
    assert code == 0, log
    records = results(out)
    assert [r["config"]["learning_rate"] for r in records] == [0.0001, 0.01]
    assert records[0]["setting"] == records[1]["setting"] and records[0]["mse"] != records[1]["mse"]
    assert list((out / "runs" / "stale").glob("*/checkpoints/*/checkpoint.pth"))
    # Now current: nothing left to run.
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--extra=--learning_rate 0.01"])
    assert code == 0 and "1 already finished, 0 to run" in log


def test_a_record_older_than_a_behaviour_change_is_stale_in_the_runner_and_the_report(workspace):
    out = workspace / "older_code"
    argv = base_argv(workspace, out, "DLinear", "iTransformer")
    assert invoke(argv)[0] == 0
    # Date DLinear's record before the random-stream change of compare/grid/behaviour_changes.py: older code made it.
    records = results(out)
    old = next(r for r in records if r["model"] == "DLinear")
    old["time"] = "2026-11-20T10:00:00"
    (out / "runs" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    code, log = invoke(argv)
    assert code == 1 and len(results(out)) == 2
    assert "DLinear | toy | H=12: recorded by older code (made 2026-11-20T10:00:00, before commit a79d9ee" in log
    table = (out / "table.md").read_text()
    assert "## Stale runs (not in the table)" in table and "1 runs are stale" in table
    shown, stale_part = table.split("## Stale runs (not in the table)")
    assert ("| DLinear | toy | 12 | stale: its result was recorded by older code (made 2026-11-20T10:00:00, before "
            "commit a79d9ee") in stale_part
    assert "| DLinear |" not in shown.split("\n\n## ")[0] and "| iTransformer |" in shown
    code, log = invoke([*argv, "--rerun-stale"])
    assert code == 0, log
    assert len(results(out)) == 3 and "## Stale runs" not in (out / "table.md").read_text()
    assert "| DLinear |" in (out / "table.md").read_text() and invoke(argv)[0] == 0


def test_regenerating_without_timing_keeps_every_measured_figure(first_run, tmp_path):
    import shutil

    from compare.report import build as report

    out = tmp_path / "copy"
    shutil.copytree(first_run[0], out)
    before = (out / "efficiency.md").read_text()
    measured = [line for line in before.splitlines() if line.startswith("| DLinear |")]
    assert measured and measured[0].split("|")[-3].strip() != "—"  # a train-step time was measured
    assert report.main(["--out", str(out), "--no-timing"]) == 0
    after = (out / "efficiency.md").read_text()
    kept = [line for line in after.splitlines() if line.startswith("| DLinear |")]
    # batch, step ms, peak memory kept from the measurement; s/epoch read again from the run records
    assert [c.strip() for c in kept[0].split("|")[-5:-1]] == [c.strip() for c in measured[0].split("|")[-5:-1]]
    assert "are the earlier measurement's, kept" in after


def test_a_fresh_clone_regenerates_the_report_from_the_committed_records(first_run, tmp_path):
    """runs/ is git-ignored: compare.report.build rebuilds the table from the committed results.jsonl and manifest."""
    import shutil

    from compare.report import build as report

    out = tmp_path / "clone"
    shutil.copytree(first_run[0], out, ignore=shutil.ignore_patterns("runs"))
    before = (out / "table.md").read_text().split("## How these numbers were produced")[0]
    assert report.main(["--out", str(out), "--no-timing"]) == 0
    assert (out / "table.md").read_text().split("## How these numbers were produced")[0] == before
    assert (out / "runs" / ".gitignore").read_text() == "*\n"
