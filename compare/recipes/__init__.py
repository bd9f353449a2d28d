"""The recipe tables: every model's `run.py` flags per dataset and horizon, each CAPS variant as a named flag
set, and the recipes of TSLib's other tasks; the `.sh` scripts are generated from them. Imports run down
this list only (nothing above compare/recipes/ is imported here):

    recipe_book    the long-term types (`RecipeBook`, `ModelRecipe`, `Variant`, `Dataset`) and the lookups
    task_book      the same for the other tasks (`TaskBook`, `TaskRecipe`, `TaskData`)
    datasets       the long-term benchmarks: files, readers, horizons
    tslib_blocks   the parts TSLib's long-term scripts share
    tslib_models   the models written in TSLib's script pattern
    zoo_models     the rest of the zoo
    caps           CAPS (the paper's recipe) and its variants
    task_datasets  the other tasks' datasets
    task_models    the other tasks' recipes per model
    tables         `RECIPES` and `TASK_RECIPES`: the two tables put together, the one place readers import
    scripts        `scripts/**.sh` written (or checked) from the tables (`python -m compare.scripts`)
"""
