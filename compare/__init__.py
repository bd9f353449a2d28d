"""The comparison floor: runs models side by side from the recipe table and reports the results.

Above `exp/` (it launches `run.py` and reads the experiment's flags); nothing below imports it. Five folders,
each importing only the folders listed before it (tests/test_layout.py keeps it so):

    recipes/  the recipe tables (every model's flags per dataset and horizon) and the `.sh` scripts made from them
    grid/     what the runner and the report both read: the plan, run arguments, tasks, records, run state
    report/   tables, statistics and figures of a comparison folder, from its records alone
    run/      the runner, its scheduler and executors (local processes, Ray), ETA, archives
    tune/     equal-budget tuning (Optuna through Ray Tune), then a comparison of the tuned rows

and four doors: `python -m compare ...` (`__main__.py`: the runner, `pack`/`restore`, `tune`),
`python -m compare.scripts` (writes `scripts/` from the recipes), `python -m compare.relative_paths`
(rewrites old records' machine paths), `python -m compare.naive_backfill` (fills old records' naive scores);
`python -m compare.report` rewrites a report (`report/__main__.py`).
"""
