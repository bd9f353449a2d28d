"""The configuration behind a result (issue 49).

TSLib's setting string leaves out the learning rate, the epochs, the seed, the optimiser and every
`--caps_*` flag, so two different experiments can share a setting. The setting string stays (its folders are
TSLib's), and beside it:
- every `results.jsonl` record carries `config` (`run_config`: every flag after defaults), `config_hash`
  (`config_hash`: blind to RESULT_FREE_FLAGS, so it identifies what was computed; the comparison runner skips
  by it) and `code_version` (the git commit of this checkout, or null);
- `<checkpoints>/<setting>/config.json` records the configuration that trained there, and a run of another
  configuration refuses the folder in one line (`record_config`) instead of overwriting its checkpoints.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from data_provider.protocol import changes_results
from exp.arguments import build_parser
from utils.errors import UserInputError
from utils.tools import atomic_write_text

CONFIG_FILE = "config.json"
REPO_ROOT = Path(__file__).resolve().parents[1]

#: Flags that do not change what a run computes, left out of `config_hash`: where the data and the
#: checkpoints live (root_path, checkpoints), how the run is carried out (is_training: a test-only run scores
#: the trained configuration; itr: run ii is `--seed + ii` and has its own setting; resume, save_every_steps,
#: num_workers, no_progress, host_malloc, detect_anomaly; cpu_denormals, which changes only values below float32's
#: resolution beside any normal term, as compile changes rounding), on which device (use_gpu, gpu, gpu_type,
#: use_multi_gpu, devices, compile, compile_mode), what is done with the model afterwards (do_predict,
#: predict_data) and what it reports to (logger, logger_dir, logger_group, print_all_args). A resumed run may
#: differ from the interrupted one in them too
#: (exp/checkpointing.py), and the comparison runner's skip key is the hash without them.
RESULT_FREE_FLAGS = frozenset({
    "root_path", "checkpoints",
    "is_training", "itr", "resume", "save_every_steps", "num_workers", "no_progress", "host_malloc", "detect_anomaly",
    "cpu_denormals",
    "use_gpu", "gpu", "gpu_type", "use_multi_gpu", "devices", "compile", "compile_mode",
    "do_predict", "predict_data",
    "logger", "logger_dir", "logger_group", "print_all_args",
})

_PLAIN = (bool, int, float, str, type(None))


def protocol_free(config: Mapping[str, Any]) -> frozenset[str]:
    """{"protocol"} when `--protocol` does not change what `config`'s task computes (long-term forecasting,
    imputation: data_provider/protocol.py), else the empty set; left out of the hash and the resume check, so a
    strict and a tslib run of such a task share their results."""
    return frozenset() if changes_results(config.get("task_name")) else frozenset({"protocol"})


def _json_safe(value: Any) -> bool:
    return isinstance(value, _PLAIN) or (isinstance(value, list) and all(isinstance(v, _PLAIN) for v in value))


def run_config(args: argparse.Namespace) -> dict[str, Any]:
    """Every flag of `args` after defaults, sorted by name; values that are not plain JSON (the training split
    attached for Koopa/OLinear, `train_split`) are left out."""
    return {key: value for key, value in sorted(vars(args).items()) if _json_safe(value)}


def config_hash(config: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON (sorted keys, no spaces) of `config` without RESULT_FREE_FLAGS (and
    `protocol_free`)."""
    free = RESULT_FREE_FLAGS | protocol_free(config)
    kept = {key: value for key, value in config.items() if key not in free}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1)
def code_version() -> str | None:
    """The git commit (40 hex digits) of the checkout this code runs from; None outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return commit if head.returncode == 0 and len(commit) == 40 else None


def record_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The `config`, `config_hash` and `code_version` fields of a results.jsonl record (and of config.json)."""
    return {"config": dict(config), "config_hash": config_hash(config), "code_version": code_version()}


def differing_flags(saved: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """The flags (outside RESULT_FREE_FLAGS) whose values differ; a flag the saved config lacks (added to the
    library later) counts as equal when it is at run.py's default, which keeps the earlier behaviour."""
    parser = build_parser()
    names = (set(saved) | set(config)) - RESULT_FREE_FLAGS - protocol_free(config)
    newer = {name for name in set(config) - set(saved) if config[name] == parser.get_default(name)}
    return sorted(name for name in names - newer if saved.get(name) != config.get(name))


def record_config(folder: Path, config: Mapping[str, Any]) -> bool:
    """Write `folder`/config.json for a run of `config` about to train there; True when this call created it.

    A config.json of another configuration is a UserInputError naming the differing flags, and nothing is
    written; an unreadable one is a UserInputError too.
    """
    path = folder / CONFIG_FILE
    if path.is_file():
        try:
            saved = json.loads(path.read_text())["config"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise UserInputError(f"{path} is not a config.json this library wrote ({type(err).__name__}); delete "
                                 f"{folder} to start over") from None
        differ = differing_flags(saved, config)
        if differ:
            shown = ", ".join(f"--{name} {config.get(name)} (there: {saved.get(name)})" for name in differ[:4])
            more = f" and {len(differ) - 4} more" if len(differ) > 4 else ""
            raise UserInputError(f"{folder} holds a run with other flags: {shown}{more}; give this run another --des "
                                 "or --model_id, or delete that folder to start over")
    created = not path.is_file()
    atomic_write_text(path, json.dumps(record_fields(config), indent=1, sort_keys=True) + "\n")
    return created
