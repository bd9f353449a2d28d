"""Imputation heads of TimesNet, PatchTST, iTransformer and DLinear, as TSLib builds them."""

from __future__ import annotations

import pytest
import torch

from models import DLinear, PatchTST, TimesNet, iTransformer
from utils.errors import UserInputError

MODELS = {"TimesNet": TimesNet, "PatchTST": PatchTST, "iTransformer": iTransformer, "DLinear": DLinear}
# TSLib's imputation-specific parameters (name → shape) at L = 96, C = 7, d_model 16, d_ff 32.
HEADS = {
    "TimesNet": {"projection.weight": (7, 16), "projection.bias": (7,)},
    "PatchTST": {"head.linear.weight": (96, 16 * 12), "head.linear.bias": (96,)},
    "iTransformer": {"projection.weight": (96, 16), "projection.bias": (96,)},
    "DLinear": {"Linear_Seasonal.weight": (96, 96), "Linear_Trend.weight": (96, 96)},
}


def configs(make_configs, pred_len=0, **kw):
    base = dict(task_name="imputation", seq_len=96, label_len=0, pred_len=pred_len, enc_in=7, dec_in=7, c_out=7,
                d_model=16, d_ff=32, n_heads=2, e_layers=2, top_k=3)
    base.update(kw)
    return make_configs(**base)


def inputs(b=3, length=96, c=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, length, c, generator=g)
    mask = (torch.rand(b, length, c, generator=g) > 0.25).float()
    return x * mask, torch.randn(b, length, 4, generator=g), mask


@pytest.mark.parametrize("name", list(MODELS))
def test_shape_head_parameters_and_backward(make_configs, name):
    model = MODELS[name].Model(configs(make_configs)).eval()
    params = {k: tuple(v.shape) for k, v in model.named_parameters()}
    for key, shape in HEADS[name].items():
        assert params[key] == shape
    assert "predict_linear.weight" not in params  # forecasting-only layer (TimesNet)
    x, mark, mask = inputs()
    out = model(x, mark, None, None, mask)
    assert out.shape == (3, 96, 7)
    out.square().mean().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


@pytest.mark.parametrize("name", list(MODELS))
def test_pred_len_does_not_change_the_head(make_configs, name):
    """TSLib's DLinear scripts pass --pred_len 96 for imputation; the window is reconstructed either way."""
    torch.manual_seed(0)
    a = MODELS[name].Model(configs(make_configs, pred_len=0)).eval()
    torch.manual_seed(0)
    b = MODELS[name].Model(configs(make_configs, pred_len=96)).eval()
    x, mark, mask = inputs()
    torch.testing.assert_close(a(x, mark, None, None, mask), b(x, mark, None, None, mask))


@pytest.mark.parametrize("name", ["TimesNet", "PatchTST"])
def test_mask_aware_heads_ignore_hidden_values(make_configs, name):
    model = MODELS[name].Model(configs(make_configs)).eval()
    x, mark, mask = inputs()
    noisy = torch.where(mask == 0, torch.randn_like(x) * 100, x)
    torch.testing.assert_close(model(x, mark, None, None, mask), model(noisy, mark, None, None, mask))


def test_timesnet_head_matches_a_slow_reference(make_configs):
    """TSLib's imputation normalisation written out, around the model's own blocks."""
    model = TimesNet.Model(configs(make_configs)).eval()
    x, mark, mask = inputs(b=2)
    xd, md = x.double(), mask.double()
    means = xd.sum(1) / (md == 1).sum(1)
    centred = (xd - means[:, None]).masked_fill(md == 0, 0)
    stdev = torch.sqrt((centred * centred).sum(1) / (md == 1).sum(1) + 1e-5)
    tokens = model.enc_embedding((centred / stdev[:, None]).float(), mark)
    for block in model.model:
        tokens = model.layer_norm(block(tokens))
    expected = model.projection(tokens).double() * stdev[:, None] + means[:, None]
    torch.testing.assert_close(model(x, mark, None, None, mask).double(), expected, rtol=1e-4, atol=1e-5)


def test_model_without_imputation_head_names_the_tasks(make_configs):
    from models import FreTS

    with pytest.raises(UserInputError, match="--task_name 'imputation' is not supported by FreTS"):
        FreTS.Model(configs(make_configs))
