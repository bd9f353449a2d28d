"""Koopa (Liu et al., "Koopa: Learning Non-stationary Time Series Dynamics with Koopman Predictors",
NeurIPS 2023, https://arxiv.org/abs/2305.18803), long/short-term forecasting, with TSLib's modules.

The look-back window x `[L, N]` is instance-normalised (mean, biased std, detached), then refined by
`num_blocks` Koopa blocks, each fitting what the previous ones left unexplained:
    Fourier filter:  X_var = irfft(rfft(x) with the masked frequencies G_α zeroed),  X_inv = x − X_var,
                     where G_α is the top α fraction (α = 0.2) of frequencies ranked by the mean amplitude
                     spectrum of the *training* lookback windows (time-invariant, dominant components);
    time-invariant KP:  ŷ_inv = Dec_inv(K_inv · Enc_inv(X_inv)) per variate (Enc: L → D, K_inv: a learned
                     D × D operator initialised orthogonal, Dec: D → H);
    time-variant KP:  X_var is cut into F = ⌈L / S⌉ segments of S = H steps (all variates flattened),
                     embedded z_t = Enc_var(segment_t) `[D]`, and a local operator fitted by least squares
                     K_var = argmin_K Σ_t ||z_t K − z_{t+1}||² on this window's own snapshots; the
                     backcast Dec_var([z_1, z_1 K_var, ..., z_{F−1} K_var]) is removed from the block's
                     input and the forecast Dec_var(z_F K_var^j), j = 1..⌈H / S⌉, is kept;
    the block outputs ŷ_inv + ŷ_var add up to the forecast, de-normalised at the end.
Encoders/decoders are shared by the blocks of each kind (TSLib's parameter sharing), the operators
K_inv are per block.

Training statistics: TSLib's constructor builds the train DataLoader and averages |rfft| over its
batches to choose G_α. Here the model receives the training rows (`utils.train_split`, the
`needs_train_split` protocol) and averages over every lookback window (float64); on a dataset of separate
series (M4, the custom short-term files) over every whole window inside each training series. Iterating TSLib's
shuffled loader draws two int64 numbers from torch's global RNG (the RandomSampler's seed and the
DataLoader iterator's base seed) before any layer exists; the constructor draws the same two, so a
seed gives TSLib's initial weights.

Deliberate differences from TSLib (parameters, names, shapes, counts and FLOPs kept):
- The mean amplitude spectrum is the mean over all training windows; TSLib sums per-batch means of a
  shuffled loader (the last, smaller batch weighs as much as a full one, and the sum depends on the
  shuffle). The ranking only differs where those weights tip a near tie.
- On M4 (and the custom short-term files) the windows are every whole lookback window inside each training
  series; TSLib's loader there yields one window per series at a random cut, left-padded with zeros when
  the series is short, so its spectrum also depends on the draw and counts the padding.
- The Fourier filter inverts with the window length, so an odd --seq_len works (TSLib's irfft returns
  L − 1 steps there and fails).
- When --seq_len is not a multiple of the segment length, TSLib pads the window in front with its own
  last steps but takes the *first* L reconstructed steps as the backcast, misaligned by the padding;
  here the backcast is the last L steps, aligned with the input.
- A least-squares operator with non-finite entries is replaced by the identity per sample (TSLib
  replaces the whole batch's and prints a line).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_output_channels
from utils.errors import UserInputError
from utils.train_split import TrainSplit, require_train_split

# Windows per chunk when averaging the training amplitude spectrum (bounds memory on wide datasets).
SPECTRUM_CHUNK = 256


def mean_amplitude_spectrum(split: TrainSplit, seq_len: int, pred_len: int) -> torch.Tensor:
    """Mean over the training lookback windows (of every series of the split) and variates of |rfft(window)|
    `[seq_len // 2 + 1]` float64."""
    total = torch.zeros(seq_len // 2 + 1, dtype=torch.float64)
    for segment in range(len(split.segments)):
        count = split.lookback_windows(seq_len, pred_len, segment=segment).shape[0]
        for start in range(0, count, SPECTRUM_CHUNK):
            windows = split.lookback_windows(seq_len, pred_len, start, start + SPECTRUM_CHUNK, segment=segment)
            windows = torch.from_numpy(np.array(windows, dtype=np.float64))  # [n, L, N]
            total += torch.fft.rfft(windows, dim=1).abs().sum(dim=(0, 2))
    return total / (split.n_windows(seq_len, pred_len) * split.channels)


def mask_spectrum(split: TrainSplit, seq_len: int, pred_len: int, alpha: float) -> torch.Tensor:
    """Indices of the ⌊α (L // 2 + 1)⌋ frequencies of largest mean training amplitude, largest first."""
    amplitudes = mean_amplitude_spectrum(split, seq_len, pred_len)
    return amplitudes.topk(int(amplitudes.shape[0] * alpha)).indices


def draw_like_tslib_train_loader() -> None:
    """Advance torch's global RNG as iterating a shuffled single-process DataLoader does: the
    RandomSampler seeds its generator from one int64 draw, the iterator its base seed from another."""
    for _ in range(2):
        torch.empty((), dtype=torch.int64).random_()


class FourierFilter(nn.Module):
    """Splits x `[B, L, N]` into (time-variant, time-invariant) parts: the invariant part is x's component
    on the masked frequencies `mask_spectrum`, the variant part the rest."""

    def __init__(self, mask_spectrum: torch.Tensor) -> None:
        super().__init__()
        # Not in the state_dict (as in TSLib, whose checkpoints must load), but moves with the model.
        self.register_buffer("mask_spectrum", mask_spectrum.long(), persistent=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        xf = torch.fft.rfft(x, dim=1)  # [B, L//2+1, N]
        keep = torch.ones(xf.shape[1], dtype=xf.real.dtype, device=x.device)
        keep[self.mask_spectrum] = 0
        x_var = torch.fft.irfft(xf * keep[:, None], n=x.shape[1], dim=1)  # [B, L, N]
        return x_var, x - x_var


class MLP(nn.Module):
    """Koopa's encoder/decoder `[..., f_in]` → `[..., f_out]`: Linear → act → Dropout, (hidden_layers − 2)
    more hidden Linear → act → Dropout, then Linear; activation 'relu' or 'tanh'."""

    def __init__(self, f_in: int, f_out: int, hidden_dim: int = 128, hidden_layers: int = 2,
                 dropout: float = 0.05, activation: str = "tanh") -> None:
        super().__init__()
        if activation not in ("relu", "tanh"):
            raise ValueError(f"MLP activation must be 'relu' or 'tanh', got {activation!r}")
        self.activation = nn.ReLU() if activation == "relu" else nn.Tanh()
        layers: list[nn.Module] = [nn.Linear(f_in, hidden_dim), self.activation, nn.Dropout(dropout)]
        for _ in range(hidden_layers - 2):
            layers += [nn.Linear(hidden_dim, hidden_dim), self.activation, nn.Dropout(dropout)]
        layers.append(nn.Linear(hidden_dim, f_out))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class KPLayer(nn.Module):
    """The time-variant Koopman operator fitted per sample on snapshots z `[B, F, D]` (F ≥ 2): K `[B, D, D]`
    minimises ||z_{1..F−1} K − z_{2..F}||² (minimum-norm least squares)."""

    def one_step_forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(reconstruction `[B, F, D]` = [z_1, z_{1..F−1} K], one-step forecast z_F K `[B, 1, D]`, K)."""
        x, y = z[:, :-1], z[:, 1:]  # [B, F-1, D]
        # On the CPU the SVD driver: LAPACK's default (gelsy) returns slightly different solutions from call
        # to call under several threads; gelsd's minimum-norm solution is the same every time.
        driver = "gelsd" if x.device.type == "cpu" else None
        operator = torch.linalg.lstsq(x, y, driver=driver).solution  # [B, D, D]
        finite = torch.isfinite(operator).flatten(1).all(dim=1)[:, None, None]
        eye = torch.eye(operator.shape[-1], dtype=operator.dtype, device=operator.device)
        operator = torch.where(finite, operator, eye)
        z_pred = torch.bmm(z[:, -1:], operator)  # [B, 1, D]
        z_rec = torch.cat([z[:, :1], torch.bmm(x, operator)], dim=1)  # [B, F, D]
        return z_rec, z_pred, operator

    def forward(self, z: torch.Tensor, pred_len: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        """(reconstruction `[B, F, D]`, forecasts z_F K^j for j = 1..pred_len `[B, pred_len, D]`)."""
        z_rec, z_pred, operator = self.one_step_forward(z)
        preds = [z_pred]
        for _ in range(1, pred_len):
            preds.append(torch.bmm(preds[-1], operator))
        return z_rec, torch.cat(preds, dim=1)


class TimeVarKP(nn.Module):
    """Time-variant Koopman predictor `[B, L, N]` → (backcast `[B, L, N]`, forecast `[B, H, N]`) on segments
    of seg_len steps (the window is padded in front to whole segments with its own last steps)."""

    def __init__(self, enc_in: int = 8, input_len: int = 96, pred_len: int = 96, seg_len: int = 24,
                 dynamic_dim: int = 128, encoder: nn.Module | None = None, decoder: nn.Module | None = None,
                 multistep: bool = False) -> None:
        super().__init__()
        if multistep:
            raise ValueError("Koopa's multistep operator (KPLayerApprox) is not implemented; use multistep=False")
        self.enc_in, self.input_len, self.pred_len, self.seg_len = enc_in, input_len, pred_len, seg_len
        self.dynamic_dim = dynamic_dim
        self.encoder, self.decoder = encoder, decoder
        self.freq = math.ceil(input_len / seg_len)  # input segments
        self.step = math.ceil(pred_len / seg_len)  # output segments
        self.padding_len = seg_len * self.freq - input_len
        self.dynamics = KPLayer()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, length, channels = x.shape
        padded = torch.cat([x[:, length - self.padding_len:], x], dim=1)  # [B, F*S, N]
        segments = padded.reshape(batch, self.freq, self.seg_len * channels)  # [B, F, S*N]
        z = self.encoder(segments)  # [B, F, D]
        z_rec, z_pred = self.dynamics(z, self.step)  # [B, F, D], [B, step, D]
        backcast = self.decoder(z_rec).reshape(batch, self.freq * self.seg_len, channels)
        backcast = backcast[:, self.padding_len:]  # [B, L, N], aligned with x
        forecast = self.decoder(z_pred).reshape(batch, self.step * self.seg_len, channels)
        return backcast, forecast[:, :self.pred_len]  # [B, L, N], [B, H, N]


class TimeInvKP(nn.Module):
    """Time-invariant Koopman predictor `[B, L, N]` → `[B, H, N]`: Dec(K · Enc(x)) along time, per variate,
    with K `[D, D]` learned and initialised to the orthogonal polar factor U Vᵀ of a Gaussian matrix."""

    def __init__(self, input_len: int = 96, pred_len: int = 96, dynamic_dim: int = 128,
                 encoder: nn.Module | None = None, decoder: nn.Module | None = None) -> None:
        super().__init__()
        self.input_len, self.pred_len, self.dynamic_dim = input_len, pred_len, dynamic_dim
        self.encoder, self.decoder = encoder, decoder
        # TSLib's draw order: the Gaussian matrix, then the Linear's own (overwritten) initialisation.
        gaussian = torch.randn(dynamic_dim, dynamic_dim)
        u, _, vh = torch.linalg.svd(gaussian)
        self.K = nn.Linear(dynamic_dim, dynamic_dim, bias=False)
        with torch.no_grad():
            self.K.weight.copy_(u @ vh)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.encoder(x.transpose(1, 2))  # [B, N, D]
        return self.decoder(self.K(z)).transpose(1, 2)  # [B, H, N]


class Model(nn.Module):
    """Koopa for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]` (see the module doc).

    Reads seq_len, pred_len, enc_in, c_out and `configs.train_split` (needs_train_split); the segment
    length of the time-variant predictor is pred_len. The marks and the decoder input are not used.
    With c_out < enc_in (features MS) the last c_out variates are returned. Keyword arguments are
    TSLib's constructor defaults (not run.py flags).
    """

    needs_train_split = True

    def __init__(self, configs: argparse.Namespace, dynamic_dim: int = 128, hidden_dim: int = 64,
                 hidden_layers: int = 2, num_blocks: int = 3, multistep: bool = False) -> None:
        super().__init__()
        check_forecast_config(configs, "Koopa")
        check_output_channels(configs, "Koopa")
        if configs.seq_len <= configs.pred_len:
            raise UserInputError(
                f"--seq_len {configs.seq_len} must exceed --pred_len {configs.pred_len}: Koopa fits its time-variant "
                "operator on lookback segments of --pred_len steps and needs at least two of them")
        if multistep:
            raise UserInputError("Koopa's multistep operator (KPLayerApprox) is not implemented; use multistep=False")
        self.task_name = configs.task_name
        self.enc_in, self.c_out = configs.enc_in, configs.c_out
        self.input_len, self.pred_len = configs.seq_len, configs.pred_len
        self.seg_len = self.pred_len
        self.num_blocks, self.dynamic_dim = num_blocks, dynamic_dim
        self.hidden_dim, self.hidden_layers, self.multistep = hidden_dim, hidden_layers, multistep
        self.alpha = 0.2

        split = require_train_split(configs, "Koopa", self.input_len, self.pred_len)
        spectrum = mask_spectrum(split, self.input_len, self.pred_len, self.alpha)
        draw_like_tslib_train_loader()
        self.disentanglement = FourierFilter(spectrum)

        mlp = dict(hidden_dim=hidden_dim, hidden_layers=hidden_layers)
        self.time_inv_encoder = MLP(self.input_len, dynamic_dim, activation="relu", **mlp)
        self.time_inv_decoder = MLP(dynamic_dim, self.pred_len, activation="relu", **mlp)
        self.time_inv_kps = nn.ModuleList(
            TimeInvKP(self.input_len, self.pred_len, dynamic_dim, self.time_inv_encoder, self.time_inv_decoder)
            for _ in range(num_blocks))
        # TSLib registers time_var_kps before the shared time-variant encoder/decoder (it first aliases
        # the time-invariant list), which fixes the parameter order; the MLPs are still built first.
        time_var_encoder = MLP(self.seg_len * self.enc_in, dynamic_dim, activation="tanh", **mlp)
        time_var_decoder = MLP(dynamic_dim, self.seg_len * self.enc_in, activation="tanh", **mlp)
        self.time_var_kps = nn.ModuleList(
            TimeVarKP(self.enc_in, self.input_len, self.pred_len, self.seg_len, dynamic_dim,
                      time_var_encoder, time_var_decoder, multistep)
            for _ in range(num_blocks))
        self.time_var_encoder = time_var_encoder
        self.time_var_decoder = time_var_decoder

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, N]` → `[B, H, N]`."""
        mean = x_enc.mean(dim=1, keepdim=True).detach()  # [B, 1, N]
        x = x_enc - mean
        std = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
        residual = x / std
        forecast = None
        for inv_kp, var_kp in zip(self.time_inv_kps, self.time_var_kps, strict=True):
            x_var, x_inv = self.disentanglement(residual)
            inv_out = inv_kp(x_inv)  # [B, H, N]
            backcast, var_out = var_kp(x_var)
            residual = residual - backcast
            block = inv_out + var_out
            forecast = block if forecast is None else forecast + block
        return forecast * std + mean

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.forecast(x_enc)[:, -self.pred_len:, -self.c_out:]  # [B, H, c_out]
