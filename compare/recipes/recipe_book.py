"""The machinery of the long-term forecasting recipes: the types a recipe is written in, the lookup of a
dataset or row under any of its names, and the composition of one `run.py` block's flags from a model's
flags, its dataset's and horizon's values and a variant's flag set.

A model's `flags` list every flag in script order; a value of `PER_DATASET` must be set by each
dataset's entry, a value of `DEFAULT` leaves the flag out of the block (run.py's default applies; a
dataset or horizon entry may set it, e.g. one horizon's `--train_epochs`), and `{placeholders}` are filled
from the dataset and horizon (`{root_path}`, `{data_path}`, `{data}`, `{channels}`, `{model}`, `{model_id}`,
`{pred_len}`). Dataset and horizon entries replace a flag's value in place, so every block keeps the model's
flag order. A variant's flags replace the base's value in place too; flags the base lacks go after the
base's `variant_slot`.

A user's own file (`compare.grid.own_data`) is a `Dataset` that *stands in* for a table dataset: every row runs its
block of that dataset at the nearest of its horizons, with the placeholders filled from the file (its folder,
name, `--data custom`, its number of variates, the requested horizon, a model_id starting with the user's name)
and the file's own flags (`--freq`, `--target`) in place.

The tables themselves are data (`compare.recipes`); `compare.recipes.tables` puts them into `RECIPES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from utils.errors import UserInputError

__all__ = [
    "DEFAULT",
    "LONG_HORIZONS",
    "PER_DATASET",
    "SCRIPTS_DIR",
    "Dataset",
    "Flags",
    "ModelRecipe",
    "Recipe",
    "RecipeBook",
    "Value",
    "Variant",
    "name_key",
]

Value = str | int | float | tuple | None  # None: a switch (`--use_amp`); a tuple: several values (nargs="+")
Flags = dict[str, Value]

PER_DATASET = "<per dataset>"
DEFAULT = "<run.py default>"
SCRIPTS_DIR = "scripts/long_term_forecast"
LONG_HORIZONS = (96, 192, 336, 720)


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
    # A user's own file (`compare.grid.own_data`): the table dataset whose recipe each model runs on it, and its own
    # run.py flags (--freq, --target), replacing (or added to) the recipe's.
    stands_in: str = ""
    flags: Flags = field(default_factory=dict)

    def keys(self) -> set[str]:
        """Every normalised name the dataset is known by (table name, model_id prefix, fetch name, file; a user's
        own file by its name alone, so its file name never shadows a table dataset)."""
        if self.stands_in:
            return {name_key(self.name)}
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
        """The generated script that holds `row` on `dataset`, relative to the repository root ("" for a user's own
        file, which has none)."""
        row, data = self.row_name(row), self.dataset(dataset)
        if data.stands_in:
            return ""
        if row in self.variants:
            return f"{SCRIPTS_DIR}/CAPS_ablation/{self.variants[row].file}"
        recipe = self.models[row]
        template = data.tslib_file if recipe.tslib_names else "{model}_{name}.sh"
        return f"{SCRIPTS_DIR}/{data.folder}/{template.format(model=row, name=data.name)}"

    def block_of(self, row: str, dataset: str, pred_len: int) -> tuple[Dataset, int]:
        """(the table dataset, the horizon) whose block `row` runs on `dataset` at `pred_len`: the dataset and
        horizon themselves, or for a user's own file the dataset it stands in for and the nearest of that
        dataset's horizons (the shorter on a tie); UserInputError when there is none."""
        row, data = self.row_name(row), self.dataset(dataset)
        source = self.datasets[data.stands_in] if data.stands_in else data
        if source.name not in self.row_datasets(row):
            stand_in = f" (which {data.name} stands in for)" if data.stands_in else ""
            raise UserInputError(f"{row} has no recipe for {source.name}{stand_in}; it has "
                                 f"{', '.join(self.row_datasets(row))}")
        horizons = self.horizons(row, source.name)
        if data.stands_in:
            return source, min(horizons, key=lambda h: (abs(h - pred_len), h))
        if pred_len not in horizons:
            raise UserInputError(f"{row} on {data.name} has no horizon {pred_len}; choose from "
                                 f"{' '.join(map(str, horizons))}")
        return source, pred_len

    def flags(self, row: str, dataset: str, pred_len: int) -> Flags:
        """The ordered run.py flags (name -> value) of one block (on a user's own file: the block of the dataset
        and horizon it borrows, `block_of`, filled with the file's data and horizon, its own flags in place)."""
        row, data = self.row_name(row), self.dataset(dataset)
        variant = self.variants.get(row)
        recipe = self.models[variant.base if variant else row]
        source, block = self.block_of(row, dataset, pred_len)
        flags = dict(recipe.flags)
        overrides = [recipe.per_dataset[source.name], recipe.per_horizon.get(source.name, {}).get(block, {})]
        for layer in overrides:
            for flag, value in layer.items():
                if flag not in flags:
                    raise ValueError(f"{recipe.model} on {source.name}: --{flag} is not among the recipe's flags; "
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
        filled.update(data.flags)
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
