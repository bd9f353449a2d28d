"""Scaled dot-product attention (Vaswani et al., 2017) and the multi-head projection around it.

A = softmax(Q Kᵀ / √E + M) V, with M = −∞ above the diagonal when the attention is causal.
Heads are laid out as `[B, L, H, E]` (TSLib's convention) so that projections reshape for free.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn


def triangular_causal_mask(q_len: int, k_len: int, device: torch.device | None = None) -> torch.Tensor:
    """Boolean `[1, 1, q_len, k_len]` mask, True where key position s > query position l (hidden)."""
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).triu(diagonal=1)[None, None]


class FullAttention(nn.Module):
    """Softmax attention over all keys, optionally causal.

    Args:
        mask_flag: apply a causal mask (the given `attn_mask`, or a triangular one when None).
        scale: score scale; default 1/√E.
        attention_dropout: dropout on the attention weights.
        output_attention: also return the weights `[B, H, L, S]`.
    """

    def __init__(self, mask_flag: bool = True, scale: float | None = None,
                 attention_dropout: float = 0.1, output_attention: bool = False) -> None:
        super().__init__()
        self.mask_flag = mask_flag
        self.scale = scale
        self.output_attention = output_attention
        self.dropout = nn.Dropout(attention_dropout)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]` → `[B, L, H, D]`."""
        scale = self.scale or 1.0 / math.sqrt(queries.shape[-1])
        scores = torch.einsum("blhe,bshe->bhls", queries, keys)  # [B, H, L, S]
        if self.mask_flag:
            if attn_mask is None:
                attn_mask = triangular_causal_mask(queries.shape[1], keys.shape[1], queries.device)
            scores = scores.masked_fill(attn_mask, float("-inf"))
        weights = self.dropout(torch.softmax(scale * scores, dim=-1))
        out = torch.einsum("bhls,bshd->blhd", weights, values)  # [B, L, H, D]
        return out.contiguous(), (weights if self.output_attention else None)


class AttentionLayer(nn.Module):
    """Multi-head wrapper: Linear q/k/v projections (with bias) into `n_heads` heads of width
    d_keys = d_model / n_heads (by default), the inner attention, and an output Linear."""

    def __init__(self, attention: nn.Module, d_model: int, n_heads: int,
                 d_keys: int | None = None, d_values: int | None = None) -> None:
        super().__init__()
        d_keys = d_keys or d_model // n_heads
        d_values = d_values or d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_values * n_heads)
        self.out_projection = nn.Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, D]`, keys and values `[B, S, D]` → (`[B, L, D]`, weights or None)."""
        b, q_len, _ = queries.shape
        k_len = keys.shape[1]
        h = self.n_heads
        q = self.query_projection(queries).view(b, q_len, h, -1)  # [B, L, H, E]
        k = self.key_projection(keys).view(b, k_len, h, -1)  # [B, S, H, E]
        v = self.value_projection(values).view(b, k_len, h, -1)  # [B, S, H, Dv]
        out, attn = self.inner_attention(q, k, v, attn_mask)
        out = out.view(b, q_len, -1)  # [B, L, H·Dv]
        return self.out_projection(out), attn
