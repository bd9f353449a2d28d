"""The run recipes: every model's `run.py` flags per dataset and horizon, and every CAPS variant as a
named flag set over the CAPS recipe. The one place a recipe fact is written.

`scripts/long_term_forecast/**/*.sh` are generated from this table (`python -m compare.scripts`) and
`compare.runner` and the benchmarks read it directly (`RECIPES.recipe(row, dataset, pred_len)`).

A model's `flags` list every flag in script order; a value of `PER_DATASET` must be set by each
dataset's entry, and `{placeholders}` are filled from the dataset and horizon (`{root_path}`,
`{data_path}`, `{data}`, `{channels}`, `{model}`, `{model_id}`, `{pred_len}`). Dataset and horizon
entries replace a flag's value in place, so every block keeps the model's flag order. A variant's flags
replace the base's value in place too; flags the base lacks go after the base's `variant_slot`.

To add a model: a `ModelRecipe` in `MODELS` (and its `models/<Name>.py`). To add a variant: a `Variant`
in `VARIANTS`. Then `python -m compare.scripts` writes their scripts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from utils.errors import UserInputError

__all__ = [
    "CAPS_SETTINGS",
    "DATASETS",
    "MODELS",
    "PER_DATASET",
    "RECIPES",
    "SCRIPTS_DIR",
    "VARIANTS",
    "Dataset",
    "ModelRecipe",
    "Recipe",
    "RecipeBook",
    "Variant",
    "name_key",
]

Value = str | int | float | None  # None: a switch (`--use_amp`)
Flags = dict[str, Value]

PER_DATASET = "<per dataset>"
SCRIPTS_DIR = "scripts/long_term_forecast"
LONG_HORIZONS = (96, 192, 336, 720)
# The official caps.sh loops PEMS horizons in this order; the paper reports 12-96.
PEMS_HORIZONS = (96, 48, 24, 12)


def name_key(name: str) -> str:
    """A name normalised for matching: `LinAttn+RoPE` -> `linattn_rope`, `solar_AL` -> `solar_al`."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


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
        if pred_len not in data.horizons:
            raise UserInputError(f"{data.name} has no horizon {pred_len}; choose from "
                                 f"{' '.join(map(str, data.horizons))}")
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
            if isinstance(value, str) and "{" in value:
                value = value.format(**fields)
            filled[flag] = value
        return filled

    def argv(self, row: str, dataset: str, pred_len: int) -> list[str]:
        """The `run.py` arguments of row `row` on `dataset` at horizon `pred_len`, as its script runs them."""
        argv: list[str] = []
        for flag, value in self.flags(row, dataset, pred_len).items():
            argv += [f"--{flag}"] if value is None else [f"--{flag}", str(value)]
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
    Dataset("Solar", "./dataset/Solar/", "solar_AL.txt", "Solar", 137, fetch="Solar", folder="Solar_script"),
    Dataset("ECL", "./dataset/electricity/", "electricity.csv", "custom", 321, fetch="electricity",
            folder="ECL_script"),
    _pems("PEMS03", 358),
    _pems("PEMS04", 307),
    _pems("PEMS08", 170),
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


def _every(datasets: tuple[str, ...], source: str) -> dict[str, str]:
    return {d: source for d in datasets}


BASELINES = (
    _tslib("DLinear", {}, {d: {} for d in ETT_AND_WEATHER}, {
        **_every(ETT_AND_WEATHER, "the DLinear_ETTh1.sh pattern (DLinear reads only moving_avg; e_layers, "
                                  "d_layers and factor are passed as TSLib does, unused)"),
        "ETTh1": "TSLib's DLinear_ETTh1.sh"}),
    _tslib("PatchTST", {"n_heads": PER_DATASET}, {
        "ETTh1": {"e_layers": 1},
        "ETTh2": {"e_layers": 3, "n_heads": 4},
        "ETTm1": {"e_layers": 1, "n_heads": 2},
        "ETTm2": {"e_layers": 3, "n_heads": 16},
        "Weather": {"e_layers": 2, "n_heads": 4},
    }, {**_every(ETT_AND_WEATHER, "TSLib-style PatchTST settings (e_layers and n_heads per dataset); not in "
                                  "our contract table"),
        "ETTh1": "TSLib's PatchTST_ETTh1.sh"},
        per_horizon={"ETTh1": {96: {"n_heads": 2}, 192: {"n_heads": 8}, 336: {"n_heads": 8}, 720: {"n_heads": 16}}}),
    _tslib("iTransformer", {"d_model": 128, "d_ff": 128}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {},
        "Weather": {"e_layers": 3, "d_model": 512, "d_ff": 512},
    }, {**_every(ETT_AND_WEATHER, "the official iTransformer repo's settings for this dataset; not in our "
                                  "contract table"),
        "ETTh1": "TSLib's iTransformer_ETTh2.sh (TSLib ships no iTransformer_ETTh1.sh)",
        "ETTh2": "TSLib's iTransformer_ETTh2.sh"}),
    _tslib("TimesNet", {"d_model": PER_DATASET, "d_ff": PER_DATASET, "top_k": 5}, {
        "ETTh1": {"d_model": 16, "d_ff": 32},
        "ETTh2": {"d_model": 32, "d_ff": 32},
        "ETTm1": {"d_model": 64, "d_ff": 64},
        "ETTm2": {"d_model": 32, "d_ff": 32},
        "Weather": {"d_model": 32, "d_ff": 32},
    }, {**_every(ETT_AND_WEATHER, "TSLib-style TimesNet widths (d_model, d_ff per dataset); not in our "
                                  "contract table"),
        "ETTh1": "TSLib's TimesNet_ETTh1.sh"}),
    _tslib("Transformer", {}, {d: {} for d in ETT_AND_WEATHER},
           _every(ETT_AND_WEATHER, "TSLib's Transformer script pattern (widths at run.py's defaults)")),
    _tslib("Informer", {}, {"ETTh1": {}}, {"ETTh1": "TSLib's Informer_ETTh1.sh"}),
    _tslib("Autoformer", {}, {"ETTh1": {}}, {"ETTh1": "TSLib's Autoformer_ETTh1.sh"}),
    # TSLib's TimeMixer_ETTh1.sh passes no d_layers or factor, label_len 0, and its training flags after the
    # common tail; its batch_size variable says 16 but the block passes 128.
    ModelRecipe("TimeMixer", {
        **_TSLIB_HEAD, "label_len": 0, "e_layers": 2, **_TSLIB_TAIL, "d_model": 16, "d_ff": 32,
        "learning_rate": 0.01, "train_epochs": 10, "patience": 10, "batch_size": 128, "down_sampling_layers": 3,
        "down_sampling_method": "avg", "down_sampling_window": 2,
    }, {"ETTh1": {}}, sources={"ETTh1": "TSLib's TimeMixer_ETTh1.sh"}),
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

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("LinAttn+RoPE", "CAPS", {"caps_paths": "none", "learning_rate": 0.0006}, "_LinAttnRoPE",
            ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04", "PEMS08"),
            "LinAttn_RoPE.sh",
            ("LinAttn+RoPE baseline (Tables 1-2): plain causal linear attention q.k with RoPE, no paths;",
             "lr {learning_rate} as the official caps_baseline.sh.")),
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
)}

RECIPES = RecipeBook(DATASETS, MODELS, VARIANTS, env={"CUDA_VISIBLE_DEVICES": "0"})
