"""TimeMixer: TSLib's initial weights for a seed, the down-sampling and decomposition choices, the
channel-independent and channel-mixing paths, the imputation / anomaly / classification heads, and
one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.Autoformer_EncDec import DFT_series_decomp, series_decomp
from layers.MultiScale import scale_lengths
from models.TimeMixer import Model

B, L, H, N = 3, 32, 12, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="TimeMixer", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, d_ff=16, e_layers=2, down_sampling_layers=2, down_sampling_window=2,
                 down_sampling_method="avg", embed="timeF", freq="h", moving_avg=5, top_k=3)
    return make_configs(**{**flags, **overrides})


def batch(configs, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, configs.seq_len, configs.enc_in, generator=gen)
    marks = torch.rand(B, configs.seq_len, 4, generator=gen) - 0.5
    return x, marks


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's TimeMixer initialisation, module by module: e_layers × PDM (LayerNorm, [cross_layer when
    channel_independence 0], seasonal Linear pairs fine → coarse, trend Linear pairs coarse → fine,
    out_cross_layer), the circular token Conv1d (Kaiming-normal fan_in, leaky_relu), the bias-free timeF
    Linear, the Normalize layers (ones/zeros), predict_layers, projection_layer, then with channel
    independence 0 out_res_layers and regression_layers. LayerNorm and Normalize draw nothing."""
    torch.manual_seed(seed)
    lengths = scale_lengths(configs.seq_len, configs.down_sampling_window, configs.down_sampling_layers)
    d, d_ff, independent = configs.d_model, configs.d_ff, configs.channel_independence == 1
    modules: list[nn.Module] = []
    for _ in range(configs.e_layers):
        if not independent:
            modules += [nn.Linear(d, d_ff), nn.Linear(d_ff, d)]
        for m in range(len(lengths) - 1):
            modules += [nn.Linear(lengths[m], lengths[m + 1]), nn.Linear(lengths[m + 1], lengths[m + 1])]
        for m in reversed(range(len(lengths) - 1)):
            modules += [nn.Linear(lengths[m + 1], lengths[m]), nn.Linear(lengths[m], lengths[m])]
        modules += [nn.Linear(d, d_ff), nn.Linear(d_ff, d)]
    token = nn.Conv1d(1 if independent else configs.enc_in, d, 3, padding=1, padding_mode="circular", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    modules += [token, nn.Linear(4, d, bias=False)]
    modules += [nn.Linear(length, configs.pred_len) for length in lengths]
    modules.append(nn.Linear(d, 1 if independent else configs.c_out))
    if not independent:
        modules += [nn.Linear(length, length) for length in lengths]
        modules += [nn.Linear(length, configs.pred_len) for length in lengths]
    return [p for module in modules for p in module.parameters()]


@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
def test_initial_weights_follow_tslib_construction_order(make_configs, channel_independence: int) -> None:
    configs = configs_for(make_configs, channel_independence=channel_independence)
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    after_ours = torch.rand(4)
    drawn = {name: p for name, p in model.named_parameters()
             if ".layer_norm." not in name and not name.startswith("normalize_layers.")}
    assert len(drawn) == len(expected)
    for (name, mine), theirs in zip(drawn.items(), expected, strict=True):
        assert torch.equal(mine, theirs), name
    for name, p in model.named_parameters():
        if name not in drawn:
            assert torch.equal(p, torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p)), name
    # The stream is left where TSLib leaves it: the next draw (its first dropout mask) agrees too.
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))


def test_module_tree_matches_tslib_names(make_configs) -> None:
    model = Model(configs_for(make_configs, down_sampling_layers=3, seq_len=96))
    block = model.pdm_blocks[0]
    assert isinstance(block.decompsition, series_decomp)
    assert [layer[0].in_features for layer in block.mixing_multi_scale_season.down_sampling_layers] == [96, 48, 24]
    assert [layer[0].in_features for layer in block.mixing_multi_scale_trend.up_sampling_layers] == [12, 24, 48]
    assert [layer.in_features for layer in model.predict_layers] == [96, 48, 24, 12]
    assert len(model.normalize_layers) == 4 and model.projection_layer.out_features == 1


def reference_pool(x: torch.Tensor, method: str, window: int, conv: nn.Conv1d | None) -> torch.Tensor:
    """x `[B, L, N]` pooled over non-overlapping windows of `window` steps (conv: circular pad 1, stride w)."""
    b, length, n = x.shape
    if method == "avg":
        return x.reshape(b, length // window, window, n).mean(dim=2)
    if method == "max":
        return x.reshape(b, length // window, window, n).amax(dim=2)
    padded = torch.cat([x[:, -1:], x, x[:, :1]], dim=1).transpose(1, 2)  # [B, N, L + 2]
    return F.conv1d(padded, conv.weight, stride=window).transpose(1, 2)


@pytest.mark.parametrize("method", ["avg", "max", "conv"])
def test_down_sampling_methods(make_configs, method: str) -> None:
    configs = configs_for(make_configs, down_sampling_method=method, down_sampling_window=3, seq_len=36)
    model = Model(configs)
    x, marks = batch(configs)
    xs, mark_list = model._multi_scale_inputs(x, marks)
    assert [t.shape[1] for t in xs] == [36, 12, 4]
    for m in range(1, 3):
        expected = reference_pool(xs[m - 1], method, 3, model.down_pool)
        torch.testing.assert_close(xs[m], expected)
        torch.testing.assert_close(mark_list[m], marks[:, :: 3**m])
    conv_params = [name for name, _ in model.named_parameters() if name.startswith("down_pool")]
    assert conv_params == (["down_pool.weight"] if method == "conv" else [])


def test_conv_down_sampling_is_trained_and_deterministic(make_configs) -> None:
    configs = configs_for(make_configs, down_sampling_method="conv")
    model = Model(configs).eval()
    x, marks = batch(configs)
    with torch.no_grad():
        torch.testing.assert_close(model(x, marks), model(x, marks), rtol=0, atol=0)
    model(x, marks).square().mean().backward()
    assert model.down_pool.weight.grad is not None and model.down_pool.weight.grad.abs().sum() > 0


def test_single_scale_needs_no_down_sampling_method(make_configs) -> None:
    configs = configs_for(make_configs, down_sampling_layers=0, down_sampling_method=None, seq_len=30)
    model = Model(configs)
    assert model.down_pool is None and len(model.predict_layers) == 1
    assert model(*batch(configs)).shape == (B, H, N)


@pytest.mark.parametrize("decomp_method", ["moving_avg", "dft_decomp"])
@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
def test_decomposition_choices_train(make_configs, decomp_method: str, channel_independence: int) -> None:
    configs = configs_for(make_configs, decomp_method=decomp_method, channel_independence=channel_independence)
    model = Model(configs)
    expected_type = series_decomp if decomp_method == "moving_avg" else DFT_series_decomp
    assert all(isinstance(block.decompsition, expected_type) for block in model.pdm_blocks)
    out = model(*batch(configs))
    assert out.shape == (B, H, N) and torch.isfinite(out).all()
    out.square().mean().backward()
    unreached = {name for name, p in model.named_parameters() if p.grad is None}
    # TSLib builds each block's LayerNorm and never applies it; with mixed channels it also skips the
    # residual feed-forward out_cross_layer.
    unused = ("layer_norm.weight", "layer_norm.bias")
    if not channel_independence:
        unused += tuple(f"out_cross_layer.{i}.{p}" for i in (0, 2) for p in ("weight", "bias"))
    assert unreached == {f"pdm_blocks.{i}.{name}" for i in range(2) for name in unused}


def test_dft_decomposition_changes_the_forecast(make_configs) -> None:
    x, marks = batch(configs_for(make_configs))
    outs = []
    for method in ("moving_avg", "dft_decomp"):
        torch.manual_seed(0)
        outs.append(Model(configs_for(make_configs, decomp_method=method)).eval()(x, marks).detach())
    assert not torch.allclose(outs[0], outs[1])


def test_channel_independence_keeps_variates_and_samples_separate(make_configs) -> None:
    """Each series is forecast from its own past; series row b·N + v reads sample (b·N + v) mod B's
    marks, as TSLib tiles them."""
    configs = configs_for(make_configs, channel_independence=1)
    model = Model(configs).eval()
    x, marks = batch(configs)
    with torch.no_grad():
        base = model(x, marks)
        var_changed = (model(x.index_fill(2, torch.tensor([2]), 3.0), marks) - base).abs().amax(dim=(0, 1))
        marks_edited = marks.clone()
        marks_edited[1] += 0.25
        series_changed = (model(x, marks_edited) - base).abs().amax(dim=1)  # [B, N]
    assert (var_changed > 0).tolist() == [v == 2 for v in range(N)]
    assert (series_changed > 0).tolist() == [[(b * N + v) % B == 1 for v in range(N)] for b in range(B)]


def test_channel_mixing_path_mixes_variates(make_configs) -> None:
    configs = configs_for(make_configs, channel_independence=0)
    model = Model(configs).eval()
    assert model.enc_embedding.value_embedding.tokenConv.in_channels == N
    assert model.projection_layer.out_features == N
    assert [layer.in_features for layer in model.regression_layers] == [32, 16, 8]
    assert all(hasattr(block, "cross_layer") for block in model.pdm_blocks)
    x, marks = batch(configs)
    with torch.no_grad():
        changed = (model(x.index_fill(2, torch.tensor([2]), 3.0), marks) - model(x, marks)).abs().amax(dim=(0, 1))
    assert (changed > 0).all()


@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
def test_ms_returns_the_last_variate(make_configs, channel_independence: int) -> None:
    """--c_out 1 (features MS) returns the forecast of the last variate, as TSLib's exp slices it."""
    full = configs_for(make_configs, channel_independence=channel_independence, c_out=N)
    ms = configs_for(make_configs, channel_independence=channel_independence, c_out=1)
    torch.manual_seed(0)
    model_full = Model(full).eval()
    torch.manual_seed(0)
    model_ms = Model(ms).eval()
    if channel_independence == 0:
        # TSLib adds the one projected channel to every variate's trend forecast; give the full model the
        # same projection so the last channels must agree.
        with torch.no_grad():
            model_full.projection_layer.weight.copy_(model_ms.projection_layer.weight.expand(N, -1))
            model_full.projection_layer.bias.copy_(model_ms.projection_layer.bias.expand(N))
            for mine, theirs in zip(model_full.parameters(), model_ms.parameters(), strict=True):
                if mine.shape == theirs.shape:
                    mine.copy_(theirs)
    x, marks = batch(full)
    with torch.no_grad():
        torch.testing.assert_close(model_ms(x, marks), model_full(x, marks)[..., -1:])


def test_use_norm_is_revin(make_configs) -> None:
    """use_norm 1: f(a·x + b) = a·f(x) + b; use_norm 0: no instance normalisation at all."""
    x, marks = batch(configs_for(make_configs))
    with torch.no_grad():
        model = Model(configs_for(make_configs, use_norm=1)).eval()
        torch.testing.assert_close(model(3.0 * x + 5.0, marks), 3.0 * model(x, marks) + 5.0, rtol=1e-4, atol=1e-4)
        raw = Model(configs_for(make_configs, use_norm=0)).eval()
        assert all(norm.non_norm for norm in raw.normalize_layers)
        assert not torch.allclose(raw(x + 5.0, marks), raw(x, marks) + 5.0, atol=1e-3)


def test_marks_are_optional(make_configs) -> None:
    configs = configs_for(make_configs)
    model = Model(configs).eval()
    x, marks = batch(configs)
    with torch.no_grad():
        without = model(x, None)
    assert without.shape == (B, H, N) and not torch.allclose(without, model(x, marks))


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(task_name="zero_shot_forecast"), "--task_name"),
        (dict(down_sampling_method="nearest"), "--down_sampling_method"),
        (dict(down_sampling_method=None), "--down_sampling_method"),
        (dict(seq_len=30), "--seq_len"),
        (dict(down_sampling_window=0), "--down_sampling_window"),
        (dict(down_sampling_layers=-1), "--down_sampling_layers"),
        (dict(decomp_method="stl"), "--decomp_method"),
        (dict(decomp_method="dft_decomp", top_k=0), "--top_k"),
        (dict(moving_avg=0), "--moving_avg"),
        (dict(channel_independence=2), "--channel_independence"),
        (dict(use_norm=-1), "--use_norm"),
        (dict(c_out=N + 1), "--c_out"),
        (dict(embed="onehot"), "--embed"),
        (dict(d_ff=0), "--d_ff"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, overrides: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=flag) as info:
        Model(configs_for(make_configs, **overrides))
    assert "\n" not in str(info.value)


def task_model(make_configs, task: str, num_class: int = 5, **overrides) -> Model:
    configs = configs_for(make_configs, task_name=task, pred_len=0, **overrides)
    configs.num_class = num_class
    return Model(configs)


def imputation_batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, N, generator=gen)
    mask = (torch.rand(B, L, N, generator=gen) > 0.25).float()
    return x * mask, mask


@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_have_tslib_parameters(make_configs, task: str, channel_independence: int) -> None:
    """TSLib's window builds: no FMM predictors; projection_layer D → 1 (independent) or D → c_out
    (mixing) for the reconstructions, projection L·D → num_class for classification; the Normalize
    layers of every scale are built (TSLib's count) whatever the task."""
    model = task_model(make_configs, task, channel_independence=channel_independence)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert not any(name.startswith(("predict_layers", "out_res_layers", "regression_layers")) for name in shapes)
    assert shapes["normalize_layers.2.affine_weight"] == (N,)
    if task == "classification":
        assert shapes["projection.weight"] == (5, 8 * L) and "projection_layer.weight" not in shapes
    else:
        assert shapes["projection_layer.weight"] == (1 if channel_independence else N, 8)
        assert "projection.weight" not in shapes


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection"])
@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
def test_reconstruction_keeps_time_and_variates_in_place(make_configs, task: str, channel_independence: int) -> None:
    """Without the PDM blocks the finest scale's tokens are the circular kernel-3 token convolution, so
    swapping steps 10 and 20 of variate 1 (which keeps its normalisation statistics) may move only steps
    9 .. 11 and 19 .. 21 of the reconstruction (TSLib's reshape of the channel-mixing output would scatter
    them); with channel independence, only variate 1."""
    model = task_model(make_configs, task, channel_independence=channel_independence).double().eval()
    model.pdm_blocks = nn.ModuleList()
    x = torch.randn(B, L, N, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    mask = torch.ones_like(x)
    swapped = x.clone()
    swapped[:, [10, 20], 1] = x[:, [20, 10], 1]
    args = (lambda v: (v, None, None, None, mask)) if task == "imputation" else (lambda v: (v, None, None, None))
    with torch.no_grad():
        moved = (model(*args(swapped)) - model(*args(x))).abs().amax(dim=0) > 1e-9  # [L, N]
    expected = torch.zeros(L, N, dtype=torch.bool)
    variates = [1] if channel_independence else list(range(N))
    for step in (9, 10, 11, 19, 20, 21):
        expected[step, variates] = True
    assert torch.equal(moved, expected)


def test_imputation_ignores_hidden_values_and_pred_len(make_configs) -> None:
    x, mask = imputation_batch()
    torch.manual_seed(1)
    short = task_model(make_configs, "imputation").eval()
    torch.manual_seed(1)
    long = Model(configs_for(make_configs, task_name="imputation", pred_len=96)).eval()
    out = short(x, None, None, None, mask)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, long(x, None, None, None, mask))
    noisy = torch.where(mask == 0, 100 * torch.randn_like(x), x)
    torch.testing.assert_close(short(noisy, None, None, None, mask), out)


def test_anomaly_forward_is_the_reconstruction(make_configs) -> None:
    model = task_model(make_configs, "anomaly_detection").eval()
    x, _ = batch(model_configs := configs_for(make_configs))
    assert model_configs.seq_len == L
    out = model(x, None, None, None)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, model.anomaly_detection(x))


def test_classification_drops_the_padded_steps_before_the_projection(make_configs) -> None:
    model = task_model(make_configs, "classification").eval()
    x, _ = batch(configs_for(make_configs))
    mask = torch.ones(B, L)
    mask[:, 20:] = 0
    with torch.no_grad():
        logits = model(x, mask, None, None)
        assert logits.shape == (B, 5)
        assert not torch.allclose(logits, model(x, torch.ones(B, L), None, None))
        model.projection.weight.view(5, L, 8)[:, 20:] += torch.randn(5, L - 20, 8)
        torch.testing.assert_close(model(x, mask, None, None), logits)


@pytest.mark.parametrize("channel_independence", [1, 0], ids=["independent", "mixing"])
def test_classification_variate_order(make_configs, channel_independence: int) -> None:
    """With channel independence (where TSLib's 1-channel embedding fails on N > 1 variates) each variate
    is mixed on its own and the tokens are averaged, so the logits do not depend on the variates' order;
    with channel mixing they do."""
    model = task_model(make_configs, "classification", channel_independence=channel_independence).eval()
    x, _ = batch(configs_for(make_configs))
    mask = torch.ones(B, L)
    with torch.no_grad():
        logits, permuted = model(x, mask, None, None), model(x[..., [2, 0, 3, 1]], mask, None, None)
    if channel_independence:
        torch.testing.assert_close(permuted, logits)
    else:
        assert not torch.allclose(permuted, logits)
