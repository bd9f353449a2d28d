"""MultiPatchFormer's encoder block (Naghashi et al., "A multiscale model for multivariate time series
forecasting", Scientific Reports 2025, https://doi.org/10.1038/s41598-024-82417-4), with TSLib's class
names, signatures and attribute names (`FeedForward`, `Encoder`).

Post-norm block over tokens `[B, T, D]`:
    A = LayerNorm(X + Dropout(MHA(X, K, V))),  out = LayerNorm(A + Dropout(FFN(A)))
with K = V = X for the temporal (patch) encoder, and K = V = Conv1d_{1×1}(X) (a position-wise linear
map of the channel tokens) for the channel-wise encoder. FFN(x) = W_2 GELU(W_1 x + b_1) + b_2.
The attention module is passed in, so several blocks can share one (TSLib's `shared_MHA`).
"""

from __future__ import annotations

import torch
import torch.nn as nn


class FeedForward(nn.Module):
    """Position-wise FFN `[..., D]` → `[..., D]`: Linear(D → d_hidden), GELU, Linear(d_hidden → D)."""

    def __init__(self, d_model: int, d_hidden: int = 512) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(d_model, d_hidden)
        self.linear_2 = nn.Linear(d_hidden, d_model)
        self.activation = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_2(self.activation(self.linear_1(x)))


class Encoder(nn.Module):
    """One MultiPatchFormer encoder block (see the module doc): `[B, T, D]` → (`[B, T, D]`, weights or None).

    Args:
        d_model: token width D.
        mha: the attention layer (an `AttentionLayer`; may be shared with other blocks).
        d_hidden: FFN hidden width.
        dropout: dropout on both residual branches.
        channel_wise: project keys and values with a 1×1 convolution first (the channel encoder).
    """

    def __init__(self, d_model: int, mha: nn.Module, d_hidden: int, dropout: float = 0,
                 channel_wise: bool = False) -> None:
        super().__init__()
        self.channel_wise = channel_wise
        if channel_wise:
            # padding 0: TSLib's padding_mode="reflect" never pads anything; kept for the module tree.
            self.conv = nn.Conv1d(d_model, d_model, kernel_size=1, stride=1, padding=0, padding_mode="reflect")
        self.MHA = mha
        self.feedforward = FeedForward(d_model=d_model, d_hidden=d_hidden)
        self.dropout = nn.Dropout(p=dropout)
        self.layerNormal_1 = nn.LayerNorm(d_model)
        self.layerNormal_2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        keys = self.conv(x.transpose(1, 2)).transpose(1, 2) if self.channel_wise else x  # [B, T, D]
        attended, weights = self.MHA(x, keys, keys, attn_mask=None)
        x = self.layerNormal_1(x + self.dropout(attended))
        x = self.layerNormal_2(x + self.dropout(self.feedforward(x)))
        return x, weights
