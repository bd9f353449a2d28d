"""Issue 49 §3: the configuration behind a result: `run_config` (every flag after defaults, JSON-safe),
`config_hash` (blind to the flags that do not change results, RESULT_FREE_FLAGS) and `code_version`."""

from __future__ import annotations

import json
import subprocess

import pytest

from exp.run_config import RESULT_FREE_FLAGS, code_version, config_hash, run_config
from tests.exp.conftest import REPO
from utils.train_split import synthetic_train_split


def test_run_config_is_every_flag_after_defaults_and_json_safe(make_configs):
    args = make_configs(learning_rate=0.003, p_hidden_dims=[8, 8])
    config = run_config(args)
    assert config == json.loads(json.dumps(config))
    assert config["learning_rate"] == 0.003 and config["p_hidden_dims"] == [8, 8]
    assert config["train_epochs"] == 10 and config["caps_impl"] == args.caps_impl
    assert set(config) == set(vars(args))
    args.train_split = synthetic_train_split(rows=64)
    assert "train_split" not in run_config(args)


@pytest.mark.parametrize(("flag", "value"), [
    ("num_workers", 0), ("no_progress", True), ("checkpoints", "/elsewhere/"), ("root_path", "/mnt/data/"),
    ("resume", True), ("save_every_steps", 3), ("use_gpu", False), ("gpu", 3), ("devices", "0,1"),
    ("host_malloc", "system"), ("cpu_denormals", "keep"), ("is_training", 0), ("itr", 5),
])
def test_config_hash_ignores_flags_that_do_not_change_results(make_configs, flag, value):
    assert flag in RESULT_FREE_FLAGS
    assert config_hash(run_config(make_configs(**{flag: value}))) == config_hash(run_config(make_configs()))


@pytest.mark.parametrize(("flag", "value"), [
    ("learning_rate", 0.001), ("train_epochs", 3), ("seed", 7), ("optimizer", "adamw"), ("caps_impl", "naive"),
    ("batch_size", 16), ("use_amp", True),
])
def test_config_hash_changes_with_flags_that_change_results(make_configs, flag, value):
    default = make_configs()
    assert getattr(default, flag) != value
    assert config_hash(run_config(make_configs(**{flag: value}))) != config_hash(run_config(default))


def test_config_hash_is_a_sha256_of_canonical_json(make_configs):
    digest = config_hash(run_config(make_configs()))
    assert len(digest) == 64 and int(digest, 16) >= 0
    shuffled = dict(reversed(list(run_config(make_configs()).items())))
    assert config_hash(shuffled) == digest


def test_code_version_is_the_checkout_commit():
    # Cached per process: a commit made while the tests run would otherwise leave the old one.
    code_version.cache_clear()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    assert code_version() == (head.stdout.strip() if head.returncode == 0 else None)
