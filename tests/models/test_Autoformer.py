"""Autoformer: initial weights in TSLib's constructor order, the decoder's start built from the input's
decomposition, and clear errors for bad flags."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.Autoformer import Model
from tests.models.test_Transformer import check_anomaly_head, check_classification_head, check_imputation_head

SMALL = dict(model="Autoformer", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, n_heads=2,
             e_layers=2, d_layers=2, factor=2, moving_avg=5, enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's Autoformer initialisation, module by module: circular token Conv1d (then Kaiming-normal
    fan_in, leaky_relu) and bias-free timeF Linear; per encoder layer q/k/v/out Linear(D, D) and two
    bias-free 1×1 Conv1d; the decoder embedding; per decoder layer self q/k/v/out, cross q/k/v/out,
    the two 1×1 convs and the bias-free circular Conv1d(D → c_out, 3); the final Linear(D → c_out).
    LayerNorms and moving averages draw nothing."""
    torch.manual_seed(seed)
    d, d_ff = configs.d_model, configs.d_ff
    weights: list[torch.Tensor] = []

    def embedding(c_in: int) -> None:
        token = nn.Conv1d(c_in, d, 3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
        weights.extend([token.weight, nn.Linear(4, d, bias=False).weight])  # freq h: 4 timeF features

    def correlation_layer() -> None:
        for _ in range(4):
            linear = nn.Linear(d, d)
            weights.extend([linear.weight, linear.bias])

    def feed_forward() -> None:
        weights.extend([nn.Conv1d(d, d_ff, 1, bias=False).weight, nn.Conv1d(d_ff, d, 1, bias=False).weight])

    embedding(configs.enc_in)
    for _ in range(configs.e_layers):
        correlation_layer()
        feed_forward()
    embedding(configs.dec_in)
    for _ in range(configs.d_layers):
        correlation_layer()
        correlation_layer()
        feed_forward()
        weights.append(nn.Conv1d(d, configs.c_out, 3, padding=1, padding_mode="circular", bias=False).weight)
    projection = nn.Linear(d, configs.c_out)
    return weights + [projection.weight, projection.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = make_configs(**SMALL)
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    ours = [p for name, p in model.named_parameters() if "layernorm" not in name]
    assert len(ours) == len(expected) == sum(1 for _ in model.parameters()) - 4  # + two LayerNorms' two
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine, theirs)
    # The stream is left where TSLib leaves it: the next draw (its first dropout mask) agrees too.
    after_ours = torch.rand(4)
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))


def test_parameter_names_follow_tslib(make_configs):
    names = [name for name, _ in Model(make_configs(**SMALL)).named_parameters()]
    assert names[:2] == ["enc_embedding.value_embedding.tokenConv.weight",
                         "enc_embedding.temporal_embedding.embed.weight"]
    assert "encoder.attn_layers.1.attention.out_projection.bias" in names
    assert "decoder.layers.1.cross_attention.query_projection.weight" in names
    assert names[-5:] == ["decoder.layers.1.projection.weight", "decoder.norm.layernorm.weight",
                          "decoder.norm.layernorm.bias", "decoder.projection.weight", "decoder.projection.bias"]


def test_decoder_start_is_the_decomposed_window(make_configs):
    """The decoder sees the last label_len seasonal steps then zeros, and its trend starts from the last
    label_len trend steps then the window mean; x_dec's values are not read."""
    configs = make_configs(**SMALL)
    model = Model(configs).double().eval()
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    marks = torch.rand(2, 24, 4, dtype=torch.float64) - 0.5
    dec_marks = torch.rand(2, 24, 4, dtype=torch.float64) - 0.5
    seen = {}

    def capture(module, args, kwargs):
        seen["x"], seen["trend"] = args[0], kwargs["trend"]

    handle = model.decoder.register_forward_pre_hook(capture, with_kwargs=True)
    with torch.no_grad():
        out = model(x, marks, torch.randn(2, 24, 3, dtype=torch.float64), dec_marks)
        same = model(x, marks, None, dec_marks)
    handle.remove()
    assert torch.equal(out, same) and out.shape == (2, 12, 3)
    seasonal, trend = model.decomp(x)
    expected_trend = torch.cat([trend[:, 12:], x.mean(dim=1, keepdim=True).expand(-1, 12, -1)], dim=1)
    torch.testing.assert_close(seen["trend"], expected_trend, rtol=0, atol=0)
    seasonal_init = torch.cat([seasonal[:, 12:], torch.zeros(2, 12, 3, dtype=torch.float64)], dim=1)
    torch.testing.assert_close(seen["x"], model.dec_embedding(seasonal_init, dec_marks), rtol=0, atol=0)


def test_ms_output_is_the_target_channel_of_m(make_configs):
    """Under MS (c_out 1) the trend start is the last variate's, as TSLib's last output channel."""
    torch.manual_seed(3)
    model_m = Model(make_configs(**{**SMALL, "c_out": 3})).eval()
    torch.manual_seed(3)
    model_ms = Model(make_configs(**{**SMALL, "c_out": 1})).eval()
    x = torch.randn(2, 24, 3)
    with torch.no_grad():
        seasonal, trend = model_ms.decomp(x)
        out = model_ms(x, None, None, None)
        # Rebuild with the full 3-channel trend start, as TSLib does, and keep its last channel.
        start = torch.cat([trend[:, 12:], x.mean(dim=1, keepdim=True).expand(-1, 12, -1)], dim=1)
        dec_x = torch.cat([seasonal[:, 12:], torch.zeros(2, 12, 3)], dim=1)
        enc, _ = model_ms.encoder(model_ms.enc_embedding(x, None))
        s, t = model_ms.decoder(model_ms.dec_embedding(dec_x, None), enc, trend=start)
    assert out.shape == (2, 12, 1) and model_m(x, None, None, None).shape == (2, 12, 3)
    torch.testing.assert_close((s + t)[:, -12:, -1:], out, rtol=0, atol=0)


def test_label_len_zero_starts_from_placeholders_only(make_configs):
    model = Model(make_configs(**{**SMALL, "label_len": 0})).eval()
    out = model(torch.randn(2, 24, 3), torch.rand(2, 24, 4), None, torch.rand(2, 12, 4))
    assert out.shape == (2, 12, 3) and torch.isfinite(out).all()


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(moving_avg=0), "--moving_avg"),
        (dict(moving_avg=-3), "--moving_avg"),
        (dict(factor=0), "--factor"),
        (dict(task_name="zero_shot_forecast"), "--task_name"),
        (dict(d_model=30, n_heads=4), "--d_model"),
        (dict(activation="swish"), "--activation"),
        (dict(embed="onehot"), "--embed"),
        (dict(c_out=4), "--c_out"),
        (dict(dec_in=2), "--dec_in"),
        (dict(label_len=25), "--label_len"),
        (dict(d_layers=0), "--d_layers"),
        (dict(dropout=1.0), "--dropout"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, overrides: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=flag) as error:
        Model(make_configs(**{**SMALL, **overrides}))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_use_the_encoder_alone(make_configs, task: str) -> None:
    """TSLib builds Autoformer's decoder only when forecasting."""
    check = {"imputation": check_imputation_head, "anomaly_detection": check_anomaly_head,
             "classification": check_classification_head}[task]
    net = check(make_configs, "Autoformer", Model)
    assert not hasattr(net, "decoder") and not hasattr(net, "dec_embedding")


def test_forecasting_is_the_same_for_long_and_short_term(make_configs) -> None:
    """TSLib's Autoformer runs one forecasting path for both task names (no normalisation)."""
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    outs = []
    for task in ("long_term_forecast", "short_term_forecast"):
        torch.manual_seed(0)
        configs = make_configs(model="Autoformer", task_name=task, seq_len=24, label_len=12, pred_len=6, enc_in=3,
                               dec_in=3, c_out=3, d_model=8, d_ff=8, n_heads=2, e_layers=1, d_layers=1, dropout=0.0)
        with torch.no_grad():
            outs.append(Model(configs).double().eval()(x, None, None, None))
    torch.testing.assert_close(outs[0], outs[1])
