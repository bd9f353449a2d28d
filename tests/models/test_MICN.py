"""MICN: TSLib's initial weights for a seed, the multi-scale decomposition, the isometric convolution's
lengths, the marks of the seasonal input for any --label_len, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.Autoformer_EncDec import series_decomp, series_decomp_multi
from models.MICN import CONV_KERNELS, MIC, Model, decomposition_kernel, downsampled_length
from tests.models.tslib_reference import assert_tslib_initial_weights

B = 2
SMALL = dict(model="MICN", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, d_layers=2,
             enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF", dropout=0.1)


def configs_for(make_configs, **overrides):
    return make_configs(**{**SMALL, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's MICN initialisation, module by module: circular token Conv1d (then Kaiming-normal fan_in,
    leaky_relu) and bias-free timeF Linear; per MIC layer the isometric Conv1d per scale, the
    down-sampling Conv1d per scale, the ConvTranspose1d per scale, the merge Conv2d, the two 1×1
    Conv1d and three LayerNorms; the projection Linear(D → c_out); the regression Linear(L → H), whose
    weight is then overwritten (no draw; 1/L here, see models/MICN.py). Moving averages draw nothing."""
    torch.manual_seed(seed)
    d, d_ff = configs.d_model, 4 * configs.d_model  # TSLib's MIC feed-forward width; --d_ff is not read
    total = configs.seq_len + configs.pred_len
    weights: list[torch.Tensor] = []

    def add(*modules: nn.Module) -> None:
        for module in modules:
            weights.extend(module.parameters())

    token = nn.Conv1d(configs.enc_in, d, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    add(token, nn.Linear(4, d, bias=False))  # freq h: 4 timeF features
    for _ in range(configs.d_layers):
        add(*[nn.Conv1d(d, d, (total + k) // k) for k in CONV_KERNELS])
        add(*[nn.Conv1d(d, d, k, stride=k, padding=k // 2) for k in CONV_KERNELS])
        add(*[nn.ConvTranspose1d(d, d, k, stride=k) for k in CONV_KERNELS])
        add(nn.Conv2d(d, d, (len(CONV_KERNELS), 1)), nn.Conv1d(d, d_ff, 1), nn.Conv1d(d_ff, d, 1))
        add(nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d))
    add(nn.Linear(d, configs.c_out))
    regression = nn.Linear(configs.seq_len, configs.pred_len)
    with torch.no_grad():
        regression.weight.fill_(1.0 / configs.seq_len)
    add(regression)
    return weights


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_tslib_kernels_at_the_etth1_block():
    """seq_len 96 + pred_len 96: decomposition kernels 13, 17 and isometric kernels 17, 13 (TSLib's tree)."""
    assert [decomposition_kernel(k) for k in CONV_KERNELS] == [13, 17]
    assert [downsampled_length(192, k) for k in CONV_KERNELS] == [17, 13]


@pytest.mark.parametrize("length", [1, 63, 97], ids=lambda t: f"T{t}")
def test_multi_scale_decomposition_is_the_mean_of_single_scales(length: int):
    kernels = [5, 13, 8]
    x = torch.randn(B, length, 4, dtype=torch.float64)
    seasonal, trend = series_decomp_multi(kernels)(x)
    singles = [series_decomp(k)(x) for k in kernels]
    torch.testing.assert_close(trend, torch.stack([t for _, t in singles]).mean(dim=0))
    torch.testing.assert_close(seasonal, torch.stack([s for s, _ in singles]).mean(dim=0))
    torch.testing.assert_close(seasonal + trend, x)


@pytest.mark.parametrize("length", [1, 63, 97, 192], ids=lambda t: f"T{t}")
@pytest.mark.parametrize("kernel", [5, 12, 16], ids=lambda k: f"k{k}")
def test_isometric_convolution_keeps_the_downsampled_length(length: int, kernel: int):
    """Down-sampling gives S = downsampled_length(T, k) steps; the kernel-S isometric convolution over the
    S − 1 front zeros plus those S steps returns S steps; the branch returns T steps."""
    d = 4
    mic = MIC(d, 8, 0.0, [decomposition_kernel(kernel)], [kernel], [downsampled_length(length, kernel)]).double()
    x = torch.randn(B, length, d, dtype=torch.float64)
    local = mic.conv[0](x.transpose(1, 2))  # [B, D, S]
    steps = downsampled_length(length, kernel)
    assert local.shape == (B, d, steps)
    padded = torch.cat([local.new_zeros(B, d, steps - 1), local], dim=2)  # [B, D, 2S − 1]
    assert mic.isometric_conv[0](padded).shape == (B, d, steps)
    assert mic.local_global(x, 0).shape == (B, length, d)
    assert mic(x).shape == (B, length, d)


def test_isometric_convolution_is_causal_over_downsampled_steps():
    """With S − 1 front zeros, step j of the isometric output sees down-sampled steps 0..j only."""
    d, length, kernel = 4, 97, 12
    mic = MIC(d, 8, 0.0, [13], [kernel], [downsampled_length(length, kernel)]).double().eval()
    local = torch.randn(B, d, downsampled_length(length, kernel), dtype=torch.float64)
    edited = local.clone()
    edited[:, :, 5] += 1.0

    def isometric(z: torch.Tensor) -> torch.Tensor:
        return mic.isometric_conv[0](torch.cat([z.new_zeros(B, d, z.shape[2] - 1), z], dim=2))

    with torch.no_grad():
        diff = (isometric(edited) - isometric(local)).abs().amax(dim=(0, 1))  # [S]
    assert (diff[:5] == 0).all() and (diff[5:] > 0).all()


def test_any_label_len_uses_the_same_marks(make_configs):
    """The seasonal input (L + H steps) is embedded with x_mark_enc then the last H marks of x_mark_dec:
    label_len 12 gives the output of label_len = seq_len (TSLib's only working setting)."""
    configs = configs_for(make_configs)
    model = Model(configs).eval()
    steps = configs.seq_len + configs.pred_len
    marks = torch.rand(B, steps, 4) - 0.5  # marks of the input window and the horizon
    x_enc = torch.randn(B, configs.seq_len, configs.enc_in)
    x_mark_enc = marks[:, : configs.seq_len]
    with torch.no_grad():
        full = model(x_enc, x_mark_enc, None, marks)
        short = model(x_enc, x_mark_enc, None, marks[:, configs.seq_len - configs.label_len:])
    torch.testing.assert_close(short, full, rtol=0, atol=0)
    assert full.shape == (B, configs.pred_len, configs.c_out)


def test_trend_regression_starts_as_the_window_mean(make_configs):
    """Weights 1/L (TSLib's 1/H differs when L ≠ H): with zero bias every step is the trend's mean."""
    configs = configs_for(make_configs)
    model = Model(configs)
    with torch.no_grad():
        model.regression.bias.zero_()
        trend = torch.randn(B, configs.enc_in, configs.seq_len)
        torch.testing.assert_close(model.regression(trend),
                                   trend.mean(dim=2, keepdim=True).expand(-1, -1, configs.pred_len))


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="zero_shot_forecast"), "--task_name"), (dict(d_layers=0), "--d_layers"),
     (dict(dec_in=2), "--dec_in"), (dict(c_out=5), "--c_out"),
     (dict(embed="onehot"), "--embed"), (dict(dropout=1.0), "--dropout"), (dict(pred_len=0), "--pred_len")],
    ids=["task", "d_layers", "dec_in", "c_out", "embed", "dropout", "pred_len"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def window_configs(make_configs, task: str, **overrides):
    """A window task's namespace as its experiment builds it (--pred_len 0; num_class from the data)."""
    flags = {**SMALL, "task_name": task, "label_len": 0, "pred_len": 0, "d_layers": 1, "dropout": 0.0}
    configs = make_configs(**{**flags, **overrides})
    if task == "classification":
        configs.num_class = 4
    return configs


def test_mic_feed_forward_is_four_d_model_whatever_d_ff(make_configs):
    """TSLib's MICN never reads --d_ff (its JapaneseVowels count, d_model 128 / d_ff 256, needs 4·128)."""
    counts = set()
    for d_ff in (16, 64):
        model = Model(configs_for(make_configs, d_ff=d_ff))
        assert tuple(model.conv_trans.mic[0].conv1.weight.shape) == (4 * 8, 8, 1)
        counts.add(sum(p.numel() for p in model.parameters()))
    assert len(counts) == 1


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_run_over_the_window_without_the_regression(make_configs, task):
    model = Model(window_configs(make_configs, task))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert not hasattr(model, "regression")
    # Isometric kernels of T = L = 24 steps: (24 + 12) // 12 and (24 + 16) // 16.
    assert [conv.kernel_size[0] for conv in model.conv_trans.mic[0].isometric_conv] == [3, 2]
    assert shapes["conv_trans.projection.weight"] == (3, 8)
    assert ("projection.weight" in shapes) == (task == "classification")
    if task == "classification":
        assert shapes["projection.weight"] == (4, 3 * 24)


def test_imputation_shape_pred_len_independence_and_marks(make_configs):
    x = torch.randn(B, 24, 3)
    mask = (torch.rand(B, 24, 3) > 0.3).float()
    marks = torch.rand(B, 24, 4) - 0.5
    outs = []
    for pred_len in (0, 96):
        torch.manual_seed(1)
        model = Model(window_configs(make_configs, "imputation", pred_len=pred_len)).eval()
        with torch.no_grad():
            outs.append(model(x * mask, marks, None, None, mask))
    assert outs[0].shape == (B, 24, 3)
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
    with torch.no_grad():
        assert not torch.allclose(outs[0], model(x * mask, None, None, None, mask))  # the window's marks are read


def test_anomaly_forward_is_seasonal_prediction_plus_trend(make_configs):
    model = Model(window_configs(make_configs, "anomaly_detection")).eval()
    x = torch.randn(B, 24, 3)
    with torch.no_grad():
        out = model(x, None, None, None)
        torch.testing.assert_close(out, model.anomaly_detection(x), rtol=0, atol=0)
        seasonal, trend = model.decomp_multi(x)
        torch.testing.assert_close(out, model.conv_trans(model.dec_embedding(seasonal, None)) + trend)
    assert out.shape == (B, 24, 3)


def test_classification_zeroes_padded_steps_before_the_projection(make_configs):
    model = Model(window_configs(make_configs, "classification")).eval()
    x = torch.randn(B, 24, 3)
    mask = torch.ones(B, 24)
    mask[:, 15:] = 0
    with torch.no_grad():
        full, masked = model(x, torch.ones(B, 24), None, None), model(x, mask, None, None)
        features = nn.functional.gelu(model.reconstruct(x, None))  # [B, L, c_out]
        weight = model.projection.weight.reshape(4, 24, 3)
        expected = torch.einsum("btc,ktc->bk", features[:, :15], weight[:, :15]) + model.projection.bias
    torch.testing.assert_close(masked, expected)
    assert not torch.allclose(full, masked)


@pytest.mark.parametrize(("enc_in", "c_out"), [(12, 7), (6, 7)], ids=["JapaneseVowels", "BasicMotions"])
def test_classification_width_is_c_out_and_the_trend_joins_the_last_channels(make_configs, enc_in, c_out):
    """TSLib's build reads --c_out (default 7) whatever the data's variates and then fails on
    seasonal + trend; here the last min(c_out, enc_in) trend variates join the last channels."""
    model = Model(window_configs(make_configs, "classification", enc_in=enc_in, dec_in=7, c_out=c_out)).eval()
    assert tuple(model.projection.weight.shape) == (4, c_out * 24)
    x = torch.randn(B, 24, enc_in)
    k = min(enc_in, c_out)
    with torch.no_grad():
        seasonal, trend = model.decomp_multi(x)
        expected = model.conv_trans(model.dec_embedding(seasonal, None))  # [B, L, c_out]
        expected[..., c_out - k:] += trend[..., enc_in - k:]
        torch.testing.assert_close(model.reconstruct(x, None), expected)
        assert model(x, torch.ones(B, 24), None, None).shape == (B, 4)
