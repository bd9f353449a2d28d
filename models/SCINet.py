"""SCINet (Liu et al., "SCINet: Time Series Modeling and Forecasting with Sample Convolution and
Interaction", NeurIPS 2022, https://arxiv.org/abs/2106.09305), long-term forecasting, in TSLib's variant.

An SCI-Block splits a sequence F `[B, L, N]` into its even and odd time steps, F_even = F[0::2] and
F_odd = F[1::2], and lets each half rescale, then correct, the other (the paper's interactive learning,
eqs. 1-2; ψ, φ, η, ρ are convolution blocks Pad → Conv1d(k=5) → LeakyReLU → Dropout → Conv1d(k=5) → Tanh
over time, N channels in and out):
    F^s_even = F_even ⊙ exp(ψ(F_odd)),      F^s_odd = F_odd ⊙ exp(φ(F_even))
    F'_even  = F^s_even + η(F^s_odd),       F'_odd  = F^s_odd − ρ(F^s_even)
(the paper writes ± in the second line; TSLib and we use + for the even half, − for the odd half).
Module names follow TSLib: ψ = `modules_even`, φ = `modules_odd`, η = `interactor_even`,
ρ = `interactor_odd`.

An SCINet is a complete binary tree of SCI-Blocks: the root works on the whole window, its children on the
halves, and so on for `TREE_LEVELS` + 1 = 4 levels (15 blocks); the leaves' outputs are re-interleaved
level by level back into time order (the inverse of the split). The forecaster (one stack, `--d_layers 1`):
    x̃ = RevIN(x) + PE,   X̂ = W_1 · (SCINet_1(x̃) + x̃),   W_1 a bias-free linear map along time
then denormalisation. With `--d_layers 2` a second stack refines [x̃; X̂] (L + H steps) the same way.

TSLib's variant, kept for its parameters, FLOPs and initial weights: instance normalisation without affine
parameters, a sinusoidal positional encoding added to the normalised input, padding (4, 4) before the two
k = 5 convolutions (the length is kept, but the blocks are not causal despite TSLib's name
`CausalConvBlock`), and a one-stack projection to L + H steps of which only the last H are the forecast
(TSLib returns all 2L + H steps, the first L zeros, and its training loop keeps the last H; we return the
last H directly: the first L projected steps are computed, so the FLOPs equal TSLib's, but never used).
Odd lengths inside the tree are handled as TSLib does: the last step is repeated before the split and the
odd half's extra output dropped, so any `--seq_len` ≥ 8 works.

Deviations from TSLib (bugs fixed): `--dropout` reaches the convolution blocks (TSLib builds them with
dropout 0 whatever the flag), `--d_layers` other than 1 or 2 is rejected (TSLib silently builds two stacks),
and a `--seq_len` too short for the tree fails in `__init__` with the flag named.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_output_channels
from layers.StandardNorm import Normalize
from utils.errors import UserInputError

# Levels below the root of TSLib's tree (its `current_level=3`): 4 levels of SCI-Blocks, 15 in all.
TREE_LEVELS = 3
KERNEL_SIZE = 5
STACKS = (1, 2)


def split_even_odd(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x `[B, L, N]` → (x[:, 0::2] `[B, ⌈L/2⌉, N]`, x[:, 1::2] `[B, ⌊L/2⌋, N]`)."""
    return x[:, 0::2], x[:, 1::2]


def interleave(even: torch.Tensor, odd: torch.Tensor) -> torch.Tensor:
    """Inverse of `split_even_odd`: even `[B, m or m+1, N]`, odd `[B, m, N]` → `[B, len(even) + m, N]`."""
    m = odd.shape[1]
    if even.shape[1] - m not in (0, 1):
        raise ValueError(f"interleave: even half has {even.shape[1]} steps, odd half {m}; they must differ by 0 or 1")
    batch, _, channels = odd.shape
    pairs = torch.stack((even[:, :m], odd), dim=2).reshape(batch, 2 * m, channels)  # [B, 2m, N]
    return torch.cat((pairs, even[:, m:]), dim=1)  # [B, len(even) + m, N]


class Splitting(nn.Module):
    """The even/odd split as a module (TSLib's module tree has one per SCI-Block)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return split_even_odd(x)


class CausalConvBlock(nn.Module):
    """ψ, φ, η or ρ: `[B, N, T]` → `[B, N, T]`, two k-wide convolutions over time on a (k−1, k−1)
    replication-padded input (T + 2k − 2 → T + k − 1 → T). TSLib's name; the padding is symmetric."""

    def __init__(self, channels: int, kernel_size: int = KERNEL_SIZE, dropout: float = 0.0) -> None:
        super().__init__()
        self.causal_conv = nn.Sequential(
            nn.ReplicationPad1d((kernel_size - 1, kernel_size - 1)),
            nn.Conv1d(channels, channels, kernel_size=kernel_size),
            nn.LeakyReLU(negative_slope=0.01),
            nn.Dropout(dropout),
            nn.Conv1d(channels, channels, kernel_size=kernel_size),
            nn.Tanh(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.causal_conv(x)  # [B, N, T]


class SCIBlock(nn.Module):
    """One SCI-Block: `[B, T, N]` → (F'_even `[B, ⌈T/2⌉, N]`, F'_odd `[B, ⌊T/2⌋, N]`), eqs. 1-2."""

    def __init__(self, channels: int, kernel_size: int = KERNEL_SIZE, dropout: float = 0.0) -> None:
        super().__init__()
        self.splitting = Splitting()
        # Constructed in TSLib's order (same seed → same initial weights).
        self.modules_even = CausalConvBlock(channels, kernel_size, dropout)  # ψ
        self.modules_odd = CausalConvBlock(channels, kernel_size, dropout)  # φ
        self.interactor_even = CausalConvBlock(channels, kernel_size, dropout)  # η
        self.interactor_odd = CausalConvBlock(channels, kernel_size, dropout)  # ρ

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        odd_length = x.shape[1] % 2 == 1
        # An odd length gets its last step repeated, so both halves have the same length; the odd half's
        # extra output is dropped below (TSLib's handling).
        if odd_length:
            x = torch.cat((x, x[:, -1:]), dim=1)  # [B, T + 1, N]
        even, odd = self.splitting(x)
        even, odd = even.transpose(1, 2), odd.transpose(1, 2)  # [B, N, T/2] each
        even_s = even * torch.exp(self.modules_even(odd))
        odd_s = odd * torch.exp(self.modules_odd(even))
        even_new = even_s + self.interactor_even(odd_s)
        odd_new = odd_s - self.interactor_odd(even_s)
        even_new, odd_new = even_new.transpose(1, 2), odd_new.transpose(1, 2)  # [B, T/2, N] each
        if odd_length:
            odd_new = odd_new[:, :-1]  # [B, ⌊T/2⌋, N]
        return even_new, odd_new


class SCINet(nn.Module):
    """A tree of SCI-Blocks with `current_level` levels below this node: `[B, T, N]` → `[B, T, N]`."""

    def __init__(self, channels: int, current_level: int = TREE_LEVELS, kernel_size: int = KERNEL_SIZE,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.current_level = current_level
        self.working_block = SCIBlock(channels, kernel_size, dropout)
        if current_level > 0:
            # TSLib builds (and registers) the odd subtree first.
            self.SCINet_Tree_odd = SCINet(channels, current_level - 1, kernel_size, dropout)
            self.SCINet_Tree_even = SCINet(channels, current_level - 1, kernel_size, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        even, odd = self.working_block(x)
        if self.current_level > 0:
            even, odd = self.SCINet_Tree_even(even), self.SCINet_Tree_odd(odd)
        return interleave(even, odd)  # [B, T, N]


def sinusoid_inv_timescales(channels: int) -> torch.Tensor:
    """1 / timescale for ⌈N/2⌉ sine/cosine pairs, geometric from 1 to 1/10⁴ (TSLib's encoding)."""
    pairs = (channels + 1) // 2
    step = math.log(10000.0) / max(pairs - 1, 1)
    return torch.exp(-step * torch.arange(pairs, dtype=torch.float32))  # [⌈N/2⌉]


class Model(nn.Module):
    """SCINet for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, d_layers (stacks: 1 or 2), dropout. The marks and the decoder
    input are not used. With c_out < enc_in (features MS) the last c_out variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "SCINet")
        check_output_channels(configs, "SCINet")
        if configs.d_layers not in STACKS:
            raise UserInputError(
                f"--d_layers {configs.d_layers!r} is the number of SCINet stacks; use 1 or 2")
        min_len = 2 ** TREE_LEVELS
        if configs.seq_len < min_len:
            raise UserInputError(
                f"--seq_len {configs.seq_len} is too short: SCINet halves it {TREE_LEVELS} times in its tree; "
                f"use --seq_len >= {min_len}")
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.num_stacks = configs.d_layers
        total = self.seq_len + self.pred_len
        # Constructed in TSLib's order: the stacks, then the projections (1x1 convolutions whose channels
        # are time steps, i.e. linear maps along time).
        self.sci_net_1 = SCINet(configs.enc_in, dropout=configs.dropout)
        if self.num_stacks == 1:
            self.projection_1 = nn.Conv1d(self.seq_len, total, kernel_size=1, bias=False)
        else:
            self.sci_net_2 = SCINet(configs.enc_in, dropout=configs.dropout)
            self.projection_1 = nn.Conv1d(self.seq_len, self.pred_len, kernel_size=1, bias=False)
            self.projection_2 = nn.Conv1d(total, total, kernel_size=1, bias=False)
        self.normalize = Normalize(configs.enc_in)
        self.register_buffer("inv_timescales", sinusoid_inv_timescales(configs.enc_in))

    def position_encoding(self, length: int, channels: int) -> torch.Tensor:
        """`[1, T, N]`: channel j < ⌈N/2⌉ is sin(t / s_j), the rest cos(t / s_(j − ⌈N/2⌉)) (an odd N
        drops the last cosine)."""
        t = torch.arange(length, dtype=self.inv_timescales.dtype, device=self.inv_timescales.device)
        angles = t[:, None] * self.inv_timescales[None, :]  # [T, ⌈N/2⌉]
        signal = torch.cat((torch.sin(angles), torch.cos(angles)), dim=1)  # [T, 2⌈N/2⌉]
        return signal[None, :, :channels]  # [1, T, N]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        x = x + self.position_encoding(x.shape[1], x.shape[2]).to(x.dtype)
        out = self.projection_1(self.sci_net_1(x) + x)  # [B, L + H, N] (one stack) or [B, H, N]
        if self.num_stacks == 2:
            out = torch.cat((x, out), dim=1)  # [B, L + H, N]
            out = self.projection_2(self.sci_net_2(out) + out)  # [B, L + H, N]
        out = out[:, -self.pred_len:, -self.c_out:]  # [B, H, c_out]
        return self.normalize(out, "denorm")
