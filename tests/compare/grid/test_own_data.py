"""compare.grid.own_data: `python -m compare --data_path FILE --name NAME` plans each model's generic recipe on the file
with the file's data flags (variates, --freq, target) and the user's name in every model_id; a plan file's
`datasets:` block plans the same runs; every problem is one line and writes nothing."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from compare.grid.own_data import own_data_lines, own_data_record
from compare.grid.run_args import flag_value
from compare.recipes.tables import RECIPES
from compare.run import runner
from tests.compare.own_csv import write_dated_csv, write_labelled_csv, write_series_csv
from utils.record_paths import REPO_ROOT

#: the flags a user's file replaces in a recipe (the rest of each model's ETTh1 block is kept as it is)
DATA_FLAGS = {"root_path", "data_path", "data", "model_id", "pred_len", "enc_in", "dec_in", "c_out", "freq", "target"}


def planned(argv: list[str]) -> list:
    _, _, plan, _ = runner._checked_plan(argv, runner.RECIPES, runner.TASK_RECIPES, 0.0)
    return plan


def flags_of(argv: list[str]) -> dict[str, str | None]:
    """{flag: its value, None for a switch} of a run.py argv (every flag here takes at most one value)."""
    return {word[2:]: None if k + 1 == len(argv) or argv[k + 1].startswith("--") else argv[k + 1]
            for k, word in enumerate(argv) if word.startswith("--")}


def test_a_csv_runs_each_models_etth1_block_with_its_own_data_flags(tmp_path):
    path = write_dated_csv(tmp_path / "data" / "mine.csv", rows=1000, freq="h", variates=5)
    plan = planned(["--data_path", str(path), "--name", "Mine", "--models", "CAPS", "DLinear", "PatchTST", "--pred_lens",
                    "24", "96", "--out", str(tmp_path / "out")])
    assert [(r.row.name, r.dataset, r.pred_len, r.error) for r in plan] == [
        (m, "Mine", h, None) for h in (24, 96) for m in ("CAPS", "DLinear", "PatchTST")]
    for run in plan:
        flags = flags_of(run.argv)
        assert flags["root_path"].rstrip("/") == str(path.parent) and flags["data_path"] == "mine.csv"
        assert (flags["data"], flags["enc_in"], flags["dec_in"], flags["c_out"]) == ("custom", "5", "5", "5")
        assert (flags["freq"], flags["target"], flags["pred_len"]) == ("h", "OT", str(run.pred_len))
        assert flags["model_id"] == f"Mine_{flags['seq_len']}_{run.pred_len}" and "ETTh1" not in " ".join(run.argv)
        assert run.settings[0].startswith(f"long_term_forecast_Mine_{flags['seq_len']}_{run.pred_len}_")
        # Every other flag is the model's ETTh1 block of the nearest horizon (96 for both), overrides aside.
        recipe = flags_of(RECIPES.argv(run.row.base, "ETTh1", 96))
        assert {k: v for k, v in recipe.items() if k not in DATA_FLAGS} == {
            k: flags[k] for k in recipe if k not in DATA_FLAGS}


def test_the_file_order_of_variates_is_kept_and_a_target_may_be_named(tmp_path):
    path = write_dated_csv(tmp_path / "mine.csv", rows=1000, freq="D", names=("load", "price", "temp"))
    out = str(tmp_path / "out")
    [run] = planned(["--data_path", str(path), "--name", "Mine", "--models", "DLinear", "--pred_lens", "96", "--out", out])
    assert (flag_value(run.argv, "target"), flag_value(run.argv, "freq"), flag_value(run.argv, "enc_in")) == ("temp", "d", "3")
    [run] = planned(["--data_path", str(path), "--name", "Mine", "--models", "DLinear", "--pred_lens", "96", "--out", out,
                     "--data_flags", "Mine=--target price --freq h"])
    assert (flag_value(run.argv, "target"), flag_value(run.argv, "freq")) == ("price", "h")


def test_horizons_the_file_cannot_hold_are_left_out_in_one_line(tmp_path, caplog):
    # 1000 rows split 700/100/200: only H = 96 of the default horizons fits the validation split.
    path = write_dated_csv(tmp_path / "ili.csv", rows=1000)
    with caplog.at_level("INFO", logger="compare"):
        plan = planned(["--data_path", str(path), "--name", "ILI", "--models", "DLinear", "--out", str(tmp_path / "o")])
    assert [r.pred_len for r in plan] == [96]
    assert ("ILI: H = 192 336 720 left out: 1000 rows split 700/100/200 (train/val/test): the val split's 100 rows "
            "hold no horizon of --pred_len 192; pass --pred_lens to choose the horizons") in caplog.messages


def test_own_data_beside_a_recipe_dataset(tmp_path, data_mirror):
    path = write_dated_csv(tmp_path / "mine.csv", rows=1000)
    plan = planned(["--data", "ETTh1", "--data_path", str(path), "--name", "Mine", "--models", "DLinear", "--pred_lens",
                    "96", "--root", str(data_mirror), "--out", str(tmp_path / "out")])
    assert [(r.dataset, flag_value(r.argv, "data"), flag_value(r.argv, "model_id")) for r in plan] == [
        ("ETTh1", "ETTh1", "ETTh1_96_96"), ("Mine", "custom", "Mine_96_96")]


def test_short_term_and_anomaly_files_stand_in_for_m4_and_msl(tmp_path):
    sales = write_series_csv(tmp_path / "sales.csv", (60, 66, 72), "MS")
    [run] = planned(["--task", "short_term_forecast", "--data_path", str(sales), "--name", "Sales", "--models",
                     "DLinear", "--out", str(tmp_path / "o1")])
    flags = flags_of(run.argv)
    assert (run.dataset, flags["data"], flags["data_path"], flags["model_id"]) == ("Sales", "short_term_csv",
                                                                                    "sales.csv", "Sales")
    assert (flags["pred_len"], flags["seasonality"], flags.get("seasonal_patterns")) == ("18", "12", None)
    machine = write_labelled_csv(tmp_path / "machine.csv", rows=600, channels=3)
    [run] = planned(["--task", "anomaly_detection", "--data_path", str(machine), "--name", "Machine", "--models",
                     "DLinear", "--data_flags", "Machine=--seq_len 50", "--out", str(tmp_path / "o2")])
    flags = flags_of(run.argv)
    assert (flags["data"], flags["data_path"], flags["enc_in"], flags["c_out"], flags["seq_len"], flags["model_id"]) == (
        "anomaly_csv", "machine.csv", "3", "3", "50", "Machine")


def test_the_plan_files_datasets_block_plans_the_runs_of_the_flags(tmp_path):
    mine = write_dated_csv(tmp_path / "mine.csv", rows=1000, freq="h", variates=3)
    ili = write_dated_csv(tmp_path / "ili.csv", rows=1000)
    out = str(tmp_path / "out")
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(f"models: [DLinear]\npred_lens: [96]\ndatasets:\n  - {{name: Mine, data_path: {mine}, target: v0}}\n"
                         f"  - {{name: ILI, data_path: {ili}}}\n")
    as_list = planned(["--plan", str(plan_file), "--out", out])
    plan_file.write_text(f"models: [DLinear]\npred_lens: [96]\ndatasets:\n  Mine: {{data_path: {mine}, target: v0}}\n"
                         f"  ILI: {{data_path: {ili}}}\n")
    as_map = planned(["--plan", str(plan_file), "--out", out])
    from_flags = planned(["--models", "DLinear", "--pred_lens", "96", "--data_path", str(mine), str(ili), "--name",
                          "Mine", "ILI", "--data_flags", "Mine=--target v0", "--out", out])
    assert [r.argv for r in as_list] == [r.argv for r in as_map] == [r.argv for r in from_flags]
    assert [(r.dataset, flag_value(r.argv, "target")) for r in from_flags] == [("Mine", "v0"), ("ILI", "OT")]


def test_compare_json_records_the_file_relative_to_the_output_folder(tmp_path):
    path = write_dated_csv(tmp_path / "data" / "ili.csv", rows=1000)
    out = tmp_path / "results" / "grid"
    argv = ["--data_path", str(path), "--name", "ILI", "--models", "DLinear", "--pred_lens", "96", "--out", str(out)]
    args, rows, plan, _ = runner._checked_plan(argv, runner.RECIPES, runner.TASK_RECIPES, 0.0)
    out.mkdir(parents=True)
    runner._write_config(out, args, argv, rows, plan)
    config = json.loads((out / "compare.json").read_text())
    assert config["data"] == ["ILI"]
    entry = config["own_data"]["ILI"]
    assert (entry["data_path"], entry["relative_to"], entry["stands_in"]) == ("../../data/ili.csv", "output folder", "ETTh1")
    assert (entry["variates"], entry["rows"], entry["freq"], entry["seasonal_period"]) == (4, 1000, "w", 52)
    assert entry["flags"] == {"enc_in": 4, "dec_in": 4, "c_out": 4, "freq": "w", "target": "OT"}
    # A file inside the repository is recorded relative to it.
    inside = args.own_data[0].__class__(**{**vars(args.own_data[0]), "path": REPO_ROOT / "dataset" / "ili.csv"})
    assert own_data_record([inside], out)["ILI"]["data_path"] == "dataset/ili.csv"


def usage_error(argv: list[str], out: Path, capsys) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert runner.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert not out.exists() and err.count("\n") == 1 and err.startswith("error: ")
    return err


@pytest.mark.parametrize(("argv", "message"), [
    (["--models", "DLinear"], "nothing to run on: pass --data NAME"),
    (["--name", "ILI", "--models", "DLinear"], "--data_path names 0 file(s) and --name 1 name(s): give --data_path"),
    (["--data_path", "{ili}", "--models", "DLinear"], "--data_path names 1 file(s) and --name 0 name(s): give --name"),
    (["--data_path", "{ili}", "--name", "my data", "--models", "DLinear"], "--name 'my data' cannot name"),
    (["--data_path", "{ili}", "--name", "../up", "--models", "DLinear"], "--name '../up' cannot name"),
    (["--data_path", "{ili}", "--name", "ETTh1", "--models", "DLinear"], "--name ETTh1 is also the name of a dataset"),
    (["--data", "ILI", "--data_path", "{ili}", "--name", "ili", "--models", "DLinear"], "--name ili is also the name"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--pred_lens", "96", "192"],
     "DLinear on ILI (ili.csv): 1000 rows split 700/100/200 (train/val/test): the val split's 100 rows hold no horizon "
     "of --pred_len 192; pass a shorter --pred_lens"),
    (["--data_path", "{short}", "--name", "ILI", "--models", "DLinear"],
     "ILI (short.csv): no horizon of --pred_lens fits: 100 rows split 70/10/20 (train/val/test): the train split holds "
     "no window of --seq_len 96 + --pred_len 96 = 192 rows; pass a shorter --pred_lens"),
    (["--data_path", "{nodate}", "--name", "ILI", "--models", "DLinear"], "has no 'date' column"),
    (["--data_path", "{text}", "--name", "ILI", "--models", "DLinear"], "column 'v1' has the non-numeric value 'n/a?'"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--data_flags", "ILI=--seq_len 12"],
     "--seq_len is not a data flag of long_term_forecast; choose from --target, --freq, --fillna"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--data_flags", "Other=--target v0"],
     "must look like NAME=FLAGS with NAME one of --name ILI"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--data_flags", "ILI=--target nope"],
     "has no such column; its columns: v0, v1, v2, OT"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--data_flags", "ILI=--fillna zero"],
     "--data_flags ILI=--fillna zero: choose from none, ffill, interpolate"),
    (["--data_path", "{ili}", "--name", "ILI", "--models", "DLinear", "--data_flags", "ILI=--freq fortnight"],
     "--freq 'fortnight' is not a known frequency"),
    (["--task", "classification", "--data_path", "{ili}", "--name", "ILI", "--models", "DLinear"],
     "--data_path runs long_term_forecast, short_term_forecast, anomaly_detection on your own file, not classification"),
    (["--task", "short_term_forecast", "--data_path", "{nots}", "--name", "Sales", "--models", "DLinear"],
     "no M4 group is known for its step (no timestamp column), so its horizon and seasonality are unknown: pass "
     "--data_flags 'Sales=--pred_len H --seasonality m'"),
    (["--task", "short_term_forecast", "--data_path", "{nots}", "--name", "Monthly", "--models", "DLinear"],
     "--name Monthly is also the name of a dataset"),
    (["--task", "anomaly_detection", "--data_path", "{machine}", "--name", "M", "--models", "DLinear"],
     "DLinear on M (machine.csv): 600 rows split at --anomaly_train_ratio 0.5 leave the val series 60 rows, fewer than "
     "the window --seq_len 100; pass --data_flags 'M=--seq_len L' with a shorter window"),
], ids=["nothing", "name-only", "path-only", "space", "dots", "borrowed", "in-data", "explicit-H", "too-short",
        "no-date", "text", "not-a-data-flag", "flags-of-nobody", "no-target", "fillna", "freq", "classification",
        "no-timestamps",
        "m4-group", "anomaly-window"])
def test_each_problem_is_one_line_and_writes_nothing(tmp_path, capsys, argv, message):
    files = {"ili": write_dated_csv(tmp_path / "ili.csv", rows=1000),
             "short": write_dated_csv(tmp_path / "short.csv", rows=100),
             "nodate": write_dated_csv(tmp_path / "nodate.csv", rows=100),
             "text": write_dated_csv(tmp_path / "text.csv", rows=100),
             "nots": write_series_csv(tmp_path / "nots.csv", freq=None),
             "machine": write_labelled_csv(tmp_path / "machine.csv", rows=600)}
    (tmp_path / "nodate.csv").write_text((tmp_path / "nodate.csv").read_text().replace("date,", "when,", 1))
    text = (tmp_path / "text.csv").read_text().splitlines()
    first = text[1].split(",")
    text[1] = ",".join([*first[:2], "n/a?", *first[3:]])
    (tmp_path / "text.csv").write_text("\n".join(text) + "\n")
    err = usage_error([a.format(**files) for a in argv], tmp_path / "out", capsys)
    assert message in err


@pytest.mark.parametrize(("freq", "season"), [
    ("h", "seasonal naive period 24 (data step 1h)"),
    ("2D", "no seasonal period is known for its step (data step 2D): seasonal naive not scored"),
])
def test_the_report_line_names_the_borrowed_recipe_and_the_seasonal_period(tmp_path, freq, season):
    path = write_dated_csv(tmp_path / "mine.csv", rows=1000, freq=freq, variates=3)
    argv = ["--data_path", str(path), "--name", "Mine", "--models", "DLinear", "--pred_lens", "96", "--out",
            str(tmp_path / "out")]
    args, _, _, _ = runner._checked_plan(argv, runner.RECIPES, runner.TASK_RECIPES, 0.0)
    config = {"data": ["Mine"], "own_data": own_data_record(args.own_data, tmp_path / "out")}
    [line] = own_data_lines(config)
    assert line.startswith("**Own data Mine:** `../mine.csv` (relative to the output folder); each model runs its "
                           "ETTh1 recipe (the block of the nearest ETTh1 horizon) with the data flags replaced")
    assert line.endswith(f"; {season}.") and "model_id `Mine_<seq_len>_<H>`" in line
    assert own_data_lines({**config, "data": ["ETTh1"]}) == []
