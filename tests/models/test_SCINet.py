"""SCINet: TSLib's names and initial weights, the exact even/odd split and interleave, the interactive
learning equations on a hand-checked case, the forecast as TSLib computes it, one-line errors."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from compare.grid.efficiency import build_model
from models.SCINet import Model, SCIBlock, SCINet, interleave, split_even_odd
from tests.models.tslib_reference import assert_tslib_initial_weights, tslib_configs, tslib_parameter_shapes

B, L, H, N = 3, 16, 8, 3


def configs_for(make_configs, **overrides):
    flags = dict(model="SCINet", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_layers=1, dropout=0.1)
    return make_configs(**{**flags, **overrides})


def tslib_tree_convs(channels: int, level: int) -> list[nn.Conv1d]:
    """TSLib's construction order of one tree: the node's block (ψ, φ, η, ρ, two k=5 convs each), then
    the odd subtree, then the even subtree."""
    convs = [nn.Conv1d(channels, channels, 5) for _ in range(8)]
    if level > 0:
        convs += tslib_tree_convs(channels, level - 1)
        convs += tslib_tree_convs(channels, level - 1)
    return convs


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    torch.manual_seed(seed)
    total = configs.seq_len + configs.pred_len
    if configs.d_layers == 1:
        convs = tslib_tree_convs(configs.enc_in, 3)
        projections = [nn.Conv1d(configs.seq_len, total, 1, bias=False)]
    else:
        convs = tslib_tree_convs(configs.enc_in, 3) + tslib_tree_convs(configs.enc_in, 3)
        projections = [nn.Conv1d(configs.seq_len, configs.pred_len, 1, bias=False),
                       nn.Conv1d(total, total, 1, bias=False)]
    return [t for conv in convs for t in (conv.weight, conv.bias)] + [p.weight for p in projections]


@pytest.mark.parametrize("stacks", [1, 2], ids=["stacks1", "stacks2"])
def test_initial_weights_follow_tslib_construction_order(make_configs, stacks):
    configs = configs_for(make_configs, d_layers=stacks)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_parameter_names_and_shapes_equal_tslib(make_configs):
    expected = tslib_parameter_shapes("SCINet")
    model = build_model(tslib_configs(make_configs, "SCINet"))
    ours = {(name, tuple(p.shape)) for name, p in model.named_parameters()}
    assert sorted(ours - expected) == [] and sorted(expected - ours) == []


@pytest.mark.parametrize("length", [1, 2, 7, 32, 97])
def test_split_then_interleave_is_the_identity(length):
    x = torch.randn(2, length, 3)
    even, odd = split_even_odd(x)
    assert even.shape[1] == (length + 1) // 2 and odd.shape[1] == length // 2
    torch.testing.assert_close(even, x[:, 0::2], rtol=0, atol=0)
    torch.testing.assert_close(interleave(even, odd), x, rtol=0, atol=0)


def test_interleave_rejects_mismatched_halves():
    with pytest.raises(ValueError, match="differ by 0 or 1"):
        interleave(torch.zeros(1, 4, 2), torch.zeros(1, 2, 2))


class Scale(nn.Module):
    """Stands in for a convolution block: u ↦ a·u (distinct a per block reveals the wiring)."""

    def __init__(self, a: float) -> None:
        super().__init__()
        self.a = a

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.a * u


def test_interactive_learning_on_a_hand_checked_case():
    """x = 1, 2, 3, 4 (one channel): even = (1, 3), odd = (2, 4); ψ = 0.1·, φ = 0.2·, η = 0.3·, ρ = 0.4·.
    F^s_even = (1·e^0.2, 3·e^0.4), F^s_odd = (2·e^0.2, 4·e^0.6),
    F'_even = F^s_even + 0.3·F^s_odd = (1.6·e^0.2, 3·e^0.4 + 1.2·e^0.6),
    F'_odd  = F^s_odd − 0.4·F^s_even = (1.6·e^0.2, 4·e^0.6 − 1.2·e^0.4)."""
    block = SCIBlock(1).double()
    block.modules_even, block.modules_odd = Scale(0.1), Scale(0.2)
    block.interactor_even, block.interactor_odd = Scale(0.3), Scale(0.4)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64).reshape(1, 4, 1)
    even, odd = block(x)
    e = math.exp
    expected_even = torch.tensor([1.6 * e(0.2), 3 * e(0.4) + 1.2 * e(0.6)], dtype=torch.float64)
    expected_odd = torch.tensor([1.6 * e(0.2), 4 * e(0.6) - 1.2 * e(0.4)], dtype=torch.float64)
    torch.testing.assert_close(even.flatten(), expected_even)
    torch.testing.assert_close(odd.flatten(), expected_odd)


def test_conv_block_is_pad_conv_leaky_conv_tanh():
    """ψ (eval mode) is replication pad (4, 4), k=5 conv, LeakyReLU(0.01), k=5 conv, tanh; length kept."""
    block = SCIBlock(2).double().eval()
    psi = block.modules_even.causal_conv
    u = torch.randn(3, 2, 6, dtype=torch.float64)
    padded = torch.nn.functional.pad(u, (4, 4), mode="replicate")
    expected = torch.tanh(psi[4](torch.nn.functional.leaky_relu(psi[1](padded), 0.01)))
    torch.testing.assert_close(block.modules_even(u), expected)
    assert expected.shape == u.shape


def test_odd_length_repeats_the_last_step_and_drops_the_extra_odd_output():
    block = SCIBlock(2).double().eval()
    x = torch.randn(2, 5, 2, dtype=torch.float64)
    even, odd = block(x)
    padded_even, padded_odd = block(torch.cat((x, x[:, -1:]), dim=1))
    assert even.shape == (2, 3, 2) and odd.shape == (2, 2, 2)
    torch.testing.assert_close(even, padded_even)
    torch.testing.assert_close(odd, padded_odd[:, :2])


@pytest.mark.parametrize("length", [8, 9, 13, 96, 97])
def test_tree_keeps_the_length_and_has_fifteen_blocks(length):
    tree = SCINet(2).eval()
    assert sum(isinstance(m, SCIBlock) for m in tree.modules()) == 15
    with torch.no_grad():
        assert tree(torch.randn(2, length, 2)).shape == (2, length, 2)


def test_tree_routes_even_half_to_even_subtree():
    """A level-1 tree equals its root block, then SCINet_Tree_even on F'_even and SCINet_Tree_odd on
    F'_odd, re-interleaved."""
    tree = SCINet(2, current_level=1).double().eval()
    x = torch.randn(2, 8, 2, dtype=torch.float64)
    even, odd = tree.working_block(x)
    expected = interleave(interleave(*tree.SCINet_Tree_even.working_block(even)),
                          interleave(*tree.SCINet_Tree_odd.working_block(odd)))
    with torch.no_grad():
        torch.testing.assert_close(tree(x), expected)


def test_position_encoding_is_sin_then_cos(make_configs):
    """N = 7: four timescales 1 … 10⁻⁴; channels 0-3 are sines, 4-6 cosines of the first three."""
    model = Model(configs_for(make_configs, enc_in=7, dec_in=7, c_out=7))
    pe = model.position_encoding(10, 7)[0]  # [T, N]
    t = torch.arange(10, dtype=torch.float32)
    assert pe.shape == (10, 7)
    torch.testing.assert_close(pe[:, 0], torch.sin(t))
    torch.testing.assert_close(pe[:, 3], torch.sin(t * 1e-4))
    torch.testing.assert_close(pe[:, 4], torch.cos(t))
    torch.testing.assert_close(pe[:, 6], torch.cos(t * 1e-4 ** (2 / 3)))


@pytest.mark.parametrize("stacks", [1, 2], ids=["stacks1", "stacks2"])
def test_forecast_is_the_last_pred_len_steps_of_tslibs_output(make_configs, stacks):
    """Written out: RevIN, + PE, stack(s) with residual, projection to L + H steps (one stack), keep the
    last H steps, denormalise. TSLib's model returns these same H steps last."""
    configs = configs_for(make_configs, d_layers=stacks)
    model = Model(configs).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64) * 2.0 + 1.0
    mean = x.mean(dim=1, keepdim=True)
    std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + 1e-5)
    z = (x - mean) / std + model.position_encoding(L, N).double()
    full = model.projection_1(model.sci_net_1(z) + z)
    if stacks == 1:
        assert full.shape == (B, L + H, N)
    else:
        full = torch.cat((z, full), dim=1)
        full = model.projection_2(model.sci_net_2(full) + full)
    expected = full[:, -H:] * std + mean
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected)


def test_dropout_flag_reaches_the_conv_blocks(make_configs):
    """TSLib builds the blocks with dropout 0 whatever --dropout says; ours use the flag."""
    model = Model(configs_for(make_configs, dropout=0.3))
    rates = {m.p for m in model.modules() if isinstance(m, nn.Dropout)}
    assert rates == {0.3}


def test_ms_returns_the_last_variate(make_configs):
    torch.manual_seed(3)
    full = Model(configs_for(make_configs)).eval()
    torch.manual_seed(3)
    ms = Model(configs_for(make_configs, c_out=1)).eval()
    x = torch.randn(B, L, N)
    with torch.no_grad():
        torch.testing.assert_close(ms(x), full(x)[:, :, -1:])


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(d_layers=3), "--d_layers"),
     (dict(seq_len=7), "--seq_len"), (dict(c_out=5), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "d_layers", "seq_len", "c_out", "dropout"],
)
def test_bad_config_is_one_line_naming_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag) as info:
        Model(configs_for(make_configs, **overrides))
    assert "\n" not in str(info.value)
