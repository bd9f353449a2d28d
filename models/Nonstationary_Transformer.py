"""Non-stationary Transformer (Liu et al., "Non-stationary Transformers: Exploring the Stationarity in
Time Series Forecasting", NeurIPS 2022, https://arxiv.org/abs/2205.14415), TSLib's configuration.

Series stationarization (paper §3.1), per sample and per variate over the input window of length S:
    μ_x = (1/S) Σ_i x_i,   σ_x² = (1/S) Σ_i (x_i − μ_x)²,   x'_i = (x_i − μ_x) / σ_x     (eq. 1)
    ŷ_i = σ_x · y'_i + μ_x                                                       (eq. 2, de-normalisation)
(σ_x carries the 1e-5 variance epsilon of `layers/StandardNorm.Normalize`.)

De-stationary attention (§3.2, eq. 5-6), in every encoder and decoder attention:
    log τ = MLP(σ_x, x),   Δ = MLP(μ_x, x)
    Attn(Q', K', V', τ, Δ) = softmax((τ · Q' K'ᵀ + 1 Δᵀ) / √d_k) V'
τ `[B, 1]` rescales the scores, Δ `[B, S]` shifts each key's score (so it applies where the keys are
the encoder's S tokens: encoder self-attention and decoder cross-attention; the decoder's causal
self-attention gets τ only). Each MLP is a `Projector`: a circular Conv1d over time mixing the raw
series `[B, S, N]` into one row `[B, 1, N]`, concatenated with the statistic `[B, 1, N]` and fed to an
MLP (`--p_hidden_layers` ReLU layers of widths `--p_hidden_dims`, then a bias-free output layer).

The backbone is TSLib's vanilla Transformer (DataEmbedding, post-norm encoder and decoder) with
DSAttention; the decoder input is the last `label_len` *normalised* inputs followed by H zeros.

The window tasks (imputation, anomaly detection, classification) use the encoder alone, as TSLib builds
them (no decoder): imputation and anomaly detection read each encoder token out with Linear(D → c_out)
(`projection`) between the stationarization and its inverse; classification applies GELU, dropout and
the padding mask to the encoder tokens of the raw (not stationarized) window and flattens them into
Linear(L·D → num_class). τ and Δ are learnt from the window's statistics in every task.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    CLASSIFICATION,
    FORECAST_TASKS,
    IMPUTATION,
    check_attention_config,
    check_decoder_from_encoder,
    check_output_channels,
    check_positive,
)
from layers.Embed import DataEmbedding
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.SelfAttention_Family import AttentionLayer, DSAttention
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from layers.Transformer_EncDec import attention_decoder, attention_encoder
from utils.errors import UserInputError

ANOMALY_DETECTION = "anomaly_detection"
TASKS = FORECAST_TASKS + (IMPUTATION, ANOMALY_DETECTION, CLASSIFICATION)


class Projector(nn.Module):
    """The de-stationary factor learner MLP(stat, x) of paper eq. 5: `[B, S, N]`, `[B, 1, N]` → `[B, output_dim]`.

    TSLib's attribute names (series_conv, backbone) and construction order, so a seed gives TSLib's
    initial weights and its checkpoints load.

    Args:
        enc_in: number of variates N.
        seq_len: input window length S (the convolution's channels: it mixes time steps).
        hidden_dims: widths of the hidden layers (one per hidden layer).
        hidden_layers: number of hidden Linear + ReLU layers (equal to len(hidden_dims)).
        output_dim: 1 for τ, S for Δ.
        kernel_size: width of the circular convolution over the variate axis.
    """

    def __init__(self, enc_in: int, seq_len: int, hidden_dims: list[int], hidden_layers: int, output_dim: int,
                 kernel_size: int = 3) -> None:
        super().__init__()
        if hidden_layers < 1 or len(hidden_dims) != hidden_layers:
            raise ValueError(f"Projector needs one width per hidden layer, got hidden_dims {hidden_dims} for "
                             f"hidden_layers {hidden_layers} (--p_hidden_dims, --p_hidden_layers)")
        # The time steps are the convolution's channels; it slides over the variates, wrapping around.
        self.series_conv = nn.Conv1d(seq_len, 1, kernel_size=kernel_size, padding=kernel_size // 2,
                                     padding_mode="circular", bias=False)
        widths = [2 * enc_in, *hidden_dims]
        layers: list[nn.Module] = []
        for width_in, width_out in zip(widths[:-1], widths[1:], strict=True):
            layers += [nn.Linear(width_in, width_out), nn.ReLU()]
        layers.append(nn.Linear(widths[-1], output_dim, bias=False))
        self.backbone = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, stats: torch.Tensor) -> torch.Tensor:
        """x `[B, S, N]` (the raw series), stats `[B, 1, N]` (σ_x or μ_x) → `[B, output_dim]`."""
        mixed = self.series_conv(x)  # [B, 1, N]
        features = torch.cat([mixed, stats], dim=1).flatten(start_dim=1)  # [B, 2N]
        return self.backbone(features)  # [B, output_dim]


class Model(TaskForward, nn.Module):
    """Non-stationary Transformer for long/short-term forecasting, imputation, anomaly detection and
    classification.

    Forecasting: x_enc `[B, S, enc_in]`, x_mark_enc `[B, S, F]`, x_dec `[B, label_len + H, dec_in]` (only
    its length is used: the decoder starts from the normalised x_enc), x_mark_dec `[B, label_len + H, F]`
    → `[B, H, c_out]`. Imputation: masked x `[B, S, enc_in]`, marks, mask → `[B, S, c_out]`; anomaly
    detection: x `[B, S, enc_in]` → `[B, S, c_out]`; classification: x, padding mask `[B, S]` →
    `[B, num_class]` (num_class set by the experiment). Reads seq_len, label_len, pred_len, enc_in,
    dec_in, c_out, d_model, n_heads, e_layers, d_layers, d_ff, factor, dropout, activation, embed, freq,
    p_hidden_dims, p_hidden_layers (label_len, pred_len, dec_in, d_layers only when forecasting).
    With c_out < enc_in (features MS) the last c_out variates are returned, de-normalised with their
    own statistics.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_attention_config(configs, "Nonstationary_Transformer", TASKS,
                               "e_layers", "d_ff", "p_hidden_layers")
        self.task_name = configs.task_name
        forecast = self.task_name in FORECAST_TASKS
        if forecast:
            check_positive(configs, "dec_in", "d_layers")
            check_decoder_from_encoder(configs, "Nonstationary_Transformer",
                                       "starts from the normalised encoder input")
        if self.task_name != CLASSIFICATION:
            check_output_channels(configs, "Nonstationary_Transformer")
        hidden_dims = list(configs.p_hidden_dims)
        if len(hidden_dims) != configs.p_hidden_layers or min(hidden_dims) <= 0:
            raise UserInputError(
                f"--p_hidden_dims {' '.join(map(str, hidden_dims))} must give one positive width per projector "
                f"layer (--p_hidden_layers {configs.p_hidden_layers})")
        self.seq_len, self.label_len, self.pred_len = configs.seq_len, configs.label_len, configs.pred_len
        self.c_out = configs.c_out
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        def attention(causal: bool) -> AttentionLayer:
            return AttentionLayer(DSAttention(causal, configs.factor, attention_dropout=dropout), d_model, n_heads)

        # Statistics only (no parameters): created first, it draws no random numbers.
        self.normalize = Normalize(configs.enc_in)
        # TSLib's construction order, so a seed gives TSLib's initial weights.
        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = attention_encoder(attention, d_model, configs.d_ff, configs.e_layers, dropout,
                                         configs.activation, nn.LayerNorm(d_model))
        if forecast:
            self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
            self.decoder = attention_decoder(attention, d_model, configs.d_ff, configs.d_layers, dropout,
                                             configs.activation, configs.c_out)
        elif self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(d_model * configs.seq_len, configs.num_class)
        else:
            # Imputation and anomaly detection read every encoder token out to the variates.
            self.projection = nn.Linear(d_model, configs.c_out)
        self.tau_learner = Projector(configs.enc_in, configs.seq_len, hidden_dims, configs.p_hidden_layers, 1)
        self.delta_learner = Projector(configs.enc_in, configs.seq_len, hidden_dims, configs.p_hidden_layers,
                                       configs.seq_len)

    def destationary_factors(self, x_raw: torch.Tensor, mean: torch.Tensor, std: torch.Tensor
                             ) -> tuple[torch.Tensor, torch.Tensor]:
        """τ `[B, 1]` (positive) and Δ `[B, S]` from the raw window `[B, S, N]` and its statistics `[B, 1, N]`."""
        return self.tau_learner(x_raw, std).exp(), self.delta_learner(x_raw, mean)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """`[B, S, enc_in]`, marks → `[B, H, c_out]` (see the class doc)."""
        x_raw = x_enc.detach()
        x = self.normalize(x_enc, "norm")  # [B, S, N]
        mean, std = self.normalize.center, self.normalize.stdev  # [B, 1, N] each
        # τ > 0 through the exponential; Δ is one shift per key (encoder position).
        tau, delta = self.destationary_factors(x_raw, mean, std)  # [B, 1], [B, S]

        # Start tokens: the last label_len normalised inputs (an explicit start index, so label_len 0
        # gives no start tokens rather than the whole window), then H zero placeholders.
        start = x[:, self.seq_len - self.label_len:, :]  # [B, label_len, N]
        dec_in = torch.cat([start, x.new_zeros(x.shape[0], self.pred_len, x.shape[2])], dim=1)  # [B, label_len + H, N]

        memory, _ = self.encoder(self.enc_embedding(x, x_mark_enc), tau=tau, delta=delta)  # [B, S, D]
        out = self.decoder(self.dec_embedding(dec_in, x_mark_dec), memory, tau=tau, delta=delta)  # [B, label_len + H, c_out]
        # Normalize's denorm de-normalises the c_out outputs with the statistics of the last c_out variates.
        return self.normalize(out[:, -self.pred_len:, :], "denorm")  # [B, H, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x `[B, S, N]` (0 where hidden), marks `[B, S, F]`, mask `[B, S, N]`
        (1 observed) → `[B, S, c_out]`.

        As TSLib: the window is stationarized with the statistics of its observed points only
        (`layers/MaskedNorm.py`), τ and Δ are learnt from the zero-filled window and those statistics,
        and the encoder tokens are read out by Linear(D → c_out) and de-normalised.
        """
        if mask is None:
            raise ValueError("Nonstationary_Transformer imputation needs the observation mask (1 = observed)")
        x, mean, std = masked_normalize(x_enc, mask)  # [B, S, N]; [B, 1, N] each
        tau, delta = self.destationary_factors(x_enc.detach(), mean, std)
        tokens, _ = self.encoder(self.enc_embedding(x, x_mark_enc), tau=tau, delta=delta)  # [B, S, D]
        return masked_denormalize(self.projection(tokens), mean, std)  # [B, S, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window without time marks: `[B, S, N]` → `[B, S, c_out]` (stationarize, encoder
        with τ and Δ, Linear(D → c_out), de-normalise), as TSLib."""
        x_raw = x_enc.detach()
        x = self.normalize(x_enc, "norm")  # [B, S, N]
        tau, delta = self.destationary_factors(x_raw, self.normalize.center, self.normalize.stdev)
        tokens, _ = self.encoder(self.enc_embedding(x, None), tau=tau, delta=delta)  # [B, S, D]
        return self.normalize(self.projection(tokens), "denorm")  # [B, S, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, S, N]`, padding mask `[B, S]` (1 = real step) → logits `[B, num_class]`.

        As TSLib: τ and Δ come from the window's mean and standard deviation, but the encoder embeds the
        raw window (no stationarization) without marks; GELU, dropout, padded steps zeroed, flatten,
        Linear(S·D → num_class).
        """
        x_raw = x_enc.detach()
        mean, std = self.normalize.record_statistics(x_raw)  # [B, 1, N] each; the encoder reads the raw window
        tau, delta = self.destationary_factors(x_raw, mean, std)
        tokens, _ = self.encoder(self.enc_embedding(x_enc, None), tau=tau, delta=delta)  # [B, S, D]
        return self.projection(masked_flat_features(tokens, self.dropout, padding_mask))  # [B, num_class]
