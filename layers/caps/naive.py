"""The naive CAPS reference: the path weights W[t, i, e] materialised from masked pairwise segment sums.

    P1[t,i,e] = softmax_{i<=t}(p[i,e] + log clock[i])                         (Riemann softmax)
    P2[t,i,e] = exp(-sum_{j=i+1..t} softplus(g[j,e]) clock[j])                (prefix-product decay)
    P3[t,i]   = clock[i] / sum_{j<=t} clock[j]                                (Clock baseline)

Quadratic in T and obviously correct (never a difference or a ratio of global prefix quantities); the
only kernel with attn="softmax". `path_weights` hands the same weights to `compare.explain`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange

from layers.caps.options import ATTN_CHOICES, _check_choice, parse_paths
from layers.caps.rope import _rotated

# Elements of one [B, H, rows, T, E] block in the naive reference (bounds its forward memory).
NAIVE_BLOCK_ELEMENTS = 1 << 23


def _naive_weights(
    p: torch.Tensor, a: torch.Tensor, clock: torch.Tensor, paths: tuple[int, ...], t0: int, t1: int,
) -> torch.Tensor:
    """Summed path weights W[b,h,t,i,e] for query rows t0 <= t < t1 and keys i < t1 (0 where i > t).

    p (= p + log clock), a (= softplus(g) clock): [B, H, T, E]; clock: [B, H, T, 1].
    Path 2 uses the segment sum sum_{j=i+1..t} a_j, built by a reversed cumulative sum per row
    (Mamba-2 style), never a difference or a ratio of global prefix quantities.
    """
    rows = torch.arange(t0, t1, device=p.device)[:, None]
    cols = torch.arange(t1, device=p.device)[None, :]
    causal = (cols <= rows)[None, None, :, :, None]  # [1, 1, R, t1, 1]
    w = torch.zeros((), dtype=p.dtype, device=p.device)
    if 1 in paths:
        logits = p[:, :, None, :t1].masked_fill(~causal, float("-inf"))  # [B, H, R, t1, E]
        w = w + torch.softmax(logits, dim=3)
    if 2 in paths:
        x = a[:, :, None, :t1].masked_fill(~causal, 0.0)  # a_j for j <= t, [B, H, R, t1, E]
        suffix = torch.flip(torch.cumsum(torch.flip(x, [3]), dim=3), [3])  # sum_{j >= i, j <= t}
        seg = F.pad(suffix[..., 1:, :], (0, 0, 0, 1))  # sum_{i < j <= t}
        w = w + torch.exp(-seg).masked_fill(~causal, 0.0)
    if 3 in paths:
        c = clock[:, :, None, :t1].masked_fill(~causal, 0.0)  # [B, H, R, t1, 1]
        w = w + c / c.sum(dim=3, keepdim=True)
    if not paths:
        w = causal.to(p.dtype)
    return w


def caps_attention_naive(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Reference: materialises W[t, i, e] from pairwise masked segment sums, blocked over rows.

    The `CAPSKernel` signature (shapes there); the only kernel with attn="softmax"; chunk_size unused.
    O(T^2 E) time; forward memory bounded by NAIVE_BLOCK_ELEMENTS per block (autograd still keeps every
    block, so backward memory is quadratic).
    """
    _check_choice("--caps_attn", attn, ATTN_CHOICES)
    ids = parse_paths(paths)
    q, k = _rotated(q, k, rope_freq)
    B, T, H, E = q.shape
    q, k, v, p, g = (rearrange(x, "b t h e -> b h t e") for x in (q, k, v, p, g))  # [B, H, T, *]
    clock = rearrange(clock, "b t h -> b h t")[..., None]  # [B, H, T, 1]
    pt = p + torch.log(clock)
    a = F.softplus(g) * clock
    scale = 1.0 / math.sqrt(max(1, len(ids)) * E)
    rows_per_block = max(1, NAIVE_BLOCK_ELEMENTS // max(1, B * H * T * E))
    outs = []
    for t0 in range(0, T, rows_per_block):
        t1 = min(T, t0 + rows_per_block)
        w = _naive_weights(pt, a, clock, ids, t0, t1)  # [B, H, R, t1, E]
        s = torch.einsum("bhre,bhie,bhrie->bhri", q[:, :, t0:t1], k[:, :, :t1], w)  # [B, H, R, t1]
        if attn == "softmax":
            causal = torch.arange(t1, device=q.device)[None, :] <= torch.arange(t0, t1, device=q.device)[:, None]
            s = torch.softmax((s * scale).masked_fill(~causal, float("-inf")), dim=-1)
        outs.append(torch.einsum("bhri,bhiv->bhrv", s, v[:, :, :t1]))  # [B, H, R, Ev]
    return rearrange(torch.cat(outs, dim=2), "b h t v -> b t h v")


def path_weights(p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor, paths: str | tuple[int, ...]) -> torch.Tensor:
    """The naive kernel's summed path weights W[b, h, t, i, e] for every query row t (0 where i > t).

    p, g: [B, T, H, E]; clock: [B, T, H] (the kernel's layout); paths as `parse_paths`. Path 1 alone gives
    the Riemann weights G, path 2 the decay A, path 3 the clock average (feature width 1), all from
    `_naive_weights`, so sum_e q_t k_i W[t, i, e] (q, k rotated) applied to v is the kernel's output.
    Memory [B, H, T, T, E]: for inspection (`compare.explain`) and tests, not training.
    """
    ids = parse_paths(paths)
    p, g = (rearrange(x, "b t h e -> b h t e") for x in (p, g))  # [B, H, T, E]
    clock = rearrange(clock, "b t h -> b h t")[..., None]  # [B, H, T, 1]
    return _naive_weights(p + torch.log(clock), F.softplus(g) * clock, clock, ids, 0, p.shape[2])
