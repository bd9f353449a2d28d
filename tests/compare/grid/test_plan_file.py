"""`python -m compare --plan plan.yaml`: the file plans exactly the runs its command-line flags plan, is
recorded in compare.json, and its mistakes are one-line errors naming the key."""

from __future__ import annotations

import json

import pytest

from compare.grid.plan_file import expand_plan_file
from compare.run import runner
from utils.errors import UserInputError
from utils.record_paths import absolute_paths, record_path

PLAN = """\
# the comparison a person edits
task: long_term_forecast
data: [ETTh1]
models: [CAPS, DLinear]
pred_lens: [96, 192]
seeds: [2021, 2022]
epochs: 1
patience: 2
variants:
  LinAttn+RoPE (official):
    base: CAPS
    flags: {caps_paths: none, learning_rate: 0.0006}
  CAPS (softmax):
    base: CAPS
    flags: --caps_attn softmax
overrides:
  d_model: 16
  use_amp: true
logger: [tensorboard, mlflow]
inverse: false
"""


def flags_argv(root: str, out: str) -> list[str]:
    return ["--task", "long_term_forecast", "--data", "ETTh1", "--models", "CAPS", "DLinear", "--pred_lens", "96",
            "192", "--seeds", "2021", "2022", "--epochs", "1", "--patience", "2",
            "--variant", "LinAttn+RoPE (official)=CAPS:--caps_paths none --learning_rate 0.0006",
            "--variant", "CAPS (softmax)=CAPS:--caps_attn softmax", "--extra=--d_model 16 --use_amp",
            "--logger", "tensorboard", "mlflow", "--root", root, "--out", out]


def planned(argv: list[str]) -> list[tuple]:
    _, _, plan, _ = runner._checked_plan(argv, runner.RECIPES, runner.TASK_RECIPES, 0.0)
    return [(run.label, run.argv, run.settings, run.error) for run in plan]


def test_the_plan_file_plans_the_runs_of_the_same_flags(tmp_path, data_mirror):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(PLAN)
    out = str(tmp_path / "grid")
    from_file = planned(["--plan", str(plan_file), "--root", str(data_mirror), "--out", out])
    from_flags = planned(flags_argv(str(data_mirror), out))
    assert from_file == from_flags
    assert len(from_file) == 2 * 2 * 4 and all(error is None for *_, error in from_file)
    argv = from_file[0][1]
    assert argv[argv.index("--logger") : argv.index("--logger") + 5] == ["--logger", "tensorboard", "mlflow",
                                                                         "--logger_group", "grid"]


def test_compare_json_records_the_plan(tmp_path, data_mirror):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(PLAN)
    argv = ["--plan", str(plan_file), "--root", str(data_mirror), "--out", str(tmp_path / "grid")]
    args, rows, plan, _ = runner._checked_plan(argv, runner.RECIPES, runner.TASK_RECIPES, 0.0)
    runner._write_config(tmp_path, args, argv, rows, plan)
    [invocation] = json.loads((tmp_path / "compare.json").read_text())["invocations"]
    # A record: the file's path relative to the repository, as every path compare.json holds.
    assert invocation["plan"]["path"] == record_path(str(plan_file))
    assert absolute_paths(json.dumps(invocation)) == []
    assert invocation["plan"]["plan"]["variants"]["LinAttn+RoPE (official)"]["flags"]["learning_rate"] == 0.0006
    assert invocation["extra"] == ["--d_model", "16", "--use_amp"] and invocation["logger"] == ["tensorboard", "mlflow"]


def test_command_line_flags_override_the_file(tmp_path):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text("data: [ETTh1]\nmodels: [DLinear]\nepochs: 3\n")
    argv, _ = expand_plan_file(["--epochs", "1", "--plan", str(plan_file)], runner.build_parser())
    assert runner.build_parser().parse_args(argv).epochs == 1


@pytest.mark.parametrize(("text", "message"), [
    ("horizons: [96]\n", "unknown key 'horizons'; did you mean pred_lens?"),
    ("modles: [CAPS]\n", "unknown key 'modles'; did you mean models?"),
    ("variants:\n  X: {base: CAPS, flag: {caps_paths: none}}\n", "variants.X: unknown key 'flag'; did you mean flags?"),
    ("epochs: [1, 2]\n", "epochs takes one value"),
    ("inverse: yes please\n", "inverse is a switch: write true or false"),
    ("data: [ETTh1\n", "not valid YAML (line 2, column 1)"),
    ("- ETTh1\n", "the file must be a mapping"),
    ("models: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
])
def test_mistakes_are_one_line_errors_naming_the_key(tmp_path, text, message):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(text)
    with pytest.raises(UserInputError) as err:
        expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(f"--plan {plan_file}")


def test_a_bad_plan_is_a_usage_error_that_writes_nothing(tmp_path, capsys):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text("data: [ETTh1]\nhorizon: 96\n")
    assert runner.main(["--plan", str(plan_file), "--out", str(tmp_path / "grid")]) == 2
    assert "did you mean pred_lens?" in capsys.readouterr().err and not (tmp_path / "grid").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("data: [ETTh1]\nepochs: 1\nmodels: [CAPS]\nepochs: 2\n",
     "line 4: the key 'epochs' is given twice (first on line 2); YAML would keep the last silently: keep one"),
    ("variants:\n  X:\n    base: CAPS\n    flags: {caps_paths: none, caps_paths: all}\n",
     "line 4: the key 'caps_paths' is given twice (first on line 4)"),
    ("datasets:\n  - {name: A, data_path: a.csv, name: B}\n", "line 2: the key 'name' is given twice"),
])
def test_a_key_given_twice_is_refused_naming_the_key_and_line(tmp_path, text, message):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(text)
    with pytest.raises(UserInputError) as err:
        expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert str(err.value).startswith(f"--plan {plan_file}: {message}") and "\n" not in str(err.value)


def test_a_merge_key_may_still_be_overridden(tmp_path):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text("variants:\n  A: &a {base: CAPS, flags: {caps_paths: none}}\n  B:\n    <<: *a\n"
                         "    flags: {caps_attn: softmax}\n")
    argv, record = expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert argv == ["--variant", "A=CAPS:--caps_paths none", "--variant", "B=CAPS:--caps_attn softmax"]
    assert record["plan"]["variants"]["B"] == {"base": "CAPS", "flags": {"caps_attn": "softmax"}}


def test_a_plan_that_is_not_utf8_is_one_line_and_writes_nothing(tmp_path, capsys):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_bytes("models: [DLinear]\n# café\ndata: [ETTh1]\n".encode("latin-1"))
    with pytest.raises(UserInputError) as err:
        expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert str(err.value) == f"--plan {plan_file}: not UTF-8 text (byte 0xe9 on line 2); save the file as UTF-8"
    assert runner.main(["--plan", str(plan_file), "--out", str(tmp_path / "grid")]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "grid").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("datasets:\n  - {name: A}\n", "datasets: the entry {'name': 'A'} lacks data_path"),
    ("datasets: [a.csv]\n", "datasets: give a list of {name: NAME, data_path: FILE, ...}"),
    ("datasets:\n  A: {data_path: a.csv, target: {x: 1}}\n", "datasets.A.target: give a value, or a list of values"),
])
def test_a_malformed_datasets_block_is_one_line(tmp_path, text, message):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(text)
    with pytest.raises(UserInputError) as err:
        expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_datasets_block_becomes_the_own_data_flags(tmp_path):
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text("datasets:\n  - {name: ILI, data_path: data/ili.csv}\n"
                         "  - {name: Sales, data_path: data/sales.csv, pred_len: 6, seasonality: 12}\n")
    argv, _ = expand_plan_file(["--plan", str(plan_file)], runner.build_parser())
    assert argv == ["--data_path", "data/ili.csv", "data/sales.csv", "--name", "ILI", "Sales",
                    "--data_flags", "Sales=--pred_len 6 --seasonality 12"]
