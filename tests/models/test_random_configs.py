"""A seeded random sweep over valid-looking flag combinations for every registered model.

Each draw builds the model and runs one forward and backward pass. A combination the model cannot
serve must be refused at construction with a one-line `ValueError` naming a flag (`--...`), which the
experiment prints as `error: ...`; any other exception, a wrong output shape or a non-finite value
fails the test. The draws include odd and tiny lengths, one to 21 variates, features M/S/MS, up to four
of the model-specific run.py flags (TSLIB_FLAG_DRAWS: top_k, moving_avg, embed/freq, down-sampling,
patching, wavelet, ...) for every model and, for CAPS, every kernel and head widths beyond the native
kernel's limit.

A second sweep runs every model on every task it serves (both forecasts, and the imputation, anomaly-detection
and classification it declares) at tiny widths, mostly with a batch of one window (a loader's last batch);
the same rule applies. tests/exp/test_run_model_task_fuzz.py takes such draws through run.py's experiments.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Callable

import pytest
import torch

from exp.model_registry import MODEL_REGISTRY
from layers.CAPS_Attention import CAPS_OPTIONS
from tests.models.test_model_contract import FORECASTERS, MODEL_OVERRIDES, make_batch
from tests.models.test_task_contract import NUM_CLASS, WINDOW_TASKS, declared_tasks, task_call
from tests.models.tslib_reference import CUDA_ONLY, model_params

DRAWS_PER_MODEL = 6
# The forecasting sweep; a window-task-only model (MambaSingleLayer) is swept on its tasks below.
MODELS = model_params(FORECASTERS)


def draw_flags(rng: random.Random, model: str) -> dict:
    """One random combination of the flags every model shares (plus CAPS's own)."""
    seq_len = rng.choice([1, 2, 5, 8, 13, 24, 33, 48])
    enc_in = rng.choice([1, 2, 3, 7, 21])
    features = rng.choice(["M", "S", "MS"])
    if features == "S":
        enc_in = 1
    n_heads = rng.choice([1, 2, 4])
    flags = dict(
        features=features, seq_len=seq_len, label_len=rng.randint(0, seq_len), pred_len=rng.choice([1, 2, 7, 24]),
        enc_in=enc_in, dec_in=enc_in, c_out=1 if features in ("S", "MS") else enc_in,
        n_heads=n_heads, d_model=n_heads * rng.choice([2, 4, 8, 16]), d_ff=rng.choice([4, 16]),
        e_layers=rng.choice([1, 2, 3]), d_layers=rng.choice([1, 2]), dropout=rng.choice([0.0, 0.1]),
    )
    if model == "CAPS":
        flags.update(caps_impl=rng.choice(CAPS_OPTIONS["caps_impl"].choices),
                     d_model=rng.choice([0, n_heads * 4, n_heads * 264]))
    for name in rng.sample(sorted(TSLIB_FLAG_DRAWS), k=rng.randint(0, 4)):
        flags[name] = rng.choice(TSLIB_FLAG_DRAWS[name])
    if model in MODEL_DRAWS and rng.random() < 0.75:
        flags.update(MODEL_DRAWS[model](rng, flags))
    return flags


# Run.py flags that only some models read (TSLib's names), drawn a few at a time for every model: a model
# that reads one must run or refuse it in one line, one that does not must be unaffected.
TSLIB_FLAG_DRAWS: dict[str, list] = {
    "top_k": [1, 2, 3, 5], "num_kernels": [1, 2, 3, 6], "moving_avg": [1, 2, 3, 4, 25], "factor": [1, 2, 3, 5],
    "distil": [True, False], "embed": ["timeF", "fixed", "learned"], "freq": ["h", "t", "d", "s", "w", "m", "b"],
    "activation": ["gelu", "relu"], "channel_independence": [0, 1], "decomp_method": ["moving_avg", "dft_decomp"],
    "use_norm": [0, 1], "down_sampling_layers": [0, 1, 2, 3], "down_sampling_window": [1, 2, 3],
    "down_sampling_method": [None, "avg", "max", "conv"], "expand": [1, 2], "d_conv": [2, 3, 4],
    "patch_len": [1, 2, 4, 8, 16], "stride": [1, 2, 4, 8], "individual": [True, False], "node_dim": [2, 10],
    "conv_channel": [4, 32], "skip_channel": [4, 32], "p_hidden_dims": [[8, 8], [16], [128, 128]],
    "p_hidden_layers": [1, 2], "level": [1, 2, 3], "wavelet": ["db2", "haar", "sym4"], "tfactor": [1, 2, 5],
    "dfactor": [1, 2, 5, 8], "alpha": [0.0, 0.1, 0.5], "top_p": [0.0, 0.5, 1.0], "embed_size": [2, 16],
    "attn_output_layout": ["per_step", "tslib"], "prob_eval_sampling": ["fixed", "global"],
}


def _common_divisor(rng: random.Random, flags: dict) -> dict:
    gcd = math.gcd(flags["seq_len"], flags["pred_len"])
    return dict(seg_len=rng.choice([d for d in range(1, gcd + 1) if gcd % d == 0]))


# Flags a model constrains beyond the shared ones, drawn inside its valid set most of the time (the rest
# of the draws check its one-line errors).
MODEL_DRAWS: dict[str, Callable[[random.Random, dict], dict]] = {
    "SegRNN": _common_divisor,
    "TimeFilter": lambda rng, flags: dict(patch_len=rng.choice(
        [d for d in range(1, flags["seq_len"] + 1) if flags["seq_len"] % d == 0])),
    # Koopa forecasts from a longer window (TSLib's scripts: seq_len = 2 pred_len).
    "Koopa": lambda rng, flags: dict(seq_len=2 * flags["pred_len"] + rng.choice([0, 1, 5])),
    # Two down-sampling layers of window 2 need seq_len divisible by 4.
    "TimeMixerPP": lambda rng, flags: dict(seq_len=rng.choice([8, 12, 24, 48]), top_k=rng.choice([1, 2])),
    # The four patch scales agree on the patch count only for some lengths (models/MultiPatchFormer.py).
    "MultiPatchFormer": lambda rng, flags: dict(seq_len=rng.choice([62, 70, 83, 96]),
                                                d_model=4 * rng.choice([2, 4, 8])),
}


def _one_line_flag_error(err: Exception) -> bool:
    text = str(err)
    return isinstance(err, ValueError) and "\n" not in text and "--" in text


@pytest.mark.parametrize("model_name", MODELS)
def test_random_valid_looking_configs_run_or_fail_in_one_line(make_configs, model_name: str) -> None:
    rng = random.Random(zlib.crc32(model_name.encode()))
    built = 0
    for draw in range(DRAWS_PER_MODEL):
        flags = {**MODEL_OVERRIDES.get(model_name, {}), **draw_flags(rng, model_name)}
        configs = make_configs(model=model_name, **flags)
        try:
            model = MODEL_REGISTRY[model_name](configs).float()
        except Exception as err:  # noqa: BLE001 - the point is to classify whatever it raises
            assert _one_line_flag_error(err), f"draw {draw} {flags}: {type(err).__name__}: {err}"
            continue
        built += 1
        batch = make_batch(configs, torch.Generator().manual_seed(draw))
        try:
            out = model(*batch)
            out.square().mean().backward()
        except Exception as err:  # noqa: BLE001
            raise AssertionError(f"draw {draw} {flags}: built, then {type(err).__name__} in forward/backward: "
                                 f"{err}") from err
        assert out.shape == (batch[0].shape[0], configs.pred_len, configs.c_out), f"draw {draw} {flags}"
        assert torch.isfinite(out).all(), f"draw {draw} {flags}"
    assert built > 0, f"none of {DRAWS_PER_MODEL} draws built {model_name}: the sweep's ranges miss it"


# Issue 49 §9: every model on every task it serves, at tiny widths, most often with a batch of one window (a
# loader's last training batch: BatchNorm over one value per channel crashed Pyraformer and PatchTST). Draws
# are taken until one builds (at most TASK_TRIES), so the sweep stays one forward/backward per pair.
FORECAST_TASKS = ("long_term_forecast", "short_term_forecast")
TASK_PAIRS = [(m, t) for m in sorted(MODEL_REGISTRY) for t in (*FORECAST_TASKS, *WINDOW_TASKS)
              if (t in FORECAST_TASKS and m in FORECASTERS) or (t in WINDOW_TASKS and t in declared_tasks(m))]
TASK_TRIES = 3
BATCH_SIZES = (1, 1, 2, 3)
# What a model needs beyond the tiny ranges, drawn inside its valid set (the first sweep checks its errors).
TINY_DRAWS: dict[str, Callable[[random.Random, dict], dict]] = {
    "ETSformer": lambda rng, flags: dict(d_layers=flags["e_layers"]),
    "LightTS": lambda rng, flags: dict(d_model=16),
    # Its variable split is declared for ETTh1's seven channels; one channel reads as --features S.
    "TemporalFusionTransformer": lambda rng, flags: dict(features="S", enc_in=1, dec_in=1, c_out=1),
    # The pyramid's strides 4 x 4 need 16 steps; 16-31 leave one node at the coarsest scale.
    "Pyraformer": lambda rng, flags: dict(seq_len=rng.choice([16, 24, 31, 40])),
    "WPMixer": lambda rng, flags: dict(patch_len=rng.choice([1, 2, 4]), stride=rng.choice([1, 2])),
}


def draw_task_flags(rng: random.Random, model: str, task: str) -> dict:
    """Tiny widths, a short odd or even window, one to three variates, and up to two model-specific flags."""
    n_heads = rng.choice([1, 2])
    enc_in = rng.choice([1, 2, 3])
    flags = dict(task_name=task, features="M", enc_in=enc_in, dec_in=enc_in, c_out=enc_in, n_heads=n_heads,
                 d_model=4 * n_heads, d_ff=8, e_layers=rng.choice([1, 2]), d_layers=1, dropout=0.1,
                 seq_len=rng.choice([8, 13, 16, 24, 31]))
    if task in FORECAST_TASKS:
        flags.update(label_len=rng.randint(0, flags["seq_len"]), pred_len=rng.choice([1, 6]))
    else:
        flags.update(label_len=0, pred_len=0)
    for name in rng.sample(sorted(TSLIB_FLAG_DRAWS), k=rng.randint(0, 2)):
        flags[name] = rng.choice(TSLIB_FLAG_DRAWS[name])
    if model in MODEL_DRAWS:
        flags.update(MODEL_DRAWS[model](rng, flags))
    if model in TINY_DRAWS:
        flags.update(TINY_DRAWS[model](rng, flags))
    return flags


def task_forward(model, configs, task: str, batch: int, generator: torch.Generator) -> None:
    """One training-mode forward of `batch` windows with the task's call, its output shape, one backward."""
    if task in FORECAST_TASKS:
        args = make_batch(configs, generator, batch)
        shape = (batch, configs.pred_len, configs.c_out)
    else:
        args, shape = task_call(configs, task, generator, batch)
    out = model.train()(*args)
    assert out.shape == shape
    assert torch.isfinite(out).all()
    out.square().mean().backward()


@pytest.mark.parametrize(("model_name", "task"), [
    pytest.param(m, t, marks=pytest.mark.skip(reason=f"{m} {CUDA_ONLY[m]}")) if m in CUDA_ONLY else (m, t)
    for m, t in TASK_PAIRS])
def test_every_task_a_model_serves_runs_random_tiny_configs_or_fails_in_one_line(make_configs, model_name, task):
    rng = random.Random(zlib.crc32(f"{model_name}/{task}".encode()))
    for draw in range(TASK_TRIES):
        flags = {**MODEL_OVERRIDES.get(model_name, {}), **draw_task_flags(rng, model_name, task)}
        configs = make_configs(model=model_name, **flags)
        if task == "classification":
            configs.num_class = NUM_CLASS
        try:
            model = MODEL_REGISTRY[model_name](configs).float()
        except Exception as err:  # noqa: BLE001 - the point is to classify whatever it raises
            assert _one_line_flag_error(err), f"draw {draw} {flags}: {type(err).__name__}: {err}"
            continue
        batch = rng.choice(BATCH_SIZES)
        try:
            task_forward(model, configs, task, batch, torch.Generator().manual_seed(draw))
        except Exception as err:  # noqa: BLE001
            raise AssertionError(f"draw {draw} {flags}, batch {batch}: built, then {type(err).__name__}: "
                                 f"{err}") from err
        return
    pytest.fail(f"none of {TASK_TRIES} draws built {model_name} for {task}: the sweep's ranges miss it")
