"""Pyraformer: TSLib's initial weights for a seed, the pyramidal mask and the ancestor gathering against a
slow construction from the paper's definition, the forecast against the encoder read by hand, and
one-line errors naming the flag."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

from layers.Pyraformer_EncDec import Bottleneck_Construct, ConvLayer, get_mask, refer_points
from models.Pyraformer import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N = 2, 20, 6, 3


def configs_for(make_configs, **overrides):
    flags = dict(model="Pyraformer", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, d_ff=12, n_heads=2, e_layers=2, dropout=0.2, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, N, generator=gen, dtype=torch.float64)
    x_mark = torch.randint(0, 7, (B, L, 4), generator=gen).double()  # calendar indices valid for every table
    return x, x_mark


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's Pyraformer draws at window sizes [4, 4]: per encoder layer the q/k/v/out Linears (d→d),
    the feed-forward w_1 (d→d_ff), w_2 (d_ff→d) and its LayerNorm; then the embedding (circular Conv1d
    without bias, re-drawn Kaiming-normal; learned hour/weekday/day/month tables); then the CSCM (two
    strided Conv1d of width d/4 with BatchNorm, up d/4→d, down d→d/4, LayerNorm); then the head."""
    torch.manual_seed(seed)
    d, inner = configs.d_model, configs.d_model // 4
    weights = []

    def linear(i, o):
        layer = nn.Linear(i, o)
        weights.extend([layer.weight, layer.bias])

    for _ in range(configs.e_layers):
        for _ in range(4):
            linear(d, d)
        linear(d, configs.d_ff)
        linear(configs.d_ff, d)
        weights.extend([torch.ones(d), torch.zeros(d)])
    conv = nn.Conv1d(configs.enc_in, d, 3, bias=False)
    nn.init.kaiming_normal_(conv.weight, mode="fan_in", nonlinearity="leaky_relu")
    weights.append(conv.weight)
    weights.extend(nn.Embedding(size, d).weight for size in (24, 7, 32, 13))
    for _ in range(2):
        down_conv = nn.Conv1d(inner, inner, 4, stride=4)
        weights.extend([down_conv.weight, down_conv.bias, torch.ones(inner), torch.zeros(inner)])
    linear(inner, d)
    linear(d, inner)
    weights.extend([torch.ones(d), torch.zeros(d)])
    linear(3 * d, configs.pred_len * configs.enc_in)
    return weights


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def pyramid_by_definition(seq_len: int, windows: list[int], inner_size: int) -> tuple[torch.Tensor, list[list[int]]]:
    """The paper's pyramidal graph built node by node: scale s has M_s = ⌊M_{s−1}/C_s⌋ nodes, each node
    is joined to its same-scale neighbours within ⌊A/2⌋ and by an edge (both ways) to its parent
    ⌊l/C⌋, the last parent adopting leftover children. Returns the allowed matrix (True = attended) and
    the flattened index of every node, per scale."""
    nodes, sizes = [], [seq_len]
    for w in windows:
        sizes.append(sizes[-1] // w)
    flat = 0
    for size in sizes:
        nodes.append(list(range(flat, flat + size)))
        flat += size
    allowed = torch.zeros(flat, flat, dtype=torch.bool)
    for scale in nodes:
        for a, i in enumerate(scale):
            for b, j in enumerate(scale):
                if abs(a - b) <= inner_size // 2:
                    allowed[i, j] = True
    for s, w in enumerate(windows):
        for child_pos, child in enumerate(nodes[s]):
            parent_pos = min(child_pos // w, sizes[s + 1] - 1)
            parent = nodes[s + 1][parent_pos]
            allowed[child, parent] = allowed[parent, child] = True
    return allowed, nodes


PYRAMIDS = [(16, [4, 4], 5), (20, [4, 4], 5), (37, [4, 4], 5), (23, [2, 2], 3), (50, [3, 2, 2], 5),
            (96, [4, 4], 5), (7, [2], 1)]


@pytest.mark.parametrize(("seq_len", "windows", "inner"), PYRAMIDS,
                         ids=[f"L{s}-C{'x'.join(map(str, w))}-A{a}" for s, w, a in PYRAMIDS])
def test_mask_matches_the_pyramidal_graph(seq_len, windows, inner):
    allowed, nodes = pyramid_by_definition(seq_len, windows, inner)
    mask, sizes = get_mask(seq_len, windows, inner)
    assert sizes == [len(scale) for scale in nodes]
    assert mask.dtype == torch.bool
    assert torch.equal(mask, ~allowed)
    assert torch.equal(mask, mask.T)  # every edge works both ways


@pytest.mark.parametrize(("seq_len", "windows", "inner"), PYRAMIDS,
                         ids=[f"L{s}-C{'x'.join(map(str, w))}-A{a}" for s, w, a in PYRAMIDS])
def test_refer_points_are_the_ancestors(seq_len, windows, inner):
    allowed, nodes = pyramid_by_definition(seq_len, windows, inner)
    _, sizes = get_mask(seq_len, windows, inner)
    index = refer_points(sizes, windows)
    assert index.shape == (1, seq_len, len(sizes), 1)
    for pos in range(seq_len):
        node = pos
        assert index[0, pos, 0, 0] == node
        for s in range(1, len(sizes)):
            # Walk up the graph: the one node of the next scale joined to the current one.
            parents = [p for p in nodes[s] if allowed[node, p]]
            assert len(parents) == 1
            node = parents[0]
            assert index[0, pos, s, 0] == node


def test_bottleneck_builds_the_coarser_scales():
    """CSCM against a direct reading: down-projection, strided conv + BN + ELU per scale, up-projection,
    concatenation after the finest scale and LayerNorm (eval mode, float64)."""
    torch.manual_seed(0)
    block = Bottleneck_Construct(8, [4, 2], 2).double().eval()
    x = torch.randn(2, 19, 8, dtype=torch.float64)
    down = x @ block.down.weight.T + block.down.bias  # [B, 19, 2]
    scales, current = [], down
    for layer in block.conv_layers:
        w = layer.downConv.kernel_size[0]
        steps = current.shape[1] // w
        windows = current[:, : steps * w].reshape(2, steps, w, 2)  # [B, M, w, c]
        conv = torch.einsum("bmkc,ock->bmo", windows, layer.downConv.weight) + layer.downConv.bias
        bn = layer.norm
        current = nn.functional.elu((conv - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps) * bn.weight + bn.bias)
        scales.append(current)
    up = torch.cat(scales, dim=1) @ block.up.weight.T + block.up.bias
    expected = nn.functional.layer_norm(torch.cat([x, up], dim=1), (8,), block.norm.weight, block.norm.bias)
    out = block(x)
    assert out.shape == (2, 19 + 4 + 2, 8)
    torch.testing.assert_close(out, expected)


def test_forecast_reads_the_last_step_ancestors(make_configs):
    """The head sees the last input step and its ancestor at every scale, after the attention layers."""
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark = batch()
    enc = model.encoder
    with torch.no_grad():
        seq = enc.conv_layers(enc.enc_embedding(x, x_mark))
        for layer in enc.layers:
            seq = layer(seq, enc.mask.expand(B, -1, -1))
        sizes = enc.all_size
        last = [L - 1, L + (L - 1) // 4, L + sizes[1] + min(((L - 1) // 4) // 4, sizes[2] - 1)]
        features = seq[:, last].reshape(B, -1)  # [B, 3·D]
        expected = (features @ model.projection.weight.T + model.projection.bias).reshape(B, H, N)
        torch.testing.assert_close(model(x, x_mark, None, None), expected)


def test_attention_respects_the_pyramid(make_configs):
    """One attention layer: perturbing a node changes exactly the nodes it is joined to."""
    model = Model(configs_for(make_configs, e_layers=1)).double().eval()
    enc = model.encoder
    seq = torch.randn(1, sum(enc.all_size), 8, dtype=torch.float64)
    with torch.no_grad():
        base = enc.layers[0](seq, enc.mask[None])
        for node in (0, L - 1, L, L + 3, sum(enc.all_size) - 1):
            moved = seq.clone()
            moved[0, node] += 1.0
            changed = (enc.layers[0](moved, enc.mask[None]) - base).abs().sum(-1)[0] > 1e-12
            assert torch.equal(changed, ~enc.mask[:, node])


def test_layer_without_mask_attends_everywhere(make_configs):
    """An EncoderLayer called without a mask is full (not causal) attention: the first node sees the last."""
    layer = Model(configs_for(make_configs, e_layers=1)).double().eval().encoder.layers[0]
    seq = torch.randn(1, 5, 8, dtype=torch.float64)
    moved = seq.clone()
    moved[0, -1] += 1.0
    with torch.no_grad():
        assert not torch.allclose(layer(moved)[0, 0], layer(seq)[0, 0])
        torch.testing.assert_close(layer(seq), layer(seq, torch.zeros(1, 5, 5, dtype=torch.bool)))


def test_c_out_keeps_the_last_variates(make_configs):
    x, x_mark = batch()
    full = Model(configs_for(make_configs)).double().eval()
    torch.manual_seed(0)
    ms = Model(configs_for(make_configs, c_out=1)).double().eval()
    ms.load_state_dict(full.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(ms(x, x_mark), full(x, x_mark)[:, :, -1:])


def test_short_term_uses_window_two_and_normalises(make_configs):
    model = Model(configs_for(make_configs, task_name="short_term_forecast")).double().eval()
    assert model.encoder.all_size == [L, L // 2, L // 4]
    assert [c.downConv.stride[0] for c in model.encoder.conv_layers.conv_layers] == [2, 2]
    x, _ = batch()
    with torch.no_grad():
        torch.testing.assert_close(model(3.0 * x + 5.0, None), 3.0 * model(x, None) + 5.0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="segmentation"), "--task_name"), (dict(seq_len=15), "--seq_len"),
     (dict(n_heads=3), "--n_heads"), (dict(c_out=4), "--c_out"), (dict(d_model=2, n_heads=1), "--d_model"),
     (dict(e_layers=0), "--e_layers"), (dict(dropout=1.0), "--dropout"), (dict(freq="d"), "--freq")],
    ids=["task", "seq_len", "n_heads", "c_out", "d_model", "e_layers", "dropout", "timeF-daily-marks"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


# The window tasks (TSLib's imputation, anomaly-detection and classification heads, C = [4, 4]).
def window_model(make_configs, task: str, num_class: int = 4, **overrides) -> Model:
    configs = configs_for(make_configs, **{"task_name": task, "label_len": 0, "pred_len": 0, "dropout": 0.0,
                                           **overrides})
    configs.num_class = num_class
    return Model(configs).eval()


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_have_tslib_shapes(make_configs, task):
    model = window_model(make_configs, task)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    features = 3 * 8  # three scales of d_model 8
    assert shapes["projection.weight"] == ((4, features * L) if task == "classification" else (N, features))
    assert model.encoder.all_size == [L, 5, 1]  # the long-term pyramid, not short-term's [2, 2]


def test_imputation_shape_and_pred_len_does_not_change_it(make_configs):
    x, marks = batch()
    x, marks = x.float(), marks.float()
    mask = (torch.rand(x.shape, generator=torch.Generator().manual_seed(3)) > 0.3).float()
    outputs = []
    for pred_len in (0, 96):
        torch.manual_seed(0)
        outputs.append(window_model(make_configs, "imputation", pred_len=pred_len)(x * mask, marks, None, None, mask))
    assert outputs[0].shape == (B, L, N)
    torch.testing.assert_close(outputs[0], outputs[1])


def test_imputation_reads_every_position_out_of_its_ancestors(make_configs):
    model = window_model(make_configs, "imputation")
    x, marks = batch()
    x, marks = x.float(), marks.float()
    out = model(x, marks, None, None, torch.ones_like(x))
    torch.testing.assert_close(out, model.projection(model.encoder(x, marks)))


def test_anomaly_forward_dispatches_to_the_reconstruction(make_configs):
    model = window_model(make_configs, "anomaly_detection")
    x = batch()[0].float()
    out = model(x, None, None, None)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, model.anomaly_detection(x))


def test_classification_zeroes_padded_positions_before_the_projection(make_configs):
    model = window_model(make_configs, "classification")
    x = batch()[0].float()
    padding = torch.ones(B, L)
    padding[:, 13:] = 0
    with torch.no_grad():
        masked, full = model(x, padding, None, None), model(x, torch.ones(B, L), None, None)
        features = nn.functional.gelu(model.encoder(x, None))[:, :13]  # [B, 13, S·D]
        weight = model.projection.weight.reshape(4, L, -1)[:, :13]
        expected = torch.einsum("btf,ktf->bk", features, weight) + model.projection.bias
    torch.testing.assert_close(masked, expected)
    assert not torch.allclose(masked, full)


def test_a_scale_of_one_value_per_channel_normalises_with_the_running_statistics():
    """Issue 49 §6: at --seq_len 16-31 the coarsest scale has one node, so a training batch of one window gives
    BatchNorm one value per channel, where torch raises. That batch is normalised with the running statistics
    (which it leaves as they are); every batch with more values normalises as TSLib's BatchNorm1d."""
    torch.manual_seed(3)
    layer = ConvLayer(4, 4).double().train()
    reference = copy.deepcopy(layer)
    pair = torch.randn(2, 4, 4, dtype=torch.float64)
    torch.testing.assert_close(layer(pair), reference.activation(reference.norm(reference.downConv(pair))))
    torch.testing.assert_close(layer.norm.running_mean, reference.norm.running_mean)
    single = torch.randn(1, 4, 7, dtype=torch.float64, requires_grad=True)  # one node at the coarser scale
    running = (layer.norm.running_mean.clone(), layer.norm.running_var.clone())
    out = layer(single)
    expected = nn.functional.elu(nn.functional.batch_norm(
        layer.downConv(single), *running, layer.norm.weight, layer.norm.bias, training=False, eps=layer.norm.eps))
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close((layer.norm.running_mean, layer.norm.running_var), running)
    out.sum().backward()
    assert torch.isfinite(layer.norm.weight.grad).all() and torch.isfinite(single.grad).all()


@pytest.mark.parametrize("task", ["long_term_forecast", "anomaly_detection"])
def test_training_batch_of_one_window_at_seq_len_16_to_31(make_configs, task):
    for seq_len in (16, 31):
        configs = configs_for(make_configs, seq_len=seq_len, task_name=task, d_model=8)
        model = Model(configs).train()
        x = torch.randn(1, seq_len, N)
        out = model(x, None, None, None) if task == "anomaly_detection" else model(
            x, torch.zeros(1, seq_len, 4), torch.zeros(1, configs.label_len + H, N), torch.zeros(1, configs.label_len + H, 4))
        out.square().mean().backward()
        assert torch.isfinite(out).all()
