"""TimeMixer (Wang et al., "TimeMixer: Decomposable Multiscale Mixing for Time Series Forecasting",
ICLR 2024, https://arxiv.org/abs/2405.14616), long-term forecasting.

Multiscale inputs: x_0 = x (after RevIN), x_m = Pool(x_{m−1}) for m = 1..M (`--down_sampling_layers` M,
window w, pooling avg / max / strided conv), so scale m has L_m = L / w^m steps; marks are subsampled
with stride w^m. Each scale is embedded (value conv + timeF marks, no position) into `[·, L_m, D]`.

Past-Decomposable-Mixing (PDM), `--e_layers` blocks, for every scale m:
    s_m, t_m = Decomp(x_m)                              (moving average or DFT top-k)
    bottom-up seasonal mixing:  s_m ← s_m + Down_m(s_{m−1}),   m = 1..M       (fine → coarse)
    top-down trend mixing:      t_m ← t_m + Up_m(t_{m+1}),     m = M−1..0     (coarse → fine)
    x_m ← x_m + FeedForward(s_m + t_m)
Down_m / Up_m are Linear → GELU → Linear along time; FeedForward is Linear(D → d_ff) → GELU →
Linear(d_ff → D) along features.

Future-Multipredictor-Mixing (FMM): ŷ = Σ_m Proj(Predict_m(x_m)), Predict_m: Linear(L_m → H) along time,
Proj: Linear(D → 1) per variate (channel independence) or Linear(D → c_out) plus a linear forecast of
the trend of every scale (channel dependence); then RevIN de-normalisation with the scale-0 statistics.

`--channel_independence 1` folds the N variates into the batch (`[B·N, L, 1]` series); `0` embeds all
N variates together and, as in TSLib, decomposes the input once more before embedding (seasonal part
embedded, trend part forecast linearly) and mixes features with a feed-forward layer after each PDM
decomposition.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.Autoformer_EncDec import DFT_series_decomp, series_decomp
from layers.config_checks import (
    EMBED_TYPES,
    check_choice,
    check_forecast_config,
    check_non_negative,
    check_output_channels,
    check_positive,
    check_task,
)
from layers.Embed import DataEmbedding_wo_pos
from layers.MultiScale import check_down_sampling, make_down_pool, multi_scale_inputs, scale_lengths
from layers.StandardNorm import Normalize
from utils.errors import UserInputError

TASKS = ("long_term_forecast", "short_term_forecast")
DECOMP_METHODS = ("moving_avg", "dft_decomp")


def feed_forward(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    """Linear(d_in → d_hidden) → GELU → Linear(d_hidden → d_out) over the last axis."""
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_out))


class MultiScaleSeasonMixing(nn.Module):
    """Bottom-up seasonal mixing: s_m ← s_m + Down_m(s_{m−1}) from the finest scale to the coarsest.

    `down_sampling_layers[m − 1]` maps L_{m−1} → L_m steps. Inputs and outputs: a list of `[B, L_m, D]`.
    """

    def __init__(self, lengths: list[int]) -> None:
        super().__init__()
        self.down_sampling_layers = nn.ModuleList(
            feed_forward(lengths[m], lengths[m + 1], lengths[m + 1]) for m in range(len(lengths) - 1))

    def forward(self, season_list: list[torch.Tensor]) -> list[torch.Tensor]:
        mixed = season_list[0].transpose(1, 2)  # [B, D, L_0]
        out = [season_list[0]]
        for down, season in zip(self.down_sampling_layers, season_list[1:], strict=True):
            mixed = season.transpose(1, 2) + down(mixed)  # [B, D, L_m]
            out.append(mixed.transpose(1, 2))  # [B, L_m, D]
        return out


class MultiScaleTrendMixing(nn.Module):
    """Top-down trend mixing: t_m ← t_m + Up_m(t_{m+1}) from the coarsest scale to the finest.

    `up_sampling_layers[j]` maps L_{M−j} → L_{M−j−1} steps (index 0 starts at the coarsest scale, as in
    TSLib's parameter names). Inputs and outputs: a list of `[B, L_m, D]`, finest first.
    """

    def __init__(self, lengths: list[int]) -> None:
        super().__init__()
        self.up_sampling_layers = nn.ModuleList(
            feed_forward(lengths[m + 1], lengths[m], lengths[m]) for m in reversed(range(len(lengths) - 1)))

    def forward(self, trend_list: list[torch.Tensor]) -> list[torch.Tensor]:
        mixed = trend_list[-1].transpose(1, 2)  # [B, D, L_M]
        out = [trend_list[-1]]
        for up, trend in zip(self.up_sampling_layers, reversed(trend_list[:-1]), strict=True):
            mixed = trend.transpose(1, 2) + up(mixed)  # [B, D, L_m]
            out.append(mixed.transpose(1, 2))  # [B, L_m, D]
        return out[::-1]


class PastDecomposableMixing(nn.Module):
    """One PDM block over the multiscale tokens (a list of `[B', L_m, D]`, finest first):
    x_m + FFN(S_m + T_m) with channel independence, S_m + T_m without (as TSLib; the paper's Eq. 5
    always adds the residual feed-forward).

    `layer_norm` and `dropout` are built but not applied, as in TSLib (the LayerNorm's 2·D parameters
    count towards TSLib's total but receive no gradient).
    """

    def __init__(self, lengths: list[int], d_model: int, d_ff: int, dropout: float, decomp_method: str,
                 moving_avg: int, top_k: int, channel_independence: bool) -> None:
        super().__init__()
        self.channel_independence = channel_independence
        self.layer_norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        # TSLib's spelling, kept so the module tree (and any state dict path) matches.
        self.decompsition = series_decomp(moving_avg) if decomp_method == "moving_avg" else DFT_series_decomp(top_k)
        if not channel_independence:
            self.cross_layer = feed_forward(d_model, d_ff, d_model)
        self.mixing_multi_scale_season = MultiScaleSeasonMixing(lengths)
        self.mixing_multi_scale_trend = MultiScaleTrendMixing(lengths)
        self.out_cross_layer = feed_forward(d_model, d_ff, d_model)

    def forward(self, x_list: list[torch.Tensor]) -> list[torch.Tensor]:
        season_list, trend_list = [], []
        for x in x_list:
            season, trend = self.decompsition(x)  # [B', L_m, D] each
            if not self.channel_independence:
                season, trend = self.cross_layer(season), self.cross_layer(trend)
            season_list.append(season)
            trend_list.append(trend)
        seasons = self.mixing_multi_scale_season(season_list)
        trends = self.mixing_multi_scale_trend(trend_list)
        if not self.channel_independence:
            # As TSLib: with mixed channels the block returns season + trend, without the residual
            # feed-forward (out_cross_layer is built but unused, so the parameter count still matches).
            return [s + t for s, t in zip(seasons, trends, strict=True)]
        return [x + self.out_cross_layer(s + t) for x, s, t in zip(x_list, seasons, trends, strict=True)]


def _check_configs(configs: argparse.Namespace) -> None:
    check_task(configs, "TimeMixer", TASKS)
    check_forecast_config(configs, "TimeMixer")
    check_positive(configs, "d_model", "d_ff", "e_layers", "moving_avg", "down_sampling_window")
    check_non_negative(configs, "down_sampling_layers")
    check_choice(configs, "embed", EMBED_TYPES)
    check_choice(configs, "decomp_method", DECOMP_METHODS)
    if configs.decomp_method == "dft_decomp":
        check_positive(configs, "top_k")
    for flag in ("channel_independence", "use_norm"):
        if getattr(configs, flag) not in (0, 1):
            raise UserInputError(f"--{flag} {getattr(configs, flag)!r} is not supported; use 0 or 1")
    check_output_channels(configs, "TimeMixer")
    check_down_sampling(configs)


class Model(nn.Module):
    """TimeMixer for long-term forecasting: `[B, L, enc_in]`, marks `[B, L, F]` or None → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff, e_layers, dropout, embed, freq, moving_avg,
    top_k, decomp_method, channel_independence, use_norm, down_sampling_layers, down_sampling_window,
    down_sampling_method. With c_out < enc_in (features MS) the last c_out variates are returned.

    Submodules are built in TSLib's order, so a given seed draws TSLib's initial weights. The `conv`
    down-sampling is a registered (trained) Conv1d built last; TSLib builds a fresh random one on every
    forward pass, outside the optimiser and on the CPU.
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
        self.pdm_blocks = nn.ModuleList(
            PastDecomposableMixing(lengths, configs.d_model, configs.d_ff, configs.dropout, configs.decomp_method,
                                   configs.moving_avg, configs.top_k, self.channel_independence)
            for _ in range(configs.e_layers))
        self.preprocess = series_decomp(configs.moving_avg)
        embed_in = 1 if self.channel_independence else configs.enc_in
        self.enc_embedding = DataEmbedding_wo_pos(embed_in, configs.d_model, configs.embed, configs.freq,
                                                  configs.dropout)
        self.normalize_layers = nn.ModuleList(
            Normalize(configs.enc_in, affine=True, non_norm=not configs.use_norm) for _ in lengths)
        self.predict_layers = nn.ModuleList(nn.Linear(length, configs.pred_len) for length in lengths)
        if self.channel_independence:
            self.projection_layer = nn.Linear(configs.d_model, 1)
        else:
            self.projection_layer = nn.Linear(configs.d_model, configs.c_out)
            self.out_res_layers = nn.ModuleList(nn.Linear(length, length) for length in lengths)
            self.regression_layers = nn.ModuleList(nn.Linear(length, configs.pred_len) for length in lengths)
        self.down_pool = make_down_pool(configs)

    def _multi_scale_inputs(self, x: torch.Tensor, x_mark: torch.Tensor | None
                            ) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
        """x `[B, L, N]` and marks `[B, L, F]` at every scale: lists of `[B, L_m, N]` and `[B, L_m, F]`."""
        return multi_scale_inputs(x, x_mark, self.down_pool, self.down_sampling_layers, self.down_sampling_window)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b, _, n = x_enc.shape
        xs, marks = self._multi_scale_inputs(x_enc, x_mark_enc)
        xs = [norm(x, "norm") for norm, x in zip(self.normalize_layers, xs, strict=True)]  # [B, L_m, N]
        if self.channel_independence:
            tokens = [x.transpose(1, 2).reshape(b * n, -1, 1) for x in xs]  # [B·N, L_m, 1], row b·N + v
            # TSLib tiles the marks sample-major, so row r gets sample r mod B's marks: with B > 1 most series
            # see another sample's calendar. Kept on purpose: with each series' own marks the ETTh1 script
            # overfits from epoch 2 (test MSE 0.4000 vs TSLib's 0.3892; docs/tslib_differences.md).
            marks = [None if m is None else m.repeat(n, 1, 1) for m in marks]  # [B·N, L_m, F]
            trends = None
        else:
            tokens, trends = zip(*(self.preprocess(x) for x in xs), strict=True)  # [B, L_m, N] each
        enc_out = [self.enc_embedding(x, m) for x, m in zip(tokens, marks, strict=True)]  # [B', L_m, D]
        for block in self.pdm_blocks:
            enc_out = block(enc_out)
        dec_out = torch.stack(self._future_multi_mixing(b, n, enc_out, trends), dim=-1).sum(-1)  # [B, H, c_out]
        return self.normalize_layers[0](dec_out, "denorm")  # [B, H, c_out]

    def _future_multi_mixing(self, b: int, n: int, enc_out: list[torch.Tensor],
                             trends: tuple[torch.Tensor, ...] | None) -> list[torch.Tensor]:
        """One forecast `[B, H, c_out]` per scale (FMM's predictors, summed by the caller)."""
        out = []
        for m, tokens in enumerate(enc_out):
            pred = self.predict_layers[m](tokens.transpose(1, 2)).transpose(1, 2)  # [B', H, D]
            pred = self.projection_layer(pred)  # [B·N, H, 1] or [B, H, c_out]
            if self.channel_independence:
                pred = pred.reshape(b, n, self.pred_len).transpose(1, 2)[..., -self.c_out:]  # [B, H, c_out]
            else:
                res = self.out_res_layers[m](trends[m].transpose(1, 2))  # [B, N, L_m]
                res = self.regression_layers[m](res).transpose(1, 2)  # [B, H, N]
                pred = pred + res[..., -self.c_out:]  # [B, H, c_out]
            out.append(pred)
        return out
