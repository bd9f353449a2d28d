"""TimeXer (Wang et al., "TimeXer: Empowering Transformers for Time Series Forecasting with Exogenous
Variables", NeurIPS 2024, https://arxiv.org/abs/2402.19072), TSLib's configuration.

Endogenous series are cut into non-overlapping patches of `--patch_len` steps; each patch becomes a token
(Linear without bias + sinusoid position) and one learnable **global token** per endogenous variate is
appended. Each exogenous variate (and each time-mark column) is one token for its whole window
(iTransformer's variate embedding, `DataEmbedding_inverted`). Every encoder layer does

    patch-wise self-attention:   x = LN₁(x + Drop(SelfAttn([P₁ … P_p, G])))        per endogenous variate
    variate-wise cross-attention: G = LN₂(G + Drop(CrossAttn(G, exogenous tokens)))  global tokens as queries
    x = [P₁ … P_p, G];  out = LN₃(x + Drop(W₂ Drop(act(W₁ x))))

so patch tokens see the exogenous variables only through the global token. A final LayerNorm, then the
D·(p + 1) features of each endogenous variate map to the horizon with one Linear (FlattenHead).

Which variates are endogenous follows `--features`, as in TSLib:
- M: every variate is endogenous, and every variate (plus the marks) is also an exogenous token;
- MS and S: the last variate (the target) is the only endogenous one; the other variates and the marks
  are the exogenous tokens.
Instance normalisation (RevIN without affine, `--use_norm`) wraps the whole model.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    check_choice,
    check_forecast_config,
    check_heads,
    check_output_channels,
    check_positive,
)
from layers.Embed import DataEmbedding_inverted, PositionalEmbedding
from layers.FlattenHead import FlattenHead
from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.StandardNorm import Normalize
from layers.Transformer_EncDec import Decoder, DecoderLayer, _feed_forward
from utils.errors import UserInputError

FEATURES = ("M", "MS", "S")


class EnEmbedding(nn.Module):
    """Endogenous patch tokens plus one learnable global token per variate.

    `[B, N, L]` → (`[B·N, p + 1, D]`, N) with p = ⌊L / patch_len⌋ patches; the global token is last.
    When patch_len does not divide L, the patches end at the last step (the oldest L mod patch_len steps
    are left out; TSLib leaves out the newest ones instead).
    """

    def __init__(self, n_vars: int, d_model: int, patch_len: int, dropout: float) -> None:
        super().__init__()
        self.patch_len = patch_len
        # TSLib's draw order: the patch projection, then the global tokens (standard normal).
        self.value_embedding = nn.Linear(patch_len, d_model, bias=False)
        self.glb_token = nn.Parameter(torch.randn(1, n_vars, 1, d_model))
        self.position_embedding = PositionalEmbedding(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        b, n_vars, length = x.shape
        if n_vars != self.glb_token.shape[1]:
            raise ValueError(f"EnEmbedding holds {self.glb_token.shape[1]} global tokens but got {n_vars} "
                             "endogenous variates (--enc_in / --features)")
        num_patches = length // self.patch_len
        x = x[..., length - num_patches * self.patch_len:]
        patches = x.unfold(dimension=-1, size=self.patch_len, step=self.patch_len)  # [B, N, p, patch_len]
        patches = patches.reshape(b * n_vars, num_patches, self.patch_len)  # [B·N, p, patch_len]
        tokens = self.value_embedding(patches) + self.position_embedding(patches)  # [B·N, p, D]
        tokens = tokens.reshape(b, n_vars, num_patches, -1)  # [B, N, p, D]
        glb = self.glb_token.expand(b, -1, -1, -1)  # [B, N, 1, D]
        tokens = torch.cat([tokens, glb], dim=2)  # [B, N, p + 1, D]
        return self.dropout(tokens.reshape(b * n_vars, num_patches + 1, -1)), n_vars


class EncoderLayer(DecoderLayer):
    """Self-attention over each variate's patch and global tokens, cross-attention from the global tokens
    to the exogenous tokens, then the FFN (see the module docstring). TSLib's signature and names: the
    parameters of Transformer_EncDec's DecoderLayer, only the cross-attention step differs."""

    def forward(self, x: torch.Tensor, cross: torch.Tensor, x_mask: torch.Tensor | None = None,
                cross_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> torch.Tensor:
        """x `[B·N, p + 1, D]` (global token last), cross `[B, C, D]` (exogenous tokens) → `[B·N, p + 1, D]`."""
        b, _, d = cross.shape
        x = self.norm1(x + self.dropout(self.self_attention(x, x, x, attn_mask=x_mask, tau=tau, delta=None)[0]))
        glb = x[:, -1:, :]  # [B·N, 1, D]
        # The N global tokens of one sample are the queries of one cross-attention call over its C tokens.
        queries = glb.reshape(b, -1, d)  # [B, N, D]
        attended = self.cross_attention(queries, cross, cross, attn_mask=cross_mask, tau=tau, delta=delta)[0]
        # LN₂ normalises the updated global token alone (the paper; TSLib): the patch tokens go to the
        # feed-forward as LN₁ left them.
        glb = self.norm2(glb + self.dropout(attended).reshape(-1, 1, d))  # [B·N, 1, D]
        x = torch.cat([x[:, :-1, :], glb], dim=1)
        return self.norm3(x + _feed_forward(self, x))


class Encoder(Decoder):
    """TimeXer's stack: layers that take the exogenous tokens, an optional final norm and projection
    (Transformer_EncDec's Decoder under TSLib's TimeXer name): x `[B·N, p + 1, D]`, cross `[B, C, D]` →
    `[B·N, p + 1, D]` (or projected)."""


def _check_timexer_config(configs: argparse.Namespace) -> None:
    check_forecast_config(configs, "TimeXer")
    check_heads(configs)
    check_positive(configs, "e_layers", "d_ff", "patch_len")
    check_choice(configs, "activation", ACTIVATIONS)
    check_choice(configs, "features", FEATURES)
    if configs.seq_len < configs.patch_len:
        raise UserInputError(f"--seq_len {configs.seq_len} is shorter than --patch_len {configs.patch_len}: "
                             "TimeXer needs at least one patch; use --patch_len <= --seq_len")
    if configs.features == "M":
        check_output_channels(configs, "TimeXer")
    elif configs.c_out != 1:
        raise UserInputError(f"--c_out {configs.c_out} with --features {configs.features}: TimeXer forecasts "
                             "only the target (the last variate) there; use --c_out 1")


class Model(nn.Module):
    """TimeXer for long/short-term forecasting: `[B, L, enc_in]` (+ marks) → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, features, patch_len, d_model, n_heads, e_layers, d_ff,
    factor, dropout, activation, embed, freq, use_norm. With features M and c_out < enc_in the last
    c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        _check_timexer_config(configs)
        self.features = configs.features
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.patch_len = configs.patch_len
        self.patch_num = configs.seq_len // configs.patch_len
        self.n_vars = configs.enc_in if configs.features == "M" else 1
        self.normalize = Normalize(configs.enc_in, non_norm=not configs.use_norm)
        self.en_embedding = EnEmbedding(self.n_vars, configs.d_model, self.patch_len, configs.dropout)
        self.ex_embedding = DataEmbedding_inverted(configs.seq_len, configs.d_model, configs.embed, configs.freq,
                                                   configs.dropout)

        def attention() -> AttentionLayer:
            return AttentionLayer(FullAttention(False, configs.factor, attention_dropout=configs.dropout),
                                  configs.d_model, configs.n_heads)

        self.encoder = Encoder(
            [EncoderLayer(attention(), attention(), configs.d_model, configs.d_ff, dropout=configs.dropout,
                          activation=configs.activation) for _ in range(configs.e_layers)],
            norm_layer=nn.LayerNorm(configs.d_model),
        )
        self.head_nf = configs.d_model * (self.patch_num + 1)
        self.head = FlattenHead(configs.enc_in, self.head_nf, configs.pred_len, head_dropout=configs.dropout)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.normalize(x_enc, "norm")  # [B, L, C]
        if self.features == "M":
            endogenous, exogenous = x, x  # [B, L, N], [B, L, C]
        else:
            endogenous, exogenous = x[:, :, -1:], x[:, :, :-1]  # [B, L, 1], [B, L, C − 1]
        if exogenous.shape[-1] == 0 and x_mark_enc is None:
            raise UserInputError("TimeXer with a single variate takes the time marks as its exogenous tokens, "
                                 "but x_mark_enc is None; pass the marks (the data loader does) or use more "
                                 "variates with --features MS")
        en_tokens, n_vars = self.en_embedding(endogenous.transpose(1, 2))  # [B·N, p + 1, D]
        ex_tokens = self.ex_embedding(exogenous, x_mark_enc)  # [B, C', D]
        out = self.encoder(en_tokens, ex_tokens)  # [B·N, p + 1, D]
        out = out.reshape(-1, n_vars, out.shape[-2], out.shape[-1]).transpose(2, 3)  # [B, N, D, p + 1]
        out = self.head(out).transpose(1, 2)  # [B, H, N]
        out = self.normalize(out[:, :, -self.c_out:], "denorm")
        return out  # [B, H, c_out]
