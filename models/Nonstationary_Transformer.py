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
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ACTIVATIONS,
    EMBED_TYPES,
    check_choice,
    check_decoder_from_encoder,
    check_forecast_config,
    check_heads,
    check_output_channels,
    check_positive,
)
from layers.Embed import DataEmbedding
from layers.SelfAttention_Family import AttentionLayer, DSAttention
from layers.StandardNorm import Normalize
from layers.Transformer_EncDec import Decoder, DecoderLayer, Encoder, EncoderLayer
from utils.errors import UserInputError


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


class Model(nn.Module):
    """Non-stationary Transformer for long/short-term forecasting.

    x_enc `[B, S, enc_in]`, x_mark_enc `[B, S, F]`, x_dec `[B, label_len + H, dec_in]` (only its length
    is used: the decoder starts from the normalised x_enc), x_mark_dec `[B, label_len + H, F]` →
    `[B, H, c_out]`. Reads seq_len, label_len, pred_len, enc_in, dec_in, c_out, d_model, n_heads,
    e_layers, d_layers, d_ff, factor, dropout, activation, embed, freq, p_hidden_dims, p_hidden_layers.
    With c_out < enc_in (features MS) the last c_out variates are returned, de-normalised with their
    own statistics.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "Nonstationary_Transformer")
        check_heads(configs)
        check_positive(configs, "dec_in", "e_layers", "d_layers", "d_ff", "p_hidden_layers")
        check_choice(configs, "activation", ACTIVATIONS)
        check_choice(configs, "embed", EMBED_TYPES)
        check_output_channels(configs, "Nonstationary_Transformer")
        check_decoder_from_encoder(configs, "Nonstationary_Transformer", "starts from the normalised encoder input")
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
        self.encoder = Encoder(
            [
                EncoderLayer(attention(False), d_model, configs.d_ff, dropout=dropout, activation=configs.activation)
                for _ in range(configs.e_layers)
            ],
            norm_layer=nn.LayerNorm(d_model),
        )
        self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
        self.decoder = Decoder(
            [
                DecoderLayer(attention(True), attention(False), d_model, configs.d_ff, dropout=dropout,
                             activation=configs.activation)
                for _ in range(configs.d_layers)
            ],
            norm_layer=nn.LayerNorm(d_model),
            projection=nn.Linear(d_model, configs.c_out),
        )
        self.tau_learner = Projector(configs.enc_in, configs.seq_len, hidden_dims, configs.p_hidden_layers, 1)
        self.delta_learner = Projector(configs.enc_in, configs.seq_len, hidden_dims, configs.p_hidden_layers,
                                       configs.seq_len)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                x_dec: torch.Tensor, x_mark_dec: torch.Tensor | None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x_raw = x_enc.detach()
        x = self.normalize(x_enc, "norm")  # [B, S, N]
        mean, std = self.normalize.center, self.normalize.stdev  # [B, 1, N] each
        # τ > 0 through the exponential; Δ is one shift per key (encoder position).
        tau = self.tau_learner(x_raw, std).exp()  # [B, 1]
        delta = self.delta_learner(x_raw, mean)  # [B, S]

        # Start tokens: the last label_len normalised inputs (an explicit start index, so label_len 0
        # gives no start tokens rather than the whole window), then H zero placeholders.
        start = x[:, self.seq_len - self.label_len:, :]  # [B, label_len, N]
        dec_in = torch.cat([start, x.new_zeros(x.shape[0], self.pred_len, x.shape[2])], dim=1)  # [B, label_len + H, N]

        memory, _ = self.encoder(self.enc_embedding(x, x_mark_enc), tau=tau, delta=delta)  # [B, S, D]
        out = self.decoder(self.dec_embedding(dec_in, x_mark_dec), memory, tau=tau, delta=delta)  # [B, label_len + H, c_out]
        # Normalize's denorm de-normalises the c_out outputs with the statistics of the last c_out variates.
        return self.normalize(out[:, -self.pred_len:, :], "denorm")  # [B, H, c_out]
