"""NormLin (Yue et al., "OLinear: A Linear Model for Time Series Forecasting in Orthogonally Transformed
Domain", 2025, https://arxiv.org/abs/2505.08550): a linear layer across the N variate tokens whose weight
is normalised, used in place of self-attention.

    A = RowNorm_L1(Softplus(W)),  W `[N, N]` learned (initialised I + Gaussian)
    NormLin(X) = A · (X W_v + b_v)                                     X `[N, D]`
    Cross-series learner:  X' = LN(X + Dropout(NormLin(X) W_o + b_o))
    Intra-series learner:  Y  = LN(X' + Dropout(Act(X' W_1 + b_1) W_2 + b_2))
Dropout is also applied to A, as the official code does. `NormLinEncoder` stacks layers and ends
with a LayerNorm.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def normlin_weights(weight: torch.Tensor) -> torch.Tensor:
    """Softplus, then each row divided by its sum: a row-stochastic `[..., N, N]` matrix."""
    return F.normalize(F.softplus(weight), p=1, dim=-1)


class NormLinLayer(nn.Module):
    """One OLinear block `[B, N, D]` → `[B, N, D]`: the cross-series learner (NormLin) then the
    intra-series feed-forward learner, each with a residual connection and a LayerNorm."""

    def __init__(self, d_model: int, d_ff: int, token_num: int, dropout: float = 0.1,
                 activation: str = "gelu") -> None:
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"NormLinLayer activation must be 'relu' or 'gelu', got {activation!r}")
        self.norm1 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.weight_mat = nn.Parameter((torch.eye(token_num) + torch.randn(token_num, token_num))[None])  # [1, N, N]
        self.ffn1 = nn.Linear(d_model, d_ff)
        self.ffn2 = nn.Linear(d_ff, d_model)
        self.activation = F.relu if activation == "relu" else F.gelu
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mix = self.dropout(normlin_weights(self.weight_mat))  # [1, N, N]
        x = self.norm1(x + self.dropout(self.out_proj(mix @ self.v_proj(x))))  # [B, N, D]
        y = self.dropout(self.ffn2(self.dropout(self.activation(self.ffn1(x)))))
        return self.norm2(x + y)


class NormLinEncoder(nn.Module):
    """`e_layers` NormLinLayers then a LayerNorm: `[B, N, D]` → `[B, N, D]`."""

    def __init__(self, layers: list[NormLinLayer], d_model: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)
