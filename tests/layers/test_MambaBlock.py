"""MambaSL's block (`layers.MambaBlock.Mamba_TimeVariant`) under every combination of its switches: TSLib's
parameters per switch, causality, the two scans giving one function, time-invariant Δ/B/C really constant
over time, the paper's Δ initialisation, and one-line argument errors."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from layers.MambaBlock import Mamba_TimeVariant
from tests.numerics import assert_close

SWITCHES = list(itertools.product((False, True), repeat=4))
IDS = ["dt{:d}-B{:d}-C{:d}-D{:d}".format(*s) for s in SWITCHES]


def block(switches, **kw) -> Mamba_TimeVariant:
    tv_dt, tv_B, tv_C, use_D = switches
    args = dict(d_model=12, d_state=5, d_conv=3, expand=2, timevariant_dt=tv_dt, timevariant_B=tv_B,
                timevariant_C=tv_C, use_D=use_D)
    return Mamba_TimeVariant(**{**args, **kw})


@pytest.mark.parametrize("switches", SWITCHES, ids=IDS)
def test_parameters_follow_the_switches(switches):
    tv_dt, tv_B, tv_C, use_D = switches
    shapes = {name: tuple(p.shape) for name, p in block(switches).named_parameters()}
    e, n, r = 24, 5, 1
    expected = {"A_log": (e, n), "in_proj.weight": (2 * e, 12), "conv1d.weight": (e, 1, 3), "conv1d.bias": (e,),
                "dt_proj.weight": (e, r), "dt_proj.bias": (e,), "out_proj.weight": (12, e)}
    widths = r * tv_dt + n * tv_B + n * tv_C
    if widths:
        expected["x_proj.weight"] = (widths, e)
    expected.update({name: (e, n) for name, on in (("B", tv_B), ("C", tv_C)) if not on})
    if use_D:
        expected["D"] = (e,)
    assert shapes == expected


@pytest.mark.parametrize("d_conv", [0, 3])
@pytest.mark.parametrize("switches", SWITCHES, ids=IDS)
def test_block_is_causal_and_both_scans_agree(switches, d_conv):
    torch.manual_seed(0)
    layer = block(switches, d_conv=d_conv).double()
    x = torch.randn(2, 19, 12, dtype=torch.float64)
    edited = x.clone()
    edited[:, 9] += 1.0
    with torch.no_grad():
        diff = (layer(edited) - layer(x)).abs().amax(dim=(0, 2))  # [L]
        assert (diff[:9] == 0).all() and (diff[9:] > 0).all()
        sequential = layer(x)
        layer.scan = "parallel"
        assert_close(layer(x), sequential, rtol=1e-12, atol=1e-12, what="parallel vs sequential")


@pytest.mark.parametrize("switches", SWITCHES, ids=IDS)
def test_switched_off_parts_are_constant_over_time(switches):
    tv_dt, tv_B, tv_C, _ = switches
    torch.manual_seed(1)
    layer = block(switches)
    x = torch.randn(3, 7, 24)
    delta, B, C = layer.ssm_inputs(x)
    assert delta.shape == (3, 7, 24)
    steps_differ = (delta - delta[:, :1]).abs().amax() > 0
    assert bool(steps_differ) == tv_dt
    if not tv_dt:
        assert_close(delta[0, 0], F.softplus(layer.dt_proj.bias), rtol=0, atol=0, what="constant Δ")
    for on, matrix, name in ((tv_B, B, "B"), (tv_C, C, "C")):
        assert matrix.shape == ((3, 7, 5) if on else (24, 5)), name
        if not on:
            assert matrix is getattr(layer, name)


def test_constant_step_size_leaves_dt_proj_weight_without_gradient():
    """TSLib keeps dt_proj's weight when Δ is time-invariant (its count includes it); only the bias trains."""
    layer = block((False, True, True, False))
    layer(torch.randn(2, 6, 12)).square().mean().backward()
    assert layer.dt_proj.weight.grad is None and layer.dt_proj.bias.grad.abs().sum() > 0


def test_step_size_initialisation_is_the_papers():
    torch.manual_seed(2)
    layer = Mamba_TimeVariant(d_model=64, d_state=4, expand=4, dt_min=0.002, dt_max=0.05)
    delta0 = F.softplus(layer.dt_proj.bias)  # [E]
    assert delta0.min() >= 0.002 * (1 - 1e-5) and delta0.max() <= 0.05 * (1 + 1e-5)
    bound = layer.dt_rank ** -0.5
    assert layer.dt_proj.weight.abs().max() <= bound
    torch.testing.assert_close(layer.A_log.exp(), torch.arange(1, 5.0).expand(256, 4), rtol=1e-6, atol=1e-6)
    constant = Mamba_TimeVariant(d_model=16, dt_init="constant", dt_scale=2.0)
    assert (constant.dt_proj.weight == 2.0).all()  # rank 1: 1^-1/2 · 2


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(d_state=0), "d_state 0 must be positive"),
    (dict(d_conv=-1), "d_conv -1 must be >= 0"),
    (dict(dt_init="normal"), "dt_init 'normal' is not one of random, constant"),
    (dict(use_fast_path=True), "use_fast_path=True asks for mamba_ssm's fused kernel"),
    (dict(scan="chunked"), "scan 'chunked' is not one of sequential, parallel"),
], ids=["d_state", "d_conv", "dt_init", "fast_path", "scan"])
def test_bad_arguments_are_one_line_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        Mamba_TimeVariant(d_model=8, **kwargs)
    assert "\n" not in str(err.value)
