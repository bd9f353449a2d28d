"""What a tested setting leaves behind in one shape for the five tasks: its `results.jsonl` record, and TSLib's
arrays in `./results/<setting>/` (metrics.npy, pred.npy, true.npy, ...).

A record is the run's identity (setting, model, model_id, data), the task's own fields (its lengths, its
scores, ...), then what every task shares: the seed, the training statistics (epochs run, best epoch, training
seconds, the per-epoch curve; None under --is_training 0), the parameter count, the number of processes, the
time, the evaluation protocol and the configuration behind the result (`config`, `config_hash`,
`code_version`: exp/run_config.py). The file is appended one JSON line per record, keys sorted.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import torch

from exp.run_config import record_fields
from utils.flag_defaults import flag_default
from utils.tools import append_jsonl, atomic_np_save

logger = logging.getLogger(__name__)

RESULTS_JSONL = "results.jsonl"
#: TSLib's folder of per-setting result arrays
RESULTS_DIR = "./results"


class TestedExperiment(Protocol):
    """What a record reads of an experiment."""

    args: Any
    dist: Any
    config: dict
    run_seed: int
    train_stats: dict

    def _bare_model(self) -> torch.nn.Module: ...


def result_record(exp: TestedExperiment, setting: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The record of `exp`'s test of `setting`: identity, the task's `fields` in their order, the shared fields."""
    args, stats = exp.args, exp.train_stats
    return {
        "setting": setting,
        "model": args.model,
        "model_id": args.model_id,
        "data": args.data,
        **fields,
        "seed": exp.run_seed,
        "epochs_run": stats.get("epochs_run"),
        "best_epoch": stats.get("best_epoch"),
        "train_seconds": stats.get("train_seconds"),
        # one entry per trained epoch (None under --is_training 0)
        "curve": stats.get("curve"),
        "params": sum(p.numel() for p in exp._bare_model().parameters()),
        "world_size": exp.dist.world_size,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        # the evaluation protocol (data_provider/protocol.py)
        "protocol": getattr(args, "protocol", flag_default("protocol")),
        # the flags behind the result, their hash and the commit (exp/run_config.py)
        **record_fields(exp.config),
    }


def write_result_record(exp: TestedExperiment, setting: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Append `result_record(exp, setting, fields)` to ./results.jsonl and return it."""
    record = result_record(exp, setting, fields)
    append_jsonl(RESULTS_JSONL, record)
    return record


def log_undefined(undefined: Mapping[str, str]) -> None:
    """Say in the log which scores are recorded as null, and why."""
    for name, reason in undefined.items():
        logger.warning("%s is undefined and recorded as null: %s", name, reason)


def save_result_arrays(setting: str, arrays: Mapping[str, np.ndarray]) -> None:
    """`./results/<setting>/<name>.npy` for each named array, in order, each written atomically."""
    folder = os.path.join(RESULTS_DIR, setting)
    for name, array in arrays.items():
        atomic_np_save(os.path.join(folder, f"{name}.npy"), array)
