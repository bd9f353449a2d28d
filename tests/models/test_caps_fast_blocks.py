"""The CAPS model with its fast blocks (fused RMSNorm, tiled MLP: `layers/caps/rmsnorm.py`, `layers/caps/mlp.py`)
against the same model on the autograd references: the forecast bit for bit in float32, every parameter
gradient to 1e-12 in float64 and, in float32, to 1e-5 of the float64 reference (relative to each gradient's
scale), for the paper's default and an awkward horizon.
"""

from __future__ import annotations

import pytest
import torch

from models.CAPS import MLP, Model, RMSNorm
from tests.models.test_caps import batch, randomise, small
from tests.numerics import assert_close_to_scale


def set_fast_blocks(model: Model, on: bool) -> Model:
    """Switch every block's fused RMSNorm and tiled MLP on or off (the default is on)."""
    for module in model.modules():
        if isinstance(module, RMSNorm):
            module.fused = on
        elif isinstance(module, MLP):
            module.tiled = on
    return model


def _loss_and_grads(model: Model, dtype: torch.dtype) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    model.zero_grad()
    out = model(*(t.to(dtype) for t in batch(torch.float32)))  # the same draws for both dtypes
    weight = torch.linspace(-1.0, 2.0, out.numel(), dtype=dtype).view_as(out)
    (out * weight).sum().backward()
    return out.detach(), {name: p.grad.detach().clone() for name, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("overrides", [{}, {"e_layers": 3, "caps_paths": "13"}], ids=["default", "L3-paths13"])
def test_fast_blocks_match_the_references(make_configs, overrides: dict) -> None:
    torch.manual_seed(0)
    model = randomise(Model(small(make_configs, **overrides))).train()
    model.channel_dropout = False  # the same forward on every call
    fast32 = _loss_and_grads(set_fast_blocks(model, True), torch.float32)
    ref32 = _loss_and_grads(set_fast_blocks(model, False), torch.float32)
    model.double()
    ref64 = _loss_and_grads(set_fast_blocks(model, False), torch.float64)
    fast64 = _loss_and_grads(set_fast_blocks(model, True), torch.float64)
    assert torch.equal(fast32[0], ref32[0]), "forecast differs with the fast blocks (float32)"
    assert_close_to_scale(fast64[0], ref64[0], 1e-12, "forecast, float64")
    assert set(fast32[1]) == set(ref64[1]) == set(fast64[1])
    for name, ref in ref64[1].items():
        assert_close_to_scale(fast64[1][name], ref, 1e-12, f"d{name} fast vs reference, float64")
        assert_close_to_scale(fast32[1][name], ref, 1e-5, f"d{name} fast float32 vs reference float64")


def test_fast_blocks_are_the_default(make_configs) -> None:
    model = Model(small(make_configs))
    norms = [m for m in model.modules() if isinstance(m, RMSNorm)]
    mlps = [m for m in model.modules() if isinstance(m, MLP)]
    assert norms and mlps and all(m.fused for m in norms) and all(m.tiled for m in mlps)


def test_forward_hooks_see_every_block_module(make_configs) -> None:
    """A hook on a block's attention or MLP (as `python -m explain` registers) makes the block call its modules one
    by one, so the hook sees each call; the forecast is the fast halves' one."""
    torch.manual_seed(0)
    model = randomise(Model(small(make_configs))).eval()
    inputs = batch(torch.float32)
    with torch.no_grad():
        fast = model(*inputs)
    seen = []
    blocks = [m for m in model.modules() if isinstance(m, MLP)]
    hooks = [m.register_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__)) for m in blocks]
    hooks += [layer.register_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
              for layer in model.modules() if type(layer).__name__ == "CAPSAttention"]
    with torch.no_grad():
        hooked = model(*inputs)
    for hook in hooks:
        hook.remove()
    assert sorted(seen) == sorted(["MLP"] * len(blocks) + ["CAPSAttention"] * len(blocks))
    assert_close_to_scale(hooked, fast, 1e-6, "forecast with hooks (module by module) vs the fast halves")
