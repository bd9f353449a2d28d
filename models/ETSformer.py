"""ETSformer (Woo et al., "ETSformer: Exponential Smoothing Transformers for Time-series Forecasting",
2022, https://arxiv.org/abs/2202.01381), TSLib's configuration: forecasting and TSLib's window tasks.

    training only: x ← x · (1 + 0.2 ε₁) + 0.2 ε₂ + 0.2 ε₃   (ε₁, ε₂ per variate, ε₃ per entry; TSLib's
                   scale, shift and jitter augmentation, drawn from torch's global RNG)
    res = DataEmbedding(x, marks); level = x
    e_layers × encoder layer (layers/ETSformer_EncDec.py):
        S = FA(res) over L + H steps (top-k frequencies)          frequency attention, §3.2.2
        res ← res − S_{:L};  B = MH-ESA(res) (B_{−1} … B_{L−1})    exponential smoothing attention, §3.2.1
        res ← LN(res − B_{0:}); res ← LN(res + FF(res))
        level ← E with E_t = (1 − w)(level_t − S'_t) + w(E_{t−1} + B'_{t−1}) (S', B' projected to the variates)
    decoder: per layer the last growth damped over the horizon (Σ_{i≤h} φ^i) and the season's last H steps,
             summed over layers and each projected Linear(D → c_out)
    forecast = E_{L−1} + growth + season.

The encoder and decoder layers pair up (layer i's growth and season feed decoder layer i), so TSLib
requires --e_layers == --d_layers; here that is a one-line error. The last encoder layer's residual
path (its FF and LayerNorms) does not reach the forecast, as in TSLib; it is still computed, so the
FLOPs equal TSLib's.

Window tasks, as TSLib builds them (the horizon is set to the window, H = L, and nothing is augmented):
- imputation and anomaly detection return the forecast above for the next L steps as the reconstruction
  of the window. The frequency attention's cosines have whole periods over L, so its extrapolated season
  at step L + t equals its fit at step t: the read-out is the last level plus the damped growth plus the
  window's own season. The mask is not read.
- classification sums the layers' growths (B_{−1} … B_{L−2}) and seasons (fitted steps 0 … L−1) inside
  the window, `[B, L, D]`, then GELU, dropout, the padding mask, flatten and Linear(L·D → num_class)
  (`projection`). The decoder is built (TSLib's parameter count, with its `--c_out` read-out) but not
  used there.

Deliberate differences from TSLib (parameter names, shapes, counts and initial draws kept):
- The level equation smooths the growth along time (see `layers/ETSformer_EncDec.py`).
- With c_out < enc_in (features MS) the level of the last c_out variates (the target) is added, so the
  output has c_out channels; TSLib broadcasts a 1-channel forecast against the enc_in-channel level.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    CLASSIFICATION,
    EMBED_TYPES,
    FORECAST_TASKS,
    IMPUTATION,
    WINDOW_TASKS,
    check_choice,
    check_heads,
    check_positive,
    check_variate_task_config,
)
from layers.Embed import DataEmbedding
from layers.ETSformer_EncDec import FEEDFORWARD_ACTIVATIONS, Decoder, DecoderLayer, Encoder, EncoderLayer
from layers.TaskDispatch import window_task_output
from utils.errors import UserInputError

ANOMALY_DETECTION = "anomaly_detection"
TASKS = FORECAST_TASKS + (IMPUTATION, ANOMALY_DETECTION, CLASSIFICATION)
# Standard deviation of TSLib's training-time scale, shift and jitter augmentation.
AUGMENTATION_SIGMA = 0.2


class Transform:
    """TSLib's training augmentation of x `[B, L, N]`: scale by 1 + σε (per variate), shift by σε (per
    variate), jitter by σε (per entry), ε ~ N(0, 1) drawn on the CPU in that order (TSLib's draws)."""

    def __init__(self, sigma: float) -> None:
        self.sigma = sigma

    @torch.no_grad()
    def transform(self, x: torch.Tensor) -> torch.Tensor:
        return self.jitter(self.shift(self.scale(x)))

    def jitter(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.randn(x.shape).to(x.device, x.dtype) * self.sigma

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        return x * (torch.randn(x.size(-1)).to(x.device, x.dtype) * self.sigma + 1)

    def shift(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.randn(x.size(-1)).to(x.device, x.dtype) * self.sigma


class Model(nn.Module):
    """ETSformer (see the module doc).

    Forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` (or None) → `[B, H, c_out]`; x_dec and
    x_mark_dec are not read. Imputation: masked x, marks, mask → `[B, L, c_out]`; anomaly detection:
    `[B, L, enc_in]` → `[B, L, c_out]`; classification: x, padding mask `[B, L]` → `[B, num_class]`.
    Reads seq_len, pred_len (forecasting only), enc_in, c_out, d_model, n_heads, e_layers, d_layers, d_ff,
    top_k, dropout, activation, embed, freq.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "ETSformer", TASKS)
        self.task_name = configs.task_name
        check_heads(configs)
        check_positive(configs, "e_layers", "d_layers", "d_ff", "top_k", "c_out")
        check_choice(configs, "activation", FEEDFORWARD_ACTIVATIONS)
        check_choice(configs, "embed", EMBED_TYPES)
        if configs.e_layers != configs.d_layers:
            raise UserInputError(f"--e_layers {configs.e_layers} differs from --d_layers {configs.d_layers}: "
                                 "ETSformer decodes each encoder layer's growth and season in its own decoder "
                                 "layer, so set --d_layers equal to --e_layers")
        frequencies = (configs.seq_len - 1) // 2
        if frequencies == 0:
            raise UserInputError(f"--seq_len {configs.seq_len} leaves no frequency for ETSformer's frequency "
                                 "attention (DC and Nyquist excluded); use --seq_len >= 3")
        if configs.top_k > frequencies:
            raise UserInputError(f"--top_k {configs.top_k} exceeds the {frequencies} frequencies of --seq_len "
                                 f"{configs.seq_len} that frequency attention ranks (DC and Nyquist excluded); "
                                 f"use --top_k <= {frequencies}")
        self.seq_len = configs.seq_len
        # The window tasks decode a horizon as long as the window (TSLib), whatever --pred_len says.
        self.pred_len = configs.pred_len if self.task_name in FORECAST_TASKS else configs.seq_len
        self.c_out = configs.c_out
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        # TSLib's construction order: embedding, encoder, decoder.
        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = Encoder(
            [
                EncoderLayer(d_model, n_heads, configs.enc_in, configs.seq_len, self.pred_len, configs.top_k,
                             dim_feedforward=configs.d_ff, dropout=dropout, activation=configs.activation)
                for _ in range(configs.e_layers)
            ]
        )
        self.decoder = Decoder(
            [DecoderLayer(d_model, n_heads, configs.c_out, self.pred_len, dropout=dropout)
             for _ in range(configs.d_layers)]
        )
        self.transform = Transform(sigma=AUGMENTATION_SIGMA)
        if self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(d_model * configs.seq_len, configs.num_class)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.task_name in WINDOW_TASKS:
            return window_task_output(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        if self.training:
            x_enc = self.transform.transform(x_enc)
        return self.extrapolate(x_enc, x_mark_enc)

    def extrapolate(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """Last level + damped growth + extrapolated season: `[B, L, enc_in]`, marks → `[B, H, c_out]`."""
        res = self.enc_embedding(x_enc, x_mark_enc)  # [B, L, D]
        level, growths, seasons = self.encoder(res, x_enc)  # level [B, L, enc_in]
        growth, season = self.decoder(growths, seasons)  # [B, H, c_out] each
        return level[:, -1:, -self.c_out:] + growth + season  # [B, H, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x `[B, L, enc_in]` (0 where hidden), marks `[B, L, F]` → `[B, L, c_out]`,
        the forecast of the next L steps (TSLib's head; see the module doc). The mask is not read."""
        return self.extrapolate(x_enc, x_mark_enc)

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window without marks: `[B, L, enc_in]` → `[B, L, c_out]` (as imputation)."""
        return self.extrapolate(x_enc, None)

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = real step) → logits `[B, num_class]`.

        Growth B_{t−1} plus season S_t summed over the layers for t = 0 … L−1 `[B, L, D]` (no marks),
        GELU, dropout, padded steps zeroed, flatten, Linear(L·D → num_class); the level is not used.
        """
        res = self.enc_embedding(x_enc, None)  # [B, L, D]
        _, growths, seasons = self.encoder(res, x_enc)
        growth = torch.stack(growths).sum(dim=0)[:, :self.seq_len]  # [B, L, D]
        season = torch.stack(seasons).sum(dim=0)[:, :self.seq_len]  # [B, L, D]
        return self.projection(masked_flat_features(growth + season, self.dropout, padding_mask))
