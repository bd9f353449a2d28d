"""FreTS (Yi et al., "Frequency-domain MLPs are More Effective Learners in Time Series Forecasting",
NeurIPS 2023, https://arxiv.org/abs/2311.06184), long-term forecasting.

Dimension extension: every scalar x_{n,t} becomes x_{n,t}·φ with a learned φ ∈ R^{1×D} (D = 128),
giving tokens X `[B, N, L, D]`. Then, each a frequency-domain MLP (`layers.FrequencyMLP`) between an
orthonormal real FFT and its inverse:
    inter-series (channel) learner:  X ← IDFT_N(FreMLP(DFT_N(X); W_1, B_1))    only with --channel_independence 0
    intra-series (temporal) learner: Z = IDFT_L(FreMLP(DFT_L(X); W_2, B_2))
    Z ← Z + X_emb (the embedded tokens), ŷ_n = Linear(256 → H)(LeakyReLU(Linear(L·D → 256)(Z_n)))
The projection is shared by the N variates. Weights W start at 0.02·N(0, 1), φ at N(0, 1).

As in TSLib and the authors' code, the frequency MLPs use the diagonal of W only (see
`layers.FrequencyMLP`). TSLib compares `--channel_independence` with the string '1', so its channel
learner never runs; here `--channel_independence 0` (channel dependence) runs it and the default 1
(channel independence) skips it, which is TSLib's behaviour at its default. Without the channel learner
W_1, B_1 (r1, i1, rb1, ib1) receive no gradient; they are built anyway for TSLib's parameter count.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_output_channels, check_task
from layers.FrequencyMLP import frequency_mlp
from utils.errors import UserInputError

TASKS = ("long_term_forecast", "short_term_forecast")
EMBED_SIZE = 128
HIDDEN_SIZE = 256
SPARSITY_THRESHOLD = 0.01
WEIGHT_SCALE = 0.02


class Model(nn.Module):
    """FreTS for long-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, channel_independence. With c_out < enc_in (features MS) the
    last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_task(configs, "FreTS", TASKS)
        check_forecast_config(configs, "FreTS")
        check_output_channels(configs, "FreTS")
        if configs.channel_independence not in (0, 1):
            raise UserInputError(
                f"--channel_independence {configs.channel_independence!r} must be 0 (mix variates) or 1")
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.mix_channels = configs.channel_independence == 0
        d = EMBED_SIZE
        self.embeddings = nn.Parameter(torch.randn(1, d))
        # Channel learner (W_1, B_1), then temporal learner (W_2, B_2): real and imaginary parts.
        self.r1 = nn.Parameter(WEIGHT_SCALE * torch.randn(d, d))
        self.i1 = nn.Parameter(WEIGHT_SCALE * torch.randn(d, d))
        self.rb1 = nn.Parameter(WEIGHT_SCALE * torch.randn(d))
        self.ib1 = nn.Parameter(WEIGHT_SCALE * torch.randn(d))
        self.r2 = nn.Parameter(WEIGHT_SCALE * torch.randn(d, d))
        self.i2 = nn.Parameter(WEIGHT_SCALE * torch.randn(d, d))
        self.rb2 = nn.Parameter(WEIGHT_SCALE * torch.randn(d))
        self.ib2 = nn.Parameter(WEIGHT_SCALE * torch.randn(d))
        self.fc = nn.Sequential(
            nn.Linear(configs.seq_len * d, HIDDEN_SIZE), nn.LeakyReLU(), nn.Linear(HIDDEN_SIZE, configs.pred_len))

    def channel_learner(self, tokens: torch.Tensor) -> torch.Tensor:
        """Frequency MLP over the variate axis of `[B, N, L, D]` tokens."""
        n = tokens.shape[1]
        spectrum = torch.fft.rfft(tokens, dim=1, norm="ortho")  # [B, N//2+1, L, D]
        spectrum = frequency_mlp(spectrum, self.r1, self.i1, self.rb1, self.ib1, SPARSITY_THRESHOLD)
        return torch.fft.irfft(spectrum, n=n, dim=1, norm="ortho")  # [B, N, L, D]

    def temporal_learner(self, tokens: torch.Tensor) -> torch.Tensor:
        """Frequency MLP over the time axis of `[B, N, L, D]` tokens."""
        length = tokens.shape[2]
        spectrum = torch.fft.rfft(tokens, dim=2, norm="ortho")  # [B, N, L//2+1, D]
        spectrum = frequency_mlp(spectrum, self.r2, self.i2, self.rb2, self.ib2, SPARSITY_THRESHOLD)
        return torch.fft.irfft(spectrum, n=length, dim=2, norm="ortho")  # [B, N, L, D]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b, _, n = x_enc.shape
        tokens = x_enc.transpose(1, 2).unsqueeze(-1) * self.embeddings  # [B, N, L, D]
        z = tokens
        if self.mix_channels:
            z = self.channel_learner(z)
        z = self.temporal_learner(z) + tokens  # [B, N, L, D]
        out = self.fc(z.reshape(b, n, -1)).transpose(1, 2)  # [B, H, N]
        return out[:, :, -self.c_out:]  # [B, H, c_out]
