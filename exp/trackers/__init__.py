"""Experiment trackers (`--logger tensorboard mlflow wandb`), each writing to its local, offline store.

- `options`: the flags' choices, checks and defaults;
- `tracker`: what a backend offers (`Tracker`);
- `tensorboard_tracker`, `mlflow_tracker`, `wandb_tracker`: the backends;
- `run_trackers`: the one object the experiment calls (`RunTrackers`, `open_trackers`).
"""
