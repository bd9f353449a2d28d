"""The anomaly-detection heads of TimesNet, PatchTST, iTransformer and DLinear, as TSLib builds them:
`anomaly_detection(x_enc)` reconstructs `[B, L, C]`, forward(x, None, None, None) dispatches to it, and the
layers TSLib creates only for this task have its shapes (and, for TimesNet, its initial weights)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from test_TimesNet import tslib_initial_weights

from models import DLinear, PatchTST, TimesNet, iTransformer
from utils.errors import UserInputError

MODELS = {"TimesNet": TimesNet, "PatchTST": PatchTST, "iTransformer": iTransformer, "DLinear": DLinear}
L, C = 32, 5


def anomaly_configs(make_configs, model: str, **overrides):
    settings = dict(task_name="anomaly_detection", model=model, seq_len=L, label_len=0, pred_len=0, enc_in=C,
                    dec_in=C, c_out=C, d_model=16, d_ff=16, n_heads=2, e_layers=1, top_k=3, num_kernels=2)
    settings.update(overrides)
    return make_configs(**settings)


@pytest.mark.parametrize("name", list(MODELS))
def test_reconstruction_shape_dispatch_and_backward(name, make_configs):
    model = MODELS[name].Model(anomaly_configs(make_configs, name)).eval()
    x = torch.randn(3, L, C)
    out = model(x, None, None, None)
    assert out.shape == (3, L, C)
    torch.testing.assert_close(out, model.anomaly_detection(x))
    model.train()
    model(x, None, None, None).pow(2).mean().backward()
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads if g is not None)
    assert sum(g is not None for g in grads) > 0


@pytest.mark.parametrize("name", list(MODELS))
def test_pred_len_does_not_change_the_reconstruction_model(name, make_configs):
    """TSLib's scripts pass --pred_len 0 (DLinear: 100); the reconstruction model reads seq_len only."""
    counts = {sum(p.numel() for p in MODELS[name].Model(anomaly_configs(make_configs, name, pred_len=h)).parameters())
              for h in (0, 100)}
    assert len(counts) == 1


def test_task_specific_layers_have_tslib_shapes(make_configs):
    timesnet = TimesNet.Model(anomaly_configs(make_configs, "TimesNet"))
    assert not hasattr(timesnet, "predict_linear")
    assert timesnet.projection.weight.shape == (C, 16)
    patchtst = PatchTST.Model(anomaly_configs(make_configs, "PatchTST"))
    patches = (L - 16) // 8 + 2
    assert patchtst.head.linear.weight.shape == (L, 16 * patches)
    itransformer = iTransformer.Model(anomaly_configs(make_configs, "iTransformer"))
    assert itransformer.projection.weight.shape == (L, 16)
    dlinear = DLinear.Model(anomaly_configs(make_configs, "DLinear", pred_len=100))
    assert dlinear.Linear_Seasonal.weight.shape == dlinear.Linear_Trend.weight.shape == (L, L)
    torch.testing.assert_close(dlinear.Linear_Seasonal.weight, torch.full((L, L), 1.0 / L))


def test_timesnet_anomaly_body_weights_follow_tslib_order(make_configs):
    """TSLib's anomaly TimesNet draws the blocks and the embedding as its forecasting one does."""
    configs = anomaly_configs(make_configs, "TimesNet", d_model=8, d_ff=16, e_layers=2, top_k=2, num_kernels=3,
                              enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")
    body = tslib_initial_weights(configs, seed=7)[:-4]  # without predict_linear and projection
    torch.manual_seed(7)
    model = TimesNet.Model(configs)
    mine = []
    for block in model.model:
        for inception in (block.conv[0], block.conv[2]):
            for conv in inception.kernels:
                mine += [conv.weight, conv.bias]
    mine += [model.enc_embedding.value_embedding.tokenConv.weight, model.enc_embedding.temporal_embedding.embed.weight]
    for a, b in zip(mine, body, strict=True):
        assert torch.equal(a, b)


def test_timesnet_projection_is_drawn_right_after_the_embedding(make_configs):
    configs = anomaly_configs(make_configs, "TimesNet", d_model=8, d_ff=16, e_layers=1, top_k=2, num_kernels=2,
                              enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")
    torch.manual_seed(3)
    model = TimesNet.Model(configs)
    # Replay TSLib's draws up to the embedding, then its anomaly projection (no predict_linear before it).
    torch.manual_seed(3)
    for _ in range(configs.e_layers):
        for c_in, c_out in ((configs.d_model, configs.d_ff), (configs.d_ff, configs.d_model)):
            for i in range(configs.num_kernels):
                conv = nn.Conv2d(c_in, c_out, 2 * i + 1, padding=i)
                nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
    token = nn.Conv1d(3, 8, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    nn.Linear(4, 8, bias=False)
    nn.LayerNorm(8)
    projection = nn.Linear(8, 3)
    assert torch.equal(model.projection.weight, projection.weight)
    assert torch.equal(model.projection.bias, projection.bias)


@pytest.mark.parametrize("name", list(MODELS))
def test_unsupported_task_is_rejected(name, make_configs):
    with pytest.raises(UserInputError, match="anomaly_detection"):
        MODELS[name].Model(anomaly_configs(make_configs, name, task_name="zero_shot_forecast"))
