"""Chunked decayed causal linear attention: the primitive every linear CAPS variant reduces to.

    o_t = sum_{i<=t} sum_f qt[t,f] kt[i,f] exp(L[t,f] - L[i,f]) v_i,   ell = L_t - L_{t-1} <= 0

Per chunk of C steps, an inter-chunk state scan plus an intra-chunk form: the factorised product (fast,
safe while the chunk's log-decay spread is at most MAX_FACTORISED_SPREAD; an analytic backward in eager
mode) or the exact pairwise form, chosen by the fallback ladder of `decayed_linear_attention_chunked`.
Derivation, the float32 rule and the ladder: layers/caps/README.md, sections 2 and 3, "Fallback ladder".
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from einops import rearrange

from layers.caps.maths import (
    MAX_FACTORISED_SPREAD,
    _chunk,
    _local_log_decay,
    _spread_is_safe,
    factorised_is_safe,
)
from layers.caps.options import DEFAULT_CHUNK

logger = logging.getLogger(__name__)

# Chunk length of the exact pairwise fallback: its [C, C, F] decay tensor makes memory grow with C.
FALLBACK_CHUNK = 16


def _state_scan(decay: torch.Tensor | None, delta: torch.Tensor) -> torch.Tensor:
    """States entering each chunk: S_0 = 0, S_{n+1} = decay_n S_n + delta_n. delta [B, H, N, F, Ev].

    decay [B, H, N, F, 1] (None: no decay, the scan is an exclusive cumulative sum).
    """
    zero = torch.zeros_like(delta[:, :, :1])
    if decay is None:
        return torch.cat([zero, torch.cumsum(delta[:, :, :-1], dim=2)], dim=2)
    states = [zero[:, :, 0]]
    for n in range(delta.shape[2] - 1):
        states.append(decay[:, :, n] * states[-1] + delta[:, :, n])
    return torch.stack(states, dim=2)  # [B, H, N, F, Ev]


def _causal_mask(chunk: int, device: torch.device) -> torch.Tensor:
    return torch.ones(chunk, chunk, dtype=torch.bool, device=device).tril()


def _chunked_no_decay(qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, chunk: int) -> torch.Tensor:
    """Plain causal linear attention: o_t = sum_{i<=t} (qt_t . kt_i) v_i. [B, H, T, *] -> [B, H, T, Ev]."""
    T = qt.shape[2]
    qc, kc, vc = _chunk(qt, chunk), _chunk(kt, chunk), _chunk(v, chunk)  # [B, H, N, C, *]
    scores = (qc @ kc.transpose(-1, -2)).tril_()  # [B, H, N, C, C], causal r <= s
    states = _state_scan(None, kc.transpose(-1, -2) @ vc)  # [B, H, N, F, Ev]
    o = scores @ vc + qc @ states  # [B, H, N, C, Ev]
    return rearrange(o, "b h n c v -> b h (n c) v")[:, :, :T]


def _factorised_terms(
    qc: torch.Tensor, kc: torch.Tensor, local: torch.Tensor, first: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """Factors of the factorised form, ref = G_end / 2 (`_chunked_factorised`).

    eq = exp(G_s - ref), ek = exp(ref - G_r), qf = qt eq, kf = kt ek: [B, H, N, C, F];
    e_first_ref = exp(first + ref), e_ref = exp(ref), decay = exp(first + G_end): [B, H, N, F, 1], so
    qf e_first_ref = qt exp(first + G_s) and kf e_ref = kt exp(G_end - G_r) (the inter-chunk
    factors) are applied to the small [F, Ev] states and increments, never to a [C, F] tensor.
    """
    ref = 0.5 * local[:, :, :, -1:]  # [B, H, N, 1, F]
    eq = torch.exp(local - ref)
    ek = torch.exp(ref - local)
    scales = (torch.exp(first + ref), torch.exp(ref), torch.exp(first + 2.0 * ref))
    return (eq, ek, qc * eq, kc * ek) + tuple(x.transpose(-1, -2) for x in scales)


def _factorised_forward(
    qc: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, local: torch.Tensor, first: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """Chunked factorised decayed linear attention: o [B, H, N, C, Ev], the masked in-chunk scores
    [B, H, N, C, C], entering states S_n and increments delta_n [B, H, N, F, Ev]. Inputs chunked [B, H, N, C, *]; local, first from
    `_local_log_decay`. Differentiable by autograd (the compiled path) and the forward of
    `_FactorisedAttention` (the eager path).
    """
    _, _, qf, kf, e_first_ref, e_ref, decay = _factorised_terms(qc, kc, local, first)
    # tril_ selects in place on the fresh product (a 0/1 mask multiply would turn inf into nan).
    scores = (qf @ kf.transpose(-1, -2)).tril_()  # [B, H, N, C, C], causal r <= s
    delta = (kf.transpose(-1, -2) @ vc) * e_ref  # [B, H, N, F, Ev]
    states = _state_scan(decay, delta)  # [B, H, N, F, Ev]
    return scores @ vc + qf @ (states * e_first_ref), scores, states, delta


class _FactorisedAttention(torch.autograd.Function):
    """`_factorised_forward` with an analytic backward (eager fast path).

    The gradient of decayed causal linear attention is the same chunked computation run against
    the output gradient do: intra-chunk with the same factor pair (D = tril(do v^T), dqf = D kf,
    dkf = D^T qf, dv = scores^T do), inter-chunk through the states and a reverse scan of the
    state gradients. With qf = qt e^(G - ref) and kf = kt e^(ref - G), the log-decay gradient is
    dqf qf - dkf kf per element, plus the sums onto ref (which is G_end / 2) and first. Only the
    inputs, the [C, C] scores and the small states are saved; the [C, F] factors are recomputed in
    backward, which replaces autograd's dozens of saved elementwise intermediates.
    """

    @staticmethod
    def forward(ctx, qc, kc, vc, local, first):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        o, scores, states, delta = _factorised_forward(qc, kc, vc, local, first)
        ctx.save_for_backward(qc, kc, vc, local, first, scores, states, delta)
        return o

    @staticmethod
    def backward(ctx, do):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        qc, kc, vc, local, first, scores, states, delta = ctx.saved_tensors
        eq, ek, qf, kf, e_first_ref, e_ref, decay = _factorised_terms(qc, kc, local, first)
        dscores = (do @ vc.transpose(-1, -2)).tril_()  # [B, H, N, C, C]
        # o_inter = (qf e_first_ref) S: gradient onto the entering states S_n.
        dstates = (qf.transpose(-1, -2) @ do) * e_first_ref  # [B, H, N, F, Ev]
        # Reverse scan: total_n = dS_n + decay_n total_{n+1}; S_{n+1} = decay_n S_n + delta_n.
        total = [dstates[:, :, -1]]
        for n in range(dstates.shape[2] - 2, -1, -1):
            total.append(dstates[:, :, n] + decay[:, :, n] * total[-1])
        total = torch.stack(total[::-1], dim=2)  # [B, H, N, F, Ev]
        ddelta = F.pad(total[:, :, 1:], (0, 0, 0, 0, 0, 1))  # [B, H, N, F, Ev], the last delta is unused
        ddecay = F.pad((total[:, :, 1:] * states[:, :, :-1]).sum(-1, keepdim=True), (0, 0, 0, 0, 0, 1))
        dk_inter = ddelta * e_ref  # delta = (kf e_ref)^T v
        dv = scores.transpose(-1, -2) @ do + kf @ dk_inter  # [B, H, N, C, Ev]
        dqf = dscores @ kf + do @ (states * e_first_ref).transpose(-1, -2)  # [B, H, N, C, F]
        dkf = dscores.transpose(-1, -2) @ qf + vc @ dk_inter.transpose(-1, -2)  # [B, H, N, C, F]
        dq_log = dqf * qf  # d/d(G_s - ref)
        dk_log = dkf * kf  # d/d(ref - G_r)
        # Sums over the chunk of the inter-chunk terms, taken on the small [F, Ev] side.
        d_first_ref = (dstates * states).sum(-1, keepdim=True)  # [B, H, N, F, 1]
        d_ref_k = (ddelta * delta).sum(-1, keepdim=True)
        d_decay = ddecay * decay
        dref = (dk_log.sum(3, keepdim=True) - dq_log.sum(3, keepdim=True)
                + (d_first_ref + d_ref_k + 2.0 * d_decay).transpose(-1, -2))  # [B, H, N, 1, F]
        dlocal = dq_log - dk_log
        dlocal[:, :, :, -1:] += 0.5 * dref
        dfirst = (d_first_ref + d_decay).transpose(-1, -2)  # [B, H, N, 1, F]
        return dqf * eq, dkf * ek, dv, dlocal, dfirst


def _chunked_factorised(
    qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, ell: torch.Tensor, chunk: int,
    local_first: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Decayed linear attention, intra-chunk weights factorised around the chunk's mid log decay.

    exp(G_s - G_r) = exp(G_s - ref) exp(ref - G_r), ref = G_end / 2: both factors lie within
    exp(+-spread / 2), safe in float32 while spread <= MAX_FACTORISED_SPREAD (caller checks).
    Inter-chunk terms use factors exp(first + G_s) and exp(G_end - G_r), always <= 1.
    local_first: `_local_log_decay(ell, chunk)` when the caller already has it.
    """
    T = qt.shape[2]
    qc, kc, vc = _chunk(qt, chunk), _chunk(kt, chunk), _chunk(v, chunk)  # [B, H, N, C, *]
    local, first = local_first or _local_log_decay(ell, chunk)  # [B, H, N, C, F], [B, H, N, 1, F]
    if torch.compiler.is_compiling():
        o = _factorised_forward(qc, kc, vc, local, first)[0]  # [B, H, N, C, Ev]
    else:
        o = _FactorisedAttention.apply(qc, kc, vc, local, first)  # [B, H, N, C, Ev]
    return rearrange(o, "b h n c v -> b h (n c) v")[:, :, :T]


def _chunked_pairwise(
    qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, ell: torch.Tensor, chunk: int,
) -> torch.Tensor:
    """Exact fallback: intra-chunk weights exp(G_s - G_r) materialised per pair, masked before exp.

    Every exponent is <= 0, so nothing can overflow whatever the decay; memory is [B, H, T, C, F].
    """
    T = qt.shape[2]
    qc, kc, vc = _chunk(qt, chunk), _chunk(kt, chunk), _chunk(v, chunk)  # [B, H, N, C, *]
    local, first = _local_log_decay(ell, chunk)  # [B, H, N, C, F], [B, H, N, 1, F]
    causal = _causal_mask(chunk, qt.device)[:, :, None]  # [C, C, 1]
    diff = (local[:, :, :, :, None] - local[:, :, :, None]).masked_fill(~causal, float("-inf"))  # [B, H, N, C, C, F]
    scores = torch.einsum("bhnsf,bhnrf,bhnsrf->bhnsr", qc, kc, torch.exp(diff))  # [B, H, N, C, C]
    end = local[:, :, :, -1:]
    delta = (kc * torch.exp(end - local)).transpose(-1, -2) @ vc  # [B, H, N, F, Ev]
    states = _state_scan(torch.exp(first + end).transpose(-1, -2), delta)  # [B, H, N, F, Ev]
    o = scores @ vc + (qc * torch.exp(first + local)) @ states  # [B, H, N, C, Ev]
    return rearrange(o, "b h n c v -> b h (n c) v")[:, :, :T]


def decayed_linear_attention_chunked(
    qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, ell: torch.Tensor | None, chunk_size: int = DEFAULT_CHUNK,
) -> torch.Tensor:
    """o_t = sum_{i<=t} sum_f qt[t,f] kt[i,f] exp(L[t,f] - L[i,f]) v_i with ell = L_t - L_{t-1} <= 0.

    qt, kt, ell: [B, H, T, F]; v: [B, H, T, Ev] -> [B, H, T, Ev]. ell None means no decay.
    The factorised intra-chunk form is used at the largest chunk size among chunk_size, chunk_size / 2,
    ... (down to FALLBACK_CHUNK) at which every chunk's decay spread is at most MAX_FACTORISED_SPREAD:
    halving the chunk roughly halves the spread, so trained gates that outgrow the default chunk stay on
    the fast form instead of falling off a cliff. Only when even FALLBACK_CHUNK is unsafe does the call
    run the exact pairwise form at FALLBACK_CHUNK. Every candidate is exact; the choice is a
    data-dependent branch: Python in eager mode, and under torch.compile one `torch.cond` between
    chunk_size and the pairwise form, so the compiled graph holds both without a graph break.
    """
    if ell is None:
        return _chunked_no_decay(qt, kt, v, chunk_size)
    fallback = min(chunk_size, FALLBACK_CHUNK)

    # torch.cond needs both branches to return the same dense layout (their paddings differ).
    def fast(qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, ell: torch.Tensor) -> torch.Tensor:
        return _chunked_factorised(qt, kt, v, ell, chunk_size).contiguous()

    def exact(qt: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, ell: torch.Tensor) -> torch.Tensor:
        return _chunked_pairwise(qt, kt, v, ell, fallback).contiguous()

    if torch.compiler.is_compiling():
        return torch.cond(factorised_is_safe(ell, chunk_size), fast, exact, (qt, kt, v, ell))
    for size in factorised_chunk_candidates(chunk_size):
        local_first = _local_log_decay(ell, size)
        if bool(_spread_is_safe(local_first[0])):
            return _chunked_factorised(qt, kt, v, ell, size, local_first=local_first)
    logger.debug("CAPS chunked attention: in-chunk decay spread > %s even at chunk %d, using the exact "
                 "pairwise form", MAX_FACTORISED_SPREAD, fallback)
    return exact(qt, kt, v, ell)


def factorised_chunk_candidates(chunk_size: int) -> list[int]:
    """chunk_size, chunk_size // 2, ... while >= FALLBACK_CHUNK (always at least chunk_size)."""
    sizes = [chunk_size]
    while sizes[-1] // 2 >= FALLBACK_CHUNK:
        sizes.append(sizes[-1] // 2)
    return sizes
