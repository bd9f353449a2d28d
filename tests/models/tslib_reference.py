"""TSLib's own measurements of its models (`../shared/docs/tslib_models.csv`: each model at its ETTh1
pred_len 96 script block), and the configs of that block, so model tests can pin the trainable
parameter count and the forward FLOPs to TSLib's.

The file lies beside the checkout (`<repo>/../shared/docs`); without it the tests skip with a reason,
and under CI=true they fail.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import torch
import torch.nn as nn

TSLIB_MODELS_CSV = Path(__file__).resolve().parents[2].parent / "shared" / "docs" / "tslib_models.csv"
TSLIB_MODULE_TREES = TSLIB_MODELS_CSV.parent / "tslib_models" / "module_trees_ETTh1_96.md"
# Columns of the CSV that are run.py flags of the block (besides `other_block_flags`).
BLOCK_FLAGS = ("seq_len", "label_len", "pred_len", "e_layers", "d_layers", "d_model", "d_ff", "n_heads", "factor",
               "batch_size", "learning_rate", "train_epochs")
# List-valued flags the CSV's `other_block_flags` cuts to their first value, with the flag giving the
# list's length: TSLib's Non-stationary Transformer scripts pass `--p_hidden_dims 256 256` (one width
# per projector layer, as the module trees show), recorded as `p_hidden_dims=256`.
LIST_FLAGS = {"p_hidden_dims": "p_hidden_layers"}
# Our models that TSLib does not ship (no row to compare with): CAPS, and the CAPS paper's two baselines
# implemented from their own papers.
NOT_IN_TSLIB = frozenset({"CAPS", "OLinear", "TimeMixerPP"})
# TSLib models without an ETTh1 forecasting block (no row in the CSV), pinned at their own task's blocks.
NO_ETTH1_BLOCK = {
    "MambaSingleLayer": "classification only: tests/models/test_MambaSingleLayer.py pins its parameter names and "
                        "counts to TSLib's at its MambaSL.sh blocks",
}
# Models built on a CUDA-only package: the shared CPU tests skip them (with this reason) and the model's
# own test file checks it on the CPU with a test-only stand-in for the package.
CUDA_ONLY = {
    "Mamba": "runs mamba_ssm's CUDA kernels; tests/models/test_Mamba.py checks it on the CPU with a stand-in "
             "for mamba_ssm.Mamba",
}


def model_params(names) -> list:
    """pytest parameters for `names`, the CUDA-only models marked skip with their reason."""
    return [pytest.param(name, marks=pytest.mark.skip(reason=f"{name} {CUDA_ONLY[name]}")) if name in CUDA_ONLY
            else name for name in names]


def _missing(path: Path, what: str) -> None:
    """Skip for a missing reference file; fail instead under CI=true."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {path} is missing; CI must run with ../shared beside the clone")
    pytest.skip(f"{what} not found at {path}")


@cache
def _rows() -> dict[str, dict[str, str]] | None:
    if not TSLIB_MODELS_CSV.is_file():
        return None
    with TSLIB_MODELS_CSV.open() as f:
        return {row["model"]: row for row in csv.DictReader(f)}


def tslib_row(model: str) -> dict[str, str]:
    """The CSV row of `model`; skips (fails under CI=true) when the file is missing."""
    rows = _rows()
    if rows is None:
        _missing(TSLIB_MODELS_CSV, "TSLib's model measurements")
    return rows[model]


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def tslib_configs(make_configs: Callable[..., argparse.Namespace], model: str, **overrides) -> argparse.Namespace:
    """run.py configs of `model`'s ETTh1 block as TSLib measured it (7 variates, features M, timeF, freq h)."""
    row = tslib_row(model)
    flags = {name: _number(row[name]) for name in BLOCK_FLAGS}
    for item in filter(None, row["other_block_flags"].split(";")):
        name, value = item.split("=", 1)
        flags[name] = _number(value)
    for name, length_flag in LIST_FLAGS.items():
        if name in flags and not isinstance(flags[name], list):
            flags[name] = [flags[name]] * flags[length_flag]
    channels = dict(enc_in=7, dec_in=7, c_out=7)
    return make_configs(model=model, data="ETTh1", features="M", **{**channels, **flags, **overrides})


def tslib_params(model: str) -> int:
    """TSLib's trainable parameter count at the block."""
    return int(tslib_row(model)["params_trainable"])


def tslib_flops(model: str) -> int:
    """TSLib's forward FLOPs for one ETTh1 sample at the block (matmul/conv/attention, 2 per multiply-add)."""
    return int(tslib_row(model)["flops_ett"])


def tslib_parameter_shapes(model: str) -> set[tuple[str, tuple[int, ...]]]:
    """TSLib's trainable parameters of `model` at its ETTh1 block, as (name, shape) pairs, read from the
    "Parameters (name: shape)" list of the model's section in `module_trees_ETTh1_96.md`."""
    if not TSLIB_MODULE_TREES.is_file():
        _missing(TSLIB_MODULE_TREES, "TSLib's module trees")
    text = TSLIB_MODULE_TREES.read_text()
    section = re.search(rf"^## {re.escape(model)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    if section is None:
        raise KeyError(f"no section '## {model}' in {TSLIB_MODULE_TREES}")
    listing = re.search(r"Parameters \(name: shape\):\n```\n(.*?)```", section.group(1), re.DOTALL)
    if listing is None:
        raise KeyError(f"section '## {model}' of {TSLIB_MODULE_TREES} has no parameter list")
    shapes = set()
    for line in listing.group(1).strip().splitlines():
        name, shape = line.rsplit(": ", 1)
        shapes.add((name, tuple(int(n) for n in re.findall(r"\d+", shape))))
    return shapes


def assert_tslib_initial_weights(build: Callable[[], nn.Module], tslib_weights: Callable[[], list[torch.Tensor]],
                                 seed: int = 2021) -> None:
    """Built after `torch.manual_seed(seed)`, the model's parameters (in registration order) equal
    `tslib_weights()` (a construction in TSLib's order that seeds itself with `seed`), and both leave the
    global RNG at the same place (the next draw agrees)."""
    expected = tslib_weights()
    torch.manual_seed(seed)
    ours = list(build().parameters())
    assert len(ours) == len(expected)
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine, theirs)
    after_ours = torch.rand(4)
    tslib_weights()
    assert torch.equal(after_ours, torch.rand(4))
