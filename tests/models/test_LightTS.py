"""LightTS: TSLib's construction order, the two sampling views, the IEBlock, padding and clear errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.LightTS import IEBlock, Model
from tests.models.tslib_reference import assert_tslib_initial_weights


def small_configs(make_configs, **overrides):
    flags = dict(model="LightTS", seq_len=48, label_len=24, pred_len=24, d_model=32, enc_in=3, dec_in=3, c_out=3)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's LightTS initialisation: layer_1, chunk_proj_1, layer_2, chunk_proj_2, layer_3, ar; each
    IEBlock builds its two temporal Linears, the node Linear (weight then set to the identity, which
    draws nothing) and the output Linear."""
    torch.manual_seed(seed)
    chunk = min(configs.pred_len, configs.seq_len, 24)
    chunks = configs.seq_len // chunk
    d = configs.d_model

    def ie_block(input_dim, hid_dim, output_dim, num_node):
        layers = [nn.Linear(input_dim, hid_dim), nn.Linear(hid_dim, hid_dim // 4), nn.Linear(num_node, num_node),
                  nn.Linear(hid_dim // 4, output_dim)]
        nn.init.eye_(layers[2].weight)
        return [t for layer in layers for t in (layer.weight, layer.bias)]

    weights = []
    for _ in range(2):
        weights += ie_block(chunk, d // 4, d // 4, chunks)
        proj = nn.Linear(chunks, 1)
        weights += [proj.weight, proj.bias]
    weights += ie_block(d // 2, d // 2, configs.pred_len, configs.enc_in)
    ar = nn.Linear(configs.seq_len, configs.pred_len)
    return weights + [ar.weight, ar.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = small_configs(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_sampling_views_follow_the_paper(make_configs):
    """Continuous view column j = steps jC..jC+C−1; interval view column j = steps j, j+L/C, ..."""
    configs = small_configs(make_configs, seq_len=48, pred_len=12)  # C = 12, L/C = 4
    model = Model(configs).eval()
    seen = {}
    model.layer_1.register_forward_hook(lambda m, args, out: seen.__setitem__("con", args[0]))
    model.layer_2.register_forward_hook(lambda m, args, out: seen.__setitem__("itv", args[0]))
    b, n, c, k = 2, configs.enc_in, 12, 4
    x = torch.randn(b, configs.seq_len, n)
    with torch.no_grad():
        model(x)
    con = torch.empty(b * n, c, k)
    itv = torch.empty(b * n, c, k)
    for bi in range(b):
        for v in range(n):
            for i in range(c):
                for j in range(k):
                    con[bi * n + v, i, j] = x[bi, j * c + i, v]
                    itv[bi * n + v, i, j] = x[bi, j + i * k, v]
    assert torch.equal(seen["con"], con)
    assert torch.equal(seen["itv"], itv)


def test_ie_block_equals_its_definition():
    torch.manual_seed(3)
    block = IEBlock(input_dim=5, hid_dim=8, output_dim=6, num_node=3).double()
    with torch.no_grad():
        block.channel_proj.weight.normal_()  # leave the identity start to test the general case
    x = torch.randn(2, 5, 3, dtype=torch.float64)  # [B', input_dim, num_node]
    expected = torch.empty(2, 6, 3, dtype=torch.float64)
    for bi in range(2):
        z = torch.stack([block.spatial_proj(x[bi, :, j]) for j in range(3)], dim=1)  # [2, 3]
        z = z + (z @ block.channel_proj.weight.T + block.channel_proj.bias)
        expected[bi] = torch.stack([block.output_proj(z[:, j]) for j in range(3)], dim=1)
    torch.testing.assert_close(block(x), expected)


def test_channel_projection_starts_as_identity(make_configs):
    model = Model(small_configs(make_configs))
    for block in (model.layer_1, model.layer_2, model.layer_3):
        n = block.channel_proj.in_features
        assert torch.equal(block.channel_proj.weight, torch.eye(n))


def test_window_not_divisible_by_the_chunk_is_front_padded_with_its_first_value(make_configs):
    configs = small_configs(make_configs, seq_len=40, pred_len=24)  # C = 24 → padded to 48
    model = Model(configs).eval()
    assert (model.chunk_size, model.num_chunks, model.ar.in_features) == (24, 2, 48)
    x = torch.randn(2, 40, configs.enc_in)
    padded = torch.cat([x[:, :1].expand(2, 8, -1), x], dim=1)
    with torch.no_grad():
        out = model(x)
        # The padded window of a model built for 48 steps gives the same forecast.
        twin = Model(small_configs(make_configs, seq_len=48, pred_len=24)).eval()
        twin.load_state_dict(model.state_dict())
        torch.testing.assert_close(out, twin(padded), rtol=0, atol=0)
    assert out.shape == (2, 24, configs.enc_in)


@pytest.mark.parametrize(("overrides", "flag"), [
    (dict(task_name="zero_shot_forecast"), "--task_name"),
    (dict(d_model=8), "--d_model"),
    (dict(c_out=4), "--c_out"),
], ids=["task", "d_model", "c_out"])
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(small_configs(make_configs, **overrides))


def window_configs(make_configs, task: str, **overrides):
    """A window task's namespace as its experiment builds it (--pred_len 0; num_class from the data)."""
    flags = dict(model="LightTS", task_name=task, seq_len=29, label_len=0, pred_len=0, d_model=32, enc_in=3,
                 dec_in=3, c_out=3, dropout=0.0)
    configs = make_configs(**{**flags, **overrides})
    if task == "classification":
        configs.num_class = 4
    return configs


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_map_the_window_onto_itself(make_configs, task):
    """H = L = 29, C = min(24, L) = 24, padded length 48 (TSLib's JapaneseVowels layout)."""
    model = Model(window_configs(make_configs, task))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert (model.chunk_size, model.num_chunks) == (24, 2)
    assert shapes["ar.weight"] == (29, 48)
    assert shapes["layer_3.output_proj.weight"] == (29, 32 // 2 // 4)
    assert ("projection.weight" in shapes) == (task == "classification")
    if task == "classification":
        assert shapes["projection.weight"] == (4, 3 * 29)


def test_imputation_shape_and_pred_len_independence(make_configs):
    x = torch.randn(2, 29, 3)
    mask = (torch.rand(2, 29, 3) > 0.3).float()
    outs = []
    for pred_len in (0, 96):
        torch.manual_seed(1)
        model = Model(window_configs(make_configs, "imputation", pred_len=pred_len)).eval()
        with torch.no_grad():
            outs.append(model(x * mask, torch.rand(2, 29, 4), None, None, mask))
    assert outs[0].shape == (2, 29, 3)
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)


def test_anomaly_forward_is_the_reconstruction(make_configs):
    model = Model(window_configs(make_configs, "anomaly_detection")).eval()
    x = torch.randn(2, 29, 3)
    with torch.no_grad():
        out = model(x, None, None, None)
        assert out.shape == (2, 29, 3)
        torch.testing.assert_close(out, model.anomaly_detection(x), rtol=0, atol=0)
        torch.testing.assert_close(out, model.encoder(x), rtol=0, atol=0)


def test_classification_flattens_the_reconstruction_and_ignores_the_mask(make_configs):
    """As TSLib's LightTS: logits = projection(flatten(encoder(x))); the padding mask is not read."""
    model = Model(window_configs(make_configs, "classification")).eval()
    x = torch.randn(2, 29, 3)
    mask = torch.ones(2, 29)
    mask[:, 20:] = 0
    with torch.no_grad():
        logits = model(x, mask, None, None)
        torch.testing.assert_close(logits, model(x, torch.ones(2, 29), None, None), rtol=0, atol=0)
        expected = model.encoder(x, zero_pad_end=True).reshape(2, -1) @ model.projection.weight.T
        expected = expected + model.projection.bias
    torch.testing.assert_close(logits, expected)
    assert logits.shape == (2, 4)


def test_classification_pads_zeros_at_the_end_as_tslib(make_configs):
    """L = 29, padded to 48: classification appends 19 zero steps (TSLib's classification), the other
    window tasks repeat the first value in front; both equal the unpadded model's encoder on that input."""
    model = Model(window_configs(make_configs, "classification")).eval()
    x = torch.randn(2, 29, 3)
    zero_padded = torch.cat([x, torch.zeros(2, 19, 3)], dim=1)
    front_padded = torch.cat([x[:, :1].expand(2, 19, 3), x], dim=1)
    with torch.no_grad():
        for padded, zero_pad_end in ((zero_padded, True), (front_padded, False)):
            torch.testing.assert_close(model.encoder(x, zero_pad_end=zero_pad_end), model.encoder(padded),
                                       rtol=0, atol=0)
        logits = model(x, torch.ones(2, 29), None, None)
        expected = model.projection(model.encoder(zero_padded).reshape(2, -1))
        torch.testing.assert_close(logits, expected, rtol=0, atol=0)
        assert not torch.allclose(model.encoder(zero_padded), model.encoder(front_padded))


def test_classification_does_not_read_c_out(make_configs):
    model = Model(window_configs(make_configs, "classification", enc_in=6, c_out=7))
    assert model(torch.randn(2, 29, 6), torch.ones(2, 29), None, None).shape == (2, 4)
