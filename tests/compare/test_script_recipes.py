"""compare.script_recipes: parsing our `.sh` recipes (variables, quoting, strict shape), finding the
block for a model row, and merging flag overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compare.script_recipes import (
    find_recipe,
    flag_value,
    load_recipes,
    merge_flags,
    parse_run_args,
    parse_script,
)
from exp.arguments import make_setting
from exp.model_registry import MODEL_REGISTRY
from utils.errors import UserInputError

REPO_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "long_term_forecast"

TOY_SCRIPT = """\
# Toy recipe: two horizons.
export CUDA_VISIBLE_DEVICES=0

model_name=DLinear
seq=24
tag="toy run"

python -m data_provider.fetch Toy --root ./dataset || exit 1

python -u run.py \\
  --task_name long_term_forecast \\
  --is_training 1 \\
  --root_path ./dataset/toy/ \\
  --data_path toy.csv \\
  --model_id toy_${seq}_12 \\
  --model $model_name \\
  --data custom \\
  --seq_len $seq \\
  --pred_len 12 \\
  --des '$literal' \\
  --extra_tag "$tag"

python run.py \\
  --task_name long_term_forecast --is_training 1 --model_id toy_${seq}_24 --model $model_name \\
  --data custom --pred_len 24
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_tmp_script_expands_variables_and_keeps_quotes(tmp_path):
    recipes = parse_script(write(tmp_path / "DLinear_toy.sh", TOY_SCRIPT))
    assert [r.line for r in recipes] == [10, 23]
    first, second = recipes
    assert list(first.argv) == [
        "--task_name", "long_term_forecast", "--is_training", "1", "--root_path", "./dataset/toy/",
        "--data_path", "toy.csv", "--model_id", "toy_24_12", "--model", "DLinear", "--data", "custom",
        "--seq_len", "24", "--pred_len", "12", "--des", "$literal", "--extra_tag", "toy run"]
    assert second.flag("model_id") == "toy_24_24" and second.pred_len == 24 and second.model == "DLinear"
    assert first.env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert first.fetch == ("Toy",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("for h in 96 192; do\n  echo $h\ndone\n", ":1: unsupported line"),
        ("python -u run.py \\  \n  --model DLinear\n", ":1: whitespace after the continuation backslash"),
        ("python -u run.py --model $model_name\n", ":1: $model_name is used before it is assigned"),
        ("python -m data_provider.fetch ETTh1 --root ./dataset\n", ":1: a fetch line must end with `|| exit 1`"),
        ("x=1\npython -u run.py --seq_len $((x + 1))\n", ":2: unsupported '$' expression"),
        ("python -u run.py \\\n  --model DLinear \\\n", ":1: the file ends inside a continued command"),
    ],
    ids=["for-loop", "space-after-backslash", "unassigned-variable", "fetch-without-exit", "arithmetic",
         "dangling-continuation"],
)
def test_rejects_lines_outside_the_recipe_shape(tmp_path, text, message):
    script = write(tmp_path / "bad.sh", text)
    with pytest.raises(UserInputError, match=re.escape("bad.sh" + message)):
        parse_script(script)


def test_real_scripts_parse_with_run_py_parser_and_never_share_a_setting():
    recipes = load_recipes(REPO_SCRIPTS)
    assert len(recipes) >= 40  # CAPS on every dataset plus the baselines and ablations
    owner: dict[str, str] = {}
    for recipe in recipes:
        args = parse_run_args(recipe.argv)
        assert args.model in MODEL_REGISTRY, recipe.where
        assert f"_{args.seq_len}_{args.pred_len}" in args.model_id, recipe.where
        setting = make_setting(args, 0)
        # Two blocks with one setting would overwrite each other's checkpoints and results.
        assert setting not in owner, f"{recipe.where} and {owner.get(setting)} share {setting}"
        owner[setting] = recipe.where


@pytest.mark.parametrize(
    ("row", "dataset", "pred_len", "script", "model_id"),
    [
        ("CAPS", "ETTh1", 96, "ETT_script/CAPS_ETTh1.sh", "ETTh1_96_96"),
        ("LinAttn+RoPE", "ETTh2", 192, "CAPS_ablation/LinAttn_RoPE.sh", "ETTh2_96_192_LinAttnRoPE"),
        ("DLinear", "ETTh1", 336, "ETT_script/DLinear_ETTh1.sh", "ETTh1_96_336"),
        ("CAPS", "Electricity", 720, "ECL_script/CAPS_ECL.sh", "ECL_96_720"),
    ],
    ids=["CAPS-ETTh1-96", "LinAttnRoPE-ETTh2-192", "DLinear-ETTh1-336", "CAPS-Electricity-alias-720"],
)
def test_find_recipe_in_real_scripts(row, dataset, pred_len, script, model_id):
    recipe = find_recipe(load_recipes(REPO_SCRIPTS), row, dataset, pred_len)
    assert recipe.script == REPO_SCRIPTS / script
    assert recipe.flag("model_id") == model_id and recipe.pred_len == pred_len


def test_find_recipe_prefers_the_file_named_after_the_row_and_reports_ambiguity(tmp_path):
    block = ("python -u run.py --task_name long_term_forecast --is_training 1 --model_id toy_24_12 "
             "--model {model} --data custom --data_path toy.csv --pred_len 12\n")
    write(tmp_path / "Toy_script" / "DLinear_toy.sh", block.format(model="DLinear"))
    write(tmp_path / "ablation" / "DLinear_big.sh", block.format(model="DLinear"))
    recipes = load_recipes(tmp_path)
    assert find_recipe(recipes, "DLinear", "toy", 12).script.name == "DLinear_toy.sh"
    with pytest.raises(UserInputError, match="no script block runs DLinear on toy with --pred_len 96"):
        find_recipe(recipes, "DLinear", "toy", 96)
    write(tmp_path / "Toy_script" / "DLinear.sh", block.format(model="DLinear"))
    write(tmp_path / "Toy_script" / "DLinear_TOY.sh", block.format(model="DLinear"))
    with pytest.raises(UserInputError, match="ambiguous: blocks at .*DLinear_TOY.sh:1, .*DLinear_toy.sh:1"):
        find_recipe(load_recipes(tmp_path), "DLinear", "toy", 12)


def test_merge_flags_replaces_in_place_drops_duplicates_and_appends():
    base = ["--model", "CAPS", "--train_epochs", "100", "--use_amp", "--p_hidden_dims", "64", "64",
            "--des", "Exp", "--train_epochs", "50"]
    merged = merge_flags(base, ["--train_epochs", "1", "--p_hidden_dims", "8", "--no_progress", "--des=X"])
    assert merged == ["--model", "CAPS", "--train_epochs", "1", "--use_amp", "--p_hidden_dims", "8",
                      "--des", "X", "--no_progress"]
    assert flag_value(merged, "des") == "X" and flag_value(merged, "missing") is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--nope", "1"], "unknown run.py flag --nope"), (["stray"], "unexpected argument 'stray'")],
    ids=["unknown-flag", "positional"],
)
def test_merge_flags_rejects_bad_overrides(argv, message):
    with pytest.raises(UserInputError, match=message):
        merge_flags(["--model", "DLinear"], argv)


def test_parse_run_args_raises_instead_of_exiting():
    required = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x", "--model",
                "DLinear", "--data", "ETTh1"]
    assert parse_run_args([*required, "--pred_len", "7"]).pred_len == 7
    with pytest.raises(UserInputError, match="invalid choice: 'maybe'"):
        parse_run_args([*required, "--caps_paths", "maybe"])
    with pytest.raises(UserInputError, match="required"):
        parse_run_args(["--model", "DLinear"])
