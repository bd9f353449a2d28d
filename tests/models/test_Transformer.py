"""Transformer's window-task heads (imputation, anomaly detection, classification) as TSLib builds them, plus
the checks the other encoder-based heads (Informer, Autoformer, FEDformer, Reformer) share: dispatch, head
shapes, pred_len independence and what the classification padding mask does."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from models.Transformer import Model
from utils.errors import UserInputError

B, L, C, D, CLASSES = 2, 16, 3, 8, 4


def window_configs(make_configs, model: str, task: str, **overrides):
    """A tiny namespace for a window task (TSLib's scripts pass --label_len 0 --pred_len 0)."""
    flags = dict(model=model, task_name=task, seq_len=L, label_len=0, pred_len=0, enc_in=C, dec_in=C, c_out=C,
                 d_model=D, d_ff=16, n_heads=2, e_layers=2, d_layers=1, factor=3, moving_avg=5, dropout=0.0,
                 embed="timeF", freq="h")
    configs = make_configs(**{**flags, **overrides})
    if task == "classification":
        configs.num_class = CLASSES
    return configs


def build(model_cls, configs, seed: int = 0) -> nn.Module:
    """The model under a fixed torch and numpy seed (FEDformer draws its modes from numpy)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    return model_cls(configs).double().eval()


def imputation_inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, C, generator=g, dtype=torch.float64)
    mask = (torch.rand(B, L, C, generator=g) > 0.25).double()
    marks = torch.rand(B, L, 4, generator=g, dtype=torch.float64) - 0.5
    return x * mask, marks, mask


def check_imputation_head(make_configs, model: str, model_cls) -> nn.Module:
    """Linear(D → c_out) named `projection` on the encoder; `[B, L, C]` out; same model at pred_len 0 and 96."""
    net = build(model_cls, window_configs(make_configs, model, "imputation"))
    assert net.projection.weight.shape == (C, D) and net.projection.bias.shape == (C,)
    x, marks, mask = imputation_inputs()
    with torch.no_grad():
        out = net(x, marks, None, None, mask)
        assert out.shape == (B, L, C)
        torch.testing.assert_close(out, net.imputation(x, marks, None, None, mask))
        longer = build(model_cls, window_configs(make_configs, model, "imputation", pred_len=96, label_len=8))
        assert [p.shape for p in longer.parameters()] == [p.shape for p in net.parameters()]
        torch.testing.assert_close(longer(x, marks, None, None, mask), out)
    return net


def check_anomaly_head(make_configs, model: str, model_cls) -> nn.Module:
    """forward(x, None, None, None) is `anomaly_detection(x)`, `[B, L, C]`, through Linear(D → c_out)."""
    net = build(model_cls, window_configs(make_configs, model, "anomaly_detection"))
    assert net.projection.weight.shape == (C, D)
    x = torch.randn(B, L, C, dtype=torch.float64)
    with torch.no_grad():
        out = net(x, None, None, None)
        assert out.shape == (B, L, C)
        torch.testing.assert_close(out, net.anomaly_detection(x))
        # A constant shift may vanish in the decomposition models' encoders; noise does not.
        assert not torch.allclose(net(x + torch.randn_like(x), None, None, None), out)
    return net


def check_classification_head(make_configs, model: str, model_cls) -> nn.Module:
    """Linear(L·D → classes) named `projection` after `dropout`; the padded steps' features are zeroed before
    it, so its weights at padded steps do not reach the logits. The encoder itself does not mask (as
    TSLib's): padded input values still move the real steps' tokens."""
    net = build(model_cls, window_configs(make_configs, model, "classification"))
    assert net.projection.weight.shape == (CLASSES, L * D)
    assert isinstance(net.dropout, nn.Dropout)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(B, L, C, generator=g, dtype=torch.float64)
    mask = torch.ones(B, L, dtype=torch.float64)
    mask[:, L - 5:] = 0
    full = torch.ones(B, L, dtype=torch.float64)
    with torch.no_grad():
        logits, unmasked = net(x, mask, None, None), net(x, full, None, None)
        assert logits.shape == (B, CLASSES)
        weight = net.projection.weight.view(CLASSES, L, D)
        weight[:, L - 5:] += torch.randn(CLASSES, 5, D, generator=g, dtype=torch.float64)
        torch.testing.assert_close(net(x, mask, None, None), logits)
        assert not torch.allclose(net(x, full, None, None), unmasked)
        padded_changed = x.clone()
        padded_changed[:, L - 5:] += 3.0
        assert not torch.allclose(net(padded_changed, mask, None, None), logits)
    return net


def test_imputation_head(make_configs):
    net = check_imputation_head(make_configs, "Transformer", Model)
    names = {name for name, _ in net.named_parameters()}
    assert not any(name.startswith(("decoder.", "dec_embedding.")) for name in names)


def test_anomaly_head(make_configs):
    net = check_anomaly_head(make_configs, "Transformer", Model)
    assert not hasattr(net, "decoder")


def test_classification_head(make_configs):
    net = check_classification_head(make_configs, "Transformer", Model)
    assert not hasattr(net, "decoder") and not hasattr(net, "dec_embedding")


def test_classification_ignores_c_out_and_dec_in(make_configs):
    """BasicMotions-like data (6 variates < the default --c_out 7): classification never reads c_out."""
    net = build(Model, window_configs(make_configs, "Transformer", "classification", c_out=7, dec_in=7))
    assert net(torch.randn(B, L, C, dtype=torch.float64), torch.ones(B, L), None, None).shape == (B, CLASSES)


def test_forecasting_is_the_same_for_long_and_short_term(make_configs):
    """TSLib's Transformer runs one forecasting path for both task names (no normalisation)."""
    flags = dict(model="Transformer", seq_len=L, label_len=4, pred_len=3, enc_in=C, dec_in=C, c_out=C, d_model=D,
                 d_ff=16, n_heads=2, e_layers=1, d_layers=1, dropout=0.0)
    x, dec = torch.randn(B, L, C, dtype=torch.float64), torch.zeros(B, 7, C, dtype=torch.float64)
    outs = [build(Model, make_configs(task_name=task, **flags))(x, None, dec, None)
            for task in ("long_term_forecast", "short_term_forecast")]
    torch.testing.assert_close(outs[0], outs[1])


def test_unknown_task_names_the_flag(make_configs):
    with pytest.raises(UserInputError, match="--task_name"):
        Model(window_configs(make_configs, "Transformer", "zero_shot_forecast"))
