"""compare.recipes.tables TASK_RECIPES: TSLib's imputation, anomaly detection, classification and short-term scripts
from the one recipe table. Every block parses with run.py and passes its checks, the counts are pinned,
CAPS runs each task with its iTransformer block's flags, and one script per task (its first block, TimesNet)
runs end to end through run.py on small files in the published format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import run
from compare.grid.run_args import flag_value, parse_run_args
from compare.recipes import scripts
from compare.recipes.recipe_book import DEFAULT
from compare.recipes.tables import CAPS_TASK_ARCHITECTURE, NOT_READ_BY_CAPS, TASK_RECIPES, TASKS
from data_provider.registry import (
    ANOMALY_CSV_DATASETS,
    ANOMALY_DATASETS,
    DATASET_GROUPS,
    DATASETS,
    SHORT_TERM_SETS,
    UEA_DATASETS,
)
from exp.arguments import make_setting, validate_args
from exp.model_registry import MODEL_REGISTRY
from tests.anomaly_files import write_anomaly_files
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.uea_files import toy_dataset
from tests.exp.conftest import write_toy_csv
from utils.errors import UserInputError

# Blocks per task: imputation 4 mask rates per (model, dataset); SWAT's TimesNet 8 widths; classification
# 10 UEA sets per model, 30 for MambaSingleLayer (MambaSL.sh); short-term 6 M4 patterns per model. CAPS included.
BLOCKS = {"imputation": 152, "anomaly_detection": 39, "classification": 190, "short_term_forecast": 114}
SCRIPTS = {"imputation": 33, "anomaly_detection": 28, "classification": 17, "short_term_forecast": 19}
# Flags each end-to-end run adds after the generated block (argparse keeps the last value): one epoch and
# no loader workers on this 2-core machine, no progress bar. Nothing else of the block changes.
QUICK = ("--train_epochs", "1", "--num_workers", "0", "--no_progress")
# TimesNet's Inception blocks at the imputation and anomaly widths (d_model 64) take ~20 s a run here:
# those two runs also narrow it.
NARROW = ("--d_model", "8", "--d_ff", "8")
GENERATED = scripts.render_scripts()


def test_every_task_block_parses_passes_run_py_checks_and_never_shares_a_setting():
    owner: dict[str, tuple] = {}
    for block in TASK_RECIPES.every_block():
        task, model = block[:2]
        args = parse_run_args(TASK_RECIPES.argv(*block))
        assert (args.task_name, args.model) == (task, model) and model in MODEL_REGISTRY, block
        validate_args(args)
        setting = make_setting(args, 0)
        assert setting not in owner, f"{block} and {owner.get(setting)} share {setting}"
        owner[setting] = block


@pytest.mark.parametrize("task", TASKS)
def test_block_and_script_counts_are_pinned(task):
    assert len(TASK_RECIPES.every_block(task)) == BLOCKS[task]
    assert sum(path.startswith(f"scripts/{task}/") for path in GENERATED) == SCRIPTS[task]


@pytest.mark.parametrize(
    ("task", "model", "dataset", "script"),
    [("imputation", "TimesNet", "ETTh1", "imputation/ETT_script/TimesNet_ETTh1.sh"),
     ("imputation", "TimesNet", "ECL", "imputation/ECL_script/TimesNet.sh"),
     ("anomaly_detection", "TimesNet", "PSM", "anomaly_detection/PSM/TimesNet.sh"),
     ("anomaly_detection", "TimesNet", "SWAT", "anomaly_detection/SWAT/TimesNet.sh"),
     ("classification", "TimesNet", "Heartbeat", "classification/TimesNet.sh"),
     ("short_term_forecast", "TimesNet", "Hourly", "short_term_forecast/TimesNet_M4.sh"),
     ("imputation", "CAPS", "Weather", "imputation/CAPS.sh"),
     ("short_term_forecast", "CAPS", "Yearly", "short_term_forecast/CAPS_M4.sh"),
     ("classification", "MambaSingleLayer", "BasicMotions", "classification/MambaSL.sh")],
    ids=["imputation-ETT", "imputation-ECL", "anomaly-PSM", "anomaly-SWAT", "classification", "m4", "caps-imputation",
         "caps-m4", "mambasl"],
)
def test_scripts_are_named_as_tslib_names_them(task, model, dataset, script):
    assert TASK_RECIPES.script(task, model, dataset) == f"scripts/{script}"


def test_task_datasets_take_the_data_registry_names():
    assert list(TASK_RECIPES.datasets["anomaly_detection"]) == [*ANOMALY_DATASETS, *ANOMALY_CSV_DATASETS]
    assert list(TASK_RECIPES.datasets["classification"]) == list(UEA_DATASETS)
    assert {d.fetch for d in TASK_RECIPES.datasets["short_term_forecast"].values()} == {"m4", *SHORT_TERM_SETS}
    assert "m4" in DATASET_GROUPS and all(name in DATASETS for name in (*ANOMALY_CSV_DATASETS, *SHORT_TERM_SETS))
    assert TASK_RECIPES.datasets["anomaly_detection"]["SWAT"].fields["root_path"] == "./dataset/SWaT"


def test_tslib_values_land_in_the_blocks():
    argv = TASK_RECIPES.argv("imputation", "TimesNet", "Weather", 3)
    assert [flag_value(argv, f) for f in ("model_id", "mask_rate", "d_model", "top_k")] == [
        "weather_mask_0.5", "0.5", "64", "3"]
    swat = [parse_run_args(TASK_RECIPES.argv("anomaly_detection", "TimesNet", "SWAT", b)) for b in range(8)]
    assert [(a.d_model, a.e_layers) for a in swat] == [(w, e) for e in (3, 2) for w in (8, 16, 32, 64)]
    args = parse_run_args(TASK_RECIPES.argv("classification", "TimesNet", "FaceDetection"))
    assert (args.e_layers, args.d_model, args.d_ff, args.num_kernels, args.train_epochs) == (2, 64, 256, 4, 30)
    args = parse_run_args(TASK_RECIPES.argv("short_term_forecast", "TimesNet", "Quarterly"))
    assert (args.seasonal_patterns, args.model_id, args.d_model, args.loss, args.data) == (
        "Quarterly", "m4_Quarterly", 64, "SMAPE", "m4")


@pytest.mark.parametrize("task", TASKS)
def test_caps_runs_every_dataset_with_the_iTransformer_loop_and_its_own_architecture(task):
    """CAPS: the task's iTransformer block (data, batch, learning rate, epochs) with CAPS's long-term
    architecture in place of iTransformer's widths, the flags CAPS does not read left at run.py's defaults."""
    defaults = vars(parse_run_args(["--task_name", task, "--is_training", "1", "--model_id", "x", "--model", "CAPS",
                                    "--data", "ETTh1"]))
    assert TASK_RECIPES.model_datasets(task, "CAPS") == [n for n, d in TASK_RECIPES.datasets[task].items()
                                                         if not d.stands_in and not d.only]
    covered = TASK_RECIPES.model_datasets(task, "iTransformer")
    for dataset in TASK_RECIPES.model_datasets(task, "CAPS"):
        for block in range(TASK_RECIPES.blocks(task, "CAPS", dataset)):
            caps = TASK_RECIPES.argv(task, "CAPS", dataset, block)
            base = TASK_RECIPES.argv(task, "iTransformer", dataset if dataset in covered else covered[0], block)
            assert caps[-2:] == ["--caps_direction", "auto"]
            ours = vars(parse_run_args(caps[:-2]))
            theirs = vars(parse_run_args(base))
            for flag, value in CAPS_TASK_ARCHITECTURE.items():
                assert ours[flag] == value, (dataset, flag)
            for flag in NOT_READ_BY_CAPS:
                assert ours[flag] == defaults[flag], (dataset, flag)
            differ = {k for k in ours if ours[k] != theirs[k]} - {"model", *CAPS_TASK_ARCHITECTURE, *NOT_READ_BY_CAPS}
            # Off iTransformer's datasets only the data's own flags differ.
            assert differ <= {"model_id", "root_path", "data_path", "data", "enc_in", "dec_in", "c_out",
                              "seasonal_patterns"}, (dataset, differ)
    assert "--caps_direction auto" in GENERATED[TASK_RECIPES.script(task, "CAPS", covered[0])]


def test_mambasl_runs_tslibs_30_uea_blocks_and_alone_runs_20_of_them():
    """MambaSL.sh's flags with --is_training 1 (TSLib's script tests downloaded checkpoints); the widths,
    switches and kernels per set are pinned through TSLib's parameter counts in test_MambaSingleLayer.py."""
    sets = TASK_RECIPES.model_datasets("classification", "MambaSingleLayer")
    only = [n for n, d in TASK_RECIPES.datasets["classification"].items() if d.only]
    assert len(sets) == 30 and set(sets) == set(UEA_DATASETS) and len(only) == 20
    assert all(TASK_RECIPES.datasets["classification"][n].only == "MambaSingleLayer" for n in only)
    for model in TASK_RECIPES.models("classification"):
        if model != "MambaSingleLayer":
            assert not set(only) & set(TASK_RECIPES.model_datasets("classification", model)), model
    args = {n: parse_run_args(TASK_RECIPES.argv("classification", "MambaSingleLayer", n)) for n in sets}
    jv = args["JapaneseVowels"]
    assert (jv.d_model, jv.d_ff, jv.tv_dt, jv.tv_B, jv.tv_C, jv.num_kernels) == (128, 8, 1, 1, 0, 3)
    assert [n for n, a in args.items() if a.batch_size != 16] == ["EigenWorms"] and args["EigenWorms"].batch_size == 4
    assert {(a.is_training, a.expand, a.d_conv, a.use_D, a.des, a.dropout, a.learning_rate, a.train_epochs,
             a.patience) for a in args.values()} == {(1, 1, 4, 0, "gating4proposed", 0.1, 0.001, 100, 10)}
    text = GENERATED["scripts/classification/MambaSL.sh"]
    assert "# JapaneseVowels: TSLib's scripts/classification/MambaSL.sh." in text and "--is_training 0" in text


STAND_INS = [(task, name) for task in TASKS for name, data in TASK_RECIPES.datasets[task].items() if data.stands_in]


@pytest.mark.parametrize(("task", "dataset"), STAND_INS, ids=[d for _, d in STAND_INS])
def test_a_real_set_takes_every_models_block_of_its_stand_in_with_only_its_data_flags_changed(task, dataset):
    """Every model with a block on the dataset a real set stands in for runs that block on the set, passing
    run.py's checks; only the set's own flags (`TaskData.flags`) and the data placeholders differ; no script."""
    data = TASK_RECIPES.datasets[task][dataset]
    models = [m for m in TASK_RECIPES.models(task) if TASK_RECIPES.has_recipe(task, m, dataset)]
    assert models == [m for m in TASK_RECIPES.models(task) if data.stands_in in TASK_RECIPES.model_datasets(task, m)]
    assert len(models) >= 4 and data.fetch == dataset and not any(f"/{dataset}" in path for path in GENERATED)
    for model in models:
        args = parse_run_args(TASK_RECIPES.argv(task, model, dataset))
        validate_args(args)
        ours = vars(args)
        theirs = vars(parse_run_args(TASK_RECIPES.argv(task, model, data.stands_in)))
        differ = {k for k in ours if ours[k] != theirs[k]}
        assert differ <= {*data.flags, "root_path", "model_id", "data", "enc_in", "dec_in", "c_out"}, (model, differ)
        assert all(ours[k] == v for k, v in data.flags.items() if v != DEFAULT), model
        assert TASK_RECIPES.script(task, model, dataset) == ""


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: TASK_RECIPES.argv("forecast", "TimesNet", "ETTh1"), "unknown task 'forecast'; choose from imputation"),
     (lambda: TASK_RECIPES.argv("imputation", "PatchTST", "ETTh1"), "PatchTST has no imputation recipe; choose from"),
     (lambda: TASK_RECIPES.argv("anomaly_detection", "iTransformer", "PSM"),
      "iTransformer has no anomaly_detection recipe for PSM; it has MSL"),
     (lambda: TASK_RECIPES.argv("imputation", "TimesNet", "ETTh1", 4), "blocks 0..3, not 4")],
    ids=["unknown-task", "no-recipe", "no-dataset", "no-block"],
)
def test_lookups_outside_the_table_list_the_valid_choices(call, message):
    with pytest.raises(UserInputError, match=re.escape(message)):
        call()


def first_block(path: str) -> list[str]:
    """The argv of the first block of generated script `path` (as the bash check proves it runs)."""
    return next(TASK_RECIPES.argv(*b) for b in TASK_RECIPES.every_block() if TASK_RECIPES.script(*b[:3]) == path)


def write_weather(root: Path) -> Path:
    root.mkdir()
    write_toy_csv(root / "weather.csv", rows=250, columns=21)
    return root


def write_psm(root: Path) -> Path:
    write_anomaly_files("PSM", root, train_steps=520)  # its val split (20%) must hold a 100-step window
    return root


def write_uea(root: Path) -> Path:
    toy_dataset(root, name="EthanolConcentration")
    return root


def write_m4_files(root: Path) -> Path:
    write_m4(root)
    return root


@pytest.mark.parametrize(
    ("script", "write", "result", "extra"),
    [("scripts/imputation/Weather_script/TimesNet.sh", write_weather, "result_imputation.txt", NARROW),
     ("scripts/anomaly_detection/PSM/TimesNet.sh", write_psm, "result_anomaly_detection.txt", NARROW),
     ("scripts/classification/TimesNet.sh", write_uea, "result_classification.txt", ()),
     ("scripts/short_term_forecast/TimesNet_M4.sh", write_m4_files, "result_short_term_forecast.txt", ())],
    ids=["imputation-weather", "anomaly-PSM", "classification-EthanolConcentration", "short-term-M4-Monthly"],
)
def test_first_block_of_a_task_script_runs_end_to_end(script, write, result, extra, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = first_block(script)
    assert flag_value(argv, "model") == "TimesNet"
    root = write(tmp_path / "data")
    argv[argv.index("--root_path") + 1] = str(root)
    assert run.main([*argv, *QUICK, *extra]) == 0
    # Classification and M4 set seq_len/pred_len from the data, so the setting is read from the result file.
    setting = (tmp_path / result).read_text().splitlines()[0].strip()
    task, model_id = flag_value(argv, "task_name"), flag_value(argv, "model_id")
    assert setting.startswith(f"{task}_{model_id}_TimesNet_") and setting.endswith("_0")
    assert (tmp_path / "checkpoints" / setting / "checkpoint.pth").is_file()
