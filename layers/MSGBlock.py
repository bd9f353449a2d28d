"""MSGNet's blocks (Cai et al., "MSGNet: Learning Multi-Scale Inter-Series Correlations for
Multivariate Time Series Forecasting", AAAI 2024, https://arxiv.org/abs/2401.00423), with TSLib's
public names (layers/MSGBlock.py): `Predict`, `Attention_Block`, `self_attention`, `GraphBlock`,
`mixprop`, `nconv`, `linear`.

Adaptive graph convolution (`GraphBlock`, the paper's Sec. "Adaptive Graph Convolution", MTGNN's
mix-hop propagation): the adjacency A = SoftMax_row(ReLU(E_1 E_2)) is learned from node embeddings
E_1 `[n, node_dim]`, E_2 `[node_dim, n]`. With Ã = A + I and P = D̃⁻¹ Ã (row-normalised),
    H⁽⁰⁾ = X,   H⁽ᵏ⁾ = α X + (1 − α) P H⁽ᵏ⁻¹⁾  (k = 1 … gcn_depth),   out = W [H⁽⁰⁾ ‖ … ‖ H⁽ᴷ⁾]
(α = `--propalpha`, W a 1×1 convolution over the concatenated channels). The n graph nodes are
`--c_out` channels that a `[d_model − c_out + 1, 1]` convolution carves out of the d_model features;
the result is mapped back by a full-length convolution over time and Linear(c_out → d_model), and
added to the input under a LayerNorm.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.SelfAttention_Family import AttentionLayer, FullAttention


class Predict(nn.Module):
    """Linear map along time, `[B, C, seq_len]` → `[B, C, pred_len]`, then dropout; one Linear per
    channel with `individual`. TSLib's signature."""

    def __init__(self, individual: bool, c_out: int, seq_len: int, pred_len: int, dropout: float) -> None:
        super().__init__()
        self.individual, self.c_out = individual, c_out
        if individual:
            self.seq2pred = nn.ModuleList()
            self.dropout = nn.ModuleList()
            for _ in range(c_out):
                self.seq2pred.append(nn.Linear(seq_len, pred_len))
                self.dropout.append(nn.Dropout(dropout))
        else:
            self.seq2pred = nn.Linear(seq_len, pred_len)
            self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.individual:
            return self.dropout(self.seq2pred(x))  # [B, C, pred_len]
        outs = [drop(layer(x[:, i])) for i, (layer, drop) in enumerate(zip(self.seq2pred, self.dropout, strict=True))]
        return torch.stack(outs, dim=1)  # [B, C, pred_len]


class self_attention(AttentionLayer):  # noqa: N801 (TSLib's name)
    """Multi-head attention whose inner attention is `attention(attention_dropout=0.1)` (TSLib builds
    it so: FullAttention's default mask_flag=True makes it causal, its dropout fixed at 0.1)."""

    def __init__(self, attention: type[nn.Module], d_model: int, n_heads: int) -> None:
        super().__init__(attention(attention_dropout=0.1), d_model, n_heads)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        return super().forward(queries, keys, values, attn_mask, tau=tau, delta=delta)


class Attention_Block(nn.Module):  # noqa: N801 (TSLib's name)
    """Transformer encoder layer over `[B, L, D]`: x = LN_1(x + Drop(MHA(x))),
    out = LN_2(x + Drop(Conv1×1(Drop(act(Conv1×1(x)))))). TSLib's signature."""

    def __init__(self, d_model: int, d_ff: int | None = None, n_heads: int = 8, dropout: float = 0.1,
                 activation: str = "relu") -> None:
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.attention = self_attention(FullAttention, d_model, n_heads=n_heads)
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = F.relu if activation == "relu" else F.gelu

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None) -> torch.Tensor:
        new_x, _ = self.attention(x, x, x, attn_mask=attn_mask)
        x = self.norm1(x + self.dropout(new_x))  # [B, L, D]
        y = self.dropout(self.activation(self.conv1(x.transpose(1, 2))))  # [B, d_ff, L]
        y = self.dropout(self.conv2(y).transpose(1, 2))  # [B, L, D]
        return self.norm2(x + y)


class nconv(nn.Module):  # noqa: N801 (TSLib's name)
    """One propagation step along the node axis: x `[B, C, n, T]`, A `[n, n]` → (A x) `[B, C, n, T]`."""

    def forward(self, x: torch.Tensor, A: torch.Tensor) -> torch.Tensor:  # noqa: N803 (TSLib's name)
        return torch.einsum("bcwt,vw->bcvt", x, A).contiguous()


class linear(nn.Module):  # noqa: N801 (TSLib's name)
    """1×1 convolution `[B, c_in, n, T]` → `[B, c_out, n, T]` (TSLib's name and attribute `mlp`)."""

    def __init__(self, c_in: int, c_out: int, bias: bool = True) -> None:
        super().__init__()
        self.mlp = nn.Conv2d(c_in, c_out, kernel_size=(1, 1), bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(x)


class mixprop(nn.Module):  # noqa: N801 (TSLib's name)
    """Mix-hop propagation (module doc): x `[B, c_in, n, T]`, adj `[n, n]` → `[B, c_out, n, T]`.

    `dropout` is accepted for TSLib's signature and, as there, not applied.
    """

    def __init__(self, c_in: int, c_out: int, gdep: int, dropout: float, alpha: float) -> None:
        super().__init__()
        self.nconv = nconv()
        self.mlp = linear((gdep + 1) * c_in, c_out)
        self.gdep, self.dropout, self.alpha = gdep, dropout, alpha

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        adj = adj + torch.eye(adj.shape[0], dtype=adj.dtype, device=adj.device)
        propagate = adj / adj.sum(dim=1, keepdim=True)  # row-normalised D̃⁻¹ Ã
        h, hops = x, [x]
        for _ in range(self.gdep):
            h = self.alpha * x + (1 - self.alpha) * self.nconv(h, propagate)
            hops.append(h)
        return self.mlp(torch.cat(hops, dim=1))  # [B, c_out, n, T]


class GraphBlock(nn.Module):
    """Adaptive graph convolution over `[B, T, d_model]` (T = seq_len) → `[B, T, d_model]` (module doc).
    TSLib's signature; the graph has `c_out` nodes."""

    def __init__(self, c_out: int, d_model: int, conv_channel: int, skip_channel: int, gcn_depth: int,
                 dropout: float, propalpha: float, seq_len: int, node_dim: int) -> None:
        super().__init__()
        self.nodevec1 = nn.Parameter(torch.randn(c_out, node_dim))
        self.nodevec2 = nn.Parameter(torch.randn(node_dim, c_out))
        self.start_conv = nn.Conv2d(1, conv_channel, (d_model - c_out + 1, 1))
        self.gconv1 = mixprop(conv_channel, skip_channel, gcn_depth, dropout, propalpha)
        self.gelu = nn.GELU()
        self.end_conv = nn.Conv2d(skip_channel, seq_len, (1, seq_len))
        self.linear = nn.Linear(c_out, d_model)
        self.norm = nn.LayerNorm(d_model)

    def adjacency(self) -> torch.Tensor:
        """The learned adjacency SoftMax_row(ReLU(E_1 E_2)) `[c_out, c_out]`."""
        return F.softmax(F.relu(torch.mm(self.nodevec1, self.nodevec2)), dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.start_conv(x.transpose(1, 2).unsqueeze(1))  # [B, conv_channel, c_out, T]
        out = self.gelu(self.gconv1(out, self.adjacency()))  # [B, skip_channel, c_out, T]
        # TSLib squeezes every size-1 axis here, which drops the node axis when c_out = 1 (features S
        # and MS) and fails; only the convolved time axis goes.
        out = self.end_conv(out).squeeze(-1)  # [B, seq_len, c_out]
        return self.norm(x + self.linear(out))  # [B, T, d_model]
