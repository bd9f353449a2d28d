"""Pyraformer's encoder (Liu et al., "Pyraformer: Low-Complexity Pyramidal Attention for Long-Range Time
Series Modeling and Forecasting", ICLR 2022, https://openreview.net/forum?id=0EXmFzUn5I), as TSLib builds it.

Coarser-scale construction module (CSCM, paper Sec. 3.3, "bottleneck" variant): the embedded sequence
`[B, L, D]` is projected down to D/4, a stack of strided Conv1d (kernel = stride = C_s, BatchNorm, ELU)
builds the coarser scales L/C_1, L/(C_1 C_2), ..., which are projected back up to D and concatenated
after the finest scale, then LayerNorm: the pyramid `[B, L + L/C_1 + ..., D]`.

Pyramidal attention (paper Sec. 3.2): node l of scale s attends to
    its neighbours at the same scale  A_l^(s) = {j : |j − l| ≤ (A − 1)/2}   (A = `inner_size`),
    its children at scale s − 1       C_l^(s) = {j : parent(j) = l},
    its parent at scale s + 1         P_l^(s) = {parent(l)},
with parent(j) = min(⌊j / C_s⌋, M_{s+1} − 1), so the last node of a coarser scale also adopts the
children left over when M_s is not a multiple of C_s. It runs as dense attention with a boolean mask
(TSLib's "naive" pyramidal attention, as the paper's PAM-Naive), `True` = not attended.

After the layers, each finest-scale position gathers its ancestors at every scale (`refer_points`),
giving `[B, L, S·D]` for S scales.

As in TSLib, the attention sublayer has no residual connection or norm of its own: the position-wise
feed-forward's residual starts from the attention output (post-norm there).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.Embed import DataEmbedding
from layers.SafeBatchNorm import SafeBatchNorm1d
from layers.SelfAttention_Family import AttentionLayer, FullAttention


def pyramid_sizes(input_size: int, window_size: list[int]) -> list[int]:
    """Nodes per scale, finest first: M_0 = input_size, M_{s+1} = ⌊M_s / C_s⌋."""
    sizes = [input_size]
    for window in window_size:
        sizes.append(sizes[-1] // window)
    return sizes


def _scale_coordinates(all_size: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """For every node of the flattened pyramid: its scale s and its index within that scale `[N]` each."""
    scale = torch.cat([torch.full((size,), s) for s, size in enumerate(all_size)])
    index = torch.cat([torch.arange(size) for size in all_size])
    return scale, index


def get_mask(input_size: int, window_size: list[int], inner_size: int) -> tuple[torch.Tensor, list[int]]:
    """The pyramidal attention mask `[N, N]` (True = not attended), N = Σ_s M_s, and the sizes M_s.

    TSLib's signature: `input_size` the sequence length L, `window_size` the strides C_s, `inner_size`
    the same-scale window A (each node sees ⌊A/2⌋ neighbours on either side).
    """
    all_size = pyramid_sizes(input_size, window_size)
    if min(all_size) < 1:
        raise ValueError(f"input_size {input_size} is too short for the pyramid of window sizes {window_size} "
                         f"(scales {all_size}); it needs at least {math.prod(window_size)} steps")
    scale, index = _scale_coordinates(all_size)
    # parent(j) of every node below the top scale; the top scale gets -1 (no parent).
    strides = torch.tensor([*window_size, 1])[scale]
    upper_size = torch.tensor([*all_size[1:], 0])[scale]
    parent = torch.minimum(index // strides, upper_size - 1)  # [N]

    same_scale = scale[:, None] == scale[None, :]
    near = (index[:, None] - index[None, :]).abs() <= inner_size // 2
    # (query i, key j): j is a child of i, or j is the parent of i.
    child = (scale[None, :] == scale[:, None] - 1) & (parent[None, :] == index[:, None])
    parent_of = (scale[None, :] == scale[:, None] + 1) & (parent[:, None] == index[None, :])
    attended = (same_scale & near) | child | parent_of  # [N, N]
    return ~attended, all_size


def refer_points(all_sizes: list[int], window_size: list[int]) -> torch.Tensor:
    """For every finest-scale position, the flattened-pyramid index of its ancestor at each scale:
    `[1, L, S, 1]` (long), column 0 the position itself."""
    offsets = [sum(all_sizes[:s]) for s in range(len(all_sizes))]
    index = torch.arange(all_sizes[0])
    columns = [index]
    for s, window in enumerate(window_size):
        index = torch.clamp(index // window, max=all_sizes[s + 1] - 1)  # ancestor index at scale s + 1
        columns.append(index + offsets[s + 1])
    return torch.stack(columns, dim=1)[None, :, :, None]  # [1, L, S, 1]


class RegularMask:
    """A fixed boolean mask `[B, N, N]` exposed as `.mask` `[B, 1, N, N]` (TSLib's attention-mask object)."""

    def __init__(self, mask: torch.Tensor) -> None:
        self._mask = mask.unsqueeze(1)

    @property
    def mask(self) -> torch.Tensor:
        return self._mask


class PositionwiseFeedForward(nn.Module):
    """x + Dropout(W_2 Dropout(GELU(W_1 x))), LayerNorm (eps 1e-6) before the block (`normalize_before`)
    or after the residual: `[B, N, d_in]` → `[B, N, d_in]`."""

    def __init__(self, d_in: int, d_hid: int, dropout: float = 0.1, normalize_before: bool = True) -> None:
        super().__init__()
        self.normalize_before = normalize_before
        self.w_1 = nn.Linear(d_in, d_hid)
        self.w_2 = nn.Linear(d_hid, d_in)
        self.layer_norm = nn.LayerNorm(d_in, eps=1e-6)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = x
        if self.normalize_before:
            x = self.layer_norm(x)
        x = self.dropout(self.w_2(self.dropout(F.gelu(self.w_1(x)))))  # [B, N, d_in]
        x = x + residual
        return x if self.normalize_before else self.layer_norm(x)


class EncoderLayer(nn.Module):
    """Masked multi-head attention (q/k/v/out projections) then the position-wise feed-forward:
    `[B, N, D]`, mask `[B, N, N]` → `[B, N, D]`. TSLib's signature."""

    def __init__(self, d_model: int, d_inner: int, n_head: int, dropout: float = 0.1,
                 normalize_before: bool = True) -> None:
        super().__init__()
        self.slf_attn = AttentionLayer(
            FullAttention(mask_flag=True, factor=0, attention_dropout=dropout, output_attention=False),
            d_model, n_head)
        self.pos_ffn = PositionwiseFeedForward(d_model, d_inner, dropout=dropout, normalize_before=normalize_before)

    def forward(self, enc_input: torch.Tensor, slf_attn_mask: torch.Tensor | None = None) -> torch.Tensor:
        if slf_attn_mask is None:
            # No mask: every node attends to every node (the inner attention would otherwise apply a causal one).
            n = enc_input.shape[1]
            slf_attn_mask = torch.zeros(enc_input.shape[0], n, n, dtype=torch.bool, device=enc_input.device)
        out, _ = self.slf_attn(enc_input, enc_input, enc_input, attn_mask=RegularMask(slf_attn_mask))
        return self.pos_ffn(out)


class ConvLayer(nn.Module):
    """One CSCM step: Conv1d(kernel = stride = window), BatchNorm1d, ELU: `[B, c, M]` → `[B, c, ⌊M/window⌋]`."""

    def __init__(self, c_in: int, window_size: int) -> None:
        super().__init__()
        self.downConv = nn.Conv1d(c_in, c_in, kernel_size=window_size, stride=window_size)
        # A training batch of one window at a one-node scale (--seq_len 16-31) has one value per channel.
        self.norm = SafeBatchNorm1d(c_in)
        self.activation = nn.ELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.norm(self.downConv(x)))


class Bottleneck_Construct(nn.Module):
    """Bottleneck CSCM: `[B, L, D]` → the pyramid `[B, Σ_s M_s, D]` (finest scale first), see the module doc.

    Args:
        d_model: D. window_size: the strides C_s (an int means three scales of that stride, as TSLib).
        d_inner: the bottleneck width (TSLib: D / 4).
    """

    def __init__(self, d_model: int, window_size: list[int] | int, d_inner: int) -> None:
        super().__init__()
        windows = window_size if isinstance(window_size, list) else [window_size] * 3
        self.conv_layers = nn.ModuleList([ConvLayer(d_inner, w) for w in windows])
        self.up = nn.Linear(d_inner, d_model)
        self.down = nn.Linear(d_model, d_inner)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, enc_input: torch.Tensor) -> torch.Tensor:
        scale = self.down(enc_input).transpose(1, 2)  # [B, d_inner, L]
        coarser = []
        for conv in self.conv_layers:
            scale = conv(scale)  # [B, d_inner, M_s]
            coarser.append(scale)
        coarse = self.up(torch.cat(coarser, dim=2).transpose(1, 2))  # [B, M_1 + ... + M_S, D]
        return self.norm(torch.cat([enc_input, coarse], dim=1))  # [B, Σ_s M_s, D]


class Encoder(nn.Module):
    """Embedding, CSCM, `e_layers` pyramidal-attention layers, ancestor gathering:
    x `[B, L, enc_in]`, marks `[B, L, F]` → `[B, L, S·D]`.

    TSLib builds this from the whole configs namespace; here the flags it reads are explicit arguments.
    The calendar tables are TSLib's learned ones for hourly marks (see models/Pyraformer.py).
    """

    def __init__(self, seq_len: int, enc_in: int, d_model: int, d_ff: int, n_heads: int, e_layers: int,
                 dropout: float, window_size: list[int], inner_size: int) -> None:
        super().__init__()
        mask, self.all_size = get_mask(seq_len, window_size, inner_size)
        # Derived from the sizes, so not saved in checkpoints (TSLib keeps them as plain attributes).
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("indexes", refer_points(self.all_size, window_size), persistent=False)
        self.layers = nn.ModuleList([
            EncoderLayer(d_model, d_ff, n_heads, dropout=dropout, normalize_before=False) for _ in range(e_layers)])
        self.enc_embedding = DataEmbedding(enc_in, d_model, "learned", "h", dropout)
        self.conv_layers = Bottleneck_Construct(d_model, window_size, d_model // 4)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        seq = self.conv_layers(self.enc_embedding(x_enc, x_mark_enc))  # [B, N, D]
        mask = self.mask.expand(seq.shape[0], -1, -1)  # [B, N, N]
        for layer in self.layers:
            seq = layer(seq, mask)
        batch, _, d = seq.shape
        index = self.indexes.expand(batch, -1, -1, d).reshape(batch, -1, d)  # [B, L·S, D]
        return torch.gather(seq, 1, index).reshape(batch, self.all_size[0], -1)  # [B, L, S·D]
