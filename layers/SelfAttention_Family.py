"""Scaled dot-product attention (Vaswani et al., 2017), Informer's ProbSparse attention (Zhou et al.,
AAAI 2021, https://arxiv.org/abs/2012.07436) and the multi-head projection around them.

A = softmax(Q Kᵀ / √E + M) V, with M = −∞ above the diagonal when the attention is causal.
ProbSparse (Informer eq. 3-4): rank each query by the sparsity measurement
M̄(q, K) = max_j(q k_jᵀ) − (1/L_K) Σ_j q k_jᵀ over U = c·⌈ln L_K⌉ sampled keys, give the top
u = c·⌈ln L_Q⌉ queries full softmax attention and every other ("lazy") query the mean of V (the
cumulative sum of V when causal, as the authors' code and TSLib do).
De-stationary attention (Liu et al., "Non-stationary Transformers", NeurIPS 2022, eq. 6):
A = softmax((τ · Q Kᵀ + 1 Δᵀ) / √E) V with the learned de-stationary factors τ `[B, 1]` and Δ `[B, S]`.
Heads are laid out as `[B, L, H, E]` (TSLib's convention) so that projections reshape for free; ProbSparse
attention's head-major context is brought back per step, or read as TSLib reads it
(`output_layout="tslib"`, `layers.HeadLayout`).

Every attention class takes TSLib's constructor `(mask_flag, factor, scale, attention_dropout,
output_attention)` and call `(queries, keys, values, attn_mask, tau=None, delta=None)`, so a TSLib
model file builds and calls them unchanged (`FullAttention(False, configs.factor, ...)` passes the
factor, which full attention does not use, never a scale).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn as nn

from layers.config_checks import PROB_EVAL_SAMPLING
from layers.HeadLayout import check_output_layout, head_major_to_steps


def triangular_causal_mask(q_len: int, k_len: int, device: torch.device | None = None) -> torch.Tensor:
    """Boolean `[1, 1, q_len, k_len]` mask, True where key position s > query position l (hidden)."""
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).triu(diagonal=1)[None, None]


def _check_attention_args(factor: int | None, attention_dropout: float, scale: float | None) -> None:
    """One-line ValueErrors for bad constructor arguments (factor None: not used, not checked)."""
    if factor is not None and factor < 1:
        raise ValueError(f"factor {factor} must be a positive integer (--factor)")
    if not 0.0 <= attention_dropout < 1.0:
        raise ValueError(f"attention_dropout {attention_dropout} must lie in [0, 1) (--dropout)")
    if scale is not None and scale <= 0:
        raise ValueError(f"scale {scale} must be positive, or None for 1/sqrt(E)")


def _no_destationary(name: str, tau: torch.Tensor | None, delta: torch.Tensor | None) -> None:
    """Attention without de-stationary factors accepts TSLib's `tau`/`delta` only as None."""
    if tau is not None or delta is not None:
        raise ValueError(f"{name} does not use the de-stationary factors tau/delta; use DSAttention")


def _scaled_dot_product(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                        attn_mask: torch.Tensor | None, mask_flag: bool, scale: float | None,
                        dropout: nn.Module, tau: torch.Tensor | None = None, delta: torch.Tensor | None = None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(scale · (tau · Q Kᵀ + delta) masked) V → (`[B, L, H, D]`, weights `[B, H, L, S]`).

    `attn_mask` is a boolean tensor (True = hidden) or an object holding one as `.mask`, as TSLib's
    `TriangularCausalMask` does; tau `[B, 1, 1, 1]` and delta `[B, 1, 1, S]` are skipped when None.
    """
    scale = scale or 1.0 / math.sqrt(queries.shape[-1])
    scores = torch.einsum("blhe,bshe->bhls", queries, keys)  # [B, H, L, S]
    if tau is not None:
        scores = scores * tau
    if delta is not None:
        scores = scores + delta
    if mask_flag:
        if attn_mask is None:
            attn_mask = triangular_causal_mask(queries.shape[1], keys.shape[1], queries.device)
        scores = scores.masked_fill(getattr(attn_mask, "mask", attn_mask), float("-inf"))
    weights = dropout(torch.softmax(scale * scores, dim=-1))
    out = torch.einsum("bhls,bshd->blhd", weights, values)  # [B, L, H, D]
    return out.contiguous(), weights


class FullAttention(nn.Module):
    """Softmax attention over all keys, optionally causal. TSLib's signature.

    Args:
        mask_flag: apply a causal mask (the given `attn_mask`, or a triangular one when None).
        factor: accepted for TSLib's signature (the sparse attentions' c); full attention ignores it.
        scale: score scale; default (None) 1/√E.
        attention_dropout: dropout on the attention weights.
        output_attention: also return the weights `[B, H, L, S]`.
    """

    def __init__(self, mask_flag: bool = True, factor: int = 5, scale: float | None = None,
                 attention_dropout: float = 0.1, output_attention: bool = False) -> None:
        super().__init__()
        _check_attention_args(None, attention_dropout, scale)
        self.mask_flag = mask_flag
        self.factor = factor
        self.scale = scale
        self.output_attention = output_attention
        self.dropout = nn.Dropout(attention_dropout)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]` → `[B, L, H, D]`.

        `tau` and `delta` are TSLib's de-stationary factors; full attention accepts them only as None.
        """
        _no_destationary("FullAttention", tau, delta)
        out, weights = _scaled_dot_product(queries, keys, values, attn_mask, self.mask_flag, self.scale,
                                           self.dropout)
        return out, (weights if self.output_attention else None)


class DSAttention(FullAttention):
    """De-stationary attention (Non-stationary Transformers, eq. 6), TSLib's signature (FullAttention's).

    Same as FullAttention with the scores rescaled by tau `[B, 1]` and shifted by delta `[B, S]`
    before the softmax; tau None means 1 and delta None means 0, where it equals FullAttention.
    `factor` is accepted for TSLib's signature and unused.
    """

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]`, tau `[B, 1]`, delta `[B, S]`."""
        b, k_len = keys.shape[0], keys.shape[1]
        if tau is not None and tau.numel() != b:
            raise ValueError(f"tau must hold one factor per sample, [B={b}, 1], got {tuple(tau.shape)}")
        if delta is not None and delta.numel() != b * k_len:
            raise ValueError(f"delta must hold one shift per key, [B={b}, S={k_len}], got {tuple(delta.shape)}")
        scale_by = None if tau is None else tau.reshape(b, 1, 1, 1)  # [B, 1, 1, 1]
        shift_by = None if delta is None else delta.reshape(b, 1, 1, k_len)  # [B, 1, 1, S]
        out, weights = _scaled_dot_product(queries, keys, values, attn_mask, self.mask_flag, self.scale,
                                           self.dropout, scale_by, shift_by)
        return out, (weights if self.output_attention else None)


class ProbSparseResult(NamedTuple):
    """What a ProbSparse kernel returns: the output `[B, L, H, D]`, the active queries `[B, H, u]`
    and their attention weights `[B, H, u, S]`."""

    out: torch.Tensor
    top_index: torch.Tensor
    top_weights: torch.Tensor


def prob_sparse_sizes(q_len: int, k_len: int, factor: int) -> tuple[int, int]:
    """(U sampled keys per query, u active queries) = (c·⌈ln S⌉, c·⌈ln L⌉), each clamped to [1, S] / [1, L].

    The lower clamp only matters for length 1, where ⌈ln 1⌉ = 0 would leave nothing to rank.
    """
    n_sample = min(max(factor * math.ceil(math.log(k_len)), 1), k_len)
    n_top = min(max(factor * math.ceil(math.log(q_len)), 1), q_len)
    return n_sample, n_top


def _check_prob_sparse_inputs(queries: torch.Tensor, keys: torch.Tensor, sample_index: torch.Tensor,
                              n_top: int, causal: bool) -> None:
    q_len, k_len = queries.shape[1], keys.shape[1]
    if causal and q_len != k_len:
        raise ValueError(f"causal ProbSparse attention needs as many queries as keys, got {q_len} and {k_len}")
    if sample_index.shape[0] != q_len or sample_index.dim() != 2:
        raise ValueError(f"sample_index must be [L={q_len}, U], got {tuple(sample_index.shape)}")
    if not 1 <= n_top <= q_len:
        raise ValueError(f"n_top {n_top} must lie in [1, {q_len}]")


def prob_sparse_attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                          sample_index: torch.Tensor, n_top: int, scale: float, causal: bool,
                          output_layout: str = "per_step") -> ProbSparseResult:
    """Batched ProbSparse attention (three matmuls: sampled scores, active scores, active outputs).

    Args:
        queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]`.
        sample_index: `[L, U]` key positions scored for each query (shared by batch and heads).
        n_top: u, the number of active queries per (batch, head).
        scale: score scale (1/√E in the model).
        causal: mask keys after the query and start lazy queries from the cumulative sum of V.
        output_layout: how the `[B, H, L, D]` context becomes the `[B, L, H, D]` output
            (`layers.HeadLayout`): "per_step" (a transpose) or "tslib" (TSLib's memory reinterpretation).
    """
    _check_prob_sparse_inputs(queries, keys, sample_index, n_top, causal)
    b, q_len, h, e = queries.shape
    k_len, d = keys.shape[1], values.shape[-1]
    q = queries.transpose(1, 2)  # [B, H, L, E]
    k = keys.transpose(1, 2)  # [B, H, S, E]
    v = values.transpose(1, 2)  # [B, H, S, D]

    k_sample = k[:, :, sample_index, :]  # [B, H, L, U, E]
    sampled = torch.matmul(q.unsqueeze(-2), k_sample.transpose(-2, -1)).squeeze(-2)  # [B, H, L, U]
    # The paper's M̄ divides the sampled sum by L_K (not U); the unscaled scores rank the same.
    sparsity = sampled.max(dim=-1).values - sampled.sum(dim=-1) / k_len  # [B, H, L]
    top_index = sparsity.topk(n_top, dim=-1, sorted=False).indices  # [B, H, u]

    q_top = torch.gather(q, 2, top_index.unsqueeze(-1).expand(-1, -1, -1, e))  # [B, H, u, E]
    scores = torch.matmul(q_top, k.transpose(-2, -1)) * scale  # [B, H, u, S]
    if causal:
        future = torch.arange(k_len, device=q.device) > top_index.unsqueeze(-1)  # [B, H, u, S]
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    top_out = torch.matmul(weights, v)  # [B, H, u, D]

    if causal:
        lazy = v.cumsum(dim=2)  # [B, H, L, D]
    else:
        lazy = v.mean(dim=2, keepdim=True).expand(b, h, q_len, d)  # [B, H, L, D]
    out = lazy.scatter(2, top_index.unsqueeze(-1).expand(-1, -1, -1, d), top_out)  # [B, H, L, D]
    return ProbSparseResult(head_major_to_steps(out, output_layout, time_dim=2), top_index, weights)


def prob_sparse_attention_reference(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                                    sample_index: torch.Tensor, n_top: int, scale: float,
                                    causal: bool) -> ProbSparseResult:
    """Slow reference of `prob_sparse_attention` (same signature): one (batch, head, query) at a time,
    M̄ from an explicit loop over the sampled keys, the active set by a full sort (returned in
    ascending position order; the fast kernel's order is unspecified)."""
    _check_prob_sparse_inputs(queries, keys, sample_index, n_top, causal)
    b, q_len, h, _ = queries.shape
    k_len = keys.shape[1]
    rows = []
    tops = []
    top_weights = []
    for bi in range(b):
        for hi in range(h):
            q, k, v = queries[bi, :, hi], keys[bi, :, hi], values[bi, :, hi]  # [L, E], [S, E], [S, D]
            measure = []
            for i in range(q_len):
                dots = torch.stack([q[i] @ k[j] for j in sample_index[i].tolist()])
                measure.append(dots.max() - dots.sum() / k_len)
            order = torch.argsort(torch.stack(measure), descending=True, stable=True)
            top = order[:n_top].sort().values
            out = []
            weights = []
            for i in range(q_len):
                visible = i + 1 if causal else k_len
                if i in top.tolist():
                    w = torch.softmax(scale * (k[:visible] @ q[i]), dim=0)
                    out.append(w @ v[:visible])
                    weights.append(torch.cat([w, w.new_zeros(k_len - visible)]))
                elif causal:
                    out.append(v[:visible].sum(dim=0))
                else:
                    out.append(v.mean(dim=0))
            rows.append(torch.stack(out))  # [L, D]
            tops.append(top)
            top_weights.append(torch.stack(weights))  # rows in ascending query order, as `top`
    out = torch.stack(rows).view(b, h, q_len, -1).transpose(1, 2)  # [B, L, H, D]
    top_index = torch.stack(tops).view(b, h, n_top)
    return ProbSparseResult(out, top_index, torch.stack(top_weights).view(b, h, n_top, k_len))


def eval_sample_seed(sampling: str) -> int | None:
    """ProbAttention's `eval_sample_seed` for a PROB_EVAL_SAMPLING choice: 0 (fixed) or None (global)."""
    if sampling not in PROB_EVAL_SAMPLING:
        raise ValueError(f"ProbSparse eval sampling {sampling!r} is not one of {', '.join(PROB_EVAL_SAMPLING)} "
                         "(--prob_eval_sampling)")
    return 0 if sampling == "fixed" else None


class ProbAttention(nn.Module):
    """Informer's ProbSparse self-attention, a drop-in for FullAttention (same call).

    Args:
        mask_flag: causal (decoder self-attention); then queries and keys must have the same length.
        factor: c in U = c·⌈ln L_K⌉ sampled keys and u = c·⌈ln L_Q⌉ active queries.
        scale: score scale; default 1/√E.
        attention_dropout: kept for TSLib's signature and module tree; like the authors' code and
            TSLib, the sparse weights are not dropped out, so it has no effect.
        output_attention: also return weights `[B, H, L, S]` (lazy rows uniform 1/S, as in TSLib).
        eval_sample_seed: in eval mode the keys are sampled from a generator seeded with this, so
            evaluation is reproducible; None samples from the global stream as in training (TSLib).
        output_layout: "per_step" (default: output step l holds step l's heads, as the paper) or
            "tslib" (TSLib's `[B, H, L, D]` buffer read as `[B, L, H, D]`, which interleaves steps and
            heads; `layers.HeadLayout`).

    In training the sampled keys are drawn on the CPU from the global stream, as TSLib draws them.
    """

    def __init__(self, mask_flag: bool = True, factor: int = 5, scale: float | None = None,
                 attention_dropout: float = 0.1, output_attention: bool = False,
                 eval_sample_seed: int | None = 0, output_layout: str = "per_step") -> None:
        super().__init__()
        _check_attention_args(factor, attention_dropout, scale)
        check_output_layout(output_layout)
        self.output_layout = output_layout
        self.mask_flag = mask_flag
        self.factor = factor
        self.scale = scale
        self.output_attention = output_attention
        self.eval_sample_seed = eval_sample_seed
        self.dropout = nn.Dropout(attention_dropout)

    def sample_keys(self, q_len: int, k_len: int, n_sample: int, device: torch.device) -> torch.Tensor:
        """`[q_len, n_sample]` key positions, drawn uniformly with replacement."""
        generator = None
        if not self.training and self.eval_sample_seed is not None:
            generator = torch.Generator().manual_seed(self.eval_sample_seed)
        return torch.randint(k_len, (q_len, n_sample), generator=generator).to(device)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]` → `[B, L, H, D]`."""
        _no_destationary("ProbAttention", tau, delta)
        if attn_mask is not None:
            raise ValueError("ProbAttention builds its own causal mask (mask_flag); pass attn_mask=None")
        q_len, k_len = queries.shape[1], keys.shape[1]
        n_sample, n_top = prob_sparse_sizes(q_len, k_len, self.factor)
        sample_index = self.sample_keys(q_len, k_len, n_sample, queries.device)
        scale = self.scale or 1.0 / math.sqrt(queries.shape[-1])
        result = prob_sparse_attention(queries, keys, values, sample_index, n_top, scale, self.mask_flag,
                                       self.output_layout)
        if not self.output_attention:
            return result.out, None
        b, h = result.top_index.shape[:2]
        attn = result.top_weights.new_full((b, h, q_len, k_len), 1.0 / k_len)  # [B, H, L, S]
        attn = attn.scatter(2, result.top_index.unsqueeze(-1).expand(-1, -1, -1, k_len), result.top_weights)
        return result.out, attn


class AttentionLayer(nn.Module):
    """Multi-head wrapper: Linear q/k/v projections (with bias) into `n_heads` heads of width
    d_keys = d_model / n_heads (by default), the inner attention, and an output Linear.
    TSLib's signature and attribute names (inner_attention, query/key/value/out_projection)."""

    inner_name = "inner_attention"  # the inner module's attribute (AutoCorrelationLayer: inner_correlation)

    def __init__(self, attention: nn.Module, d_model: int, n_heads: int,
                 d_keys: int | None = None, d_values: int | None = None) -> None:
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads {n_heads} must be a positive integer (--n_heads)")
        d_keys = d_keys or d_model // n_heads
        d_values = d_values or d_model // n_heads
        # Registered first, under the subclass's name, as TSLib registers it (module tree and init order).
        setattr(self, self.inner_name, attention)
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_values * n_heads)
        self.out_projection = nn.Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """queries `[B, L, D]`, keys and values `[B, S, D]` → (`[B, L, D]`, weights or None).

        `tau`/`delta` are passed on to the inner attention (DSAttention's de-stationary factors)."""
        b, q_len, _ = queries.shape
        k_len = keys.shape[1]
        h = self.n_heads
        q = self.query_projection(queries).view(b, q_len, h, -1)  # [B, L, H, E]
        k = self.key_projection(keys).view(b, k_len, h, -1)  # [B, S, H, E]
        v = self.value_projection(values).view(b, k_len, h, -1)  # [B, S, H, Dv]
        out, attn = getattr(self, self.inner_name)(q, k, v, attn_mask, tau=tau, delta=delta)
        out = out.reshape(b, q_len, -1)  # [B, L, H·Dv]
        return self.out_projection(out), attn


class TwoStageAttentionLayer(nn.Module):
    """Crossformer's Two-Stage Attention (TSA) layer (Zhang & Yan, ICLR 2023, Sec. 3.2, eq. 3-4) over
    `[B, N, S, D]`: N variates ("dimensions"), S segments, D model width. TSLib's signature and names.

    Cross-Time stage, per variate d (all segments of one series attend to each other):
        Ŷ = LayerNorm(Z + MSA_time(Z, Z, Z));  Y = LayerNorm(Ŷ + MLP(Ŷ))   (norm1, MLP1, norm2)
    Cross-Dimension stage, per segment i, through c = `factor` learnable routers R_i `[c, D]`:
        B_i = MSA_send(R_i, Y_i, Y_i);  Ȳ_i = MSA_receive(Y_i, B_i, B_i)
        Z̄ = LayerNorm(Y + Ȳ);  out = LayerNorm(Z̄ + MLP(Z̄))                 (norm3, MLP2, norm4)
    so the N variates exchange information in O(N·c) instead of O(N²).

    Args:
        configs: accepted for TSLib's signature and not read (the attention dropout is `dropout`, which
            TSLib also takes from --dropout; full attention has no use for --factor).
        seg_num: S, the number of segments (one router set per segment); 0 builds a layer with no
            routers, as TSLib's Crossformer does for the decoder its window tasks build but never run.
        factor: c, routers per segment.
        d_model, n_heads: width and heads of the three attentions.
        d_ff: hidden width of the two MLPs (default 4·d_model).
        dropout: dropout on attention weights and on the residual branches.
    """

    def __init__(self, configs: object, seg_num: int, factor: int, d_model: int, n_heads: int,
                 d_ff: int | None = None, dropout: float = 0.1) -> None:
        super().__init__()
        if seg_num < 0 or factor < 1:
            raise ValueError(f"seg_num {seg_num} must be >= 0 and factor {factor} (--factor) a positive integer")
        d_ff = d_ff or 4 * d_model
        # Construction order is TSLib's (three attentions, then the routers, then the MLPs): the same
        # seed draws the same initial weights.
        self.time_attention = AttentionLayer(FullAttention(False, factor, attention_dropout=dropout), d_model, n_heads)
        self.dim_sender = AttentionLayer(FullAttention(False, factor, attention_dropout=dropout), d_model, n_heads)
        self.dim_receiver = AttentionLayer(FullAttention(False, factor, attention_dropout=dropout), d_model, n_heads)
        self.router = nn.Parameter(torch.randn(seg_num, factor, d_model))
        self.dropout = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.norm4 = nn.LayerNorm(d_model)
        self.MLP1 = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.MLP2 = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> torch.Tensor:
        """x `[B, N, S, D]` → `[B, N, S, D]` (S must equal the layer's seg_num). Masks are not used."""
        b, n, s, d = x.shape
        if s != self.router.shape[0]:
            raise ValueError(f"TwoStageAttentionLayer built for {self.router.shape[0]} segments got {s}")
        _no_destationary("TwoStageAttentionLayer", tau, delta)
        # Cross-Time stage: every variate's S segments form one sequence.
        time_in = x.reshape(b * n, s, d)  # [B·N, S, D]
        time_enc, _ = self.time_attention(time_in, time_in, time_in, None)
        y = self.norm1(time_in + self.dropout(time_enc))
        y = self.norm2(y + self.dropout(self.MLP1(y)))  # [B·N, S, D]
        # Cross-Dimension stage: every segment's N variates, routed through `factor` router tokens.
        dim_send = y.reshape(b, n, s, d).transpose(1, 2).reshape(b * s, n, d)  # [B·S, N, D]
        routers = self.router.repeat(b, 1, 1)  # [B·S, c, D], segment-major within each sample
        buffer, _ = self.dim_sender(routers, dim_send, dim_send, None)  # [B·S, c, D]
        received, _ = self.dim_receiver(dim_send, buffer, buffer, None)  # [B·S, N, D]
        z = self.norm3(dim_send + self.dropout(received))
        z = self.norm4(z + self.dropout(self.MLP2(z)))  # [B·S, N, D]
        return z.reshape(b, s, n, d).transpose(1, 2)  # [B, N, S, D]


def _reformer_lsh_self_attention() -> type[nn.Module]:
    """reformer_pytorch's LSHSelfAttention, imported on first use (only ReformerLayer needs the package)."""
    try:
        from reformer_pytorch import LSHSelfAttention
    except ImportError as err:
        raise ValueError("ReformerLayer needs the reformer-pytorch package: pip install reformer-pytorch "
                         f"({err})") from None
    return LSHSelfAttention


class ReformerLayer(nn.Module):
    """Reformer's LSH self-attention (Kitaev et al., "Reformer: The Efficient Transformer", ICLR 2020,
    https://arxiv.org/abs/2001.04451) through reformer_pytorch's `LSHSelfAttention` (shared query/key
    projection `toqk`, `tov`, `to_out`), as TSLib wraps it. TSLib's signature and call.

    Queries and keys share one projection; each of `n_hashes` rounds hashes them by a random rotation
    (argmax over [xR, −xR]) into n_buckets = T / bucket_size buckets, sorts by bucket, cuts chunks of
    `bucket_size` and attends within a chunk and the one before it. The package needs T to be a multiple of
    2·bucket_size, so, like TSLib, the sequence is zero-padded at the end to the next multiple and the
    output cut back to T. Sequences of at most bucket_size steps use full shared-QK attention.

    Differences from TSLib (see the model doc): the padded steps are masked out as keys (TSLib lets the
    zero rows take attention weight, shrinking the output); in eval mode the random rotations come from a
    generator seeded with `eval_hash_seed` (None: the global stream, as TSLib and as in training), so
    evaluation is reproducible.

    Args:
        attention: ignored (TSLib passes None).
        d_model: model width; n_heads must divide it.
        n_heads: attention heads.
        d_keys, d_values: accepted for TSLib's signature, unused (head width is d_model / n_heads).
        causal: causal LSH attention.
        bucket_size: LSH bucket size (TSLib's Reformer uses 4).
        n_hashes: hashing rounds (TSLib's Reformer uses 4).
        eval_hash_seed: seed of the rotations in eval mode, or None.
    """

    def __init__(self, attention: nn.Module | None, d_model: int, n_heads: int, d_keys: int | None = None,
                 d_values: int | None = None, causal: bool = False, bucket_size: int = 4, n_hashes: int = 4,
                 eval_hash_seed: int | None = 0) -> None:
        super().__init__()
        if n_heads < 1 or d_model % n_heads != 0:
            raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads} (--d_model, --n_heads)")
        if bucket_size < 1 or n_hashes < 1:
            raise ValueError(f"bucket_size {bucket_size} and n_hashes {n_hashes} must be positive integers")
        self.bucket_size = bucket_size
        self.eval_hash_seed = eval_hash_seed
        self.attn = _reformer_lsh_self_attention()(dim=d_model, heads=n_heads, bucket_size=bucket_size,
                                                   n_hashes=n_hashes, causal=causal)

    def padded_length(self, length: int) -> int:
        """The smallest multiple of 2·bucket_size that is ≥ `length`."""
        block = 2 * self.bucket_size
        return -(-length // block) * block

    def fit_length(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Zero-pad `[B, T, D]` at the end to `padded_length(T)`: (`[B, T', D]`, key mask `[B, T']` with
        False on the padding, or None without padding)."""
        b, length, d = queries.shape
        fill = self.padded_length(length) - length
        if fill == 0:
            return queries, None
        padded = torch.cat([queries, queries.new_zeros(b, fill, d)], dim=1)  # [B, T', D]
        keep = torch.arange(length + fill, device=queries.device) < length  # [T']
        return padded, keep.expand(b, -1)

    def _attend(self, queries: torch.Tensor) -> torch.Tensor:
        padded, keep = self.fit_length(queries)
        return self.attn(padded, input_mask=keep)[:, : queries.shape[1]]  # [B, T, D]

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        """queries `[B, T, D]` → (`[B, T, D]`, None). Self-attention: keys and values are the queries
        (TSLib's call passes the same tensor three times); attn_mask, tau and delta are not used."""
        _no_destationary("ReformerLayer", tau, delta)
        if self.training or self.eval_hash_seed is None:
            return self._attend(queries), None
        device = queries.device
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.default_generator.manual_seed(self.eval_hash_seed)
            if device.type == "cuda":
                with torch.cuda.device(device):
                    torch.cuda.manual_seed(self.eval_hash_seed)
            return self._attend(queries), None
