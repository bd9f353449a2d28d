"""compare.recipes.tables: the recipe table gives every (row, dataset, horizon) a run.py argv that parses, names
its script and fetch name, keeps variants to their flag sets, and rejects what it does not hold with the
valid choices."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from compare.grid.run_args import flag_value, parse_run_args
from compare.recipes.tables import (
    CAPS_SETTINGS,
    DEFAULT,
    MODELS,
    PER_DATASET,
    RECIPES,
    VARIANTS,
    Dataset,
    ModelRecipe,
    RecipeBook,
    Variant,
    name_key,
)
from exp.arguments import make_setting, validate_args
from exp.model_registry import MODEL_REGISTRY
from utils.errors import UserInputError

RECIPES_DIR = Path(__file__).resolve().parents[3] / "compare" / "recipes"
# The table and its machinery: the facade, the types and lookup, and the data modules (not the script writer).
RECIPE_FILES = [path for path in sorted(RECIPES_DIR.glob("*.py")) if path.name != "scripts.py"]


def every_block():
    for row in RECIPES.rows:
        for dataset in RECIPES.row_datasets(row):
            for horizon in RECIPES.horizons(row, dataset):
                yield row, dataset, horizon


def test_rows_are_the_models_then_the_named_variants():
    assert RECIPES.rows == ["DLinear", "PatchTST", "iTransformer", "TimesNet", "Transformer", "Informer",
                            "Autoformer", "TimeMixer", "Crossformer", "FEDformer", "LightTS", "Pyraformer", "Reformer",
                            "TSMixer", "ETSformer", "MICN", "FiLM", "Nonstationary_Transformer", "PAttn",
                            "MultiPatchFormer", "TimeXer", "Koopa", "Mamba", "MambaSimple", "SegRNN", "TiDE", "WPMixer",
                            "FreTS", "MSGNet", "SCINet", "TemporalFusionTransformer", "TimeFilter", "OLinear",
                            "TimeMixerPP", "CAPS",
                            "LinAttn+RoPE", "LinAttn+RoPE (normalised)", "Attn+RoPE", "Pure Softmax",
                            "CAPS (Softmax)", "CAPS w/o Path1", "CAPS w/o Path2", "CAPS w/o Path3", "CAPS (raw marks)",
                            "CAPS (official numerics)", "CAPS (official)"]


def test_every_block_parses_with_run_py_and_never_shares_a_setting():
    owner: dict[str, tuple] = {}
    for block in every_block():
        args = parse_run_args(RECIPES.argv(*block))
        assert args.model in MODEL_REGISTRY, block
        validate_args(args)  # run.py's up-front checks pass (e.g. --train_loop official's requirements)
        assert args.model_id.startswith(f"{args.model_id.split('_')[0]}_{args.seq_len}_{args.pred_len}"), block
        setting = make_setting(args, 0)
        # Two blocks with one setting would overwrite each other's checkpoints and results.
        assert setting not in owner, f"{block} and {owner.get(setting)} share {setting}"
        owner[setting] = block
    # Every recipe at 4 horizons a dataset (ILI's are 24-60): 967 before the paper's Solar/PEMS baselines,
    # + DLinear, PatchTST and TimesNet on Solar and PEMS03/04/08, TimeMixer's PEMS horizons 24-96 and
    # TimeMixer++ on TimeMixer's 10 other datasets,
    # + four CAPS variants (two official-code ones, normalised LinAttn+RoPE, raw marks) on the 10 CAPS datasets
    assert len(owner) == 967 + 3 * 4 * 4 + 3 * 3 + 10 * 4 + 4 * 10 * 4


def test_every_block_passes_channels_that_fit_its_dataset():
    """run.py rejects --enc_in/--dec_in/--c_out that do not fit the file, so a TSLib block that leaves one at
    the default of 7 on another dataset (or passes a typo) must be corrected in the table."""
    for row, dataset, horizon in every_block():
        args = parse_run_args(RECIPES.argv(row, dataset, horizon))
        channels = 1 if args.features == "S" else RECIPES.datasets[dataset].channels
        assert (args.enc_in, args.dec_in, args.c_out) == (channels,) * 3, (row, dataset, horizon)


@pytest.mark.parametrize(
    ("row", "dataset", "pred_len", "script", "model_id"),
    [
        ("CAPS", "ETTh1", 96, "ETT_script/CAPS_ETTh1.sh", "ETTh1_96_96"),
        ("LinAttn+RoPE", "ETTh2", 192, "CAPS_ablation/LinAttn_RoPE.sh", "ETTh2_96_192_LinAttnRoPE"),
        ("DLinear", "ETTh1", 336, "ETT_script/DLinear_ETTh1.sh", "ETTh1_96_336"),
        ("CAPS", "Electricity", 720, "ECL_script/CAPS_ECL.sh", "ECL_96_720"),
        ("iTransformer", "weather", 96, "Weather_script/iTransformer.sh", "weather_96_96"),
        ("CAPS", "Weather", 96, "Weather_script/CAPS_Weather.sh", "Weather_96_96"),
        ("pure_softmax", "PEMS03", 12, "CAPS_ablation/Pure_Softmax.sh", None),
    ],
    ids=["CAPS-ETTh1-96", "LinAttnRoPE-ETTh2-192", "DLinear-ETTh1-336", "CAPS-Electricity-alias-720",
         "iTransformer-weather-tslib-names", "CAPS-Weather-caps-names", "PureSoftmax-PEMS03-no-recipe"],
)
def test_recipe_lookup(row, dataset, pred_len, script, model_id):
    if model_id is None:
        with pytest.raises(UserInputError, match="Pure Softmax has no recipe for PEMS03; it has Weather, Solar"):
            RECIPES.recipe(row, dataset, pred_len)
        return
    recipe = RECIPES.recipe(row, dataset, pred_len)
    assert recipe.script == f"scripts/long_term_forecast/{script}"
    assert flag_value(recipe.argv, "model_id") == model_id and flag_value(recipe.argv, "pred_len") == str(pred_len)
    assert recipe.env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert recipe.fetch == RECIPES.dataset(dataset).fetch


@pytest.mark.parametrize("name", VARIANTS)
def test_a_variant_is_its_base_recipe_plus_its_flags(name):
    variant = VARIANTS[name]
    for dataset in variant.datasets:
        for horizon in RECIPES.horizons(name, dataset):
            ours = vars(parse_run_args(RECIPES.argv(name, dataset, horizon)))
            base = vars(parse_run_args(RECIPES.argv(variant.base, dataset, horizon)))
            changed = {key for key in ours if ours[key] != base[key]}
            assert changed <= {"model_id", *variant.flags}, (dataset, horizon, changed)
            assert ours["model_id"] == base["model_id"] + variant.suffix


def test_caps_settings_table_covers_every_dataset_and_sets_the_caps_flags():
    assert list(CAPS_SETTINGS) == list(MODELS["CAPS"].per_dataset)
    # The paper's ten datasets; the table also holds TSLib's Traffic, Exchange and ILI for the baselines.
    assert list(RECIPES.datasets)[:len(CAPS_SETTINGS)] == list(CAPS_SETTINGS)
    for dataset, (batch, accum, dropout, decay) in CAPS_SETTINGS.items():
        args = parse_run_args(RECIPES.argv("CAPS", dataset, RECIPES.datasets[dataset].horizons[0]))
        assert (args.batch_size, args.grad_accum, args.random_channel_dropout, args.weight_decay) == (
            batch, accum, dropout, decay)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: RECIPES.recipe("NoSuchModel", "ETTh1", 96),
         "unknown model row 'NoSuchModel'; choose from DLinear, PatchTST, iTransformer, TimesNet, Transformer, "
         "Informer, Autoformer, TimeMixer, Crossformer"),
        (lambda: RECIPES.recipe("CAPS", "M4", 96), "unknown dataset 'M4'; choose from ETTh1, ETTh2"),
        (lambda: RECIPES.recipe("CAPS", "PEMS04", 192), "PEMS04 has no horizon 192; choose from 96 48 24 12"),
        (lambda: RECIPES.recipe("DLinear", "Traffic", 96), "DLinear has no recipe for Traffic; it has ETTh1, ETTh2"),
    ],
    ids=["unknown-row", "unknown-dataset", "unknown-horizon", "no-recipe"],
)
def test_lookups_outside_the_table_list_the_valid_choices(call, message):
    with pytest.raises(UserInputError, match=re.escape(message)):
        call()


def test_dataset_names_and_aliases():
    assert RECIPES.dataset_keys("Electricity") == {"ecl", "electricity"}
    assert RECIPES.dataset_keys("solar") == {"solar", "solar_al"}
    assert RECIPES.dataset_keys("Exchange") == {"exchange", "exchange_rate"}
    assert RECIPES.dataset_keys("ili") == {"ili", "illness", "national_illness"}
    assert RECIPES.dataset_keys("M4") == {"m4"}  # not in the table: its own name only
    assert name_key("LinAttn+RoPE") == "linattn_rope" and RECIPES.row_name("linattn_rope") == "LinAttn+RoPE"
    # The paper's TimeMixer++ is our TimeMixerPP row, not TimeMixer.
    assert RECIPES.row_name("TimeMixer++") == "TimeMixerPP" and name_key("TimeMixer") != name_key("TimeMixer++")


def toy_book(flags: dict, per_dataset: dict, variant_flags: dict | None = None) -> RecipeBook:
    data = Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 3, fetch="toy", folder="Toy_script", horizons=(12,))
    head = {"model_id": "{model_id}", "model": "{model}", "seq_len": 24, "pred_len": "{pred_len}"}
    model = ModelRecipe("DLinear", {**head, **flags}, {"toy": per_dataset}, variant_slot="seq_len")
    variants = {"V": Variant("V", "DLinear", variant_flags or {}, "_V", ("toy",), "V.sh")}
    return RecipeBook({"toy": data}, {"DLinear": model}, variants)


def test_dataset_values_replace_in_place_and_variant_flags_go_to_the_slot():
    book = toy_book({"e_layers": PER_DATASET, "des": "Exp"}, {"e_layers": 3},
                    {"des": "V", "moving_avg": 5, "use_amp": None})
    assert book.argv("DLinear", "toy", 12) == ["--model_id", "toy_24_12", "--model", "DLinear", "--seq_len", "24",
                                               "--pred_len", "12", "--e_layers", "3", "--des", "Exp"]
    assert book.argv("V", "toy", 12) == ["--model_id", "toy_24_12_V", "--model", "DLinear", "--seq_len", "24",
                                         "--moving_avg", "5", "--use_amp", "--pred_len", "12", "--e_layers", "3",
                                         "--des", "V"]


def test_default_flags_are_left_out_unless_an_entry_sets_them_and_tuples_are_several_values():
    book = toy_book({"train_epochs": DEFAULT, "p_hidden_dims": (64, 32), "use_amp": None}, {})
    assert book.argv("DLinear", "toy", 12)[-5:] == ["12", "--p_hidden_dims", "64", "32", "--use_amp"]
    book = toy_book({"train_epochs": DEFAULT}, {"train_epochs": 3})
    assert book.argv("DLinear", "toy", 12)[-2:] == ["--train_epochs", "3"]


def test_a_recipe_may_have_its_own_horizons_on_a_dataset():
    book = toy_book({}, {})
    model = book.models["DLinear"]
    book.models["DLinear"] = ModelRecipe(model.model, model.flags, model.per_dataset, horizons={"toy": (6, 9)})
    assert book.horizons("DLinear", "toy") == (6, 9) and book.horizons("V", "toy") == (6, 9)
    assert book.argv("DLinear", "toy", 9)[:2] == ["--model_id", "toy_24_9"]
    with pytest.raises(UserInputError, match="DLinear on toy has no horizon 12; choose from 6 9"):
        book.argv("DLinear", "toy", 12)


@pytest.mark.parametrize(
    ("flags", "per_dataset", "message"),
    [({"e_layers": PER_DATASET}, {}, "--e_layers has no value; set it in the dataset's"),
     ({}, {"d_ff": 8}, "--d_ff is not among the recipe's flags")],
    ids=["unset-per-dataset", "flag-without-a-place"],
)
def test_incomplete_recipes_are_rejected(flags, per_dataset, message):
    with pytest.raises(ValueError, match=message):
        toy_book(flags, per_dataset).argv("DLinear", "toy", 12)


def test_recipe_modules_import_only_the_standard_library_utils_errors_and_the_data_registry():
    imported = set()
    for path in RECIPE_FILES:
        tree = ast.parse(path.read_text())
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    own = {f"compare.recipes.{p.stem}" for p in RECIPE_FILES}
    outside = {m for m in imported - own if m.split(".")[0] not in sys.stdlib_module_names and m != "__future__"}
    # The task datasets take their names from the data registry (itself standard library + utils.errors).
    assert outside == {"utils.errors", "data_provider.registry"}


def test_the_recipe_data_never_imports_the_table_it_makes_up():
    """The data modules import the machinery and each other, never `compare.recipes.tables` (no import circle)."""
    for path in [path for path in RECIPE_FILES if path.name != "tables.py"]:
        tree = ast.parse(path.read_text())
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "compare.recipes.tables" not in modules, path.name


#: the flags a stand-in dataset's own data replaces in the block it borrows
STAND_IN_FLAGS = {"root_path", "data_path", "data", "model_id", "pred_len", "enc_in", "dec_in", "c_out", "freq",
                  "target"}


@pytest.mark.parametrize("pred_len", [24, 100, 500])
def test_a_stand_in_dataset_runs_every_rows_nearest_block_with_its_own_data(pred_len):
    # Its file is named like a table dataset's: the stand-in is found by its own name only.
    own = Dataset("Mine", "/data/mine/", "ETTh2.csv", "custom", 5, fetch="Mine", folder="", stands_in="ETTh1",
                  flags={"enc_in": 5, "dec_in": 5, "c_out": 5, "freq": "w", "target": "z"})
    book = RecipeBook({"Mine": own, **RECIPES.datasets}, RECIPES.models, RECIPES.variants)
    assert book.dataset("mine") is own and book.dataset("ETTh2").name == "ETTh2"
    for row in RECIPES.rows:
        horizons = RECIPES.horizons(row, "ETTh1")
        nearest = min(horizons, key=lambda h: (abs(h - pred_len), h))
        assert book.block_of(row, "Mine", pred_len) == (RECIPES.datasets["ETTh1"], nearest)
        flags, block = book.flags(row, "Mine", pred_len), RECIPES.flags(row, "ETTh1", nearest)
        assert {k: v for k, v in block.items() if k not in STAND_IN_FLAGS} == {
            k: v for k, v in flags.items() if k not in STAND_IN_FLAGS}, row
        flags = {k: None if v is None else str(v) for k, v in flags.items()}
        suffix = VARIANTS[row].suffix if row in VARIANTS else ""
        assert (flags["root_path"], flags["data_path"], flags["data"], flags["pred_len"], flags["model_id"]) == (
            "/data/mine/", "ETTh2.csv", "custom", str(pred_len), f"Mine_{flags['seq_len']}_{pred_len}{suffix}"), row
        assert (flags["enc_in"], flags["dec_in"], flags["c_out"], flags["freq"], flags["target"]) == (
            "5", "5", "5", "w", "z"), row
        assert book.recipe(row, "Mine", pred_len).script == ""


def test_a_stand_in_for_a_dataset_the_row_lacks_names_both():
    own = Dataset("Mine", "/data/", "mine.csv", "custom", 5, fetch="Mine", folder="", stands_in="ILI")
    book = RecipeBook({"Mine": own, **RECIPES.datasets}, RECIPES.models, RECIPES.variants)
    with pytest.raises(UserInputError, match=r"^CAPS has no recipe for ILI \(which Mine stands in for\); it has ETTh1"):
        book.argv("CAPS", "Mine", 24)


def test_the_long_term_datasets_come_from_the_data_registry():
    """One dataset table: each benchmark's file, loader and width are the registry's (data_provider/registry.py)."""
    from compare.recipes.datasets import DATASETS
    from data_provider.registry import lookup

    for dataset in DATASETS.values():
        info = lookup(dataset.fetch)
        assert (dataset.root_path, dataset.data_path, dataset.data, dataset.channels) == (
            info.root_dir, info.file_name, info.data_flag, info.variates), dataset.name
    assert {name: d.channels for name, d in DATASETS.items() if name in ("ETTh1", "Solar", "PEMS08", "ECL")} == {
        "ETTh1": 7, "Solar": 137, "PEMS08": 170, "ECL": 321}
