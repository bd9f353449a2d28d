"""TimeMixer++ (Wang et al., "TimeMixer++: A General Time Series Pattern Machine for Universal Predictive
Analysis", ICLR 2025, https://arxiv.org/abs/2410.16032), long-term forecasting. Not in TSLib.

Multi-scale generation (as TimeMixer): after RevIN, x_0 = x `[B, T, N]`, x_m = Down(x_{m−1}) for
m = 1..M (`--down_sampling_layers` M, `--down_sampling_window` w, `--down_sampling_method` avg / max /
conv; the paper's choice is a strided convolution), so T_m = T / w^m. Marks are subsampled with stride w^m.

Input projection:
    channel mixing on the coarsest scale, variates as tokens: x_M ← x_M + ChannelAttn(x_M)
        (single-head self-attention over the N variates, each a token of its T_M values)
    embedding of every scale: x_m^0 = Embed(x_m) `[B', T_m, D]` (value conv + timeF marks, no position);
        `--channel_independence 1` embeds each variate on its own (B' = B·N), 0 all N together (B' = B).

`--e_layers` L MixerBlocks (layers/TimeMixerPP_Blocks.py): multi-resolution time imaging (top-K FFT periods
of the coarsest scale, each scale folded into K time images), time image decomposition (column / row
attention → seasonal / trend images), multi-scale mixing (bottom-up seasonal with strided 2D convs,
top-down trend with transposed 2D convs), multi-resolution mixing (softmax-of-amplitude weighted sum
over the K images), then x^{l+1} = LayerNorm(x^l + MixerBlock(x^l)).

Output projection, an ensemble of scale-wise heads: ŷ = Σ_m Proj(Predict_m(x_m^L)) with Predict_m:
Linear(T_m → H) along time and Proj: Linear(D → 1) per variate (channel independence) or
Linear(D → c_out); then RevIN de-normalisation.

Choices where the paper does not pin the block down (no official code was read; the stored paper text
covers its overview): periods p_k = ⌈T/f_k⌉ from the batch-averaged spectrum of the coarsest scale fold
every scale (image p_k × ⌈T_m/p_k⌉, zero-padded), weights from each sample's own amplitudes; attention
within a column gives the seasonal image, along a row the trend image (one multi-head layer each, shared
over scales and periods, no residual); the 2D convolutions are Conv2d(D→d_ff, (3, w), stride (1, w)) →
GELU → Conv2d(d_ff→D, 3×3) (transposed for the trend path, cropped to the finer width), one pair per
scale step shared over the K periods; the channel mixing keeps a residual; the scale heads are summed
(TimeMixer's ensemble); one RevIN before down-sampling.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    EMBED_TYPES,
    check_choice,
    check_dropout,
    check_forecast_config,
    check_heads,
    check_non_negative,
    check_output_channels,
    check_positive,
    check_task,
)
from layers.Embed import DataEmbedding_wo_pos
from layers.MultiScale import check_down_sampling, make_down_pool, multi_scale_inputs, scale_lengths
from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.StandardNorm import Normalize
from layers.TimeMixerPP_Blocks import MixerBlock
from utils.errors import UserInputError

TASKS = ("long_term_forecast", "short_term_forecast")


def _check_configs(configs: argparse.Namespace) -> None:
    check_task(configs, "TimeMixerPP", TASKS)
    check_forecast_config(configs, "TimeMixerPP")
    check_positive(configs, "d_model", "d_ff", "e_layers", "top_k", "down_sampling_window")
    check_non_negative(configs, "down_sampling_layers")
    check_heads(configs)
    check_dropout(configs)
    check_choice(configs, "embed", EMBED_TYPES)
    for flag in ("channel_independence", "use_norm"):
        if getattr(configs, flag) not in (0, 1):
            raise UserInputError(f"--{flag} {getattr(configs, flag)!r} is not supported; use 0 or 1")
    check_output_channels(configs, "TimeMixerPP")
    check_down_sampling(configs)
    layers, window = configs.down_sampling_layers, configs.down_sampling_window
    coarsest = configs.seq_len // window**layers
    if configs.top_k > coarsest // 2:
        raise UserInputError(
            f"--top_k {configs.top_k} exceeds the {coarsest // 2} non-constant frequencies of the coarsest "
            f"scale ({coarsest} steps = --seq_len {configs.seq_len} / {window}**{layers}); lower --top_k "
            "or --down_sampling_layers, or raise --seq_len")


class Model(nn.Module):
    """TimeMixer++ for forecasting: `[B, T, enc_in]`, marks `[B, T, F]` or None → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff, n_heads, e_layers, top_k, dropout, embed, freq,
    channel_independence, use_norm, down_sampling_layers, down_sampling_window, down_sampling_method.
    With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        _check_configs(configs)
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.channel_independence = bool(configs.channel_independence)
        self.down_sampling_window = configs.down_sampling_window
        self.down_sampling_layers = configs.down_sampling_layers
        lengths = scale_lengths(configs.seq_len, configs.down_sampling_window, configs.down_sampling_layers)
        self.normalize_layer = Normalize(configs.enc_in, affine=True, non_norm=not configs.use_norm)
        self.down_pool = make_down_pool(configs)
        self.channel_mixing = AttentionLayer(FullAttention(False, attention_dropout=configs.dropout), lengths[-1], 1)
        embed_in = 1 if self.channel_independence else configs.enc_in
        self.enc_embedding = DataEmbedding_wo_pos(embed_in, configs.d_model, configs.embed, configs.freq,
                                                  configs.dropout)
        self.mixer_blocks = nn.ModuleList(
            MixerBlock(lengths, configs.d_model, configs.d_ff, configs.n_heads, configs.top_k,
                       configs.down_sampling_window, configs.dropout)
            for _ in range(configs.e_layers))
        self.predict_layers = nn.ModuleList(nn.Linear(length, configs.pred_len) for length in lengths)
        self.projection_layer = nn.Linear(configs.d_model, 1 if self.channel_independence else configs.c_out)

    def _multi_scale_inputs(self, x: torch.Tensor, x_mark: torch.Tensor | None
                            ) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
        """x `[B, T, N]` and marks `[B, T, F]` at every scale: lists of `[B, T_m, N]` and `[B, T_m, F]`."""
        return multi_scale_inputs(x, x_mark, self.down_pool, self.down_sampling_layers, self.down_sampling_window)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b, _, n = x_enc.shape
        x = self.normalize_layer(x_enc, "norm")  # [B, T, N]
        xs, marks = self._multi_scale_inputs(x, x_mark_enc)
        coarse = xs[-1].transpose(1, 2)  # [B, N, T_M]: the variates are the tokens
        xs[-1] = xs[-1] + self.channel_mixing(coarse, coarse, coarse, None)[0].transpose(1, 2)  # [B, T_M, N]
        if self.channel_independence:
            xs = [x.transpose(1, 2).reshape(b * n, -1, 1) for x in xs]  # [B·N, T_m, 1], row b·N + v
            # Each series keeps its own sample's calendar (row b·N + v ← sample b).
            marks = [None if m is None else m.repeat_interleave(n, dim=0) for m in marks]  # [B·N, T_m, F]
        tokens = [self.enc_embedding(x, m) for x, m in zip(xs, marks, strict=True)]  # [B', T_m, D]
        for block in self.mixer_blocks:
            tokens = block(tokens)
        out = 0
        for predict, x in zip(self.predict_layers, tokens, strict=True):
            pred = predict(x.transpose(1, 2)).transpose(1, 2)  # [B', H, D]
            out = out + self.projection_layer(pred)  # [B·N, H, 1] or [B, H, c_out]
        if self.channel_independence:
            out = out.reshape(b, n, self.pred_len).transpose(1, 2)[..., -self.c_out:]  # [B, H, c_out]
        return self.normalize_layer(out, "denorm")  # [B, H, c_out]
