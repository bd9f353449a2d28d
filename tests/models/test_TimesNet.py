"""TimesNet draws its initial weights in TSLib's constructor order, so a seed means the same model in both."""

from __future__ import annotations

import torch
import torch.nn as nn

from models.TimesNet import Model


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's TimesNet initialisation, module by module: e_layers × (Inception d→d_ff, Inception d_ff→d,
    each K convs built then Kaiming-normal(fan_out, relu) with zero biases), the circular token Conv1d
    (Kaiming-normal fan_in, leaky_relu), the bias-free timeF Linear, predict_linear, projection."""
    torch.manual_seed(seed)
    weights = []
    for _ in range(configs.e_layers):
        for c_in, c_out in ((configs.d_model, configs.d_ff), (configs.d_ff, configs.d_model)):
            convs = [nn.Conv2d(c_in, c_out, 2 * i + 1, padding=i) for i in range(configs.num_kernels)]
            for conv in convs:
                nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
                nn.init.zeros_(conv.bias)
                weights += [conv.weight, conv.bias]
    token = nn.Conv1d(configs.enc_in, configs.d_model, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    temporal = nn.Linear(4, configs.d_model, bias=False)  # freq h: 4 timeF features
    predict = nn.Linear(configs.seq_len, configs.seq_len + configs.pred_len)
    projection = nn.Linear(configs.d_model, configs.c_out)
    return weights + [token.weight, temporal.weight, predict.weight, predict.bias, projection.weight,
                      projection.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = make_configs(model="TimesNet", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16,
                           e_layers=2, top_k=2, num_kernels=3, enc_in=3, dec_in=3, c_out=3, freq="h",
                           embed="timeF")
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    ours = []
    for block in model.model:
        for inception in (block.conv[0], block.conv[2]):
            for conv in inception.kernels:
                ours += [conv.weight, conv.bias]
    embedding = model.enc_embedding
    ours += [embedding.value_embedding.tokenConv.weight, embedding.temporal_embedding.embed.weight,
             model.predict_linear.weight, model.predict_linear.bias, model.projection.weight, model.projection.bias]
    assert len(ours) == len(expected) == sum(1 for _ in model.parameters()) - 2  # + the LayerNorm's two
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine, theirs)
    # The stream is left where TSLib leaves it: the next draw (its first dropout mask) agrees too.
    after_ours = torch.rand(4)
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))
