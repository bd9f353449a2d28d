"""The parts TSLib's long-term scripts share (the flags before and after a model's own, the groups of
datasets they cover) and the helpers the recipe tables are written with."""

from __future__ import annotations

from compare.recipes.recipe_book import DEFAULT, LONG_HORIZONS, Flags, ModelRecipe

__all__ = [
    "CHANNELS",
    "ENCODER_DECODER",
    "ETT_AND_WEATHER",
    "ILI_LENGTHS",
    "KOOPA",
    "KOOPA_HORIZONS",
    "NO_DECODER",
    "PEMS_ASCENDING",
    "TSLIB_HEAD",
    "TSLIB_LONG",
    "TSLIB_TAIL",
    "WIDE_PAPER_DATASETS",
    "by_horizon",
    "ecl_block_sources",
    "every",
    "tslib_recipe",
    "tslib_sources",
]

ETT_AND_WEATHER = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather")

# The head and tail TSLib's scripts share; model flags go between them.
TSLIB_HEAD: Flags = {
    "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 96,
    "label_len": 48, "pred_len": "{pred_len}",
}
TSLIB_TAIL: Flags = {"enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}", "des": "Exp", "itr": 1}
# e_layers, d_layers and factor as TSLib's scripts pass them (unused by DLinear).
ENCODER_DECODER: Flags = {"e_layers": 2, "d_layers": 1, "factor": 3}


def tslib_recipe(model: str, middle: Flags, per_dataset: dict[str, Flags], sources: dict[str, str],
                 per_horizon: dict[str, dict[int, Flags]] | None = None) -> ModelRecipe:
    """A model's recipe in TSLib's script pattern: TSLib's head, e_layers/d_layers/factor, the model's own
    `middle` flags, TSLib's tail."""
    return ModelRecipe(model, {**TSLIB_HEAD, **ENCODER_DECODER, **middle, **TSLIB_TAIL}, per_dataset,
                       per_horizon or {}, sources=sources)


def tslib_sources(model: str, datasets: tuple[str, ...]) -> dict[str, str]:
    """Where TSLib keeps `model`'s script for each dataset: ETT_script/<Model>_<Data>.sh, else <Data>_script/<Model>.sh."""
    return {d: f"TSLib's {model}_{d}.sh" if d.startswith("ETT") else f"TSLib's {d}_script/{model}.sh"
            for d in datasets}


def every(datasets: tuple[str, ...], source: str) -> dict[str, str]:
    """The same source for each dataset; `{dataset}` in it reads the dataset's name."""
    return {d: source.format(dataset=d) for d in datasets}


def by_horizon(horizons: tuple[int, ...] = LONG_HORIZONS, **columns: tuple) -> dict[int, Flags]:
    """{horizon: flags} from one tuple per flag, in `horizons` order: `by_horizon(e_layers=(1, 3, 1, 3))`."""
    return {h: {flag: values[i] for flag, values in columns.items()} for i, h in enumerate(horizons)}


# PEMS horizons in the order the official iTransformer and OLinear scripts list them (per-horizon tuples).
PEMS_ASCENDING = (12, 24, 48, 96)
KOOPA = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "ECL", "Traffic", "Exchange", "ILI")
KOOPA_HORIZONS = (48, 96, 144, 192)
TSLIB_LONG = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic", "Exchange", "ILI")
# The official iTransformer repo's Solar and PEMS scripts pass no label_len, d_layers or factor (its run.py
# defaults equal ours) and no task_name (ours requires it).
NO_DECODER: Flags = {"label_len": DEFAULT, "d_layers": DEFAULT, "factor": DEFAULT}
ILI_LENGTHS: Flags = {"seq_len": 36, "label_len": 18}
CHANNELS: Flags = {"enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}"}

# The CAPS paper's datasets beyond TSLib's scripts. No script of DLinear, PatchTST or TimesNet exists for them;
# the iTransformer paper, which first reported these baselines there, ran them at L = 96 with their TSLib
# settings. Ours: the model's TSLib ECL block (TSLib's many-variate setting) with the dataset's data and widths.
WIDE_PAPER_DATASETS = ("Solar", "PEMS03", "PEMS04", "PEMS08")


def ecl_block_sources(model: str) -> dict[str, str]:
    """The source of `model`'s recipe on the paper's wide datasets: its TSLib ECL block."""
    return every(WIDE_PAPER_DATASETS, f"TSLib's ECL_script/{model}.sh block on {{dataset}}'s data (no {model} "
                                      "script exists for {dataset}; the iTransformer paper reports it there at "
                                      "L = 96 with its TSLib settings)")
