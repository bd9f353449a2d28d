"""Drop-in check for TSLib's layer API: model files written in TSLib's style against TSLib's layer
signatures (`FullAttention(False, configs.factor, attention_dropout=..., output_attention=False)`,
`DataEmbedding_inverted(configs.seq_len, configs.d_model, configs.embed, configs.freq, configs.dropout)`,
...) are written to a temporary models folder, loaded through `ModelRegistry` as `--model` would load
them, and trained for one step. Full attention must keep its 1/sqrt(E) scale: TSLib's second
positional argument is the (unused) factor, never the scale.
"""

from __future__ import annotations

import math
import sys
import textwrap

import pytest
import torch

from exp.model_registry import ModelRegistry
from layers.SelfAttention_Family import FullAttention

PACKAGE = "tslib_dropin_models"

# Encoder-only Transformer over time tokens, as a researcher would write it against TSLib's layers.
ENCODER_ONLY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from layers.Transformer_EncDec import Encoder, EncoderLayer
    from layers.SelfAttention_Family import FullAttention, AttentionLayer
    from layers.Embed import DataEmbedding


    class Model(nn.Module):
        def __init__(self, configs):
            super(Model, self).__init__()
            self.task_name = configs.task_name
            self.pred_len = configs.pred_len
            self.enc_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                               configs.dropout)
            self.encoder = Encoder(
                [
                    EncoderLayer(
                        AttentionLayer(
                            FullAttention(False, configs.factor, attention_dropout=configs.dropout,
                                          output_attention=False), configs.d_model, configs.n_heads),
                        configs.d_model,
                        configs.d_ff,
                        dropout=configs.dropout,
                        activation=configs.activation
                    ) for l in range(configs.e_layers)
                ],
                norm_layer=torch.nn.LayerNorm(configs.d_model)
            )
            self.time_projection = nn.Linear(configs.seq_len, configs.pred_len)
            self.projection = nn.Linear(configs.d_model, configs.c_out, bias=True)

        def forecast(self, x_enc, x_mark_enc, x_dec, x_mark_dec):
            enc_out = self.enc_embedding(x_enc, x_mark_enc)
            enc_out, attns = self.encoder(enc_out, attn_mask=None)
            enc_out = self.time_projection(enc_out.permute(0, 2, 1)).permute(0, 2, 1)
            return self.projection(enc_out)

        def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None):
            if self.task_name == 'long_term_forecast' or self.task_name == 'short_term_forecast':
                dec_out = self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)
                return dec_out[:, -self.pred_len:, :]
            return None
""")

# Inverted (variate-token) encoder, the calls that used to raise a TypeError here.
INVERTED = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from layers.Transformer_EncDec import Encoder, EncoderLayer
    from layers.SelfAttention_Family import FullAttention, AttentionLayer
    from layers.Embed import DataEmbedding_inverted


    class Model(nn.Module):
        def __init__(self, configs):
            super(Model, self).__init__()
            self.pred_len = configs.pred_len
            self.enc_embedding = DataEmbedding_inverted(configs.seq_len, configs.d_model, configs.embed,
                                                        configs.freq, configs.dropout)
            self.encoder = Encoder(
                [
                    EncoderLayer(
                        AttentionLayer(
                            FullAttention(False, configs.factor, attention_dropout=configs.dropout,
                                          output_attention=False), configs.d_model, configs.n_heads),
                        configs.d_model,
                        configs.d_ff,
                        dropout=configs.dropout,
                        activation=configs.activation
                    ) for l in range(configs.e_layers)
                ],
                norm_layer=torch.nn.LayerNorm(configs.d_model)
            )
            self.projector = nn.Linear(configs.d_model, configs.pred_len, bias=True)

        def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None):
            _, _, N = x_enc.shape
            enc_out = self.enc_embedding(x_enc, x_mark_enc)
            enc_out, attns = self.encoder(enc_out, attn_mask=None)
            dec_out = self.projector(enc_out).permute(0, 2, 1)[:, :, :N]
            return dec_out[:, -self.pred_len:, :]
""")

FILES = {"EncoderOnlyTransformer": ENCODER_ONLY, "InvertedTransformer": INVERTED}


@pytest.fixture
def dropin_registry(tmp_path, monkeypatch):
    """A ModelRegistry over a temporary models folder holding the TSLib-style files."""
    folder = tmp_path / PACKAGE
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, source in FILES.items():
        (folder / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield ModelRegistry(models_dir=folder, package=PACKAGE)
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


@pytest.mark.parametrize("name", sorted(FILES))
def test_tslib_style_model_file_trains_unchanged(dropin_registry, make_configs, name):
    configs = make_configs(model=name, seq_len=24, label_len=12, pred_len=8, enc_in=3, dec_in=3, c_out=3,
                           d_model=16, n_heads=4, d_ff=32, e_layers=2, factor=3, embed="timeF", freq="h")
    model = dropin_registry[name](configs).float()
    b, length, h, c = 2, configs.seq_len, configs.pred_len, configs.enc_in
    x, x_mark = torch.randn(b, length, c), torch.rand(b, length, 4) - 0.5
    x_dec = torch.cat([x[:, -configs.label_len:], torch.zeros(b, h, c)], dim=1)
    y_mark = torch.rand(b, configs.label_len + h, 4) - 0.5

    out = model(x, x_mark, x_dec, y_mark)
    assert out.shape == (b, h, configs.c_out)
    out.square().mean().backward()
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert missing == []
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)

    attentions = [m for m in model.modules() if isinstance(m, FullAttention)]
    assert len(attentions) == configs.e_layers
    for attention in attentions:
        assert (attention.factor, attention.scale, attention.mask_flag) == (configs.factor, None, False)


def test_full_attention_positional_factor_is_not_the_scale():
    """FullAttention(False, 3) scores with 1/sqrt(E), not with 3."""
    torch.manual_seed(0)
    e = 8
    q, k, v = torch.randn(2, 5, 2, e), torch.randn(2, 7, 2, e), torch.randn(2, 7, 2, 4)
    out, weights = FullAttention(False, 3, attention_dropout=0.0, output_attention=True)(q, k, v, None)
    expected = torch.softmax(torch.einsum("blhe,bshe->bhls", q, k) / math.sqrt(e), dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, torch.einsum("bhls,bshd->blhd", expected, v))
