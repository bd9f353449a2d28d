"""The machinery of the recipes of TSLib's other tasks (imputation, anomaly detection, classification,
short-term forecasting): a task recipe holds a model's flags in script order, per-dataset values and, where
one dataset runs several blocks, one entry per block (a mask rate, a width), each replacing values in place.
Runners read it with `TASK_RECIPES.argv(task, model, dataset, block)` (`compare.recipes.tables`); the tables are
data (`compare.recipes.task_datasets`, `compare.recipes.task_models`).

A set TSLib's scripts never run (the real labelled series the packages ship: Yahoo, MITDB, sktime_monthly) *stands
in* for one of TSLib's: every model with a block on that dataset runs the same block on the set, with the set's own
data flags (`TaskData.flags`: its format, file, horizon, a window that fits its splits) in place. Such sets have
no generated scripts; `python -m compare ... --dry-run` prints their run.py commands. A user's own file
(`python -m compare --task ... --data_path FILE --name NAME`, `compare.grid.own_data`) stands in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compare.recipes.recipe_book import DEFAULT, PER_DATASET, Flags
from utils.errors import UserInputError

__all__ = ["MASK_RATES", "TaskBook", "TaskData", "TaskRecipe"]

MASK_RATES = (0.125, 0.25, 0.375, 0.5)  # TSLib's imputation scripts run one block per rate


@dataclass(frozen=True)
class TaskData:
    """One dataset of a task's scripts: the values its blocks fill in and where its scripts lie."""

    name: str
    fields: dict[str, str | int]  # {placeholder: value}: root_path, data_path, data, channels, id, pattern
    folder: str  # scripts/<task>/<folder>/ ("" for the task folder itself)
    file: str  # TSLib's script name, "{model}" filled
    fetch: str = ""  # `python -m data_provider.fetch NAME`; "" when it cannot be fetched
    stands_in: str = ""  # a set outside TSLib's scripts: the TSLib dataset whose block each model runs on it
    only: str = ""  # a set only this model's TSLib script runs (MambaSingleLayer: 20 of MambaSL.sh's 30 UEA sets)
    flags: Flags = field(default_factory=dict)  # the set's own run.py flags, replacing (or added to) the block's
    checked: bool = False  # a user's own file (`compare.grid.own_data`), checked when it was read: planning looks up nothing


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
    tslib_file: bool = False  # `file` is TSLib's own script (MambaSL.sh), not one of ours (CAPS.sh)
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
        """The datasets of `model`'s `task` scripts, in script order (the stand-in sets not included)."""
        return list(self.recipe(task, model).per_dataset)

    def recipe_dataset(self, task: str, dataset: str) -> str:
        """The dataset whose blocks a run on `dataset` takes: its `stands_in`, else itself."""
        data = self.datasets[self.task(task)].get(dataset)
        return data.stands_in if data is not None and data.stands_in else dataset

    def has_recipe(self, task: str, model: str, dataset: str) -> bool:
        """Whether `model` has a `task` block for `dataset` (for a stand-in set: for the dataset it stands in for)."""
        return self.recipe_dataset(task, dataset) in self.recipe(task, model).per_dataset

    def _default_blocks(self, task: str) -> tuple[Flags, ...]:
        return tuple({"mask_rate": rate} for rate in MASK_RATES) if task == "imputation" else ({},)

    def blocks(self, task: str, model: str, dataset: str) -> int:
        """How many blocks `model` runs on `dataset` (imputation: one per mask rate)."""
        recipe = self.recipe(task, model)
        return len(recipe.per_block.get(self.recipe_dataset(task, dataset), self._default_blocks(task)))

    def script(self, task: str, model: str, dataset: str) -> str:
        """The generated script holding `model`'s `task` blocks on `dataset`, relative to the repository root ("" for
        a stand-in set, which has none)."""
        recipe, data = self.recipe(task, model), self.datasets[task][dataset]
        if data.stands_in:
            return ""
        if recipe.file:
            return f"scripts/{task}/{recipe.file}"
        return "/".join(p for p in ("scripts", task, data.folder, data.file.format(model=model, name=data.name)) if p)

    def flags(self, task: str, model: str, dataset: str, block: int = 0) -> Flags:
        """The ordered run.py flags of one block (on a stand-in set: the block of the dataset it stands in for, with
        the set's own flags in place, a flag the block lacks appended)."""
        recipe, source = self.recipe(task, model), self.recipe_dataset(task, dataset)
        if source not in recipe.per_dataset:
            stand_in = f" (which {dataset} stands in for)" if source != dataset else ""
            raise UserInputError(f"{model} has no {task} recipe for {source}{stand_in}; it has "
                                 f"{', '.join(recipe.per_dataset)}")
        n = self.blocks(task, model, dataset)
        if not 0 <= block < n:
            raise UserInputError(f"{model} {task} on {dataset} has blocks 0..{n - 1}, not {block}")
        defaults = self._default_blocks(task)
        layers = [recipe.per_dataset[source], defaults[block] if block < len(defaults) else {},
                  recipe.per_block.get(source, ({},) * n)[block]]
        flags = dict(recipe.flags)
        for layer in layers:
            for flag, value in layer.items():
                if flag not in flags:
                    raise ValueError(f"{model} {task} on {dataset}: --{flag} is not among the recipe's flags")
                flags[flag] = value
        flags.update(self.datasets[task][dataset].flags)
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
        """Every (task, model, dataset, block) of the scripts, in table order (the stand-in sets not included)."""
        return [(t, m, d, b) for t in ([self.task(task)] if task else self.recipes) for m in self.recipes[t]
                for d in self.recipes[t][m].per_dataset for b in range(self.blocks(t, m, d))]
