"""Mamba (TSLib's wrapper around `mamba_ssm.Mamba`) on the CPU: a test-only stand-in for the CUDA package
is injected into `sys.modules`, with mamba_ssm's constructor and its block's parameter names and shapes
(as TSLib's module tree lists them), computing with the pure-torch block. Checked: TSLib's parameter
count, names, shapes and FLOPs, the wrapper's construction order, its forward, and the one-line errors
without the package or without CUDA."""

from __future__ import annotations

import math
import sys
import types

import pytest
import torch
import torch.nn as nn

from compare.grid.efficiency import build_model, count_parameters, example_inputs, forward_flops
from layers.Mamba_Blocks import MambaBlock
from models.Mamba import Model
from tests.models.tslib_reference import (
    assert_tslib_initial_weights,
    tslib_configs,
    tslib_flops,
    tslib_parameter_shapes,
    tslib_params,
)
from utils.errors import UserInputError

B, L, H, N, F = 2, 12, 6, 3, 4


class StandInMamba(MambaBlock):
    """Test-only stand-in for `mamba_ssm.Mamba` (v1): its keyword constructor, its parameters (in_proj,
    conv1d, x_proj, dt_proj, A_log, D, out_proj; R = ⌈d_model / 16⌉) and its `act` module, computed by the
    pure-torch block on the CPU. Initial values are torch's defaults, not mamba_ssm's Δ initialisation."""

    runs_on_cpu = True

    def __init__(self, d_model: int, d_state: int = 16, d_conv: int = 4, expand: int = 2) -> None:
        super().__init__(d_model, expand * d_model, math.ceil(d_model / 16), d_state, d_conv)
        self.act = nn.SiLU()


def package(**attributes) -> types.ModuleType:
    module = types.ModuleType("mamba_ssm")
    for name, value in attributes.items():
        setattr(module, name, value)
    return module


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setitem(sys.modules, "mamba_ssm", package(Mamba=StandInMamba))


def configs_for(make_configs, **overrides):
    flags = dict(model="Mamba", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=8,
                 d_ff=4, expand=2, d_conv=3, dropout=0.0, embed="timeF", freq="h", use_gpu=False)
    return make_configs(**{**flags, **overrides})


def test_parameters_names_and_flops_equal_tslib(make_configs, stand_in):
    configs = tslib_configs(make_configs, "Mamba")
    model = build_model(configs)
    assert count_parameters(model) == tslib_params("Mamba") == 120_576
    ours = {(name, tuple(p.shape)) for name, p in model.named_parameters() if p.requires_grad}
    assert ours == tslib_parameter_shapes("Mamba")
    # TSLib's FLOPs were measured on mamba_ssm's pure-torch reference scan, the path the stand-in takes.
    assert forward_flops(model, example_inputs(configs, 1)) == tslib_flops("Mamba")


def test_initial_weights_follow_tslib_construction_order(make_configs, stand_in):
    """The DataEmbedding (token Conv1d re-drawn Kaiming-normal; timeF Linear), then the mamba_ssm block,
    then the bias-free output Linear."""
    configs = configs_for(make_configs)

    def tslib_weights() -> list[torch.Tensor]:
        torch.manual_seed(2021)
        token = nn.Conv1d(N, 8, 3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
        weights = [token.weight, nn.Linear(F, 8, bias=False).weight]
        weights += list(StandInMamba(d_model=8, d_state=4, d_conv=3, expand=2).parameters())
        return weights + [nn.Linear(8, N, bias=False).weight]

    assert_tslib_initial_weights(lambda: Model(configs), tslib_weights)


@pytest.mark.parametrize(("enc_in", "c_out"), [(N, N), (1, 1), (N, 1)], ids=["M", "S", "MS"])
def test_forecast_composes_the_block_and_reaches_every_parameter(make_configs, stand_in, enc_in, c_out):
    """Normalise, embed, one Mamba block, Linear, de-normalise, the last pred_len steps; one backward
    reaches every parameter."""
    model = Model(configs_for(make_configs, enc_in=enc_in, dec_in=enc_in, c_out=c_out)).double()
    x = torch.randn(B, L, enc_in, dtype=torch.float64) * 3 + 1
    marks = torch.rand(B, L, F, dtype=torch.float64) - 0.5
    out = model(x, marks, None, None)
    mean = x.mean(1, keepdim=True)
    std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
    raw = model.out_layer(model.mamba(model.embedding((x - mean) / std, marks)))[:, -H:]
    expected = raw * std[..., -c_out:] + mean[..., -c_out:]
    assert out.shape == (B, H, c_out)
    assert torch.allclose(out, expected, rtol=1e-10, atol=1e-10)
    out.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_missing_mamba_ssm_is_one_line_pointing_to_mamba_simple(make_configs, monkeypatch):
    monkeypatch.setitem(sys.modules, "mamba_ssm", None)  # import raises ImportError
    with pytest.raises(UserInputError, match="install it on a CUDA machine.*--model MambaSimple") as err:
        Model(configs_for(make_configs))
    assert "\n" not in str(err.value)


def test_without_cuda_the_cuda_only_block_is_refused(make_configs, monkeypatch):
    class CudaOnly(StandInMamba):
        runs_on_cpu = False

    monkeypatch.setitem(sys.modules, "mamba_ssm", package(Mamba=CudaOnly))
    with pytest.raises(UserInputError, match="no CUDA device.*--model MambaSimple"):
        Model(configs_for(make_configs, use_gpu=False))


def test_cpu_inputs_to_a_cuda_only_block_are_refused(make_configs, stand_in):
    model = Model(configs_for(make_configs))
    model.mamba.runs_on_cpu = False
    with pytest.raises(UserInputError, match="CUDA device or use --model MambaSimple"):
        model(torch.randn(B, L, N), None, None, None)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(pred_len=L + 1), "--pred_len"),
     (dict(c_out=N + 1), "--c_out"), (dict(expand=0), "--expand"), (dict(d_conv=0), "--d_conv"),
     (dict(d_ff=0), "--d_ff"), (dict(embed="onehot"), "--embed")],
    ids=["task", "pred_len", "c_out", "expand", "d_conv", "d_ff", "embed"],
)
def test_bad_config_names_the_flag(make_configs, stand_in, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
