"""The run recipes: every model's `run.py` flags per dataset and horizon, and every CAPS variant as a
named flag set over the CAPS recipe. The one place a recipe fact is written.

`scripts/long_term_forecast/**/*.sh` are generated from this table (`python -m compare.scripts`) and
`compare.runner` and the benchmarks read it directly (`RECIPES.recipe(row, dataset, pred_len)`).
TSLib's other tasks (imputation, anomaly detection, classification, short-term forecasting) live in the same
file as `TASK_RECIPES` (`TASK_RECIPES.argv(task, model, dataset, block)`), which writes `scripts/<task>/**`.

A model's `flags` list every flag in script order; a value of `PER_DATASET` must be set by each
dataset's entry, a value of `DEFAULT` leaves the flag out of the block (run.py's default applies; a
dataset or horizon entry may set it, e.g. one horizon's `--train_epochs`), and `{placeholders}` are filled from the dataset and horizon (`{root_path}`,
`{data_path}`, `{data}`, `{channels}`, `{model}`, `{model_id}`, `{pred_len}`). Dataset and horizon
entries replace a flag's value in place, so every block keeps the model's flag order. A variant's flags
replace the base's value in place too; flags the base lacks go after the base's `variant_slot`.

To add a model: a `ModelRecipe` in `MODELS` (and its `models/<Name>.py`). To add a variant: a `Variant`
in `VARIANTS`. Then `python -m compare.scripts` writes their scripts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from data_provider.registry import ANOMALY_DATASETS, DATASET_GROUPS, UEA_DATASETS
from utils.errors import UserInputError

__all__ = [
    "CAPS_SETTINGS",
    "DATASETS",
    "DEFAULT",
    "MODELS",
    "PER_DATASET",
    "RECIPES",
    "SCRIPTS_DIR",
    "TASKS",
    "TASK_RECIPES",
    "VARIANTS",
    "Dataset",
    "ModelRecipe",
    "Recipe",
    "RecipeBook",
    "TaskBook",
    "TaskData",
    "TaskRecipe",
    "Variant",
    "name_key",
]

Value = str | int | float | tuple | None  # None: a switch (`--use_amp`); a tuple: several values (nargs="+")
Flags = dict[str, Value]

PER_DATASET = "<per dataset>"
DEFAULT = "<run.py default>"
SCRIPTS_DIR = "scripts/long_term_forecast"
LONG_HORIZONS = (96, 192, 336, 720)
# The official caps.sh loops PEMS horizons in this order; the paper reports 12-96.
PEMS_HORIZONS = (96, 48, 24, 12)
ILI_HORIZONS = (24, 36, 48, 60)


def name_key(name: str) -> str:
    """A name normalised for matching: `LinAttn+RoPE` -> `linattn_rope`, `solar_AL` -> `solar_al`,
    `TimeMixer++` -> `timemixerpp` (the paper's name of our TimeMixerPP, kept apart from TimeMixer)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower().replace("++", "pp")).strip("_")


@dataclass(frozen=True)
class Dataset:
    """The data facts of one benchmark: where its file lies and how `run.py` reads it."""

    name: str  # the table key; CAPS model_ids start with it (Weather_96_96)
    root_path: str
    data_path: str
    data: str  # --data
    channels: int  # enc_in = dec_in = c_out
    fetch: str  # `python -m data_provider.fetch NAME`
    folder: str  # scripts/long_term_forecast/<folder>/
    tslib_id: str = ""  # model_id prefix of TSLib's scripts when it differs from `name` (weather)
    tslib_file: str = "{model}_{name}.sh"  # TSLib's script name (Weather_script/DLinear.sh)
    horizons: tuple[int, ...] = LONG_HORIZONS
    notes: tuple[str, ...] = ()  # comment lines for every script on this dataset

    def keys(self) -> set[str]:
        """Every normalised name the dataset is known by (table name, model_id prefix, fetch name, file)."""
        stem = self.data_path.rsplit(".", 1)[0]
        return {name_key(n) for n in (self.name, self.tslib_id or self.name, self.fetch, stem)}


@dataclass(frozen=True)
class ModelRecipe:
    """One model's scripts: its flags in script order, then per dataset and per horizon values."""

    model: str
    flags: Flags
    per_dataset: dict[str, Flags]  # its keys are the datasets the model has a recipe for
    per_horizon: dict[str, dict[int, Flags]] = field(default_factory=dict)
    comments: tuple[str, ...] = ()  # the recipe's explanation atop each script; {flag} reads a flag's value
    sources: dict[str, str] = field(default_factory=dict)  # dataset -> where its values come from
    # The comment above a dataset's blocks, filled from its first block's flags plus {name} and {source}.
    summary: str = "{name}: hyper-parameters from {source}; unlisted flags keep run.py defaults."
    tslib_names: bool = True  # model_id prefix and script name as TSLib's (weather_96_96, Weather_script/DLinear.sh)
    fetch: bool = False  # scripts fetch their dataset first
    variant_slot: str = ""  # variant flags the recipe lacks are inserted after this flag
    horizons: dict[str, tuple[int, ...]] = field(default_factory=dict)  # dataset -> its own horizons (Koopa)


@dataclass(frozen=True)
class Variant:
    """A named flag set over a model's recipe (a paper ablation), with its own model_id suffix."""

    name: str
    base: str
    flags: Flags
    suffix: str  # appended to the model_id so results never overwrite the base's
    datasets: tuple[str, ...]
    file: str  # scripts/long_term_forecast/CAPS_ablation/<file>
    comments: tuple[str, ...] = ()  # {flag} reads a flag's value, as in ModelRecipe.comments
    base_comments: bool = True  # False: the variant's comments replace the base recipe's (another loop)


@dataclass(frozen=True)
class Recipe:
    """The `run.py` argv of one (row, dataset, horizon), the environment and fetch name its script uses."""

    row: str
    dataset: str
    pred_len: int
    argv: tuple[str, ...]
    env: dict[str, str]
    fetch: str
    script: str  # the generated script holding this block, relative to the repository root


@dataclass(frozen=True)
class RecipeBook:
    """Datasets, model recipes and variants, and the argv each (row, dataset, horizon) runs with."""

    datasets: dict[str, Dataset]
    models: dict[str, ModelRecipe]
    variants: dict[str, Variant] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def rows(self) -> list[str]:
        """Every row name: the models, then the variants."""
        return [*self.models, *self.variants]

    def dataset(self, name: str) -> Dataset:
        """The dataset called `name` or one of its aliases (`electricity` is ECL), case-insensitive."""
        key = name_key(name)
        for dataset in self.datasets.values():
            if key in dataset.keys():
                return dataset
        raise UserInputError(f"unknown dataset {name!r}; choose from {', '.join(self.datasets)}")

    def dataset_keys(self, name: str) -> set[str]:
        """Normalised names `name` is known by: a table dataset's aliases, else `name` alone."""
        try:
            return self.dataset(name).keys()
        except UserInputError:
            return {name_key(name)}

    def row_name(self, name: str) -> str:
        """The table's spelling of row `name` (`linattn_rope` -> `LinAttn+RoPE`)."""
        for row in self.rows:
            if name_key(row) == name_key(name):
                return row
        raise UserInputError(f"unknown model row {name!r}; choose from {', '.join(self.rows)} "
                             "(or define it with --variant NAME=BASE:FLAGS)")

    def row_datasets(self, row: str) -> list[str]:
        """The datasets row `row` has a recipe for, in script order."""
        row = self.row_name(row)
        if row in self.variants:
            return list(self.variants[row].datasets)
        return list(self.models[row].per_dataset)

    def horizons(self, row: str, dataset: str) -> tuple[int, ...]:
        """The horizons row `row` runs on `dataset`: the recipe's own for it, else the dataset's."""
        row, data = self.row_name(row), self.dataset(dataset)
        model = self.variants[row].base if row in self.variants else row
        return self.models[model].horizons.get(data.name, data.horizons)

    def script(self, row: str, dataset: str) -> str:
        """The generated script that holds `row` on `dataset`, relative to the repository root."""
        row, data = self.row_name(row), self.dataset(dataset)
        if row in self.variants:
            return f"{SCRIPTS_DIR}/CAPS_ablation/{self.variants[row].file}"
        recipe = self.models[row]
        template = data.tslib_file if recipe.tslib_names else "{model}_{name}.sh"
        return f"{SCRIPTS_DIR}/{data.folder}/{template.format(model=row, name=data.name)}"

    def flags(self, row: str, dataset: str, pred_len: int) -> Flags:
        """The ordered run.py flags (name -> value) of one block."""
        row, data = self.row_name(row), self.dataset(dataset)
        variant = self.variants.get(row)
        recipe = self.models[variant.base if variant else row]
        if data.name not in self.row_datasets(row):
            raise UserInputError(f"{row} has no recipe for {data.name}; it has "
                                 f"{', '.join(self.row_datasets(row))}")
        horizons = self.horizons(row, data.name)
        if pred_len not in horizons:
            raise UserInputError(f"{row} on {data.name} has no horizon {pred_len}; choose from "
                                 f"{' '.join(map(str, horizons))}")
        flags = dict(recipe.flags)
        overrides = [recipe.per_dataset[data.name], recipe.per_horizon.get(data.name, {}).get(pred_len, {})]
        for layer in overrides:
            for flag, value in layer.items():
                if flag not in flags:
                    raise ValueError(f"{recipe.model} on {data.name}: --{flag} is not among the recipe's flags; "
                                     "add it to the model's `flags` so its place in the scripts is defined")
                flags[flag] = value
        suffix = ""
        if variant:
            flags = _with_variant(flags, variant, recipe.variant_slot)
            suffix = variant.suffix
        prefix = (data.tslib_id or data.name) if recipe.tslib_names else data.name
        fields = dict(model=recipe.model, root_path=data.root_path, data_path=data.data_path, data=data.data,
                      channels=data.channels, pred_len=pred_len,
                      model_id=f"{prefix}_{flags['seq_len']}_{pred_len}{suffix}")
        filled: Flags = {}
        for flag, value in flags.items():
            if value == PER_DATASET:
                raise ValueError(f"{recipe.model} on {data.name} H={pred_len}: --{flag} has no value; "
                                 "set it in the dataset's (or horizon's) entry")
            if value == DEFAULT:
                continue
            if isinstance(value, str) and "{" in value:
                value = value.format(**fields)
            filled[flag] = value
        return filled

    def argv(self, row: str, dataset: str, pred_len: int) -> list[str]:
        """The `run.py` arguments of row `row` on `dataset` at horizon `pred_len`, as its script runs them."""
        argv: list[str] = []
        for flag, value in self.flags(row, dataset, pred_len).items():
            values = value if isinstance(value, tuple) else () if value is None else (value,)
            argv += [f"--{flag}", *map(str, values)]
        return argv

    def row_model(self, row: str) -> str:
        """The `--model` a row runs (a variant runs its base model)."""
        row = self.row_name(row)
        return self.variants[row].base if row in self.variants else row

    def recipe(self, row: str, dataset: str, pred_len: int) -> Recipe:
        """Everything a runner needs for one (row, dataset, horizon)."""
        data = self.dataset(dataset)
        return Recipe(row=self.row_name(row), dataset=data.name, pred_len=pred_len,
                      argv=tuple(self.argv(row, dataset, pred_len)), env=dict(self.env), fetch=data.fetch,
                      script=self.script(row, dataset))


def _with_variant(flags: Flags, variant: Variant, slot: str) -> Flags:
    """`flags` with the variant's values replacing the base's in place; new flags go after `slot`."""
    new = {f: v for f, v in variant.flags.items() if f not in flags}
    merged: Flags = {}
    for flag, value in flags.items():
        merged[flag] = variant.flags.get(flag, value)
        if flag == slot:
            merged.update(new)
    if new and slot not in flags:
        raise ValueError(f"variant {variant.name}: its base has no --{slot} to insert {', '.join(new)} after")
    return merged


def _ett(name: str) -> Dataset:
    return Dataset(name, "./dataset/ETT-small/", f"{name}.csv", name, 7, fetch=name, folder="ETT_script")


def _pems(name: str, channels: int) -> Dataset:
    return Dataset(name, "./dataset/PEMS/", f"{name}.npz", "PEMS", channels, fetch=name, folder="PEMS_script",
                   horizons=PEMS_HORIZONS,
                   notes=("PEMS horizons in the official loop order; the paper reports 12-96.",))


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    _ett("ETTh1"),
    _ett("ETTh2"),
    _ett("ETTm1"),
    _ett("ETTm2"),
    Dataset("Weather", "./dataset/weather/", "weather.csv", "custom", 21, fetch="weather", folder="Weather_script",
            tslib_id="weather", tslib_file="{model}.sh"),
    # The official iTransformer and TimeMixer scripts label Solar runs solar_96_<H>.
    Dataset("Solar", "./dataset/Solar/", "solar_AL.txt", "Solar", 137, fetch="Solar", folder="Solar_script",
            tslib_id="solar"),
    Dataset("ECL", "./dataset/electricity/", "electricity.csv", "custom", 321, fetch="electricity",
            folder="ECL_script", tslib_file="{model}.sh"),
    _pems("PEMS03", 358),
    _pems("PEMS04", 307),
    _pems("PEMS08", 170),
    Dataset("Traffic", "./dataset/traffic/", "traffic.csv", "custom", 862, fetch="traffic", folder="Traffic_script",
            tslib_id="traffic", tslib_file="{model}.sh"),
    Dataset("Exchange", "./dataset/exchange_rate/", "exchange_rate.csv", "custom", 8, fetch="exchange_rate",
            folder="Exchange_script", tslib_file="{model}.sh"),
    # TSLib's ILI scripts read 36 weeks and forecast 24-60 (model_id ili_36_<H>).
    Dataset("ILI", "./dataset/illness/", "national_illness.csv", "custom", 7, fetch="illness", folder="ILI_script",
            tslib_id="ili", tslib_file="{model}.sh", horizons=ILI_HORIZONS),
)}

ETT_AND_WEATHER = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather")

# The head and tail TSLib's scripts share; model flags go between them.
_TSLIB_HEAD: Flags = {
    "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{model_id}", "model": "{model}", "data": "{data}", "features": "M", "seq_len": 96,
    "label_len": 48, "pred_len": "{pred_len}",
}
_TSLIB_TAIL: Flags = {"enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}", "des": "Exp", "itr": 1}
# e_layers, d_layers and factor as TSLib's scripts pass them (unused by DLinear).
_ENCODER_DECODER: Flags = {"e_layers": 2, "d_layers": 1, "factor": 3}


def _tslib(model: str, middle: Flags, per_dataset: dict[str, Flags], sources: dict[str, str],
           per_horizon: dict[str, dict[int, Flags]] | None = None) -> ModelRecipe:
    return ModelRecipe(model, {**_TSLIB_HEAD, **_ENCODER_DECODER, **middle, **_TSLIB_TAIL}, per_dataset,
                       per_horizon or {}, sources=sources)


def _tslib_sources(model: str, datasets: tuple[str, ...]) -> dict[str, str]:
    """Where TSLib keeps `model`'s script for each dataset: ETT_script/<Model>_<Data>.sh, else <Data>_script/<Model>.sh."""
    return {d: f"TSLib's {model}_{d}.sh" if d.startswith("ETT") else f"TSLib's {d}_script/{model}.sh"
            for d in datasets}


def _every(datasets: tuple[str, ...], source: str) -> dict[str, str]:
    """The same source for each dataset; `{dataset}` in it reads the dataset's name."""
    return {d: source.format(dataset=d) for d in datasets}


def _per_horizon(horizons: tuple[int, ...] = LONG_HORIZONS, **columns: tuple) -> dict[int, Flags]:
    """{horizon: flags} from one tuple per flag, in `horizons` order: `_per_horizon(e_layers=(1, 3, 1, 3))`."""
    return {h: {flag: values[i] for flag, values in columns.items()} for i, h in enumerate(horizons)}


# PEMS horizons in the order the official iTransformer and OLinear scripts list them (per-horizon tuples).
PEMS_ASCENDING = (12, 24, 48, 96)
KOOPA = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "ECL", "Traffic", "Exchange", "ILI")
KOOPA_HORIZONS = (48, 96, 144, 192)
TSLIB_LONG = ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic", "Exchange", "ILI")
# The official iTransformer repo's Solar and PEMS scripts pass no label_len, d_layers or factor (its run.py
# defaults equal ours) and no task_name (ours requires it).
_NO_DECODER: Flags = {"label_len": DEFAULT, "d_layers": DEFAULT, "factor": DEFAULT}
_ILI: Flags = {"seq_len": 36, "label_len": 18}
_CHANNELS: Flags = {"enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}"}

# The CAPS paper's datasets beyond TSLib's scripts. No script of DLinear, PatchTST or TimesNet exists for them;
# the iTransformer paper, which first reported these baselines there, ran them at L = 96 with their TSLib
# settings. Ours: the model's TSLib ECL block (TSLib's many-variate setting) with the dataset's data and widths.
WIDE_PAPER_DATASETS = ("Solar", "PEMS03", "PEMS04", "PEMS08")


def _ecl_block_sources(model: str) -> dict[str, str]:
    return _every(WIDE_PAPER_DATASETS, f"TSLib's ECL_script/{model}.sh block on {{dataset}}'s data (no {model} "
                                       "script exists for {dataset}; the iTransformer paper reports it there at "
                                       "L = 96 with its TSLib settings)")


# TSLib's TimeMixer scripts pass label_len 0 and their training flags after the common tail; the ETT ones
# pass no dec_in, d_layers or factor (TimeMixer_ETTh1.sh's batch_size variable says 16 but the block
# passes 128). Solar and PEMS are the official TimeMixer repo's (kwuking/TimeMixer).
TIMEMIXER = ModelRecipe("TimeMixer", {
    **_TSLIB_HEAD, "label_len": 0, "e_layers": 2, "d_layers": DEFAULT, "factor": DEFAULT, **_TSLIB_TAIL,
    "dec_in": DEFAULT, "use_norm": DEFAULT, "d_model": 16, "d_ff": 32, "channel_independence": DEFAULT,
    "batch_size": DEFAULT, "learning_rate": 0.01, "train_epochs": DEFAULT, "patience": DEFAULT,
    "down_sampling_layers": 3, "down_sampling_method": "avg", "down_sampling_window": 2,
}, {
    "ETTh1": {"batch_size": 128, "train_epochs": 10, "patience": 10},
    "ETTh2": {},
    "ETTm1": {"batch_size": 16},
    "ETTm2": {"d_model": 32, "batch_size": 128},
    "Weather": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "batch_size": 128,
                "train_epochs": 20, "patience": 10},
    "ECL": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "batch_size": 32,
            "train_epochs": 20, "patience": 10},
    # TSLib labels these runs Traffic_96_<H>; ours say traffic_96_<H> as its other Traffic scripts.
    "Traffic": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "d_model": 32, "d_ff": 64,
                "batch_size": 8},
    "Solar": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "use_norm": 0,
              "d_model": 512, "d_ff": 2048, "channel_independence": 0, "batch_size": 32,
              "learning_rate": 0.001, "train_epochs": 10, "patience": 3, "down_sampling_layers": 2},
    # The official PEMS script (short_term_forecast/PEMS/TimeMixer.sh) forecasts 12 steps only and spells
    # the flag --channel_independent; ours pass --channel_independence 0 as its intent.
    **{name: {"e_layers": 5, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "use_norm": 0,
              "d_model": 128, "d_ff": 256, "channel_independence": 0, "batch_size": 32,
              "learning_rate": 0.003, "train_epochs": 10, "patience": 10, "down_sampling_layers": 1}
       for name in ("PEMS03", "PEMS04", "PEMS08")},
}, per_horizon={"Weather": {192: {"d_layers": DEFAULT}}, "Solar": {192: {"d_layers": DEFAULT}}},
    sources={**_every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's TimeMixer_{dataset}.sh"),
             **_every(("Weather", "ECL", "Traffic"), "TSLib's {dataset}_script/TimeMixer.sh"),
             "Solar": "the official TimeMixer repo's scripts/long_term_forecast/Solar_script/TimeMixer_unify.sh",
             **_every(("PEMS03", "PEMS04", "PEMS08"), "the official TimeMixer repo's "
                      "scripts/short_term_forecast/PEMS/TimeMixer.sh (it forecasts 12 steps; 24, 48 and 96 "
                      "run the same block with that pred_len, as the CAPS paper reports TimeMixer there)")})


def _timemixer_pp(timemixer: ModelRecipe) -> ModelRecipe:
    """TimeMixer++ (not in TSLib; no official scripts are published) on every dataset of TimeMixer's recipe:
    TimeMixer's setting there (TimeMixer++ is its successor by the same authors, so it is the nearest
    published one) with the TimeMixer++ paper's strided-convolution down-sampling."""
    return ModelRecipe(
        "TimeMixerPP", {**timemixer.flags, "down_sampling_method": "conv"},
        {dataset: dict(flags) for dataset, flags in timemixer.per_dataset.items()},
        {dataset: dict(by_h) for dataset, by_h in timemixer.per_horizon.items()},
        sources={dataset: f"TimeMixer's {dataset} recipe ({source}) with conv down-sampling; no official "
                          "TimeMixer++ scripts are published"
                 for dataset, source in timemixer.sources.items()},
        horizons=dict(timemixer.horizons))


# The blocks of TSLib's scripts read as facts (thuml/Time-Series-Library, scripts/long_term_forecast/).
# Flags a TSLib block does not pass are `DEFAULT` here, so each generated block passes what TSLib's does.
_PATCHTST_ECL: Flags = {"n_heads": DEFAULT, "batch_size": 16}
_TIMESNET_ECL: Flags = {"d_model": 256, "d_ff": 512}
BASELINES = (
    _tslib("DLinear", {}, {d: {} for d in (*ETT_AND_WEATHER, "ECL", *WIDE_PAPER_DATASETS)}, {
        **_every(ETT_AND_WEATHER, "the DLinear_ETTh1.sh pattern (TSLib ships no DLinear script for {dataset}; "
                                  "DLinear reads only moving_avg; e_layers, d_layers and factor are passed as "
                                  "TSLib does, unused)"),
        "ETTh1": "TSLib's DLinear_ETTh1.sh",
        "ECL": "TSLib's ECL_script/DLinear.sh",
        **_ecl_block_sources("DLinear")}),
    _tslib("PatchTST", {"n_heads": PER_DATASET, "d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT,
                        "batch_size": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {"e_layers": 1},
        "ETTh2": {"e_layers": 3, "n_heads": 4},
        "ETTm1": {}, "ETTm2": {},
        "Weather": {"e_layers": 2, "train_epochs": 3},
        "ECL": _PATCHTST_ECL,
        "Traffic": {"n_heads": DEFAULT, "d_model": 512, "d_ff": 512, "top_k": 5, "batch_size": 4},
        "Exchange": {"n_heads": DEFAULT},
        "ILI": {**_ILI, "e_layers": 4},
        **{d: _PATCHTST_ECL for d in WIDE_PAPER_DATASETS},
    }, {**_every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's PatchTST_{dataset}.sh"),
        **_every(("Weather", "ECL", "Traffic", "Exchange", "ILI"), "TSLib's {dataset}_script/PatchTST.sh"),
        **_ecl_block_sources("PatchTST")},
        per_horizon={
            "ETTh1": _per_horizon(n_heads=(2, 8, 8, 16)),
            "ETTm1": _per_horizon(e_layers=(1, 3, 1, 3), n_heads=(2, 2, 4, 4), batch_size=(32, 128, 128, 128)),
            "ETTm2": _per_horizon(e_layers=(3, 3, 1, 3), n_heads=(16, 2, 4, 4), batch_size=(32, 128, 32, 128)),
            "Weather": _per_horizon(n_heads=(4, 16, 4, 4), batch_size=(DEFAULT, DEFAULT, 128, 128)),
            "Exchange": {336: {"train_epochs": 1}},
            "ILI": _per_horizon(ILI_HORIZONS, n_heads=(4, 4, 4, 16), d_model=(1024, 2048, 2048, 2048)),
        }),
    _tslib("iTransformer", {"d_model": 128, "d_ff": 128, "batch_size": DEFAULT, "learning_rate": DEFAULT,
                            "use_norm": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {},
        "Weather": {"e_layers": 3, "d_model": 512, "d_ff": 512},
        "ECL": {"e_layers": 3, "d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.0005},
        "Traffic": {"e_layers": 4, "d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.001},
        "Solar": {**_NO_DECODER, "d_model": 512, "d_ff": 512, "learning_rate": 0.0005},
        "PEMS03": {**_NO_DECODER, "e_layers": 4, "d_model": 512, "d_ff": 512, "learning_rate": 0.001},
        "PEMS04": {**_NO_DECODER, "e_layers": 4, "d_model": 1024, "d_ff": 1024, "learning_rate": 0.0005,
                   "use_norm": 0},
        "PEMS08": {**_NO_DECODER, "d_model": 512, "d_ff": 512},
    }, {**_every(("ETTm1", "ETTm2"), "the official iTransformer repo's iTransformer_{dataset}.sh (TSLib ships no "
                                     "iTransformer_{dataset}.sh); label_len, d_layers and factor as TSLib's "
                                     "pattern, unused by iTransformer"),
        "ETTh1": "TSLib's iTransformer_ETTh2.sh (TSLib ships no iTransformer_ETTh1.sh)",
        "ETTh2": "TSLib's iTransformer_ETTh2.sh (its --enc_in/--dec_in/--c_out 21 are a typo run.py rejects; "
                 "ours pass 7)",
        **_every(("Weather", "ECL", "Traffic"), "TSLib's {dataset}_script/iTransformer.sh"),
        "Solar": "the official iTransformer repo's scripts/multivariate_forecasting/SolarEnergy/iTransformer.sh",
        **_every(("PEMS03", "PEMS04", "PEMS08"),
                 "the official iTransformer repo's scripts/multivariate_forecasting/PEMS/iTransformer_{dataset}.sh"),
        },
        per_horizon={"PEMS08": _per_horizon(PEMS_ASCENDING, e_layers=(2, 2, 4, 4), batch_size=(DEFAULT, DEFAULT, 16, 16),
                                            learning_rate=(DEFAULT, DEFAULT, 0.001, 0.001), use_norm=(1, 1, 0, 0))}),
    _tslib("TimesNet", {"d_model": PER_DATASET, "d_ff": PER_DATASET, "top_k": 5, "train_epochs": DEFAULT}, {
        "ETTh1": {"d_model": 16, "d_ff": 32},
        "ETTh2": {"d_model": 32, "d_ff": 32},
        "ETTm1": {}, "ETTm2": {"d_ff": 32},
        "Weather": {"d_model": 32, "d_ff": 32},
        "ECL": _TIMESNET_ECL,
        "Traffic": {"d_model": 512, "d_ff": 512},
        "Exchange": {},
        "ILI": {**_ILI, "d_model": 768, "d_ff": 768},
        **{d: _TIMESNET_ECL for d in WIDE_PAPER_DATASETS},
    }, {**_every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's TimesNet_{dataset}.sh"),
        **_every(("Weather", "ECL", "Traffic", "Exchange", "ILI"), "TSLib's {dataset}_script/TimesNet.sh"),
        **_ecl_block_sources("TimesNet")},
        per_horizon={
            "ETTm1": _per_horizon(d_model=(64, 64, 16, 16), d_ff=(64, 64, 32, 32), train_epochs=(DEFAULT, DEFAULT, 3, DEFAULT)),
            "ETTm2": _per_horizon(d_model=(32, 32, 32, 16), train_epochs=(DEFAULT, 1, DEFAULT, 1)),
            "Weather": _per_horizon(train_epochs=(DEFAULT, 1, DEFAULT, 1)),
            "Exchange": _per_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                     train_epochs=(DEFAULT, DEFAULT, 1, 1)),
        }),
    _tslib("Transformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {},
        "ETTm1": {"factor": DEFAULT},
        "ETTm2": {"factor": 1},
        "Weather": {},
        # TSLib's ECL Transformer script is univariate (--features S; one stored version passes --enc_in 321
        # with S, which run.py rejects: ours pass 1 as its other version does).
        "ECL": {"features": "S", "enc_in": 1, "dec_in": 1, "c_out": 1},
        "Traffic": {"train_epochs": 3},
        "Exchange": {},
        "ILI": _ILI,
    }, {**_every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's Transformer_{dataset}.sh (widths at run.py's defaults)"),
        **_every(("Weather", "ECL", "Traffic", "Exchange", "ILI"),
                 "TSLib's {dataset}_script/Transformer.sh (widths at run.py's defaults)")},
        per_horizon={"Weather": _per_horizon(train_epochs=(3, DEFAULT, DEFAULT, DEFAULT)),
                     "Exchange": {336: {"train_epochs": 1}}}),
    _tslib("Informer", {}, {"ETTh1": {}, "ECL": {}}, _tslib_sources("Informer", ("ETTh1", "ECL"))),
    _tslib("Autoformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1}, "Weather": {}, "ECL": {},
        "Traffic": {"train_epochs": 3}, "Exchange": {}, "ILI": _ILI,
    }, _tslib_sources("Autoformer", TSLIB_LONG), per_horizon={
        "Weather": {96: {"train_epochs": 2}}, "Exchange": {192: {"train_epochs": 1}, 336: {"train_epochs": 1}}}),
    TIMEMIXER,
    # TSLib's ETTh1 scripts of the rest of its zoo.
    _tslib("Crossformer", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "n_heads": DEFAULT,
                           "batch_size": DEFAULT, "dropout": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {"factor": DEFAULT}, "ETTm2": {"factor": 1},
        "Weather": {"d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"d_model": 256, "d_ff": 512, "top_k": 5, "batch_size": 16},
        "Traffic": {"label_len": 96, "top_k": 5, "n_heads": 2, "batch_size": 4},
        "Exchange": {"label_len": 96, "top_k": 5},
        # TSLib's ILI blocks after the first spell `-dropout 0.6`, which argparse rejects; ours pass
        # --dropout 0.6 at every horizon, as its first block.
        "ILI": {**_ILI, "d_model": 768, "d_ff": 768, "top_k": 5, "dropout": 0.6},
    }, _tslib_sources("Crossformer", TSLIB_LONG), per_horizon={
        "Weather": {192: {"train_epochs": 1}, 720: {"train_epochs": 1}},
        "Exchange": _per_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                 train_epochs=(DEFAULT, DEFAULT, 1, 1))}),
    _tslib("FEDformer", {}, {"ETTh1": {}, "ECL": {}}, _tslib_sources("FEDformer", ("ETTh1", "ECL"))),
    _tslib("LightTS", {}, {"ETTh1": {}, "ECL": {}}, _tslib_sources("LightTS", ("ETTh1", "ECL"))),
    _tslib("Pyraformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1}, "Weather": {}, "ECL": {},
        "Traffic": {"train_epochs": 3}, "Exchange": {},
    }, _tslib_sources("Pyraformer", TSLIB_LONG[:-1]), per_horizon={
        "Weather": {96: {"train_epochs": 2}}, "Exchange": {192: {"train_epochs": 1}, 336: {"train_epochs": 1}}}),
    _tslib("Reformer", {}, {"ETTh1": {}, "ECL": {}}, _tslib_sources("Reformer", ("ETTh1", "ECL"))),
    _tslib("TSMixer", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "learning_rate": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1},
        "Weather": {"d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"label_len": 96, "d_model": 256, "d_ff": 512, "top_k": 5},
        "Traffic": {"label_len": 96, "d_model": 512, "d_ff": 32, "learning_rate": 0.001},
    }, _tslib_sources("TSMixer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    _tslib("ETSformer", {}, {"ETTh1": {"d_layers": 2}, "ECL": {"d_layers": 2}},
           _tslib_sources("ETSformer", ("ETTh1", "ECL"))),
    _tslib("MICN", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {"label_len": 96}, "ETTh2": {"label_len": 96},
        "ETTm1": {"label_len": 96, "top_k": 5}, "ETTm2": {"label_len": 96, "top_k": 5},
        "Weather": {"label_len": 96, "d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"label_len": 96, "d_model": 256, "d_ff": 512, "top_k": 5},
        "Traffic": {"label_len": 96, "d_model": 512, "d_ff": 512, "top_k": 5},
        "Exchange": {"label_len": 96, "top_k": 5},
        "ILI": {"seq_len": 36, "label_len": 36, "d_model": 768, "d_ff": 768, "top_k": 5},
    }, _tslib_sources("MICN", TSLIB_LONG), per_horizon={
        "Weather": {192: {"train_epochs": 1}, 720: {"train_epochs": 1}},
        "Exchange": _per_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                 train_epochs=(DEFAULT, DEFAULT, 1, 1))}),
    # FiLM's scripts read longer inputs but label their runs <data>_96_<H>; ours say <data>_<seq_len>_<H>.
    _tslib("FiLM", {"batch_size": DEFAULT}, {
        "ETTh1": {"seq_len": 336}, "ETTh2": {"seq_len": 168}, "ETTm1": {"seq_len": 720}, "ETTm2": {"seq_len": 720},
        "Weather": {"seq_len": PER_DATASET},
        # Univariate, as TSLib's ECL FiLM script (--features S; its --enc_in 321 with S is rejected by run.py).
        "ECL": {"features": "S", "seq_len": 192, "enc_in": 1, "dec_in": 1, "c_out": 1, "batch_size": 4},
        "Traffic": {"seq_len": 720, "batch_size": 2},
        "Exchange": {"seq_len": PER_DATASET},
        "ILI": {"seq_len": 60, "label_len": 18},
    }, {d: f"{source} (model_id relabelled)" for d, source in _tslib_sources("FiLM", TSLIB_LONG).items()},
        per_horizon={"Weather": {h: {"seq_len": h} for h in LONG_HORIZONS},
                     "Exchange": _per_horizon(seq_len=(384, 384, 720, 720))}),
    ModelRecipe("Nonstationary_Transformer", {
        **_TSLIB_HEAD, **_ENCODER_DECODER, **_TSLIB_TAIL, "train_epochs": DEFAULT, "p_hidden_dims": (256, 256),
        "p_hidden_layers": 2, "d_model": DEFAULT,
    }, {
        "ETTh1": {"d_model": 128}, "ETTh2": {"factor": 1},
        "ETTm1": {"factor": DEFAULT, "p_hidden_dims": (16, 16, 16, 16), "p_hidden_layers": 4},
        "ETTm2": {"factor": 1, "p_hidden_layers": 4},
        "Weather": {"p_hidden_dims": (128, 128)},
        "ECL": {"d_model": 2048},
        "Traffic": {"train_epochs": 3, "p_hidden_dims": (128, 128)},
        "Exchange": {},
        "ILI": _ILI,
    }, per_horizon={
        "ETTh2": {336: {"p_hidden_dims": (256, 256, 256, 256), "p_hidden_layers": 4}},
        "ETTm2": _per_horizon(p_hidden_dims=((256,) * 4, (256,) * 4, (16,) * 4, (16,) * 4)),
        "Weather": {96: {"train_epochs": 3, "p_hidden_dims": (256, 256)}},
        "Traffic": {336: {"p_hidden_dims": (16, 16)}},
        "Exchange": {192: {"p_hidden_dims": (64, 64, 64, 64), "p_hidden_layers": 4}, 336: {"train_epochs": 1}},
        "ILI": _per_horizon(ILI_HORIZONS, p_hidden_dims=((32, 32), (32, 32), (16, 16), (8, 8))),
    }, sources=_tslib_sources("Nonstationary_Transformer", TSLIB_LONG)),
    ModelRecipe("PAttn", {**_TSLIB_HEAD, "factor": 3, **_TSLIB_TAIL, "n_heads": PER_DATASET}, {"ETTh1": {}},
                per_horizon={"ETTh1": _per_horizon(n_heads=(2, 8, 8, 16))},
                sources={"ETTh1": "TSLib's PAttn_ETTh1.sh"}),
    ModelRecipe("MultiPatchFormer", {
        **_TSLIB_HEAD, "e_layers": 1, "d_layers": DEFAULT, "factor": DEFAULT, **_TSLIB_TAIL, "d_model": 256,
        "d_ff": 512, "top_k": DEFAULT, "n_heads": DEFAULT, "batch_size": DEFAULT,
    }, {"ETTh1": {}, **{d: {"n_heads": 8, "batch_size": 32} for d in ("ETTm1", "Weather", "ECL", "Traffic")}},
        per_horizon={"ECL": {h: {"e_layers": 2, "d_layers": 1, "factor": 3, "top_k": 5, "n_heads": DEFAULT,
                                 "batch_size": DEFAULT} for h in (192, 336, 720)}},
        sources=_tslib_sources("MultiPatchFormer", ("ETTh1", "ETTm1", "Weather", "ECL", "Traffic"))),
    ModelRecipe("TimeXer", {
        **_TSLIB_HEAD, "e_layers": PER_DATASET, "d_layers": DEFAULT, "factor": 3, **_TSLIB_TAIL,
        "d_model": DEFAULT, "d_ff": DEFAULT, "batch_size": DEFAULT, "learning_rate": DEFAULT,
    }, {
        "ETTh1": {}, "ETTh2": {"d_ff": 1024},
        "ETTm1": {"e_layers": 1, "d_model": 256, "batch_size": 4},
        "ETTm2": {"e_layers": 1, "d_layers": 1},
        "Weather": {"batch_size": 4},
        "ECL": {"batch_size": 4},
        "Traffic": {"d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.001},
    }, per_horizon={
        "ETTh1": _per_horizon(e_layers=(1, 2, 1, 1), d_model=(256, 128, 512, 256), d_ff=(DEFAULT, DEFAULT, 1024, 1024),
                              batch_size=(4, 4, 16, 16)),
        "ETTh2": _per_horizon(e_layers=(1, 1, 2, 2), d_model=(256, 256, 512, 256), batch_size=(16, DEFAULT, 4, 16)),
        "ETTm1": _per_horizon(d_ff=(DEFAULT, 256, 1024, 512)),
        "ETTm2": _per_horizon(d_model=(256, 256, 512, 512), d_ff=(DEFAULT, 1024, 1024, DEFAULT),
                              batch_size=(DEFAULT, 16, DEFAULT, DEFAULT)),
        "Weather": _per_horizon(e_layers=(1, 3, 1, 1), d_model=(256, 128, 256, 128), d_ff=(512, 1024, DEFAULT, DEFAULT)),
        "ECL": _per_horizon(e_layers=(4, 3, 4, 3), d_ff=(512, DEFAULT, DEFAULT, DEFAULT)),
        "Traffic": _per_horizon(e_layers=(3, 3, 2, 2)),
    }, sources=_tslib_sources("TimeXer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # TSLib's Koopa scripts forecast 48/96/144/192 steps (ILI: its own 24-60) from twice as many (its paper's setting).
    ModelRecipe("Koopa", {
        **{k: v for k, v in _TSLIB_HEAD.items() if k != "label_len"}, "seq_len": PER_DATASET, **_ENCODER_DECODER,
        **_TSLIB_TAIL, "learning_rate": 0.001,
    }, {d: {} for d in KOOPA}, per_horizon={
        d: {h: {"seq_len": 2 * h} for h in (ILI_HORIZONS if d == "ILI" else KOOPA_HORIZONS)} for d in KOOPA},
        horizons={d: KOOPA_HORIZONS for d in KOOPA if d != "ILI"}, sources=_tslib_sources("Koopa", KOOPA)),
    # TSLib's Mamba scripts read as many steps as they forecast (seq_len = pred_len) and pass no --dec_in;
    # ours pass it off ETT (run.py checks it against the data; Mamba does not read it).
    *(ModelRecipe(model, {
        **_TSLIB_HEAD, "seq_len": PER_DATASET, "e_layers": 2, "d_layers": 1, "enc_in": "{channels}",
        "dec_in": DEFAULT, "expand": 2, "d_ff": 16, "d_conv": 4, "c_out": "{channels}", "d_model": 128, "des": "Exp",
        "itr": 1,
    }, {d: {"d_layers": DEFAULT} if d in ("ETTh2", "ETTm1", "ETTm2") else {} if d == "ETTh1" else
        {"dec_in": "{channels}"} for d in datasets},
        per_horizon={d: {h: {"seq_len": h} for h in LONG_HORIZONS} for d in datasets},
        sources=_tslib_sources(model, datasets))
      for model, datasets in (("Mamba", TSLIB_LONG[:-1]), ("MambaSimple", ("ETTh1",)))),
    # TSLib's SegRNN scripts pass no --dec_in or --c_out; ours pass them off ETT (run.py checks them against
    # the data).
    ModelRecipe("SegRNN", {
        **{k: v for k, v in _TSLIB_HEAD.items() if k != "label_len"}, "seg_len": 24, "enc_in": "{channels}",
        "dec_in": DEFAULT, "c_out": DEFAULT, "d_model": 512, "dropout": 0.5, "learning_rate": 0.0001, "des": "Exp",
        "itr": 1,
    }, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {"seg_len": 48}, "ETTm2": {"seg_len": 48},
        "Weather": {"seg_len": 48, "dec_in": "{channels}", "c_out": "{channels}"},
        **{d: {"dec_in": "{channels}", "c_out": "{channels}", "dropout": 0, "learning_rate": 0.001}
           for d in ("ECL", "Traffic")},
    }, sources=_tslib_sources("SegRNN", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # TSLib's TiDE_ETTh1.sh passes --c_out 8 on the 7-variate file, which run.py rejects; ours pass 7.
    ModelRecipe("TiDE", {
        **_TSLIB_HEAD, "e_layers": 2, "d_layers": 2, "enc_in": "{channels}", "dec_in": "{channels}",
        "c_out": "{channels}",
        "d_model": 256, "d_ff": 256, "dropout": 0.3, "batch_size": 512, "learning_rate": 0.1, "patience": 5,
        "train_epochs": 10,
    }, {"ETTh1": {}}, sources={"ETTh1": "TSLib's TiDE_ETTh1.sh (its --c_out 8 is rejected by run.py; ours pass 7)"}),
    # WPMixer's scripts set wavelet/level/tfactor/dfactor/stride inside TSLib's model file, so TSLib runs
    # the file's defaults, as these blocks do. They read ./data/<folder>/ as model_id `wpmixer` and pass no
    # --enc_in/--dec_in/--c_out; ours read the fetched file, say <data>_<seq_len>_<H>, and pass the channels
    # off ETT (run.py checks them against the data).
    ModelRecipe("WPMixer", {
        **_TSLIB_HEAD, "seq_len": 512, "label_len": 0, "d_model": PER_DATASET, "patch_len": 16,
        "batch_size": 256, "learning_rate": PER_DATASET, "lradj": "type3", "dropout": PER_DATASET, "patience": 12,
        "train_epochs": 30, "use_amp": None, "enc_in": DEFAULT, "dec_in": DEFAULT, "c_out": DEFAULT,
    }, {
        "ETTh1": {}, "ETTh2": {},
        "ETTm1": {"patch_len": 48, "train_epochs": 80, "dropout": 0.4},
        "ETTm2": {"patch_len": 48, "train_epochs": 80, "d_model": 256},
        "Weather": {"train_epochs": 60, "dropout": 0.4, **_CHANNELS},
        "ECL": {"d_model": 32, "batch_size": 32, "train_epochs": 100, **_CHANNELS},
        "Traffic": {"seq_len": 1200, "batch_size": 16, **_CHANNELS},
    }, per_horizon={
        "ETTh1": _per_horizon(d_model=(256, 256, 256, 128),
                              learning_rate=(0.000242438, 0.000201437, 0.000132929, 0.000239762),
                              dropout=(0.4, 0.05, 0.0, 0.2)),
        "ETTh2": _per_horizon(d_model=(256, 256, 128, 128),
                              learning_rate=(0.000466278, 0.000294929, 0.000617476, 0.000810205),
                              dropout=(0.0, 0.0, 0.1, 0.4)),
        "ETTm1": _per_horizon(d_model=(256, 128, 256, 128),
                              learning_rate=(0.001277976, 0.002415901, 0.001594735, 0.002011441)),
        "ETTm2": _per_horizon(learning_rate=(0.00076587, 0.000275775, 0.000234608, 0.001039536),
                              dropout=(0.4, 0.2, 0.4, 0.4)),
        "Weather": _per_horizon(d_model=(256, 128, 128, 128), batch_size=(32, 64, 32, 128),
                                learning_rate=(0.000913333, 0.001379042, 0.000607991, 0.001470479)),
        "ECL": _per_horizon(learning_rate=(0.00328086, 0.000493286, 0.002505375, 0.001977516),
                            dropout=(0.1, 0.1, 0.2, 0.1)),
        "Traffic": _per_horizon(d_model=(16, 32, 32, 32), learning_rate=(0.0010385, 0.000567053, 0.001026715, 0.001496217),
                                dropout=(0.05, 0.05, 0.0, 0.05), train_epochs=(60, 60, 50, 60)),
    }, sources=_tslib_sources("WPMixer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # No ETTh1 script in TSLib: run.py's defaults, the setting tslib_models.csv measures them at.
    *(ModelRecipe(model, {**_TSLIB_HEAD, **_TSLIB_TAIL}, {"ETTh1": {}},
                  sources={"ETTh1": "run.py defaults (TSLib ships no ETTh1 script for it)"})
      for model in ("FreTS", "MSGNet", "SCINet", "TemporalFusionTransformer", "TimeFilter")),
    # OLinear (not in TSLib): the official repo's scripts/OLinear/<Dataset>_orthoLinear.sh (jackyue1994/OLinear),
    # every value read from them (PEMS: their 12-96 loop).
    # Their q_mat/q_out_mat files, test batch size and logging flags have no counterpart here, nor their
    # --loss_mode L1 (an L1-style loss this library does not implement: ours train on MSE).
    ModelRecipe("OLinear", {
        **{k: v for k, v in _TSLIB_HEAD.items() if k != "label_len"}, "enc_in": "{channels}",
        "dec_in": "{channels}", "c_out": "{channels}", "des": "Exp", "embed_size": 16, "d_model": 512,
        "d_ff": 512, "batch_size": 32, "learning_rate": PER_DATASET, "itr": 1, "e_layers": PER_DATASET,
        "train_epochs": PER_DATASET, "patience": PER_DATASET, "lradj": PER_DATASET, "dropout": PER_DATASET,
    }, {
        "ETTh1": {"e_layers": 2, "train_epochs": 30, "patience": 8, "lradj": "type1", "dropout": 0.2},
        "ETTh2": {"e_layers": 3, "learning_rate": 0.0002, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "ETTm1": {"e_layers": 2, "learning_rate": 0.0001, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "ETTm2": {"e_layers": 1, "learning_rate": 0.0001, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "Weather": {"e_layers": 2, "learning_rate": 0.001, "train_epochs": 30, "patience": 5, "lradj": "type3",
                    "dropout": 0.0},
        "Solar": {"e_layers": 2, "learning_rate": 0.0005, "patience": 5, "lradj": "type1", "dropout": 0.0},
        "ECL": {"e_layers": 3, "learning_rate": 0.0005, "patience": 5, "lradj": "cosine", "dropout": 0.0},
        **{name: {"e_layers": 3, "learning_rate": 0.0005, "train_epochs": 40, "patience": 10, "lradj": "cosine",
                  "dropout": 0.0} for name in ("PEMS03", "PEMS04", "PEMS08")},
        "Traffic": {"e_layers": 3, "learning_rate": 0.0005, "train_epochs": 50, "patience": 5, "lradj": "cosine",
                    "dropout": 0.0},
        "Exchange": {"e_layers": 2, "learning_rate": 0.0001, "train_epochs": 1, "patience": 8, "lradj": "type1",
                     "dropout": 0.0},
    }, per_horizon={
        "ETTh1": _per_horizon(learning_rate=(0.0005, 0.0005, 0.0005, 0.0001)),
        "ETTh2": _per_horizon(dropout=(0.2, 0.2, 0.2, 0.3)),
        "ETTm1": _per_horizon(dropout=(0.1, 0.1, 0.1, 0.2)),
        "ETTm2": _per_horizon(dropout=(0.2, 0.2, 0.2, 0.3)),
        "Solar": _per_horizon(train_epochs=(40, 30, 40, 30)),
        "ECL": _per_horizon(train_epochs=(30, 50, 50, 50)),
        "Exchange": _per_horizon(d_model=(256, 128, 256, 256), d_ff=(256, 128, 256, 256), batch_size=(64, 32, 64, 32)),
    }, comments=(
        "OLinear recipe: the official repo's scripts (jackyue1994/OLinear, scripts/OLinear/), d_ff = d_model.",
        "Their --loss_mode L1 (an L1-style loss) is not implemented here: these runs train on --loss MSE.",
    ), sources={**_every(("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04",
                          "PEMS08", "Traffic", "Exchange"),
                         "the official OLinear repo's scripts/OLinear/{dataset}_orthoLinear.sh")}),
    _timemixer_pp(TIMEMIXER),
)

# CAPS per dataset, as the official caps.sh:
#   dataset: (batch_size, grad_accum, random_channel_dropout, weight_decay)
CAPS_SETTINGS: dict[str, tuple[int, int, int, float]] = {
    "ETTh1":   (32,  1, 1, 0.1),
    "ETTh2":   (32,  1, 1, 0.1),
    "ETTm1":   (32,  1, 1, 0),
    "ETTm2":   (32,  1, 1, 0),
    "Weather": (32,  1, 1, 0.1),
    "Solar":   (8,   4, 0, 0),
    "ECL":     (2,  16, 0, 0),
    "PEMS03":  (8,   4, 0, 0),
    "PEMS04":  (8,   4, 0, 0),
    "PEMS08":  (8,   4, 0, 0),
}

CAPS = ModelRecipe(
    "CAPS",
    {
        "task_name": "long_term_forecast", "is_training": 1, "root_path": "{root_path}",
        "data_path": "{data_path}", "model_id": "{model_id}", "model": "{model}", "data": "{data}",
        "features": "M", "seq_len": 96, "label_len": 0, "pred_len": "{pred_len}", "enc_in": "{channels}",
        "dec_in": "{channels}", "c_out": "{channels}", "d_model": 0, "n_heads": 4, "e_layers": 3, "dropout": 0,
        "time_emb_dim": 4, "random_channel_dropout": PER_DATASET, "batch_size": PER_DATASET,
        "grad_accum": PER_DATASET, "learning_rate": 0.0005, "optimizer": "adamw", "weight_decay": PER_DATASET,
        "lradj": "onecycle", "pct_start": 0, "max_grad_norm": 1, "train_epochs": 100, "patience": 12,
        "use_amp": None, "amp_dtype": "bf16", "seed": 2026, "des": "Exp", "itr": 1,
    },
    {name: {"random_channel_dropout": dropout, "batch_size": batch, "grad_accum": accum, "weight_decay": decay}
     for name, (batch, accum, dropout, decay) in CAPS_SETTINGS.items()},
    comments=(
        "CAPS recipe (the paper and the official caps.sh): AdamW, OneCycle",
        "stepped per optimiser step with no warm-up (pct_start {pct_start}) and no momentum cycling, {amp_dtype} "
        "autocast on",
        "CUDA (ignored on CPU), gradient clipping at norm {max_grad_norm} after unscaling, correct gradient "
        "accumulation",
        "(the effective batch is batch_size x grad_accum), {train_epochs} epochs, patience {patience}, seed {seed}.",
        "Widths follow the official rule (--d_model {d_model}); --time_emb_dim {time_emb_dim} uses the 4 hourly "
        "time features.",
    ),
    summary="{name}: batch {batch_size} x accumulation {grad_accum}, channel dropout {random_channel_dropout}, "
            "weight decay {weight_decay}, lr {learning_rate}.",
    tslib_names=False,
    fetch=True,
    variant_slot="random_channel_dropout",
)

MODELS: dict[str, ModelRecipe] = {m.model: m for m in (*BASELINES, CAPS)}

TABLE2 = ("Weather", "Solar", "ECL", "ETTh1", "ETTh2", "ETTm1", "ETTm2")  # the paper's attention ablation
TABLE3 = ("Weather", "ETTh1", "ETTh2", "ETTm1", "ETTm2")  # the paper's path ablation
_SOFTMAX: Flags = {"caps_attn": "softmax", "caps_impl": "naive"}

CAPS_DATASETS = tuple(CAPS_SETTINGS)

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("LinAttn+RoPE", "CAPS", {"caps_paths": "none", "learning_rate": 0.0006}, "_LinAttnRoPE",
            ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04", "PEMS08"),
            "LinAttn_RoPE.sh",
            ("LinAttn+RoPE baseline (Tables 1-2): plain causal linear attention q.k with RoPE, no paths;",
             "lr {learning_rate} as the official caps_baseline.sh.")),
    # The cited linear attention (issue 19 hazards): phi = elu + 1 and the normaliser, RoPE on the numerator.
    Variant("LinAttn+RoPE (normalised)", "CAPS", {"caps_paths": "none", "caps_attn": "normalised",
                                                 "learning_rate": 0.0006}, "_LinAttnRoPENorm",
            ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04", "PEMS08"),
            "LinAttn_RoPE_normalised.sh",
            ("LinAttn+RoPE as Katharopoulos et al.'s linear attention, which the paper cites: phi(x) = elu(x) + 1",
             "features and the causal normaliser, RoPE on the numerator (layers/CAPS_Attention.md, Hazards);",
             "lr {learning_rate} as the LinAttn+RoPE row.")),
    Variant("Attn+RoPE", "CAPS", {**_SOFTMAX, "caps_paths": "none"}, "_AttnRoPE", TABLE2, "Attn_RoPE.sh",
            ("Attn+RoPE (Table 2): causal softmax attention with RoPE, no paths (quadratic: --caps_impl {caps_impl}).",)),
    Variant("Pure Softmax", "CAPS", {**_SOFTMAX, "caps_paths": "none", "caps_rope": "none"}, "_PureSoftmax", TABLE2,
            "Pure_Softmax.sh",
            ("Pure Softmax (Table 2): causal softmax attention, no RoPE, no paths (quadratic: --caps_impl {caps_impl}).",)),
    Variant("CAPS (Softmax)", "CAPS", {**_SOFTMAX, "caps_paths": "123"}, "_CAPSSoftmax", TABLE2, "CAPS_Softmax.sh",
            ("CAPS (Softmax) (Table 2): the three-path scores inside a causal softmax (quadratic: --caps_impl {caps_impl}).",)),
    Variant("CAPS w/o Path1", "CAPS", {"caps_paths": "23"}, "_woPath1", TABLE3, "CAPS_wo_Path1.sh",
            ("CAPS w/o Path 1, Riemann softmax (Table 3).",)),
    Variant("CAPS w/o Path2", "CAPS", {"caps_paths": "13"}, "_woPath2", TABLE3, "CAPS_wo_Path2.sh",
            ("CAPS w/o Path 2, prefix product (Table 3).",)),
    Variant("CAPS w/o Path3", "CAPS", {"caps_paths": "12"}, "_woPath3", TABLE3, "CAPS_wo_Path3.sh",
            ("CAPS w/o Path 3, Clock baseline (Table 3).",)),
    # The time-mark hazard (issue 19): TSLib's timeF marks as given instead of the per-window normalisation.
    Variant("CAPS (raw marks)", "CAPS", {"caps_mark_norm": "raw"}, "_RawMarks", CAPS_DATASETS, "CAPS_raw_marks.sh",
            ("CAPS with --caps_mark_norm {caps_mark_norm}: the time marks as TSLib gives them (within [-0.5, 0.5])",
             "instead of normalised per window, where near-constant marks reach 1e3 (layers/CAPS_Attention.md).")),
    # The official code's arithmetic, then its arithmetic and its training loop (issue: where the paper's
    # numbers come from): CAPS, CAPS (official numerics) and CAPS (official) separate the two.
    Variant("CAPS (official numerics)", "CAPS", {"caps_numerics": "official"}, "_OfficialNumerics", CAPS_DATASETS,
            "CAPS_official_numerics.sh",
            ("CAPS with the official code's arithmetic (--caps_numerics {caps_numerics}; README, CAPS) and our loop.",)),
    Variant("CAPS (official)", "CAPS", {"train_loop": "official", "caps_numerics": "official"}, "_Official",
            CAPS_DATASETS, "CAPS_official.sh",
            ("CAPS as the official code trains it: --caps_numerics {caps_numerics} and --train_loop {train_loop}",
             "(docs/tslib_differences.md): AdamW, OneCycle stepped per micro-batch with its default momentum",
             "cycling (beta1 0.85-0.95), clipping at norm {max_grad_norm} before AMP unscaling, a GradScaler under",
             "{amp_dtype} autocast (CUDA), only the last micro-batch of each accumulation group applied;",
             "{train_epochs} epochs, patience {patience}, seed {seed}, lr {learning_rate}."),
            base_comments=False),
)}

RECIPES = RecipeBook(DATASETS, MODELS, VARIANTS, env={"CUDA_VISIBLE_DEVICES": "0"})


# TSLib's other tasks: imputation, anomaly detection, classification and short-term forecasting.
# `scripts/<task>/**` are generated from `TASK_RECIPES` as `scripts/long_term_forecast/**` are from `RECIPES`:
# a task recipe holds a model's flags in script order, per-dataset values and, where one dataset runs several
# blocks, one entry per block (a mask rate, a width), each replacing values in place. Runners read it with
# `TASK_RECIPES.argv(task, model, dataset, block)`.

TASKS = ("imputation", "anomaly_detection", "classification", "short_term_forecast")
MASK_RATES = (0.125, 0.25, 0.375, 0.5)  # TSLib's imputation scripts run one block per rate
M4_PATTERNS = ("Monthly", "Yearly", "Quarterly", "Weekly", "Daily", "Hourly")  # most M4 scripts' order
M4_DAILY_FIRST = ("Monthly", "Yearly", "Quarterly", "Daily", "Weekly", "Hourly")  # TimesNet's, MICN's ... order
# TSLib's classification scripts run the first ten; the registry also lists BasicMotions (a small test set).
UEA_SCRIPT_SETS = tuple(name for name in UEA_DATASETS if name != "BasicMotions")
# The registry's group name that fetches the M4 files (`python -m data_provider.fetch m4`).
M4_FETCH = next(name for name in DATASET_GROUPS if name == "m4")


@dataclass(frozen=True)
class TaskData:
    """One dataset of a task's scripts: the values its blocks fill in and where its scripts lie."""

    name: str
    fields: dict[str, str | int]  # {placeholder: value}: root_path, data_path, data, channels, id, pattern
    folder: str  # scripts/<task>/<folder>/ ("" for the task folder itself)
    file: str  # TSLib's script name, "{model}" filled
    fetch: str = ""  # `python -m data_provider.fetch NAME`; "" when it cannot be fetched


@dataclass(frozen=True)
class TaskRecipe:
    """One model's blocks of one task: flags in script order, per-dataset values (its keys are the datasets,
    in script order) and per-block values for datasets that run several blocks."""

    model: str
    flags: Flags
    per_dataset: dict[str, Flags]
    per_block: dict[str, tuple[Flags, ...]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # dataset -> where ours differs from TSLib's block
    comments: tuple[str, ...] = ()  # atop the script
    file: str = ""  # a script of its own under scripts/<task>/ (CAPS), else TSLib's name per dataset
    fetch: bool = False  # the script fetches its datasets first


@dataclass(frozen=True)
class TaskBook:
    """The task datasets and recipes, and the argv of each (task, model, dataset, block)."""

    datasets: dict[str, dict[str, TaskData]]
    recipes: dict[str, dict[str, TaskRecipe]]
    env: dict[str, str] = field(default_factory=dict)

    def task(self, name: str) -> str:
        if name not in self.recipes:
            raise UserInputError(f"unknown task {name!r}; choose from {', '.join(self.recipes)}")
        return name

    def models(self, task: str) -> list[str]:
        """The models with blocks for `task`, in table order."""
        return list(self.recipes[self.task(task)])

    def recipe(self, task: str, model: str) -> TaskRecipe:
        recipes = self.recipes[self.task(task)]
        if model not in recipes:
            raise UserInputError(f"{model} has no {task} recipe; choose from {', '.join(recipes)}")
        return recipes[model]

    def model_datasets(self, task: str, model: str) -> list[str]:
        """The datasets `model` runs `task` on, in script order."""
        return list(self.recipe(task, model).per_dataset)

    def _default_blocks(self, task: str) -> tuple[Flags, ...]:
        return tuple({"mask_rate": rate} for rate in MASK_RATES) if task == "imputation" else ({},)

    def blocks(self, task: str, model: str, dataset: str) -> int:
        """How many blocks `model` runs on `dataset` (imputation: one per mask rate)."""
        recipe = self.recipe(task, model)
        return len(recipe.per_block.get(dataset, self._default_blocks(task)))

    def script(self, task: str, model: str, dataset: str) -> str:
        """The generated script holding `model`'s `task` blocks on `dataset`, relative to the repository root."""
        recipe, data = self.recipe(task, model), self.datasets[task][dataset]
        if recipe.file:
            return f"scripts/{task}/{recipe.file}"
        return "/".join(p for p in ("scripts", task, data.folder, data.file.format(model=model, name=data.name)) if p)

    def flags(self, task: str, model: str, dataset: str, block: int = 0) -> Flags:
        """The ordered run.py flags of one block."""
        recipe = self.recipe(task, model)
        if dataset not in recipe.per_dataset:
            raise UserInputError(f"{model} has no {task} recipe for {dataset}; it has "
                                 f"{', '.join(recipe.per_dataset)}")
        n = self.blocks(task, model, dataset)
        if not 0 <= block < n:
            raise UserInputError(f"{model} {task} on {dataset} has blocks 0..{n - 1}, not {block}")
        defaults = self._default_blocks(task)
        layers = [recipe.per_dataset[dataset], defaults[block] if block < len(defaults) else {},
                  recipe.per_block.get(dataset, ({},) * n)[block]]
        flags = dict(recipe.flags)
        for layer in layers:
            for flag, value in layer.items():
                if flag not in flags:
                    raise ValueError(f"{model} {task} on {dataset}: --{flag} is not among the recipe's flags")
                flags[flag] = value
        fields = {**self.datasets[task][dataset].fields, "model": model, "mask_rate": flags.get("mask_rate")}
        filled: Flags = {}
        for flag, value in flags.items():
            if value == PER_DATASET:
                raise ValueError(f"{model} {task} on {dataset} block {block}: --{flag} has no value")
            if value == DEFAULT:
                continue
            filled[flag] = value.format(**fields) if isinstance(value, str) and "{" in value else value
        return filled

    def argv(self, task: str, model: str, dataset: str, block: int = 0) -> list[str]:
        """The `run.py` arguments of one block, as its script runs them."""
        argv: list[str] = []
        for flag, value in self.flags(task, model, dataset, block).items():
            values = value if isinstance(value, tuple) else () if value is None else (value,)
            argv += [f"--{flag}", *map(str, values)]
        return argv

    def every_block(self, task: str | None = None) -> list[tuple[str, str, str, int]]:
        """Every (task, model, dataset, block), in table order."""
        return [(t, m, d, b) for t in ([self.task(task)] if task else self.recipes) for m in self.recipes[t]
                for d in self.recipes[t][m].per_dataset for b in range(self.blocks(t, m, d))]


def _task_datasets() -> dict[str, dict[str, TaskData]]:
    """Each task's datasets, from the long-term table (imputation) and data_provider.registry's names."""
    imputation = {}
    for name in ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "ECL", "Weather"):
        d = DATASETS[name]
        imputation[name] = TaskData(name, {"root_path": d.root_path, "data_path": d.data_path, "data": d.data,
                                           "channels": d.channels, "id": d.tslib_id or d.name},
                                    d.folder, d.tslib_file, d.fetch)
    # TSLib's anomaly scripts lie in scripts/anomaly_detection/<data>/ and read ./dataset/<folder>.
    anomaly = {info.name: TaskData(info.name, {"root_path": f"./dataset/{info.folder}", "data": info.name,
                                               "channels": info.channels, "id": info.name}, info.name, "{model}.sh")
               for info in ANOMALY_DATASETS.values()}
    uea = {name: TaskData(name, {"root_path": f"./dataset/{name}/", "id": name}, "", "{model}.sh")
           for name in UEA_SCRIPT_SETS}
    m4 = {p: TaskData(p, {"root_path": "./dataset/m4", "pattern": p, "id": f"m4_{p}"}, "", "{model}_M4.sh",
                      M4_FETCH) for p in M4_PATTERNS}
    return {"imputation": imputation, "anomaly_detection": anomaly, "classification": uea,
            "short_term_forecast": m4}


TASK_DATASETS = _task_datasets()
ETT4 = ("ETTh1", "ETTh2", "ETTm1", "ETTm2")

_IMPUTATION: Flags = {
    "task_name": "imputation", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{id}_mask_{mask_rate}", "mask_rate": PER_DATASET, "model": "{model}", "data": "{data}",
    "features": "M", "seq_len": 96, "label_len": 0, "pred_len": 0, "e_layers": 2, "d_layers": 1, "factor": 3,
    "enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}", "batch_size": 16, "d_model": 128,
    "d_ff": 128, "des": "Exp", "itr": 1, "top_k": 5, "learning_rate": 0.001,
}
_W64: Flags = {"d_model": 64, "d_ff": 64, "top_k": 3}
_W16: Flags = {"d_model": 16, "d_ff": 32, "top_k": 3}


def _imputation(model: str, per_dataset: dict[str, Flags], extra: Flags | None = None, **kw) -> TaskRecipe:
    return TaskRecipe(model, {**_IMPUTATION, **(extra or {})}, per_dataset, **kw)


IMPUTATION = (
    _imputation("TimesNet", {"ETTh1": _W16, "ETTh2": {**_W64, "d_model": 32, "d_ff": 32}, "ETTm1": _W64,
                             "ETTm2": _W64, "ECL": _W64, "Weather": _W64}),
    # TSLib's ECL DLinear script passes --enc_in/--dec_in/--c_out 7 on the 321-variate file, which run.py
    # rejects; ours pass 321.
    _imputation("DLinear", {"ETTh1": {"pred_len": 96}, "ECL": {"pred_len": 96}},
                notes={"ECL": "its --enc_in/--dec_in/--c_out 7 are rejected by run.py; ours pass 321"}),
    _imputation("iTransformer", {"ETTh2": {}, "ECL": {}}),
    _imputation("Autoformer", {d: {} for d in (*ETT4, "ECL", "Weather")}),
    _imputation("Crossformer", {"ETTh1": _W64}),
    _imputation("ETSformer", {"ECL": {"d_layers": 2}}),
    _imputation("FEDformer", {"ECL": {}}),
    _imputation("FiLM", {"ETTh1": {"pred_len": 96, **_W64}}),
    _imputation("Informer", {"ECL": {}}),
    _imputation("LightTS", {"ECL": {"pred_len": 96}}),
    _imputation("MICN", {"ETTh1": _W64},
                notes={"ETTh1": "its --conv_kernel 12 16 is not a run.py flag (TSLib's argparse rejects it too); "
                                "left out"}),
    _imputation("Nonstationary_Transformer", {"ETTh1": {}}, {"p_hidden_dims": (256, 256), "p_hidden_layers": 2}),
    _imputation("Pyraformer", {"ECL": {}}),
    _imputation("Reformer", {"ECL": {}}),
    # TSLib's TiDE_ETTh1.sh: its own setting at mask 0.125, then TimesNet's ETTh1 widths.
    _imputation("TiDE", {"ETTh1": {}}, {"dropout": DEFAULT, "patience": DEFAULT, "train_epochs": DEFAULT},
                per_block={"ETTh1": (
                    {"d_layers": 2, "factor": DEFAULT, "d_model": 256, "d_ff": 256, "des": DEFAULT, "itr": DEFAULT,
                     "top_k": DEFAULT, "learning_rate": 0.1, "dropout": 0.3, "patience": 5, "train_epochs": 10},
                    _W16, _W16, _W16)}),
    _imputation("Transformer", {d: {} for d in (*ETT4, "Weather")}),
)

_ANOMALY: Flags = {
    "task_name": "anomaly_detection", "is_training": 1, "root_path": "{root_path}", "model_id": "{id}",
    "model": "{model}", "data": "{data}", "features": "M", "seq_len": 100, "pred_len": 0, "d_model": 128,
    "d_ff": 128, "e_layers": 3, "d_layers": DEFAULT, "enc_in": "{channels}", "c_out": "{channels}",
    "top_k": DEFAULT, "anomaly_ratio": 1, "batch_size": 128, "train_epochs": 10,
}
_SWAT: Flags = {"top_k": 3, "train_epochs": 3}


def _anomaly(model: str, per_dataset: dict[str, Flags], **kw) -> TaskRecipe:
    return TaskRecipe(model, dict(_ANOMALY), per_dataset, **kw)


ANOMALY = (
    # TSLib's SWAT/TimesNet.sh runs eight widths x depths, all as model_id SWAT (their settings differ).
    _anomaly("TimesNet", {
        "MSL": {"d_model": 8, "d_ff": 16, "e_layers": 1, "top_k": 3, "train_epochs": 1},
        "PSM": {"d_model": 64, "d_ff": 64, "e_layers": 2, "top_k": 3, "train_epochs": 3},
        "SMAP": {"top_k": 3, "train_epochs": 3},
        "SMD": {"d_model": 64, "d_ff": 64, "e_layers": 2, "top_k": 5, "anomaly_ratio": 0.5},
        "SWAT": _SWAT,
    }, per_block={"SWAT": tuple({"d_model": w, "d_ff": w, "e_layers": e} for e in (3, 2) for w in (8, 16, 32, 64))}),
    _anomaly("DLinear", {"MSL": {"pred_len": 100}, "PSM": {"pred_len": 100, "train_epochs": 3}}),
    _anomaly("iTransformer", {"MSL": {}}),
    _anomaly("Autoformer", {"MSL": {}, "PSM": {"train_epochs": 3}, "SMAP": {"train_epochs": 3},
                            "SMD": {"anomaly_ratio": 0.5}, "SWAT": _SWAT}),
    _anomaly("Crossformer", {"MSL": {}}),
    _anomaly("ETSformer", {"MSL": {"pred_len": 100, "d_layers": 3}}),
    _anomaly("FEDformer", {"MSL": {}}),
    _anomaly("FiLM", {"MSL": {"pred_len": 100, "batch_size": 32}}),
    _anomaly("Informer", {"MSL": {}}),
    _anomaly("LightTS", {"MSL": {}}),
    _anomaly("MICN", {"MSL": {}}),
    _anomaly("Pyraformer", {"MSL": {}}),
    _anomaly("Reformer", {"MSL": {}}),
    _anomaly("Transformer", {"MSL": {}, "PSM": {"train_epochs": 3}, "SMAP": {"train_epochs": 3},
                             "SMD": {"anomaly_ratio": 0.5}, "SWAT": _SWAT}),
)

# Classification blocks pass no --seq_len/--enc_in of their own (the experiment reads them from the files);
# the few that do keep them in place.
_CLASSIFICATION: Flags = {
    "task_name": "classification", "is_training": 1, "root_path": "{root_path}", "model_id": "{id}",
    "model": "{model}", "data": "UEA", "e_layers": 3, "d_layers": DEFAULT, "batch_size": 16, "d_model": 128,
    "d_ff": 256, "top_k": 3, "num_kernels": DEFAULT, "des": "Exp", "itr": 1, "learning_rate": 0.001,
    "train_epochs": 100, "seq_len": DEFAULT, "pred_len": DEFAULT, "c_out": DEFAULT, "patience": 10,
    "enc_in": DEFAULT,
}


def _classification(model: str, every: Flags | None = None, per_dataset: dict[str, Flags] | None = None,
                    **kw) -> TaskRecipe:
    flags = {**_CLASSIFICATION, **(every or {})}
    return TaskRecipe(model, flags, {d: (per_dataset or {}).get(d, {}) for d in UEA_SCRIPT_SETS}, **kw)


def _timesnet_uea(e_layers: int, d_model: int, d_ff: int, top_k: int = 3, **extra) -> Flags:
    return {"e_layers": e_layers, "d_model": d_model, "d_ff": d_ff, "top_k": top_k, **extra}


CLASSIFICATION = (
    _classification("TimesNet", {"train_epochs": 30}, {
        "EthanolConcentration": _timesnet_uea(2, 16, 32),
        "FaceDetection": _timesnet_uea(2, 64, 256, num_kernels=4),
        "Handwriting": _timesnet_uea(2, 32, 64),
        "Heartbeat": _timesnet_uea(3, 16, 32, 1),
        "JapaneseVowels": _timesnet_uea(2, 16, 32, train_epochs=60),
        "PEMS-SF": _timesnet_uea(6, 64, 64),
        "SelfRegulationSCP1": _timesnet_uea(3, 16, 32),
        "SelfRegulationSCP2": _timesnet_uea(3, 32, 32),
        "SpokenArabicDigits": _timesnet_uea(2, 32, 32, 2),
        "UWaveGestureLibrary": _timesnet_uea(2, 32, 64),
    }),
    _classification("DLinear"),
    # TSLib's iTransformer.sh passes --enc_in 3 everywhere (the experiment sets it from the files).
    _classification("iTransformer", {"enc_in": 3}, {"EthanolConcentration": {"d_model": 2048}}),
    _classification("PatchTST"),
    _classification("Autoformer"),
    _classification("Crossformer"),
    _classification("ETSformer", {"d_layers": 3}),
    _classification("FEDformer"),
    # seq_len/pred_len 1751 on EthanolConcentration as TSLib's (the experiment sets seq_len from the files).
    _classification("FiLM", per_dataset={"EthanolConcentration": {"seq_len": 1751, "pred_len": 1751}}),
    _classification("Informer"),
    _classification("LightTS"),
    _classification("MICN", per_dataset={"EthanolConcentration": {"c_out": 3}}),
    _classification("Pyraformer", {"batch_size": 4}),
    _classification("Reformer"),
    _classification("Transformer"),
)

_SHORT: Flags = {
    "task_name": "short_term_forecast", "is_training": 1, "root_path": "{root_path}",
    "seasonal_patterns": "{pattern}", "model_id": "{id}", "model": "{model}", "data": "m4", "features": "M",
    "e_layers": 2, "d_layers": 1, "factor": 3, "enc_in": 1, "dec_in": 1, "c_out": 1, "batch_size": 16,
    "d_model": 512, "d_ff": DEFAULT, "top_k": DEFAULT, "des": "Exp", "itr": 1, "learning_rate": 0.001,
    "train_epochs": DEFAULT, "patience": DEFAULT, "loss": "SMAPE",
}
# TimesNet's M4 widths (d_model, d_ff) per pattern, shared by TSLib's MICN, Crossformer and FiLM scripts.
_M4_WIDTHS = {"Monthly": (32, 32), "Yearly": (16, 32), "Quarterly": (64, 64), "Daily": (16, 16),
              "Weekly": (32, 32), "Hourly": (32, 32)}


def _short(model: str, every: Flags | None = None, per_dataset: dict[str, Flags] | None = None,
           order: tuple[str, ...] = M4_PATTERNS, flags: Flags | None = None, **kw) -> TaskRecipe:
    return TaskRecipe(model, {**(flags or _SHORT), **(every or {})},
                      {p: (per_dataset or {}).get(p, {}) for p in order}, **kw)


def _m4_widths(model: str) -> TaskRecipe:
    return _short(model, {"top_k": 5}, {p: {"d_model": m, "d_ff": f} for p, (m, f) in _M4_WIDTHS.items()},
                  M4_DAILY_FIRST)


SHORT_TERM = (
    _m4_widths("TimesNet"),
    _short("DLinear"),
    _short("iTransformer"),
    _short("Autoformer"),
    _m4_widths("Crossformer"),
    # TSLib's Monthly ETSformer block reads ../dataset/m4 (a typo); ours read ./dataset/m4 as its others.
    _short("ETSformer", {"d_layers": 2}, notes={"Monthly": "its --root_path ../dataset/m4 is a typo; ours read "
                                                           "./dataset/m4"}),
    _short("FEDformer"),
    _m4_widths("FiLM"),
    _short("Informer"),
    _short("LightTS"),
    _m4_widths("MICN"),
    # TSLib's Mamba_M4.sh passes no --d_layers, --factor or --dec_in, and Mamba's --expand/--d_conv in the middle.
    _short("Mamba", flags={
        **{k: v for k, v in _SHORT.items() if k in ("task_name", "is_training", "root_path", "seasonal_patterns",
                                                    "model_id", "model", "data", "features")},
        "e_layers": 2, "enc_in": 1, "expand": 2, "d_ff": 16, "d_conv": 4, "c_out": 1, "batch_size": 16,
        "d_model": 128, "des": "Exp", "itr": 1, "learning_rate": 0.001, "loss": "SMAPE"}),
    _short("Nonstationary_Transformer", flags={**_SHORT, "p_hidden_dims": (256, 256), "p_hidden_layers": 2}),
    _short("Pyraformer"),
    _short("Reformer"),
    # TSLib's TSMixer_M4.sh runs --model MTSMixer, a model TSLib does not have; ours run TSMixer.
    _short("TSMixer", {"d_model": 16}, notes={p: "TSLib's block says --model MTSMixer (absent from TSLib); ours "
                                                 "run TSMixer" for p in M4_PATTERNS}),
    _short("TimeMixer", {"e_layers": 4, "batch_size": 128, "d_model": 32, "learning_rate": 0.01,
                         "train_epochs": 50, "patience": 20, "down_sampling_layers": 1,
                         "down_sampling_method": "avg", "down_sampling_window": 2},
           {p: {"d_ff": f} for p, f in zip(M4_DAILY_FIRST, (32, 32, 64, 16, 32, 32), strict=True)},
           M4_DAILY_FIRST,
           flags={k: v for k, v in _SHORT.items() if k != "loss"} | {"down_sampling_layers": DEFAULT,
                                                                      "down_sampling_method": DEFAULT,
                                                                      "down_sampling_window": DEFAULT,
                                                                      "loss": "SMAPE"}),
    _short("Transformer"),
)


#: CAPS's own architecture on every task (the long-term recipe's: official width rule, 4 heads, 3 layers, no
#: dropout); the flags of the task's iTransformer block that CAPS does not read are left out.
CAPS_TASK_ARCHITECTURE: Flags = {name: CAPS.flags[name] for name in ("d_model", "n_heads", "e_layers", "dropout")}
NOT_READ_BY_CAPS = ("d_layers", "d_ff", "factor", "top_k", "num_kernels")


def _caps(task: str, base: TaskRecipe, datasets: tuple[str, ...], file: str) -> TaskRecipe:
    """CAPS under the task's TSLib loop: the flags of the task's iTransformer blocks (data, batch, learning
    rate, epochs; iTransformer's values on a dataset TSLib runs it on, else those of its first dataset) with
    CAPS's own architecture (`CAPS_TASK_ARCHITECTURE`) in place of iTransformer's widths."""
    first = next(iter(base.per_dataset))
    fetch = any(TASK_DATASETS[task][d].fetch for d in datasets)
    replaced = {**CAPS_TASK_ARCHITECTURE, **{name: DEFAULT for name in NOT_READ_BY_CAPS}}
    flags = {**base.flags, **{k: v for k, v in replaced.items() if k in base.flags}}
    flags = {**flags, **{k: v for k, v in CAPS_TASK_ARCHITECTURE.items() if k not in flags}, "caps_direction": "auto"}

    def own(values: Flags) -> Flags:
        return {k: v for k, v in values.items() if k not in replaced}

    return TaskRecipe("CAPS", flags, {d: own(base.per_dataset.get(d, base.per_dataset[first])) for d in datasets},
                      comments=(
        f"TSLib's {task} loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its {first} "
        "values on datasets TSLib runs no iTransformer on),",
        "with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, "
        "3 layers, no dropout)",
        "and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting "
        "(layers/CAPS_Attention.md).",
    ), file=file, fetch=fetch)


def _table(recipes: tuple[TaskRecipe, ...]) -> dict[str, TaskRecipe]:
    return {r.model: r for r in recipes}


_TASK_TABLES = {"imputation": _table(IMPUTATION), "anomaly_detection": _table(ANOMALY),
                "classification": _table(CLASSIFICATION), "short_term_forecast": _table(SHORT_TERM)}
for _task, _file in (("imputation", "CAPS.sh"), ("anomaly_detection", "CAPS.sh"), ("classification", "CAPS.sh"),
                     ("short_term_forecast", "CAPS_M4.sh")):
    _TASK_TABLES[_task]["CAPS"] = _caps(_task, _TASK_TABLES[_task]["iTransformer"],
                                        tuple(TASK_DATASETS[_task]), _file)

TASK_RECIPES = TaskBook(TASK_DATASETS, _TASK_TABLES, env={"CUDA_VISIBLE_DEVICES": "0"})
