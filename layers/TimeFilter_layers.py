"""TimeFilter's graph blocks (Hu et al., "TimeFilter: Patch-Specific Spatial-Temporal Graph Filtration for
Time Series Forecasting", ICML 2025, https://arxiv.org/abs/2501.13041), with TSLib's public names.

The nodes are the patches of all variates (L = N·p nodes, variate-major: node k is variate k // p,
patch k mod p). Per head, on features x_i `[E]` (E = D / heads):

1. Graph:      A_ij = GELU(⟨W₁x_i + b₁, W₂x_j + b₂⟩)
2. k-NN:       in each row, the k = ⌊α·L⌋ smallest entries are set to 0 (`--alpha`)
3. Filtration: each node routes its row A_i `[L]` to three experts, the regions of its neighbours
               S (same patch index, other variates), T (same variate, other patches), ST (the rest);
               g_i = softmax(A_i W_g (+ noise when training)), and the experts are kept in descending
               g order up to and including the first whose cumulative probability exceeds `--top_p`.
               The filter of row i is M_i = Σ_e keep_ie · region_e(i) + e_i (the node itself is kept);
               A ← A ⊙ M  (filtered edges become 0, not −∞: the softmax below still gives them e⁰).
4. Message:    out_i = Σ_j normalize₁(Drop(softmax_j(A_ij))) · (W x_j + b)   (GCN, all heads concatenated)

GraphBlock is pre-norm: x = x + GraphFilter(LN₁(x)); x = x + FFN(LN₂(x)).

The router is trained only by its auxiliary loss (load balance of the kept probabilities + 0.1 × the
routing entropy), which the backbone returns; the keep mask itself has no gradient.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_REGIONS = 3  # spatial, temporal, spatio-temporal neighbours


def patch_graph_masks(num_nodes: int, n_vars: int, device: torch.device | None = None,
                      dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The three neighbour regions of every node, `[L, 3, L]` (S, T, ST), none containing the node itself.

    Nodes are variate-major: node k is patch k mod p of variate k // p, with p = L / n_vars.
    """
    p = num_nodes // n_vars
    k = torch.arange(num_nodes, device=device)
    same_patch = (k % p).unsqueeze(1) == (k % p).unsqueeze(0)  # [L, L]
    same_var = (k // p).unsqueeze(1) == (k // p).unsqueeze(0)  # [L, L]
    itself = k.unsqueeze(1) == k.unsqueeze(0)
    spatial = same_patch & ~itself
    temporal = same_var & ~itself
    spatio_temporal = ~same_patch & ~same_var
    return torch.stack([spatial, temporal, spatio_temporal], dim=1).to(dtype)  # [L, 3, L]


def mask_topk(x: torch.Tensor, alpha: float = 0.5, largest: bool = False) -> torch.Tensor:
    """A 0/1 mask over the last axis of x that is 0 at the k = ⌊alpha · size⌋ smallest entries of each row
    (the largest ones with `largest=True`) and 1 elsewhere: `[..., L]` → `[..., L]`."""
    k = int(alpha * x.shape[-1])
    _, index = torch.topk(x, k, dim=-1, largest=largest)
    return torch.ones_like(x).scatter(-1, index, 0.0)


def top_p_keep(probs: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Nucleus selection over the last axis of `probs` `[..., E]`: sorted in descending order, an expert is
    kept while the cumulative probability *before* it is ≤ top_p (so up to and including the first one
    that takes the sum past top_p).

    Returns (keep `[..., E]` 0/1 in expert order, sorted probabilities, their keep mask in sorted order).
    """
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    before = torch.cat([torch.zeros_like(cumulative[..., :1]), cumulative[..., :-1]], dim=-1)
    kept_sorted = before <= top_p
    keep = torch.zeros_like(probs).scatter(-1, order, kept_sorted.to(probs.dtype))
    return keep, sorted_probs, kept_sorted


class GCN(nn.Module):
    """Multi-head graph convolution: `adj` `[B, H, L, L]` (rows L1-normalised here), x `[B, L, D]` →
    per head Σ_j adj_ij (W x_j + b) over the head's D / H features, concatenated: `[B, L, D]`."""

    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.n_heads = n_heads

    def forward(self, adj: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        b, length, d = x.shape
        values = self.proj(x).view(b, length, self.n_heads, -1)  # [B, L, H, E]
        adj = F.normalize(adj, p=1, dim=-1)
        out = torch.einsum("bhij,bjhe->bihe", adj, values)  # [B, L, H, E]
        return out.reshape(b, length, d)


class mask_moe(nn.Module):  # noqa: N801 (TSLib's public name)
    """Patch-specific filtration: route each node's adjacency row to the S/T/ST regions (see module docs).

    in_dim is the number of nodes L (each row of the graph is the router's input).
    """

    def __init__(self, n_vars: int, top_p: float = 0.5, num_experts: int = NUM_REGIONS, in_dim: int = 96) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.n_vars = n_vars
        self.in_dim = in_dim
        self.gate = nn.Linear(in_dim, num_experts, bias=False)
        self.noise = nn.Linear(in_dim, num_experts, bias=False)
        self.noisy_gating = True
        self.softplus = nn.Softplus()
        self.softmax = nn.Softmax(2)
        self.top_p = top_p

    def routing_probs(self, rows: torch.Tensor, noise_epsilon: float = 1e-2) -> torch.Tensor:
        """softmax over experts of the gate logits of `rows` `[B·H, L, L]` → `[B·H, L, E]`; when training,
        the logits get Gaussian noise of standard deviation softplus(rows W_noise) + noise_epsilon."""
        logits = self.gate(rows)
        if self.noisy_gating and self.training:
            std = self.softplus(self.noise(rows)) + noise_epsilon
            logits = logits + torch.randn_like(logits) * std
        return self.softmax(logits)

    @staticmethod
    def routing_loss(probs: torch.Tensor, sorted_probs: torch.Tensor, kept_sorted: torch.Tensor) -> torch.Tensor:
        """TSLib's auxiliary loss: cv² of the kept (sorted) probabilities summed over B·H, plus 0.1 × the
        routing entropy summed over nodes and averaged over (B·H, experts)."""
        eps = 1e-10
        zero = probs.new_zeros(())
        entropy = -(probs * torch.log(probs + eps)).sum(dim=1).mean() if probs.shape[0] > 1 else zero
        importance = torch.where(kept_sorted, sorted_probs, 0.0).sum(0)  # [L, E]
        balance = importance.var() / (importance.mean() ** 2 + eps) if importance.shape[0] > 1 else zero
        return balance + 0.1 * entropy

    def forward(self, x: torch.Tensor, masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """x `[B, H, L, L]` (the k-NN graph), masks `[L, 3, L]` (default `patch_graph_masks`) →
        (filter `[B, H, L, L]` with ones on the diagonal, auxiliary loss)."""
        b, h, length, _ = x.shape
        itself = torch.eye(length, device=x.device, dtype=x.dtype)  # [L, L]
        if self.top_p == 0.0:
            return itself.expand(1, 1, length, length), x.new_zeros(())
        probs = self.routing_probs(x.reshape(b * h, length, length))  # [B·H, L, E]
        keep, sorted_probs, kept_sorted = top_p_keep(probs, self.top_p)
        if masks is None:
            masks = patch_graph_masks(length, self.n_vars, x.device, x.dtype)
        keep = keep.reshape(b, h, length, -1).to(x.dtype)  # [B, H, L, E]
        mask = torch.einsum("bhle,lej->bhlj", keep, masks.to(x.dtype)) + itself  # [B, H, L, L]
        return mask, self.routing_loss(probs, sorted_probs, kept_sorted)


class GraphLearner(nn.Module):
    """Per-head graph of the nodes: GELU of projected dot products, k-NN pruning, then filtration.
    x `[B, H, L, E]` → (adjacency `[B, H, L, L]`, auxiliary loss)."""

    def __init__(self, dim: int, n_vars: int, top_p: float = 0.5, in_dim: int = 96) -> None:
        super().__init__()
        self.dim = dim
        self.proj_1 = nn.Linear(dim, dim)
        self.proj_2 = nn.Linear(dim, dim)
        self.n_vars = n_vars
        self.mask_moe = mask_moe(n_vars, top_p=top_p, in_dim=in_dim)

    def forward(self, x: torch.Tensor, masks: torch.Tensor | None = None,
                alpha: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
        adj = F.gelu(torch.einsum("bhid,bhjd->bhij", self.proj_1(x), self.proj_2(x)))  # [B, H, L, L]
        adj = adj * mask_topk(adj, alpha)
        mask, loss = self.mask_moe(adj, masks)
        return adj * mask, loss


class GraphFilter(nn.Module):
    """Learn and filter the patch graph, softmax it row-wise, and convolve: `[B, L, D]` → `[B, L, D]`.

    `scale` is kept for TSLib's signature (unused there too)."""

    def __init__(self, dim: int, n_vars: int, n_heads: int = 4, scale: float | None = None, top_p: float = 0.5,
                 dropout: float = 0.0, in_dim: int = 96) -> None:
        super().__init__()
        self.dim = dim
        self.n_heads = n_heads
        self.scale = dim ** (-0.5) if scale is None else scale
        self.dropout = nn.Dropout(dropout)
        self.graph_learner = GraphLearner(dim // n_heads, n_vars, top_p, in_dim=in_dim)
        self.graph_conv = GCN(dim, n_heads)

    def forward(self, x: torch.Tensor, masks: torch.Tensor | None = None,
                alpha: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
        b, length, _ = x.shape
        heads = x.reshape(b, length, self.n_heads, -1).permute(0, 2, 1, 3)  # [B, H, L, E]
        adj, loss = self.graph_learner(heads, masks, alpha)
        adj = self.dropout(torch.softmax(adj, dim=-1))  # [B, H, L, L]
        return self.graph_conv(adj, x), loss


class GraphBlock(nn.Module):
    """Pre-norm block: x + GraphFilter(LN(x)), then x + FFN(LN(x)) with FFN = Linear, GELU, Dropout, Linear."""

    def __init__(self, dim: int, n_vars: int, d_ff: int | None = None, n_heads: int = 4, top_p: float = 0.5,
                 dropout: float = 0.0, in_dim: int = 96) -> None:
        super().__init__()
        self.dim = dim
        self.d_ff = dim * 4 if d_ff is None else d_ff
        self.gnn = GraphFilter(dim, n_vars, n_heads, top_p=top_p, dropout=dropout, in_dim=in_dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, self.d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(self.d_ff, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, masks: torch.Tensor | None = None,
                alpha: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
        out, loss = self.gnn(self.norm1(x), masks, alpha)
        x = x + out
        return x + self.ffn(self.norm2(x)), loss


class TimeFilter_Backbone(nn.Module):  # noqa: N801 (TSLib's public name)
    """`n_blocks` GraphBlocks over the node tokens `[B, L, D]` → (`[B, L, D]`, mean auxiliary loss)."""

    def __init__(self, hidden_dim: int, n_vars: int, d_ff: int | None = None, n_heads: int = 4, n_blocks: int = 3,
                 top_p: float = 0.5, dropout: float = 0.0, in_dim: int = 96) -> None:
        super().__init__()
        self.dim = hidden_dim
        self.d_ff = hidden_dim * 2 if d_ff is None else d_ff
        self.blocks = nn.ModuleList([GraphBlock(hidden_dim, n_vars, self.d_ff, n_heads, top_p, dropout, in_dim)
                                     for _ in range(n_blocks)])
        self.n_blocks = n_blocks

    def forward(self, x: torch.Tensor, masks: torch.Tensor | None = None,
                alpha: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
        losses = []
        for block in self.blocks:
            x, loss = block(x, masks, alpha)
            losses.append(loss)
        return x, torch.stack(losses).mean()
