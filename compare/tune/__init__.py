"""Equal-budget tuning, `python -m compare tune ...`: the same search budget for every model, then the tuned
rows compared beside the recipes' rows. Imports compare/run/ and the folders below it:

    search_spaces  the search spaces, as data beside the recipes
    study          the Optuna storage, each cell's study and its identity
    progress       a line per trial event while Ray Tune runs, and the seconds spent
    equal_budget   the command line: plan the cells, search, retrain the tuned rows
"""
