"""Informer draws its initial weights in TSLib's constructor order, distils (or not) as `--distil` says,
and rejects bad flags naming them."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.SelfAttention_Family import ProbAttention
from models.Informer import Model
from tests.models.test_Transformer import check_anomaly_head, check_classification_head, check_imputation_head


def small_configs(make_configs, **overrides):
    flags = dict(model="Informer", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, n_heads=2,
                 e_layers=3, d_layers=2, factor=3, enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's Informer initialisation, module by module: two DataEmbeddings (circular token Conv1d
    re-drawn Kaiming-normal fan_in leaky_relu, bias-free timeF Linear), e_layers × (q, k, v, out Linear;
    FFN Conv1d d→d_ff, d_ff→d), (e_layers − 1) distilling Conv1d(k=3), d_layers × (8 Linear; 2 Conv1d),
    the projection. Norm layers draw nothing."""
    torch.manual_seed(seed)
    d, d_ff = configs.d_model, configs.d_ff
    weights = []

    def add(module: nn.Module) -> None:
        weights.extend(p for p in (module.weight, module.bias) if p is not None)

    for c_in in (configs.enc_in, configs.dec_in):
        token = nn.Conv1d(c_in, d, 3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
        add(token)
        add(nn.Linear(4, d, bias=False))  # freq h: 4 timeF features
    for _ in range(configs.e_layers):
        for _ in range(4):
            add(nn.Linear(d, d))
        add(nn.Conv1d(d, d_ff, 1))
        add(nn.Conv1d(d_ff, d, 1))
    if configs.distil:
        for _ in range(configs.e_layers - 1):
            add(nn.Conv1d(d, d, 3, padding=2, padding_mode="circular"))
    for _ in range(configs.d_layers):
        for _ in range(8):
            add(nn.Linear(d, d))
        add(nn.Conv1d(d, d_ff, 1))
        add(nn.Conv1d(d_ff, d, 1))
    add(nn.Linear(d, configs.c_out))
    return weights


@pytest.mark.parametrize("distil", [True, False], ids=["distil", "no-distil"])
def test_initial_weights_follow_tslib_construction_order(make_configs, distil: bool) -> None:
    configs = small_configs(make_configs, distil=distil)
    expected = tslib_initial_weights(configs, seed=2021)
    after_tslib = torch.rand(4)
    torch.manual_seed(2021)
    model = Model(configs)
    # Parameters are listed in construction order; LayerNorm/BatchNorm ones are constants (ones, zeros).
    norms = {name for name, m in model.named_modules() if isinstance(m, (nn.LayerNorm, nn.BatchNorm1d))}
    ours = [p for name, p in model.named_parameters() if name.rsplit(".", 1)[0] not in norms]
    assert len(ours) == len(expected)
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine, theirs)
    # The stream is left where TSLib leaves it.
    assert torch.equal(torch.rand(4), after_tslib)


def test_distil_halves_the_encoder_length_and_the_flag_turns_it_off(make_configs) -> None:
    lengths = {}
    for distil in (True, False):
        model = Model(small_configs(make_configs, distil=distil, seq_len=96, label_len=48, pred_len=24)).eval()
        seen = []
        for layer in model.encoder.attn_layers:
            layer.register_forward_hook(lambda _m, args, _out, seen=seen: seen.append(args[0].shape[1]))
        x_enc = torch.randn(2, 96, 3)
        x_dec = torch.cat([x_enc[:, -48:], torch.zeros(2, 24, 3)], dim=1)
        out = model(x_enc, torch.rand(2, 96, 4) - 0.5, x_dec, torch.rand(2, 72, 4) - 0.5)
        assert out.shape == (2, 24, 3)
        lengths[distil] = seen
        n_conv = 0 if model.encoder.conv_layers is None else len(model.encoder.conv_layers)
        assert n_conv == (2 if distil else 0)
    assert lengths == {True: [96, 49, 26], False: [96, 96, 96]}


def test_tslib_parameter_names_where_our_layers_keep_them(make_configs) -> None:
    names = {name for name, _ in Model(small_configs(make_configs)).named_parameters()}
    assert {"encoder.conv_layers.0.downConv.weight", "encoder.conv_layers.1.norm.bias", "encoder.norm.weight",
            "decoder.layers.1.cross_attention.out_projection.bias", "decoder.projection.weight"} <= names


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(task_name="zero_shot_forecast"), "--task_name"),
        (dict(factor=0), "--factor"),
        (dict(d_model=10, n_heads=4), "--d_model"),
        (dict(activation="swish"), "--activation"),
        (dict(embed="onehot"), "--embed"),
        (dict(e_layers=0), "--e_layers"),
        (dict(d_layers=0), "--d_layers"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, overrides: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=flag):
        Model(small_configs(make_configs, **overrides))


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_keep_every_step_and_tslib_s_decoder(make_configs, task: str) -> None:
    """TSLib distils only when forecasting (the window heads read out all L steps) and builds the decoder for
    every task (its parameters are in TSLib's JapaneseVowels count), unused here."""
    check = {"imputation": check_imputation_head, "anomaly_detection": check_anomaly_head,
             "classification": check_classification_head}[task]
    net = check(make_configs, "Informer", Model)
    assert net.encoder.conv_layers is None
    names = {name for name, _ in net.named_parameters()}
    assert {"dec_embedding.value_embedding.tokenConv.weight", "decoder.projection.weight"} <= names


def test_short_term_forecast_is_instance_normalised(make_configs) -> None:
    """short_term_forecast normalises the window and the decoder's start tokens (long-term does not): with
    start tokens cut from the window and zero placeholders, f(3x + 5) = 3 f(x) + 5 (up to the eps under the
    std). TSLib feeds the start tokens raw, which breaks this."""
    label_len, horizon = 6, 4
    x = torch.randn(2, 24, 3, dtype=torch.float64)

    def decoder_input(window: torch.Tensor) -> torch.Tensor:
        return torch.cat([window[:, -label_len:], torch.zeros(2, horizon, 3, dtype=torch.float64)], dim=1)

    for task, equivariant in (("short_term_forecast", True), ("long_term_forecast", False)):
        torch.manual_seed(0)
        configs = small_configs(make_configs, task_name=task, label_len=label_len, pred_len=horizon, dropout=0.0)
        model = Model(configs).double().eval()
        with torch.no_grad():
            moved = model(3 * x + 5, None, decoder_input(3 * x + 5), None)
            base = model(x, None, decoder_input(x), None)
        assert moved.shape == (2, horizon, 3)
        assert torch.allclose(moved, 3 * base + 5, rtol=1e-4, atol=1e-4) == equivariant


def test_short_term_forecast_needs_matching_decoder_channels(make_configs) -> None:
    with pytest.raises(ValueError, match="--dec_in"):
        Model(small_configs(make_configs, task_name="short_term_forecast", dec_in=2))
    with pytest.raises(ValueError, match="--c_out"):
        Model(small_configs(make_configs, task_name="short_term_forecast", c_out=4))


def _forecast(model: nn.Module, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x_enc = torch.randn(2, 24, 3, generator=g)
    x_dec = torch.cat([x_enc[:, -12:], torch.zeros(2, 12, 3)], dim=1)
    with torch.no_grad():
        return model(x_enc, torch.rand(2, 24, 4, generator=g) - 0.5, x_dec, torch.rand(2, 24, 4, generator=g) - 0.5)


def test_tslib_flags_reach_every_prob_attention_and_keep_the_weights(make_configs) -> None:
    """`--attn_output_layout tslib --prob_eval_sampling global` (TSLib's forward and eval stream) change no
    parameter or initial weight, reach the encoder, decoder self- and cross-attention, and change the output."""
    models = {}
    for layout, sampling in (("per_step", "fixed"), ("tslib", "global")):
        torch.manual_seed(2021)
        models[layout] = Model(small_configs(make_configs, attn_output_layout=layout, prob_eval_sampling=sampling))
        inner = [m for m in models[layout].modules() if isinstance(m, ProbAttention)]
        assert len(inner) == 3 + 2 * 2  # e_layers 3, d_layers 2 (self and cross)
        assert {(m.output_layout, m.eval_sample_seed) for m in inner} == {(layout, 0 if sampling == "fixed" else None)}
    ours, tslib = (models[k].state_dict() for k in ("per_step", "tslib"))
    assert ours.keys() == tslib.keys() and all(torch.equal(ours[k], tslib[k]) for k in ours)
    models["tslib"].eval()
    models["per_step"].eval()
    torch.manual_seed(5)
    out_tslib = _forecast(models["tslib"])
    assert not torch.allclose(_forecast(models["per_step"]), out_tslib)


@pytest.mark.parametrize(("flag", "value"), [("attn_output_layout", "heads"), ("prob_eval_sampling", "seeded")])
def test_bad_tslib_flag_values_name_the_flag(make_configs, flag: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"--{flag}") as err:
        Model(small_configs(make_configs, **{flag: value}))
    assert "\n" not in str(err.value)
