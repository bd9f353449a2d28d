"""Shared maths of the linear CAPS kernels: each path as features of one decayed linear attention.

    o[t] = sum_{i<=t} sum_f qt[t,f] kt[i,f] exp(L[t,f] - L[i,f]) v[i],   L non-increasing in t

`_path_features` builds qt, kt and the per-step log decay ell = L[t] - L[t-1] of every selected path
(layers/caps/README.md, section 1), path 1's normaliser by a chunked decayed sum (`_riemann_normaliser`) or a
two-level log-cum-sum-exp scan. The chunk helpers here (`_chunk`, `_local_log_decay`, the spread rule of
section 3) are shared with the chunked primitive in `decayed.py`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from einops import rearrange

from layers.caps.options import DEFAULT_CHUNK

# Largest in-chunk spread of the log decay for which the factorised intra-chunk product is used.
# With the reference at the middle of the chunk both factors lie in [exp(-40), exp(40)], far inside
# float32's normal range [exp(-87), exp(88)], leaving ~exp(45) of head-room for |q|, |k|, |v|.
# Chunks beyond it switch the whole call (eager: the whole block of sequences) to a smaller chunk or
# the exact pairwise form (layers/caps/README.md, section 3).
MAX_FACTORISED_SPREAD = 80.0


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float64 stays float64; everything else (bf16/fp16 under autocast too) is computed in float32."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _chunk(x: torch.Tensor, chunk: int) -> torch.Tensor:
    """[B, H, T, X] -> [B, H, N, C, X], zero-padded at the end (causal: padding never reaches t < T)."""
    pad = (-x.shape[2]) % chunk
    return rearrange(F.pad(x, (0, 0, 0, pad)), "b h (n c) x -> b h n c x", c=chunk)


def _local_log_decay(ell: torch.Tensor, chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per chunk: G[s] = sum_{start < j <= s} ell_j (0 at the chunk start) and ell_start.

    Re-basing inside each chunk keeps |G| bounded by the in-chunk decay: a global cumulative sum
    would lose float32 precision through cancellation at long T. [B, H, N, C, F], [B, H, N, 1, F].
    """
    ell = _chunk(ell, chunk)  # [B, H, N, C, F]
    local = F.pad(torch.cumsum(ell[:, :, :, 1:], dim=3), (0, 0, 1, 0))
    return local, ell[:, :, :, :1]


def _spread_is_safe(local: torch.Tensor) -> torch.Tensor:
    """0-dim bool: every chunk's log-decay spread -G_end is <= MAX_FACTORISED_SPREAD (local [B, H, N, C, F])."""
    return (-local[:, :, :, -1]).amax() <= MAX_FACTORISED_SPREAD


def factorised_is_safe(ell: torch.Tensor, chunk_size: int) -> torch.Tensor:
    """0-dim bool: every chunk's log-decay spread is <= MAX_FACTORISED_SPREAD (ell [B, H, T, F])."""
    return _spread_is_safe(_local_log_decay(ell, chunk_size)[0])


def _two_level_logcumsumexp(x: torch.Tensor, block: int = 64) -> torch.Tensor:
    """logcumsumexp over dim 2 of [B, H, T, E] as a scan within blocks plus a scan over block totals.

    A single log-add-exp chain over T steps accumulates one rounding per step (float32 drift past
    1e-5 at T ~ 4096); two levels shorten the chain to block + T / block steps, with no float64 pass.
    """
    T = x.shape[2]
    xb = rearrange(F.pad(x, (0, 0, 0, (-T) % block)), "b h (n c) e -> b h n c e", c=block)
    local = torch.logcumsumexp(xb, dim=3)  # [B, H, N, C, E]; zero padding only reaches padded rows
    carry = torch.logcumsumexp(local[:, :, :, -1], dim=2)  # [B, H, N, E]
    prev = F.pad(carry[:, :, :-1], (0, 0, 1, 0), value=float("-inf"))[:, :, :, None]  # [B, H, N, 1, E]
    return rearrange(torch.logaddexp(local, prev), "b h n c e -> b h (n c) e")[:, :, :T]


def _riemann_normaliser(
    w: torch.Tensor, ell: torch.Tensor, chunk: int, local_first: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Z_t = sum_{i<=t} w_i exp(L_t - L_i) for w = exp(pt - m) <= 1, L = -m; w, ell [B, H, T, E].

    Z_t = sum_{i<=t} exp(pt_i - m_t) >= 1 is path 1's normaliser (exp(m - lse) = 1 / Z), itself a
    decayed cumulative sum with path 1's log decay: per chunk, the factorised in-chunk sum
    exp(G_s - ref) cumsum_r(w_r exp(ref - G_r)) (factors within exp(+-spread / 2): the caller checks
    the spread as for the kernel), plus the carry Z_in exp(first + G_s) through a scan over chunks.
    A rounding chain of C + T / C steps, like the two-level scan it replaces on this path.
    local_first: `_local_log_decay(ell, chunk)` when the caller already has it.
    """
    T = w.shape[2]
    local, first = local_first or _local_log_decay(ell, chunk)  # [B, H, N, C, E], [B, H, N, 1, E]
    ref = 0.5 * local[:, :, :, -1:]
    inner = torch.exp(local - ref) * torch.cumsum(_chunk(w, chunk) * torch.exp(ref - local), dim=3)
    into = torch.exp(first + local[:, :, :, -1:])  # [B, H, N, 1, E]: decay across chunk n
    carry = [torch.zeros_like(inner[:, :, 0, -1])]  # Z entering each chunk, [B, H, E]
    for n in range(inner.shape[2] - 1):
        carry.append(into[:, :, n, 0] * carry[-1] + inner[:, :, n, -1])
    z = inner + torch.exp(first + local) * torch.stack(carry, dim=2)[:, :, :, None]  # [B, H, N, C, E]
    return rearrange(z, "b h n c e -> b h (n c) e")[:, :, :T]


def _path_features(
    q: torch.Tensor, k: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], chunk_size: int = DEFAULT_CHUNK, branch_free: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """qt, kt [B, H, T, F] and log decay per step ell = L[t] - L[t-1] <= 0 (None if no path decays).

    Path 1: L = -cummax(pt), qt = q exp(m - lse), kt = k exp(pt - m) with pt = p + log clock,
            m = cummax(pt), lse = logcumsumexp(pt): exp(pt_i - lse_t) split into factors <= 1.
            exp(m - lse) = 1 / Z comes from `_riemann_normaliser` at `chunk_size` when its spread
            rule holds (eager mode), else from the two-level log-cum-sum-exp scan. branch_free: always
            the scan, so no data-dependent branch reads the device (no host sync; as under torch.compile).
    Path 2: L = -cumsum(softplus(g) clock), qt = q, kt = k.
    Path 3: L = 0, qt = q / cumsum(clock), kt = k clock.
    """
    q, k, p, g = (rearrange(x, "b t h e -> b h t e") for x in (q, k, p, g))  # [B, H, T, E]
    clock = rearrange(clock, "b t h -> b h t")[..., None]  # [B, H, T, 1]
    qs, ks, ells = [], [], []
    zeros = torch.zeros_like(q)
    if not paths:
        return q, k, None
    for path in paths:
        if path == 1:
            pt = p + torch.log(clock)
            m = torch.cummax(pt, dim=2).values
            w = torch.exp(pt - m)
            ell = F.pad(m[:, :, :-1] - m[:, :, 1:], (0, 0, 1, 0))
            local_first = None if branch_free or torch.compiler.is_compiling() else _local_log_decay(ell, chunk_size)
            if local_first is not None and bool(_spread_is_safe(local_first[0])):
                qs.append(q / _riemann_normaliser(w, ell, chunk_size, local_first))
            else:
                qs.append(q * torch.exp(m - _two_level_logcumsumexp(pt)))
            ks.append(k * w)
            ells.append(ell)
        elif path == 2:
            qs.append(q)
            ks.append(k)
            ells.append(-F.softplus(g) * clock)
        else:
            # float64 prefix sum of the clock ([B, H, T, 1], cheap): a float32 sum over T steps drifts.
            total = torch.cumsum(clock.double(), dim=2).to(q.dtype)
            qs.append(q / total)
            ks.append(k * clock)
            ells.append(zeros)
    decays = any(path in (1, 2) for path in paths)
    ell = torch.cat(ells, dim=-1) if decays else None  # [B, H, T, F]
    return torch.cat(qs, dim=-1), torch.cat(ks, dim=-1), ell
