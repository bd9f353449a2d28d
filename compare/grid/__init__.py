"""What the runner and the report both read: the plan of a comparison and what its folder holds. Imports
compare/recipes/ and nothing else of compare/:

    run_args           `run.py` argument lists as data (read, merge, show a flag)
    tasks              what the runner and report need to know about each TSLib task
    plan               the model rows and every planned (seed, dataset, horizon, row) run
    plan_file          the plan as a YAML file a person edits (`--plan`)
    own_files          what a user's own data file holds
    own_data           a comparison on the user's own data (`--data_path FILE --name NAME`)
    behaviour_changes  the ledger of code changes that made earlier records stale
    records            the run records of a comparison folder and which one is current
    run_state          the manifest of attempts and what `runs/` says about each run
    reuse              finished runs taken from other comparison folders instead of training them again
    protocol_notes     what the runner and the report say about the evaluation protocol
    provenance         how the numbers were produced (commands, machines) as the report states it
    efficiency         model cost at a dataset's shape: parameters, FLOPs, step time and memory
    tune_budget        one tuning cell's budget and what its study spent
    relative_paths     old records' machine paths rewritten as repository-relative ones
"""
