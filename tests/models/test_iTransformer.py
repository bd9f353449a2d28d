"""iTransformer's --use_norm: 1 (default, TSLib's behaviour) normalises each variate (so the forecast moves
with an affine change of the input), 0 feeds the raw window, as the official iTransformer's flag does."""

from __future__ import annotations

import pytest
import torch

from models.iTransformer import Model
from tests.models.test_model_contract import make_batch


def _model_and_batch(make_configs, use_norm: int):
    configs = make_configs(model="iTransformer", use_norm=use_norm, d_model=16, d_ff=16, n_heads=2, seq_len=16,
                           pred_len=4, dropout=0.0)
    torch.manual_seed(0)
    return Model(configs).double().eval(), [t.double() for t in make_batch(configs, torch.Generator().manual_seed(0))]


def test_use_norm_1_is_equivariant_to_an_affine_change_of_the_input(make_configs):
    model, (x, x_mark, x_dec, x_mark_dec) = _model_and_batch(make_configs, 1)
    x = 100.0 * x  # variance ≫ the normaliser's eps (1e-5), which would otherwise break exact equivariance
    with torch.no_grad():
        base = model(x, x_mark, x_dec, x_mark_dec)
        moved = model(3.0 * x + 5.0, x_mark, x_dec, x_mark_dec)
    torch.testing.assert_close(moved, 3.0 * base + 5.0, rtol=1e-6, atol=1e-6)


def test_use_norm_0_feeds_the_raw_window(make_configs):
    model, (x, x_mark, x_dec, x_mark_dec) = _model_and_batch(make_configs, 0)
    with torch.no_grad():
        out = model(x, x_mark, x_dec, x_mark_dec)
        tokens, _ = model.encoder(model.enc_embedding(x, x_mark))
        raw = model.projection(tokens).transpose(1, 2)[:, :, : x.shape[-1]]
    torch.testing.assert_close(out, raw)


def test_use_norm_other_values_are_a_one_line_error(make_configs):
    with pytest.raises(ValueError, match="--use_norm 2"):
        Model(make_configs(model="iTransformer", use_norm=2))
