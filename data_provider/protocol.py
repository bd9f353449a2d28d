"""The evaluation protocol (`--protocol tslib|strict`): which data each phase of a run may read.

tslib   TSLib's protocol, so TSLib's commands give TSLib's numbers (run.py's default).
strict  No TEST sample reaches training, early stopping or threshold selection (the comparison runner's
        default); TEST is read once, after training:
        - classification validates on a seeded, stratified share of the TRAIN file (`VAL_FRACTION`; TSLib
          validates on the TEST file), and seq_len is the longest TRAIN series;
        - anomaly detection takes its threshold from the training and validation energies (TSLib: training
          and test energies together);
        - short-term (M4) forecasting trains on each training series without its last horizon and validates
          on that held-out horizon (TSLib validates on the M4 test values);
        - long-term forecasting and imputation: the same as tslib (they validate on their own split; the
          per-epoch test loss is printed only).

Where the protocols compute different results (`changes_results`), a strict run's setting string ends in
`_strict` (`setting_tag`), so its checkpoints, result folders and records never mix with a tslib run's; where
they compute the same, the protocol is left out of the configuration hash and the resume check.
"""

from __future__ import annotations

import argparse

from utils.flag_defaults import flag_default

__all__ = ["PROTOCOLS", "RUNNER_DEFAULT", "RUN_DEFAULT", "STRICT_CHANGES", "VAL_FRACTION", "changes_results",
           "is_strict", "setting_tag"]

PROTOCOLS = ("tslib", "strict")
#: run.py keeps TSLib's behaviour; the comparison runner compares models fairly
RUN_DEFAULT = "tslib"
RUNNER_DEFAULT = "strict"
#: share of each class of the TRAIN file that strict classification holds out for validation
VAL_FRACTION = 0.2

#: What strict changes, per task whose results it changes (the others compute the same under both).
STRICT_CHANGES = {
    "classification": "validation on a seeded, stratified 20% of TRAIN (TSLib: the TEST file); seq_len from TRAIN",
    "anomaly_detection": "threshold from training and validation energies (TSLib: training and test energies)",
    "short_term_forecast": "validation on the held-out last horizon of each training series (TSLib: the M4 test "
                           "values)",
}


def changes_results(task_name: str | None) -> bool:
    """Whether `--protocol strict` computes something else than tslib for `task_name`."""
    return task_name in STRICT_CHANGES


def is_strict(args: argparse.Namespace) -> bool:
    """Whether `args` runs the strict protocol (an args without the flag is TSLib's)."""
    return getattr(args, "protocol", RUN_DEFAULT) == "strict"


def setting_tag(args: argparse.Namespace) -> str:
    """`_strict` for a strict run of a task whose results it changes, else "" (TSLib's setting string)."""
    return "_strict" if is_strict(args) and changes_results(getattr(args, "task_name", flag_default("task_name"))) else ""
