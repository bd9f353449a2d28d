"""Auto-Correlation (Wu et al., "Autoformer: Decomposition Transformers with Auto-Correlation for
Long-Term Series Forecasting", NeurIPS 2021, https://arxiv.org/abs/2106.13008, §3.2).

Per head and channel, the period-based dependency of a query series q and a key series k (length L) is

    R(τ) = Σ_t q_t · k_{(t − τ) mod L},    τ = 0 … L − 1,                       (paper eq. 5)

computed through the Wiener–Khinchin theorem as R = IFFT(FFT(q) · conj(FFT(k))) in O(L log L)
(eq. 8). Time-delay aggregation (eq. 6) keeps the k = ⌊c · ln L⌋ delays τ₁ … τ_k with the largest
R averaged over heads and channels (c = `factor`), softmax-normalises their R into weights, and sums
the values rolled by each delay:

    out_t = Σ_i softmax(R(τ₁), …, R(τ_k))_i · v_{(t + τ_i) mod L}.

Each operation has a direct, obviously-correct reference with the same signature beside the fast
path (`autocorrelation_reference`, `time_delay_aggregation_reference`); the tests swap them.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from layers.SelfAttention_Family import AttentionLayer, _no_destationary


def autocorrelation_fft(queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """R(τ) of eq. 5 by FFT: queries, keys `[B, L, H, E]` → `[B, H, E, L]` (index τ last).

    Computed in float32 at least: cuFFT has no bf16 transform and takes fp16 only for power-of-two
    lengths, so under AMP the inputs are promoted.
    """
    dtype = torch.promote_types(queries.dtype, torch.float32)
    length = queries.shape[1]
    q = torch.fft.rfft(queries.permute(0, 2, 3, 1).to(dtype), dim=-1)  # [B, H, E, L//2 + 1]
    k = torch.fft.rfft(keys.permute(0, 2, 3, 1).to(dtype), dim=-1)
    return torch.fft.irfft(q * torch.conj(k), n=length, dim=-1)  # [B, H, E, L]


def autocorrelation_reference(queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """R(τ) of eq. 5 as the literal sum over t of q_t · k_{(t − τ) mod L}, one τ at a time: O(L²)."""
    length = queries.shape[1]
    # torch.roll(keys, τ)[t] = keys[(t − τ) mod L].
    lags = [(queries * torch.roll(keys, shifts=tau, dims=1)).sum(dim=1) for tau in range(length)]  # L × [B, H, E]
    return torch.stack(lags, dim=-1)  # [B, H, E, L]


def num_delays(factor: int, length: int) -> int:
    """k = ⌊factor · ln L⌋ delays, kept within [1, L].

    TSLib uses ⌊factor · ln L⌋ as is; it is 0 at L = 1 (TSLib then fails in training) and exceeds L
    for a large factor on a short window (torch.topk then fails). Everywhere else the two agree.
    """
    return min(length, max(1, int(factor * math.log(length))))


def select_delays(corr: torch.Tensor, top_k: int, shared: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The top_k delays and their softmax weights from corr `[B, H, E, L]` → (`[B, k]` long, `[B, k]`).

    Delays are ranked by R averaged over heads and channels. With `shared` one set of delays, ranked
    on the batch mean, serves every sample (TSLib's training-time shortcut); otherwise each sample
    picks its own (the paper's definition, TSLib's inference path). The weights are each sample's own
    mean R at the chosen delays, softmax-normalised; they carry the gradient, the indices do not.
    """
    mean_corr = corr.mean(dim=(1, 2))  # [B, L]
    if shared:
        index = torch.topk(mean_corr.mean(dim=0), top_k, dim=-1).indices  # [k]
        delays = index.unsqueeze(0).expand(corr.shape[0], -1)  # [B, k]
    else:
        delays = torch.topk(mean_corr, top_k, dim=-1).indices  # [B, k]
    weights = torch.softmax(torch.gather(mean_corr, 1, delays), dim=-1)  # [B, k]
    return delays, weights


def time_delay_aggregation(values: torch.Tensor, delays: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ_i weights_i · v rolled back by delay_i: values `[B, H, E, L]`, delays/weights `[B, k]` → `[B, H, E, L]`.

    out[..., t] = Σ_i weights[:, i] · values[..., (t + delays[:, i]) mod L], gathered per sample
    (no matmul, so FLOP counters see none, as in TSLib).
    """
    b, h, e, length = values.shape
    steps = torch.arange(length, device=values.device)
    weights = weights.to(values.dtype)
    out = torch.zeros_like(values)
    for i in range(delays.shape[1]):
        index = (steps + delays[:, i : i + 1]) % length  # [B, L]
        pattern = torch.gather(values, -1, index[:, None, None, :].expand(b, h, e, length))  # [B, H, E, L]
        out = out + pattern * weights[:, i, None, None, None]
    return out


def time_delay_aggregation_reference(values: torch.Tensor, delays: torch.Tensor,
                                     weights: torch.Tensor) -> torch.Tensor:
    """`time_delay_aggregation` sample by sample and delay by delay with torch.roll."""
    out = []
    for b in range(values.shape[0]):
        terms = [weights[b, i] * torch.roll(values[b], shifts=-int(delays[b, i]), dims=-1)
                 for i in range(delays.shape[1])]
        out.append(torch.stack(terms).sum(dim=0))  # [H, E, L]
    return torch.stack(out)  # [B, H, E, L]


# Interchangeable (correlate, aggregate) pairs with one signature each.
IMPLEMENTATIONS = {
    "fft": (autocorrelation_fft, time_delay_aggregation),
    "reference": (autocorrelation_reference, time_delay_aggregation_reference),
}


class AutoCorrelation(nn.Module):
    """The Auto-Correlation mechanism: queries `[B, L, H, E]`, keys `[B, S, H, E]`, values `[B, S, H, D]`
    → (`[B, L, H, D]`, R as `[B, L, H, E]` when output_attention else None).

    Keys and values are cut to L steps, or zero-padded to L when S < L (decoder cross-correlation
    with a shorter encoder), so R is defined over the query's L delays. In training mode the delays
    are shared across the batch (`select_delays(shared=True)`, TSLib's speed-up); in eval mode each
    sample picks its own.

    `mask_flag` and `scale` are accepted for TSLib's signature and unused (Auto-Correlation has no
    mask and no logit scale). The `dropout` module mirrors TSLib's module tree, which builds it but
    never applies it; applying it would change TSLib's training behaviour, so it is not applied here.

    `implementation` picks the path explicitly: "fft" (default) or "reference" (the O(L²) direct sums,
    for tests).
    """

    def __init__(self, mask_flag: bool = True, factor: int = 1, scale: float | None = None,
                 attention_dropout: float = 0.1, output_attention: bool = False, *,
                 implementation: str = "fft") -> None:
        super().__init__()
        if implementation not in IMPLEMENTATIONS:
            raise ValueError(f"implementation {implementation!r} is not one of {', '.join(IMPLEMENTATIONS)}")
        self.mask_flag = mask_flag
        self.factor = factor
        self.scale = scale
        self.output_attention = output_attention
        self.dropout = nn.Dropout(attention_dropout)
        self.implementation = implementation

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`tau`/`delta` (de-stationary factors) are accepted only as None, as by FullAttention."""
        _no_destationary("AutoCorrelation", tau, delta)
        length = queries.shape[1]
        short = length - keys.shape[1]
        if short > 0:
            keys = torch.cat([keys, keys.new_zeros(keys.shape[0], short, *keys.shape[2:])], dim=1)  # [B, L, H, E]
            values = torch.cat([values, values.new_zeros(values.shape[0], short, *values.shape[2:])], dim=1)
        else:
            keys, values = keys[:, :length], values[:, :length]  # [B, L, H, ·]
        correlate, aggregate = IMPLEMENTATIONS[self.implementation]
        corr = correlate(queries, keys)  # [B, H, E, L]
        delays, weights = select_delays(corr, num_delays(self.factor, length), shared=self.training)
        out = aggregate(values.permute(0, 2, 3, 1), delays, weights)  # [B, H, D, L]
        out = out.permute(0, 3, 1, 2)  # [B, L, H, D]
        return out, (corr.permute(0, 3, 1, 2) if self.output_attention else None)


class AutoCorrelationLayer(AttentionLayer):
    """Multi-head wrapper of `AutoCorrelation`: `AttentionLayer` (q/k/v projections with bias into
    `n_heads` heads, output Linear) with the inner module named `inner_correlation`, as TSLib names it:
    queries `[B, L, D]`, keys/values `[B, S, D]` → (`[B, L, D]`, R or None)."""

    inner_name = "inner_correlation"

    def __init__(self, correlation: nn.Module, d_model: int, n_heads: int,
                 d_keys: int | None = None, d_values: int | None = None) -> None:
        super().__init__(correlation, d_model, n_heads, d_keys, d_values)

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """As `AttentionLayer.forward`, with TSLib's optional `attn_mask`."""
        return super().forward(queries, keys, values, attn_mask, tau, delta)
