"""FiLM (Zhou et al., "FiLM: Frequency improved Legendre Memory Model for Long-term Time Series
Forecasting", NeurIPS 2022, https://arxiv.org/abs/2205.08897), forecasting, imputation, anomaly
detection and classification (TSLib's task set).

    RevIN:  x̂ = γ ⊙ (x − μ) / σ + β                                   per variate (`layers.StandardNorm`)
    for each scale i ∈ {1, 2, 4} (window of the last i·H steps, at most L):
        LPU:   C_i = HiPPO-LegT_{N=256, θ = i·H steps}(x̂)              `[B, N_var, 256, T_i]` (`layers.LegendreMemory`)
        FEL:   C'_i = IDFT(W_i ⊙ DFT(C_i)[:M])                           along time, M = min(32, min(L, H)/2) modes,
               per mode a complex 256 × 256 matrix (stored as real and imaginary tensors)
        LPU_R: ŷ_i = C'_i[..., H − 1] · P_i^T                            the last H rows of the Legendre evaluation
    ŷ = Linear(3 → 1)(ŷ_1, ŷ_2, ŷ_4), then RevIN de-normalisation.

As in TSLib, the coefficients at step H − 1 of the FEL output are decoded (the last step when L < H), the
Legendre order, the scales and the mode cap are fixed, and the affine RevIN parameters are the model's
own `affine_weight` / `affine_bias` `[1, 1, enc_in]`.

Imputation, anomaly detection and classification decode the window itself (H = L, as TSLib): the Legendre
memory of the last i·L steps, read at its last step, reconstructs those L steps. Imputation normalises by
the observed points (`layers.MaskedNorm`), anomaly detection as forecasting; classification skips RevIN
(the UEA loader standardises; padded zeros would bias the statistics), keeps the affine map and feeds the
`[B, L, N]` reconstruction through the shared masked feature map to Linear(N·L → classes).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_variate_task_config,
)
from layers.LegendreMemory import HiPPO_LegT
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError

TASKS = ALL_TASKS
LEGENDRE_ORDER = 256
SCALES = (1, 2, 4)
MAX_MODES = 32


class SpectralConv1d(nn.Module):
    """Frequency Enhanced Layer: a learned complex matrix per low Fourier mode, along the last axis.

    `[B, H, in_channels, T]` → `[B, H, out_channels, T]`: rfft over T, keep the first
    min(32, seq_len // 2) modes, y_{o,m} = Σ_i x_{i,m} W_{i,o,m} (complex), irfft back to T steps.
    Weights start at U(0, 1) / (in_channels · out_channels), real part then imaginary part.
    """

    def __init__(self, in_channels: int, out_channels: int, seq_len: int, ratio: float = 0.5) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.ratio = ratio  # TSLib's signature; unused there and here
        self.modes = min(MAX_MODES, seq_len // 2)
        scale = 1.0 / (in_channels * out_channels)
        self.weights_real = nn.Parameter(scale * torch.rand(in_channels, out_channels, self.modes))
        self.weights_imag = nn.Parameter(scale * torch.rand(in_channels, out_channels, self.modes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        steps = x.shape[-1]
        spectrum = torch.fft.rfft(x)[..., : self.modes]  # [B, H, I, M]
        real, imag = spectrum.real, spectrum.imag
        # (X_r + jX_i)(W_r + jW_i) written as four real products.
        out_real = (torch.einsum("bhim,iom->bhom", real, self.weights_real)
                    - torch.einsum("bhim,iom->bhom", imag, self.weights_imag))
        out_imag = (torch.einsum("bhim,iom->bhom", real, self.weights_imag)
                    + torch.einsum("bhim,iom->bhom", imag, self.weights_real))
        # irfft zero-fills the modes above M.
        return torch.fft.irfft(torch.complex(out_real, out_imag), n=steps)  # [B, H, O, T]


class Model(TaskForward, nn.Module):
    """FiLM for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; for imputation and anomaly
    detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification
    `[B, L, enc_in]`, padding mask `[B, L]` → `[B, num_class]` (reads num_class, set by the experiment).

    Reads seq_len, pred_len (forecasting only), enc_in, c_out (not for classification), dropout
    (classification). With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc",)

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "FiLM", TASKS)
        self.task_name = configs.task_name
        classify = self.task_name == CLASSIFICATION
        self.seq_len = configs.seq_len
        # The window tasks decode the window itself (TSLib sets pred_len = seq_len for them).
        self.pred_len = configs.pred_len if self.task_name in FORECAST_TASKS else configs.seq_len
        shorter = "seq_len" if self.seq_len <= self.pred_len else "pred_len"
        if min(self.seq_len, self.pred_len) < 2:
            raise UserInputError(f"--{shorter} {min(self.seq_len, self.pred_len)} leaves FiLM's frequency layer no "
                                 "Fourier mode (it keeps min(seq_len, pred_len) // 2); use at least 2")
        self.c_out = configs.c_out
        self.affine_weight = nn.Parameter(torch.ones(1, 1, configs.enc_in))
        self.affine_bias = nn.Parameter(torch.zeros(1, 1, configs.enc_in))
        self.norm = Normalize(configs.enc_in, affine=False)
        self.legts = nn.ModuleList(
            HiPPO_LegT(N=LEGENDRE_ORDER, dt=1.0 / self.pred_len / scale) for scale in SCALES)
        self.spec_conv_1 = nn.ModuleList(
            SpectralConv1d(LEGENDRE_ORDER, LEGENDRE_ORDER, min(self.pred_len, self.seq_len)) for _ in SCALES)
        self.mlp = nn.Linear(len(SCALES), 1)
        if classify:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.enc_in * configs.seq_len, configs.num_class)

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """RevIN, affine map, Legendre/FEL decoding, inverse maps: `[B, L, enc_in]` → `[B, H, c_out]`."""
        y = self.decode(self.norm(x_enc, "norm") * self.affine_weight + self.affine_bias)  # [B, H, N]
        return self.norm(self.remove_affine(y[:, :, -self.c_out:]), "denorm")  # [B, H, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]` (the forecasting path with H = L)."""
        return self.forecast(x_enc)

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, N]` (0 where masked), mask `[B, L, N]` (1 observed) →
        `[B, L, c_out]`, the forecasting path with H = L and the statistics of the observed points."""
        x, means, stdev = masked_normalize(x_enc, mask)  # [B, L, N]
        y = self.decode(x * self.affine_weight + self.affine_bias)  # [B, L, N]
        return masked_denormalize(self.remove_affine(y[:, :, -self.c_out:]), means, stdev)  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = observed) → logits `[B, num_class]`: affine map,
        Legendre/FEL reconstruction of the window `[B, L, N]`, GELU, dropout, padded steps zeroed,
        flatten, Linear(L·N → classes)."""
        y = self.decode(x_enc * self.affine_weight + self.affine_bias)  # [B, L, N]
        return self.projection(masked_flat_features(y, self.dropout, padding_mask))  # [B, num_class]

    def remove_affine(self, y: torch.Tensor) -> torch.Tensor:
        """Undo the affine map on the last y.shape[-1] variates of `[B, T, N']`."""
        n = y.shape[-1]
        return (y - self.affine_bias[..., -n:]) / (self.affine_weight[..., -n:] + 1e-10)

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """The three Legendre scales, their FELs and the scale mixer: `[B, L, N]` → `[B, H, N]`."""
        decode_at = self.pred_len - 1 if self.seq_len >= self.pred_len else -1
        forecasts = []
        for scale, legt, fel in zip(SCALES, self.legts, self.spec_conv_1, strict=True):
            window = x[:, -scale * self.pred_len:].transpose(1, 2)  # [B, N, T_i]
            coeffs = legt(window).permute(1, 2, 3, 0)  # [B, N, 256, T_i]
            coeffs = fel(coeffs)[..., decode_at]  # [B, N, 256]
            forecasts.append(coeffs @ legt.eval_matrix[-self.pred_len:].T)  # [B, N, H]
        return self.mlp(torch.stack(forecasts, dim=-1)).squeeze(-1).transpose(1, 2)  # [B, H, N]
