"""Non-stationary Transformer: TSLib's construction order, the projectors, de-stationary attention and
the de-normalisation (paper eq. 1-2, 5-6)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.Embed import DataEmbedding
from layers.SelfAttention_Family import AttentionLayer, DSAttention, FullAttention
from layers.Transformer_EncDec import DecoderLayer, EncoderLayer
from models.Nonstationary_Transformer import Model, Projector
from models.Transformer import Model as Transformer
from tests.models.tslib_reference import assert_tslib_initial_weights

B, S, LABEL, H, N = 3, 20, 8, 12, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="Nonstationary_Transformer", seq_len=S, label_len=LABEL, pred_len=H, enc_in=N, dec_in=N,
                 c_out=N, d_model=16, n_heads=2, d_ff=32, e_layers=2, d_layers=1, p_hidden_dims=[8, 6],
                 p_hidden_layers=2, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def inputs(configs, seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    # A non-stationary window: per-variate level and scale far from 0 and 1.
    x_enc = 5.0 + 3.0 * torch.randn(B, configs.seq_len, configs.enc_in, generator=g).cumsum(dim=1)
    x_mark_enc = torch.rand(B, configs.seq_len, 4, generator=g) - 0.5
    dec_len = configs.label_len + configs.pred_len
    x_dec = torch.zeros(B, dec_len, configs.dec_in)
    x_mark_dec = torch.rand(B, dec_len, 4, generator=g) - 0.5
    return x_enc, x_mark_enc, x_dec, x_mark_dec


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's order: encoder embedding, encoder layers (attention projections, then conv1/conv2/norms),
    encoder norm, decoder embedding, decoder layers (self-, cross-attention, FFN), decoder norm and
    projection, then the τ and δ projectors (series_conv, then the MLP)."""
    torch.manual_seed(seed)
    d, dff = configs.d_model, configs.d_ff

    def attn(causal: bool) -> AttentionLayer:
        return AttentionLayer(DSAttention(causal), d, configs.n_heads)

    def projector(out: int) -> list[nn.Module]:
        conv = nn.Conv1d(configs.seq_len, 1, kernel_size=3, padding=1, padding_mode="circular", bias=False)
        dims = [2 * configs.enc_in, *configs.p_hidden_dims]
        linears = [nn.Linear(i, o) for i, o in zip(dims[:-1], dims[1:], strict=True)]
        return [conv, *linears, nn.Linear(dims[-1], out, bias=False)]

    modules: list[nn.Module] = [DataEmbedding(configs.enc_in, d, "timeF", "h")]
    modules += [EncoderLayer(attn(False), d, dff) for _ in range(configs.e_layers)] + [nn.LayerNorm(d)]
    modules.append(DataEmbedding(configs.dec_in, d, "timeF", "h"))
    modules += [DecoderLayer(attn(True), attn(False), d, dff) for _ in range(configs.d_layers)]
    modules += [nn.LayerNorm(d), nn.Linear(d, configs.c_out)]
    modules += projector(1) + projector(configs.seq_len)
    return [p for m in modules for p in m.parameters()]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_destationary_attention_with_unit_tau_zero_delta_is_full_attention(causal: bool):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 7, 3, 5, generator=g, dtype=torch.float64) for _ in range(3))
    ds = DSAttention(causal, attention_dropout=0.0)
    full = FullAttention(causal, attention_dropout=0.0)
    expected, _ = full(q, k, v, None)
    tau, delta = torch.ones(2, 1, dtype=torch.float64), torch.zeros(2, 7, dtype=torch.float64)
    torch.testing.assert_close(ds(q, k, v, None, tau=tau, delta=delta)[0], expected)


def test_destationary_attention_is_eq6():
    """softmax((τ Q Kᵀ + 1 Δᵀ) / √E) V written out."""
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 6, 3, 4, generator=g, dtype=torch.float64) for _ in range(3))
    tau = torch.rand(2, 1, generator=g, dtype=torch.float64) + 0.5
    delta = torch.randn(2, 6, generator=g, dtype=torch.float64)
    scores = tau[:, None, :, None] * torch.einsum("blhe,bshe->bhls", q, k) + delta[:, None, None, :]
    expected = torch.einsum("bhls,bshd->blhd", torch.softmax(scores / 2.0, dim=-1), v)
    out, _ = DSAttention(False, attention_dropout=0.0)(q, k, v, None, tau=tau, delta=delta)
    torch.testing.assert_close(out, expected)


def test_projector_mixes_time_then_concatenates_the_statistic():
    torch.manual_seed(0)
    proj = Projector(enc_in=N, seq_len=S, hidden_dims=[8], hidden_layers=1, output_dim=5).double()
    x = torch.randn(B, S, N, dtype=torch.float64)
    stats = torch.randn(B, 1, N, dtype=torch.float64)
    w = proj.series_conv.weight[0]  # [S, 3]
    # Circular convolution over the variate axis with the time steps as channels.
    padded = torch.cat([x[:, :, -1:], x, x[:, :, :1]], dim=2)  # [B, S, N + 2]
    mixed = torch.stack([(padded[:, :, j:j + 3] * w).sum(dim=(1, 2)) for j in range(N)], dim=1)  # [B, N]
    features = torch.cat([mixed, stats[:, 0]], dim=1)  # [B, 2N]
    first, last = proj.backbone[0], proj.backbone[2]
    expected = last(torch.relu(first(features)))
    torch.testing.assert_close(proj(x, stats), expected)
    assert proj(x, stats).shape == (B, 5)


def test_output_denormalisation_restores_mean_and_std(make_configs):
    """With a constant decoder output c the forecast is μ_x + c·σ_x per variate (eq. 2)."""
    configs = configs_for(make_configs)
    model = Model(configs).eval()
    with torch.no_grad():
        model.decoder.projection.weight.zero_()
        model.decoder.projection.bias.fill_(1.5)
        x_enc, *rest = inputs(configs)
        out = model(x_enc, *rest)
    mean = x_enc.mean(dim=1, keepdim=True)
    std = torch.sqrt(x_enc.var(dim=1, keepdim=True, unbiased=False) + 1e-5)
    torch.testing.assert_close(out, (mean + 1.5 * std).expand(B, H, N))


def test_unit_tau_zero_delta_reduces_to_a_stationarized_transformer(make_configs):
    """Zeroing the projectors' output layers gives τ = exp(0) = 1 and Δ = 0: the model is then the
    vanilla Transformer (same weights) run on the normalised series, de-normalised."""
    configs = configs_for(make_configs)
    model = Model(configs).double().eval()
    with torch.no_grad():
        model.tau_learner.backbone[-1].weight.zero_()
        model.delta_learner.backbone[-1].weight.zero_()
    vanilla = Transformer(configs_for(make_configs, model="Transformer")).double().eval()
    vanilla.load_state_dict(model.state_dict(), strict=False)
    x_enc, x_mark_enc, x_dec, x_mark_dec = (t.double() for t in inputs(configs))
    mean = x_enc.mean(dim=1, keepdim=True)
    std = torch.sqrt(x_enc.var(dim=1, keepdim=True, unbiased=False) + 1e-5)
    x_norm = (x_enc - mean) / std
    dec = torch.cat([x_norm[:, -LABEL:], torch.zeros(B, H, N, dtype=torch.float64)], dim=1)
    with torch.no_grad():
        expected = vanilla(x_norm, x_mark_enc, dec, x_mark_dec) * std + mean
        torch.testing.assert_close(model(x_enc, x_mark_enc, x_dec, x_mark_dec), expected)


def test_learned_delta_changes_the_forecast(make_configs):
    """Δ reaches the attention: a non-zero δ output layer changes the output."""
    configs = configs_for(make_configs)
    model = Model(configs).eval()
    batch = inputs(configs)
    with torch.no_grad():
        base = model(*batch)
        model.delta_learner.backbone[-1].weight.mul_(10.0)
        moved = model(*batch)
    assert not torch.allclose(base, moved)


def test_label_len_zero_starts_from_placeholders_only(make_configs):
    configs = configs_for(make_configs, label_len=0)
    model = Model(configs).eval()
    x_enc, x_mark_enc, _, x_mark_dec = inputs(configs)
    with torch.no_grad():
        out = model(x_enc, x_mark_enc, torch.zeros(B, H, N), x_mark_dec)
    assert out.shape == (B, H, N)


def test_ms_returns_the_last_variate_with_its_statistics(make_configs):
    configs = configs_for(make_configs, c_out=1)
    model = Model(configs).eval()
    with torch.no_grad():
        model.decoder.projection.weight.zero_()
        model.decoder.projection.bias.fill_(-2.0)
        x_enc, *rest = inputs(configs)
        out = model(x_enc, *rest)
    mean = x_enc[:, :, -1:].mean(dim=1, keepdim=True)
    std = torch.sqrt(x_enc[:, :, -1:].var(dim=1, keepdim=True, unbiased=False) + 1e-5)
    torch.testing.assert_close(out, (mean - 2.0 * std).expand(B, H, 1))


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(task_name="segmentation"), "--task_name"),
        (dict(dec_in=3), "--dec_in"),
        (dict(label_len=S + 1), "--label_len"),
        (dict(p_hidden_dims=[8]), "--p_hidden_dims"),
        (dict(p_hidden_layers=0), "--p_hidden_layers"),
        (dict(c_out=N + 1), "--c_out"),
        (dict(d_model=15), "--d_model"),
    ],
    ids=["task", "dec_in", "label_len", "hidden_dims", "hidden_layers", "c_out", "heads"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


# The window tasks (TSLib's imputation, anomaly-detection and classification heads).
WINDOW = dict(seq_len=24, label_len=0, pred_len=0, enc_in=5, dec_in=5, c_out=5, d_model=16, n_heads=2, d_ff=16,
              e_layers=1, d_layers=1, p_hidden_dims=[8, 8], p_hidden_layers=2, dropout=0.0)


def window_model(make_configs, task: str, num_class: int = 4, **overrides) -> Model:
    configs = make_configs(**{**WINDOW, "task_name": task, **overrides})
    configs.num_class = num_class
    return Model(configs).eval()


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_tasks_build_the_encoder_and_tslib_head_only(make_configs, task):
    model = window_model(make_configs, task)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert not any(name.startswith(("decoder.", "dec_embedding.")) for name in shapes)
    head = (4, 16 * 24) if task == "classification" else (5, 16)
    assert shapes["projection.weight"] == head
    assert shapes["delta_learner.backbone.4.weight"] == (24, 8)


def test_imputation_shape_and_pred_len_does_not_change_it(make_configs):
    g = torch.Generator().manual_seed(0)
    x, marks = torch.randn(3, 24, 5, generator=g), torch.rand(3, 24, 4, generator=g) - 0.5
    mask = (torch.rand(3, 24, 5, generator=g) > 0.3).float()
    outputs = []
    for pred_len in (0, 96):
        torch.manual_seed(0)
        model = window_model(make_configs, "imputation", pred_len=pred_len)
        outputs.append(model(x * mask, marks, None, None, mask))
    assert outputs[0].shape == (3, 24, 5)
    torch.testing.assert_close(outputs[0], outputs[1])


def test_imputation_denormalises_with_the_observed_statistics(make_configs):
    """Shifting and scaling the observed values shifts and scales the reconstruction (τ, Δ aside: the
    projector sees the raw series, so compare with a model whose learners give τ = 1, Δ = 0)."""
    model = window_model(make_configs, "imputation")
    for learner in (model.tau_learner, model.delta_learner):
        nn.init.zeros_(learner.backbone[-1].weight)
    g = torch.Generator().manual_seed(1)
    x, marks = torch.randn(2, 24, 5, generator=g), torch.rand(2, 24, 4, generator=g) - 0.5
    mask = (torch.rand(2, 24, 5, generator=g) > 0.3).float()
    base = model(x * mask, marks, None, None, mask)
    moved = model((3 * x + 2) * mask, marks, None, None, mask)
    torch.testing.assert_close(moved, 3 * base + 2, rtol=1e-4, atol=1e-4)


def test_anomaly_forward_dispatches_to_the_reconstruction(make_configs):
    model = window_model(make_configs, "anomaly_detection")
    x = torch.randn(3, 24, 5)
    out = model(x, None, None, None)
    assert out.shape == (3, 24, 5)
    torch.testing.assert_close(out, model.anomaly_detection(x))


def test_classification_zeroes_padded_steps_before_the_projection(make_configs):
    model = window_model(make_configs, "classification")
    x = torch.randn(2, 24, 5)
    padding = torch.ones(2, 24)
    padding[:, 15:] = 0
    with torch.no_grad():
        masked, full = model(x, padding, None, None), model(x, torch.ones(2, 24), None, None)
        # By hand: τ and Δ from the raw window's statistics, the raw window embedded, padded steps dropped.
        mean = x.mean(1, keepdim=True)
        std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        tau, delta = model.tau_learner(x, std).exp(), model.delta_learner(x, mean)
        tokens, _ = model.encoder(model.enc_embedding(x, None), tau=tau, delta=delta)
        weight = model.projection.weight.reshape(4, 24, 16)
        expected = torch.einsum("btd,ktd->bk", nn.functional.gelu(tokens)[:, :15], weight[:, :15])
    torch.testing.assert_close(masked, expected + model.projection.bias)
    assert not torch.allclose(masked, full)
