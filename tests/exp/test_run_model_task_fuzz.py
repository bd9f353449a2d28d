"""Issue 65: every registered model × every task through run.py's real experiment path, at tiny sizes on tiny
generated data (a CSV for the forecasts and imputation, one M4 group, PSM files, UEA `.ts` files).

For a task the model serves, a seeded draw of tiny flags (widths, a short window, one to three variates, up to
two of the model-specific run.py flags, and what the model needs beyond the tiny ranges: the draws of
tests/models/test_random_configs.py) goes through `run.main`: one training step (every batch holds the whole
training split) with validation, the test, the checkpoint, the model card and the result files. It must end
with exit code 0 and a finite result record, or, for a combination the model cannot serve, be refused with
exit code 2, one `error:` line and nothing written; anything else (a traceback, exit code 1) fails. Draws are
taken until one runs (at most RUN_TRIES). The model-level sweeps there call the model directly; this one
caught Koopa and OLinear stopping at `Dataset_M4.data_x`, which only the experiment's data path reaches.

A task the model does not serve must be refused up front with exit code 2 and one line naming the task and
the model, before any data is read.

Time box: the whole product (134 served pairs) takes about 2 minutes on one busy core, so the default suite
runs a seeded rotating subset of ROTATION_SIZE pairs (about 20 s; every pair once in 11 consecutive seeds) and
`-m slow` runs every pair. The seed is TSLIB_FUZZ_SEED, else the day number; it picks the pairs and the draws,
and a failure names it: rerun with `TSLIB_FUZZ_SEED=<seed>`. The refusals are cheap and all run in the
default suite.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import random
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import run
from data_provider.m4 import HORIZONS
from exp.arguments import build_parser
from exp.model_registry import MODEL_REGISTRY, model_tasks
from exp.tasks import TASK_NAMES
from tests.anomaly_files import write_anomaly_files
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.uea_files import write_ts
from tests.exp.conftest import write_toy_csv
from tests.models.test_model_contract import MODEL_OVERRIDES
from tests.models.test_random_configs import MODEL_DRAWS, TINY_DRAWS, TSLIB_FLAG_DRAWS
from tests.models.tslib_reference import CUDA_ONLY

RUN_TRIES = 3
ROTATION_SIZE = 12
SERVED = [(m, t) for m in sorted(MODEL_REGISTRY) for t in TASK_NAMES if t in model_tasks(m)]
NOT_SERVED = [(m, t) for m in sorted(MODEL_REGISTRY) for t in TASK_NAMES if t not in model_tasks(m)]
# The pairs this machine can run (a CUDA-only model's are skipped with their reason in the full product).
RUNNABLE = [(m, t) for m, t in SERVED if m not in CUDA_ONLY]
# M4 groups a model can take at M4's own lengths (seq_len = 2 H): MultiPatchFormer's four patch scales agree
# only for seq_len 62..97 (Hourly's 96), Pyraformer's pyramid needs 16 steps, TimeMixer's and TimeMixerPP's two
# down-sampling layers of window 2 need seq_len divisible by 4.
M4_GROUPS: dict[str, tuple[str, ...]] = {
    "MultiPatchFormer": ("Hourly",),
    "Pyraformer": ("Quarterly", "Monthly", "Weekly", "Daily"),
    "TimeMixerPP": ("Yearly", "Quarterly", "Monthly", "Daily"),
    "TimeMixer": ("Yearly", "Quarterly", "Monthly", "Daily"),
}
DEFAULT_M4_GROUPS = ("Yearly", "Quarterly", "Monthly", "Weekly", "Daily")


def _two_halvings(rng: random.Random, flags: dict) -> dict:
    return dict(down_sampling_layers=2, down_sampling_window=2, down_sampling_method=rng.choice(["avg", "max"]))


# What a model needs at run.py's level beyond the model-level draws: FiLM keeps min(seq_len, pred_len) // 2
# Fourier modes, so a forecast of one step leaves it none (a one-line refusal; the model sweep checks it).
# TimeMixer's and TimeMixerPP's two down-sampling layers of window 2 (their contract overrides) need seq_len
# divisible by 4 and a down-sampling method, which the shared flag draws may change.
RUN_DRAWS: dict[str, Callable[[random.Random, dict], dict]] = {
    "FiLM": lambda rng, flags: dict(pred_len=rng.choice([2, 6])) if flags["pred_len"] else {},
    "TimeMixer": lambda rng, flags: dict(seq_len=rng.choice([8, 16, 24]), **_two_halvings(rng, flags)),
    "TimeMixerPP": _two_halvings,
}
# run.py flags that the draws of tests/models/test_random_configs.py set but run.py derives itself.
DERIVED = {"label_len", "pred_len", "seq_len", "enc_in", "dec_in", "c_out"}


def fuzz_seed() -> int:
    """TSLIB_FUZZ_SEED, else today's day number (the rotation moves on once a day)."""
    value = os.environ.get("TSLIB_FUZZ_SEED")
    return int(value) if value else datetime.date.today().toordinal()


def rotation(pairs: list[tuple[str, str]], seed: int, size: int) -> list[tuple[str, str]]:
    """`size` of `pairs`, a seeded pick that covers every pair once over len(pairs) / size consecutive seeds: the
    pairs in a fixed shuffled order, the seed choosing the window."""
    order = sorted(pairs, key=lambda pair: zlib.crc32(f"{pair[0]}/{pair[1]}".encode()))
    start = (seed * size) % len(order)
    return [order[(start + i) % len(order)] for i in range(min(size, len(order)))]


def draw_lengths(rng: random.Random, model: str, task: str) -> dict:
    """seq_len / label_len / pred_len for the task; M4 fixes them from the group (seasonal_patterns)."""
    if task == "short_term_forecast":
        group = rng.choice(M4_GROUPS.get(model, DEFAULT_M4_GROUPS))
        h = HORIZONS[group]
        return dict(seasonal_patterns=group, seq_len=2 * h, label_len=h, pred_len=h)
    seq_len = rng.choice([8, 13, 16, 24, 31])
    if task == "long_term_forecast":
        return dict(seq_len=seq_len, label_len=rng.randint(0, seq_len), pred_len=rng.choice([1, 6]))
    return dict(seq_len=seq_len, label_len=0, pred_len=0)


def draw_run_flags(rng: random.Random, model: str, task: str) -> dict:
    """Tiny run.py flags for (model, task): widths, lengths, up to two model-specific flags, the model's needs."""
    n_heads = rng.choice([1, 2])
    enc_in = 1 if task == "short_term_forecast" else rng.choice([1, 2, 3])
    flags = dict(features="M", enc_in=enc_in, dec_in=enc_in, c_out=enc_in, n_heads=n_heads, d_model=4 * n_heads,
                 d_ff=8, e_layers=rng.choice([1, 2]), d_layers=1, dropout=0.1, **draw_lengths(rng, model, task))
    for name in rng.sample(sorted(TSLIB_FLAG_DRAWS), k=rng.randint(0, 2)):
        flags[name] = rng.choice(TSLIB_FLAG_DRAWS[name])
    for draws in (MODEL_DRAWS, TINY_DRAWS, RUN_DRAWS):
        if model in draws:
            extra = draws[model](rng, flags)
            # M4 fixes the lengths from the group; a model's length needs are met by the group choice.
            if task == "short_term_forecast":
                extra = {k: v for k, v in extra.items() if k not in DERIVED}
            flags.update(extra)
    if task == "short_term_forecast":
        flags.update(features="M", enc_in=1, dec_in=1, c_out=1)
    # A model's own seq_len (Koopa's 2 pred_len + k) may undercut the label_len drawn for the first one.
    flags["label_len"] = min(flags["label_len"], flags["seq_len"])
    # run.py's --top_k 5 is more frequencies than ETSformer and MSGNet find in 8 steps (a one-line refusal).
    if flags.get("top_k", 5) > flags["seq_len"] // 2 - 1:
        flags["top_k"] = max(1, flags["seq_len"] // 2 - 1)
    return flags


def to_argv(flags: dict) -> list[str]:
    """`--name value` pairs as run.py's parser reads them: a switch (store_true / store_false) appears only to
    set its non-default value, a list flag takes several values, None leaves the flag at its default."""
    actions = build_parser()._option_string_actions
    argv = []
    for name, value in flags.items():
        action = actions[f"--{name}"]
        if isinstance(action, argparse._StoreConstAction):  # store_true / store_false
            argv += [f"--{name}"] if value == action.const else []
        elif isinstance(value, list):
            argv += [f"--{name}", *(str(v) for v in value)]
        elif value is not None:
            argv += [f"--{name}", str(value)]
    return argv


def write_data(root: Path, task: str, flags: dict) -> list[str]:
    """Tiny data for the task in `root`, sized so one batch holds the training split; the data flags."""
    seq_len, pred_len, channels = flags["seq_len"], flags["pred_len"] or 0, flags["enc_in"]
    (root / "Toy").mkdir(parents=True)
    if task == "short_term_forecast":
        group = flags["seasonal_patterns"]
        # Whole windows of 3 H for Koopa and OLinear, which read the training series when built.
        write_m4(root / "m4", counts={group: 3}, min_len=3 * HORIZONS[group])
        return ["--data", "m4", "--root_path", str(root / "m4"), "--loss", "SMAPE", "--batch_size", "4"]
    if task == "anomaly_detection":
        write_anomaly_files("PSM", root / "PSM", train_steps=6 * seq_len + 10, test_steps=3 * seq_len,
                            channels=channels, anomalies=[(seq_len, seq_len + 3)])
        return ["--data", "PSM", "--root_path", str(root / "PSM"), "--anomaly_ratio", "5", "--batch_size", "512"]
    if task == "classification":
        rng = np.random.default_rng(seq_len)
        samples = {split: [rng.normal(size=(seq_len if i == 0 else int(rng.integers(seq_len // 2 + 1, seq_len + 1)),
                                            channels)) for i in range(n)] for split, n in (("TRAIN", 9), ("TEST", 6))}
        for split, series in samples.items():
            labels = [("a", "b", "c")[i % 3] for i in range(len(series))]
            write_ts(root / "Toy" / f"fuzz_{split}.ts", series, labels, ["a", "b", "c"], name="fuzz")
        return ["--data", "UEA", "--root_path", str(root / "Toy"), "--batch_size", "16"]
    # The custom split is 70 / 10 / 20 %: the train part holds a window, val and test a horizon each.
    rows = max(60, math.ceil((seq_len + pred_len + 4) / 0.7), 10 * (pred_len + 2))
    write_toy_csv(root / "toy.csv", rows=rows, columns=max(channels, 2))
    features = "S" if flags["features"] == "S" or (channels == 1) else "M"
    extra = ["--mask_rate", "0.25"] if task == "imputation" else []
    return ["--data", "custom", "--root_path", str(root), "--data_path", "toy.csv", "--features", features,
            "--batch_size", "512", *extra]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """An empty working folder, the test plots (pdf files, about a second each) as empty files, CAPS on its
    pure-torch kernel."""
    import exp.exp_imputation
    import exp.exp_long_term_forecasting
    import exp.exp_short_term_forecasting

    monkeypatch.chdir(tmp_path)
    # CAPS on its pure-torch kernel: building the native CPU kernel takes minutes on a busy machine, and
    # tests/layers/test_caps_cpu_kernel.py checks it against the same function.
    monkeypatch.setenv("CAPS_NATIVE_KERNEL", "0")
    for module in (exp.exp_imputation, exp.exp_long_term_forecasting, exp.exp_short_term_forecasting):
        monkeypatch.setattr(module, "visual", lambda true, preds, name: Path(name).touch())
    return tmp_path


def records(folder: Path) -> list[dict]:
    path = folder / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_pair(folder: Path, model: str, task: str, capsys, rng: random.Random) -> Callable[[], str] | None:
    """Up to RUN_TRIES draws through run.main in `folder`; None once one ran, else the refusals seen."""
    refusals = []
    for draw in range(RUN_TRIES):
        root = folder / f"draw{draw}"
        root.mkdir()
        flags = {**{k: v for k, v in MODEL_OVERRIDES.get(model, {}).items() if k != "train_split"},
                 **draw_run_flags(rng, model, task)}
        data = write_data(root / "data", task, flags)
        # The data flags carry --features; classification reads seq_len (the data's), enc_in and pred_len from
        # the files (TSLib's scripts pass none of them).
        fixed = {"features", *(("seq_len", "label_len", "pred_len") if task == "classification" else ())}
        argv = ["--task_name", task, "--is_training", "1", "--model_id", "fuzz", "--model", model,
                *to_argv({k: v for k, v in flags.items() if k not in fixed}), *data,
                "--train_epochs", "1", "--num_workers", "0", "--no_progress", "--no_use_gpu", "--des", "fuzz",
                "--checkpoints", str(root / "checkpoints")]
        capsys.readouterr()
        before = set(Path.cwd().iterdir())
        code = run.main(argv)
        err = capsys.readouterr().err
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("error: "), f"draw {draw} {flags}: {err}"
            assert set(Path.cwd().iterdir()) == before and not (root / "checkpoints").exists(), \
                f"draw {draw} {flags}: refused after writing output"
            refusals.append(f"draw {draw} {flags}: {err.strip()}")
            continue
        assert code == 0, f"draw {draw} {flags}: exit code {code}: {err}"
        (record,) = records(Path.cwd())
        scores = {k: v for k, v in record.items() if k in ("mse", "mae", "smape", "accuracy", "f_score")}
        assert scores and all(v is not None and math.isfinite(v) for v in scores.values()), \
            f"draw {draw} {flags}: {scores}"
        return None
    return lambda: "\n".join(refusals)


def pair_param(model: str, task: str):
    if model in CUDA_ONLY:
        return pytest.param(model, task, id=f"{model}-{task}", marks=pytest.mark.skip(reason=f"{model} "
                                                                                           f"{CUDA_ONLY[model]}"))
    return pytest.param(model, task, id=f"{model}-{task}")


def check_pair(in_tmp: Path, capsys, model: str, task: str) -> None:
    rng = random.Random(zlib.crc32(f"{model}/{task}".encode()) ^ fuzz_seed())
    refused = run_pair(in_tmp, model, task, capsys, rng)
    if refused is not None:
        pytest.fail(f"none of {RUN_TRIES} draws ran {model} on {task} (seed {fuzz_seed()}):\n{refused()}")


@pytest.mark.parametrize(("model", "task"), [pair_param(m, t) for m, t in rotation(RUNNABLE, fuzz_seed(),
                                                                                         ROTATION_SIZE)])
def test_rotating_model_task_pairs_train_and_test_through_run(in_tmp, capsys, model, task):
    check_pair(in_tmp, capsys, model, task)


@pytest.mark.slow
@pytest.mark.parametrize(("model", "task"), [pair_param(m, t) for m, t in SERVED])
def test_every_model_task_pair_trains_and_tests_through_run(in_tmp, capsys, model, task):
    check_pair(in_tmp, capsys, model, task)


def test_the_rotation_covers_every_pair_over_consecutive_seeds():
    days = math.ceil(len(RUNNABLE) / ROTATION_SIZE)
    covered = {pair for seed in range(1000, 1000 + days) for pair in rotation(RUNNABLE, seed, ROTATION_SIZE)}
    assert covered == set(RUNNABLE)
    assert len(rotation(RUNNABLE, 7, ROTATION_SIZE)) == ROTATION_SIZE


@pytest.mark.parametrize(("model", "task"), [pytest.param(m, t, id=f"{m}-{t}") for m, t in NOT_SERVED])
def test_a_task_the_model_does_not_serve_is_refused_up_front(in_tmp, capsys, model, task):
    """No data exists in the folder: the refusal comes before any file is read or written."""
    code = run.main(["--task_name", task, "--is_training", "1", "--model_id", "fuzz", "--model", model,
                     "--data", "custom", "--root_path", str(in_tmp / "nowhere")])
    err = capsys.readouterr().err
    assert code == 2
    if task == "zero_shot_forecast":  # a trained model under the zero-shot task: the foundation models are named
        assert err.startswith(f"error: --model {model!r} is not a zero-shot foundation model; --task_name "
                              "zero_shot_forecast takes one of ") and err.count("\n") == 1
    else:
        assert err == (f"error: --task_name {task!r} is not supported by {model}; use one of "
                       f"{', '.join(model_tasks(model))}\n")
    assert list(in_tmp.iterdir()) == []
