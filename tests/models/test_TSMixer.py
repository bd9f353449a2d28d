"""TSMixer: TSLib's initial weights for a seed, time and feature mixing, MS output, one-line errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.TSMixer import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N = 3, 24, 12, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="TSMixer", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, e_layers=2, dropout=0.1)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's TSMixer initialisation: e_layers × (time Linear L→d, d→L, feature Linear N→d, d→N), then
    the projection Linear L→H."""
    torch.manual_seed(seed)
    d = configs.d_model
    shapes = [(configs.seq_len, d), (d, configs.seq_len), (configs.enc_in, d), (d, configs.enc_in)]
    layers = [nn.Linear(i, o) for _ in range(configs.e_layers) for i, o in shapes]
    layers.append(nn.Linear(configs.seq_len, configs.pred_len))
    return [t for layer in layers for t in (layer.weight, layer.bias)]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def test_forward_is_the_written_mixer(make_configs):
    """Eval-mode output equals the block equations written out with the model's own weights."""
    configs = configs_for(make_configs)
    model = Model(configs).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    expected = x
    for block in model.model:
        t1, t2 = block.temporal[0], block.temporal[2]
        f1, f2 = block.channel[0], block.channel[2]
        time_mixed = t2(torch.relu(t1(expected.transpose(1, 2)))).transpose(1, 2)
        expected = expected + time_mixed
        expected = expected + f2(torch.relu(f1(expected)))
    expected = model.projection(expected.transpose(1, 2)).transpose(1, 2)
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected)


def test_feature_mixing_couples_variates(make_configs):
    """Changing one input variate changes the forecast of the others (the feature-mixing MLP)."""
    model = Model(configs_for(make_configs)).eval()
    x = torch.randn(B, L, N)
    moved = x.clone()
    moved[:, :, 0] += 1.0
    with torch.no_grad():
        delta = (model(moved) - model(x)).abs().amax(dim=(0, 1))  # [N]
    assert (delta[1:] > 0).all()


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
    [(dict(task_name="imputation"), "--task_name"), (dict(e_layers=0), "--e_layers"),
     (dict(d_model=0), "--d_model"), (dict(c_out=5), "--c_out"), (dict(dropout=1.0), "--dropout")],
    ids=["task", "e_layers", "d_model", "c_out", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
