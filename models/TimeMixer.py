"""TimeMixer (Wang et al., "TimeMixer: Decomposable Multiscale Mixing for Time Series Forecasting",
ICLR 2024, https://arxiv.org/abs/2405.14616): forecasting, imputation, anomaly detection and classification.

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

The window tasks (the paper's Appendix: PDM as the encoder of every task, the finest scale's tokens read
out; TSLib's heads) build no FMM predictors:
    imputation:         observed-point normalisation (`layers/MaskedNorm.py`), the multiscale inputs,
                        embedding without marks, PDM, then `projection_layer` on the finest scale's tokens
                        (Linear(D → 1) per variate, or Linear(D → c_out) with channel mixing), de-normalised;
    anomaly detection:  the same with RevIN per scale (`normalize_layers`), de-normalised with scale 0's;
    classification:     the raw multiscale inputs embedded without marks, PDM, the finest scale's tokens
                        through GELU → dropout → padded steps zeroed → flatten → `projection`
                        Linear(L·D → num_class).
Differences from TSLib's window heads: TSLib's classification does not fold the variates with
`--channel_independence 1` (its 1-channel embedding then fails on N > 1 variates); here each variate is
embedded and mixed on its own and the finest-scale tokens are averaged over the variates before the
head (same parameters). With channel mixing TSLib reshapes the `[B, L, c_out]` reconstruction as if it
were `[B, c_out, L]` (scrambling time and variates); here it is kept as is. TSLib subsamples the
imputation marks but never embeds them; here they are not read either.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.Autoformer_EncDec import DFT_series_decomp, series_decomp
from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    CLASSIFICATION,
    EMBED_TYPES,
    FORECAST_TASKS,
    IMPUTATION,
    check_choice,
    check_non_negative,
    check_output_channels,
    check_positive,
    check_task_config,
)
from layers.Embed import DataEmbedding_wo_pos
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.MultiScale import check_down_sampling, make_down_pool, multi_scale_inputs, scale_lengths
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError

TASKS = (*FORECAST_TASKS, IMPUTATION, "anomaly_detection", CLASSIFICATION)
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
    check_task_config(configs, "TimeMixer", TASKS)
    check_positive(configs, "d_model", "d_ff", "e_layers", "moving_avg", "down_sampling_window")
    check_non_negative(configs, "down_sampling_layers")
    check_choice(configs, "embed", EMBED_TYPES)
    check_choice(configs, "decomp_method", DECOMP_METHODS)
    if configs.decomp_method == "dft_decomp":
        check_positive(configs, "top_k")
    for flag in ("channel_independence", "use_norm"):
        if getattr(configs, flag) not in (0, 1):
            raise UserInputError(f"--{flag} {getattr(configs, flag)!r} is not supported; use 0 or 1")
    if configs.task_name != CLASSIFICATION:
        check_output_channels(configs, "TimeMixer")
    check_down_sampling(configs)


class Model(TaskForward, nn.Module):
    """TimeMixer: `[B, L, enc_in]`, marks `[B, L, F]` or None → `[B, H, c_out]` (forecasting), `[B, L, c_out]`
    (imputation, anomaly detection) or logits `[B, num_class]` (classification; the padding mask `[B, L]`
    comes in the marks' place).

    Reads seq_len, pred_len (forecasting), enc_in, c_out (not in classification), num_class
    (classification), d_model, d_ff, e_layers, dropout, embed, freq, moving_avg, top_k, decomp_method,
    channel_independence, use_norm, down_sampling_layers, down_sampling_window, down_sampling_method. With
    c_out < enc_in (features MS) the last c_out variates are returned.

    Submodules are built in TSLib's order, so a given seed draws TSLib's initial weights. The `conv`
    down-sampling is a registered (trained) Conv1d built last; TSLib builds a fresh random one on every
    forward pass, outside the optimiser and on the CPU.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc")

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        _check_configs(configs)
        self.task_name = configs.task_name
        self.pred_len = configs.pred_len if self.task_name in FORECAST_TASKS else 0
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
        # Built for every task, as TSLib (used by forecasting and anomaly detection only).
        self.normalize_layers = nn.ModuleList(
            Normalize(configs.enc_in, affine=True, non_norm=not configs.use_norm) for _ in lengths)
        if self.task_name in FORECAST_TASKS:
            self.predict_layers = nn.ModuleList(nn.Linear(length, configs.pred_len) for length in lengths)
        if self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.d_model * configs.seq_len, configs.num_class)
        elif self.channel_independence:
            self.projection_layer = nn.Linear(configs.d_model, 1)
        else:
            self.projection_layer = nn.Linear(configs.d_model, configs.c_out)
            if self.task_name in FORECAST_TASKS:
                self.out_res_layers = nn.ModuleList(nn.Linear(length, length) for length in lengths)
                self.regression_layers = nn.ModuleList(nn.Linear(length, configs.pred_len) for length in lengths)
        self.down_pool = make_down_pool(configs)

    def _multi_scale_inputs(self, x: torch.Tensor, x_mark: torch.Tensor | None
                            ) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
        """x `[B, L, N]` and marks `[B, L, F]` at every scale: lists of `[B, L_m, N]` and `[B, L_m, F]`."""
        return multi_scale_inputs(x, x_mark, self.down_pool, self.down_sampling_layers, self.down_sampling_window)

    def _mix(self, tokens: list[torch.Tensor] | tuple[torch.Tensor, ...],
             marks: list[torch.Tensor | None]) -> list[torch.Tensor]:
        """Embed every scale and run the PDM blocks: `[B', L_m, 1 or N]` → `[B', L_m, D]` per scale."""
        enc_out = [self.enc_embedding(x, m) for x, m in zip(tokens, marks, strict=True)]  # [B', L_m, D]
        for block in self.pdm_blocks:
            enc_out = block(enc_out)
        return enc_out

    def _fold(self, xs: list[torch.Tensor]) -> list[torch.Tensor]:
        """With channel independence every variate becomes a series of its own: `[B, L_m, N]` →
        `[B·N, L_m, 1]` (row b·N + v); without, the scales pass unchanged."""
        if not self.channel_independence:
            return xs
        return [x.transpose(1, 2).reshape(-1, x.shape[1], 1) for x in xs]

    def _finest_scale_reconstruction(self, xs: list[torch.Tensor]) -> torch.Tensor:
        """The window read back from the finest scale's mixed tokens (no marks): per-scale inputs `[B, L_m, N]`
        → `[B, L, c_out]` (normalised units)."""
        b, length, n = xs[0].shape
        tokens = self._mix(self._fold(xs), [None] * len(xs))[0]  # [B', L, D]
        out = self.projection_layer(tokens)  # [B·N, L, 1] or [B, L, c_out]
        if self.channel_independence:
            out = out.reshape(b, n, length).transpose(1, 2)  # [B, L, N]
        return out[..., -self.c_out:]  # [B, L, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window `[B, L, N]` (0 where masked; mask `[B, L, N]`, 1 = observed) → `[B, L, c_out]`:
        normalised by the observed points, down-sampled into the scales, embedded without marks (TSLib never
        embeds them here), mixed by PDM; `projection_layer` reads the finest scale; de-normalised."""
        x, means, stdev = masked_normalize(x_enc, mask)  # [B, L, N], [B, 1, N] × 2
        xs, _ = self._multi_scale_inputs(x, None)
        return masked_denormalize(self._finest_scale_reconstruction(xs), means, stdev)  # [B, L, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window `[B, L, enc_in]` → `[B, L, c_out]`: the scales RevIN-normalised each, embedded
        without marks, mixed by PDM; `projection_layer` reads the finest scale; de-normalised with scale 0's
        statistics."""
        xs, _ = self._multi_scale_inputs(x_enc, None)
        xs = [norm(x, "norm") for norm, x in zip(self.normalize_layers, xs, strict=True)]  # [B, L_m, N]
        return self.normalize_layers[0](self._finest_scale_reconstruction(xs), "denorm")  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = real step) → logits `[B, num_class]`: the raw scales
        (no normalisation, no marks) mixed by PDM; the finest scale's tokens (averaged over the variates with
        channel independence) through GELU, dropout, the padded steps zeroed, flatten, Linear(L·D → classes).
        Padded values still reach the real steps' tokens through the decomposition and the scale mixing,
        as in TSLib; only their own tokens are dropped."""
        b, length, _ = x_enc.shape
        xs, _ = self._multi_scale_inputs(x_enc, None)
        tokens = self._mix(self._fold(xs), [None] * len(xs))[0]  # [B', L, D]
        if self.channel_independence:
            tokens = tokens.reshape(b, -1, length, tokens.shape[-1]).mean(dim=1)  # [B, L, D]
        return self.projection(masked_flat_features(tokens, self.dropout, padding_mask))  # [B, num_class]

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, marks `[B, L, F]` or None → `[B, H, c_out]` (PDM, then FMM's predictors)."""
        b, _, n = x_enc.shape
        xs, marks = self._multi_scale_inputs(x_enc, x_mark_enc)
        xs = [norm(x, "norm") for norm, x in zip(self.normalize_layers, xs, strict=True)]  # [B, L_m, N]
        if self.channel_independence:
            tokens = self._fold(xs)  # [B·N, L_m, 1], row b·N + v
            # TSLib tiles the marks sample-major, so row r gets sample r mod B's marks: with B > 1 most series
            # see another sample's calendar. Kept on purpose: with each series' own marks the ETTh1 script
            # overfits from epoch 2 (test MSE 0.4000 vs TSLib's 0.3892; docs/tslib_differences.md).
            marks = [None if m is None else m.repeat(n, 1, 1) for m in marks]  # [B·N, L_m, F]
            trends = None
        else:
            tokens, trends = zip(*(self.preprocess(x) for x in xs), strict=True)  # [B, L_m, N] each
        enc_out = self._mix(tokens, marks)  # [B', L_m, D] per scale
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
