"""The recipe tables as data: each model's and variant's flags per dataset and horizon, and the other
tasks' blocks, written with the types of `compare.recipe_book` and `compare.task_book`. `compare.recipes`
puts them together into `RECIPES` and `TASK_RECIPES`; nothing here imports it."""
