"""The run recipes: every model's `run.py` flags per dataset and horizon, and every CAPS variant as a
named flag set over the CAPS recipe. The one table a recipe fact is written in, put together here from
its machinery and its data:

- machinery: the types, the lookup of datasets and rows under any of their names and the composition of a
  block's flags (`compare.recipes.recipe_book`: `RecipeBook`, `ModelRecipe`, `Variant`, `Dataset`, `name_key`) and
  the same for TSLib's other tasks (`compare.recipes.task_book`: `TaskBook`, `TaskRecipe`, `TaskData`);
- data (`compare.recipes`): the benchmarks (`datasets`), the models in TSLib's script pattern
  (`tslib_models`, written with `tslib_blocks`), the rest of the zoo (`zoo_models`), CAPS and its variants
  (`caps`), and the other tasks' datasets and recipes (`task_datasets`, `task_models`).

`scripts/long_term_forecast/**/*.sh` are generated from `RECIPES` (`python -m compare.scripts`) and
`compare.run.runner` and the benchmarks read it directly (`RECIPES.recipe(row, dataset, pred_len)`). TSLib's
other tasks (imputation, anomaly detection, classification, short-term forecasting) are `TASK_RECIPES`
(`TASK_RECIPES.argv(task, model, dataset, block)`), which writes `scripts/<task>/**`. How a recipe is
written (`PER_DATASET`, `DEFAULT`, placeholders, variant slots): `compare.recipes.recipe_book`.

To add a model: a `ModelRecipe` in `recipe_data/tslib_models.py` or `recipe_data/zoo_models.py` (and its
`models/<Name>.py`). To add a variant: a `Variant` in `recipe_data/caps.py`. Then `python -m compare.scripts`
writes their scripts.
"""

from __future__ import annotations

from compare.recipes.caps import CAPS, CAPS_SETTINGS, VARIANTS
from compare.recipes.datasets import DATASETS
from compare.recipes.recipe_book import (
    DEFAULT,
    PER_DATASET,
    SCRIPTS_DIR,
    Dataset,
    ModelRecipe,
    Recipe,
    RecipeBook,
    Variant,
    name_key,
)
from compare.recipes.task_book import MASK_RATES, TaskBook, TaskData, TaskRecipe
from compare.recipes.task_datasets import TASK_DATASETS, TASKS
from compare.recipes.task_models import CAPS_TASK_ARCHITECTURE, NOT_READ_BY_CAPS, TASK_TABLES
from compare.recipes.tslib_models import TSLIB_SCRIPT_MODELS
from compare.recipes.zoo_models import ZOO_MODELS

__all__ = [
    "CAPS_SETTINGS",
    "CAPS_TASK_ARCHITECTURE",
    "DATASETS",
    "DEFAULT",
    "MASK_RATES",
    "MODELS",
    "NOT_READ_BY_CAPS",
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

#: every long-term model's recipe by name, in the table's row order (CAPS last)
MODELS: dict[str, ModelRecipe] = {m.model: m for m in (*TSLIB_SCRIPT_MODELS, *ZOO_MODELS, CAPS)}

RECIPES = RecipeBook(DATASETS, MODELS, VARIANTS, env={"CUDA_VISIBLE_DEVICES": "0"})

TASK_RECIPES = TaskBook(TASK_DATASETS, TASK_TABLES, env={"CUDA_VISIBLE_DEVICES": "0"})
