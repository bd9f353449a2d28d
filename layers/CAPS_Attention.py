"""CAPS attention (Clock-weighted Aggregation with Prefix products and SO(2) rotations).

Implements the attention layer of "CAPS" (paper, section Methodology, Eqs. path1-path3 and
additive composition) as the module `CAPSAttention` over the functional kernel `caps_attention`.

For every batch b and head h, with everything causal (i <= t):
    P1[t,i,e] = exp(p[i,e]) clock[i] / sum_{j<=t} exp(p[j,e]) clock[j]        (Riemann softmax)
    P2[t,i,e] = exp(-sum_{j=i+1..t} softplus(g[j,e]) clock[j])                (prefix-product decay)
    P3[t,i]   = clock[i] / sum_{j<=t} clock[j]                                (Clock baseline)
    s[t,i]    = sum_e q[t,e] k[i,e] sum_{paths} P[t,i,e]     (paths="" : plain q.k, LinAttn)
    linear:  o[t] = sum_{i<=t} s[t,i] v[i]
    softmax: o[t] = sum_{i<=t} softmax_i(s[t,i] / sqrt(max(1, n_paths) E)) v[i]
    normalised: s from phi(q), phi(k), phi = elu + 1 (Katharopoulos et al. 2020), o[t] = sum_i s[t,i] v[i] /
              sum_i s[t,i], RoPE on the numerator's features only (`normalise_linear`)
In this layer the official code's arithmetic differs in path 1's max, path 2's decay and the RoPE layout, each
with its own switch (`CAPSAttention`; CAPS_Attention.md, "Hazards and switches").

Every linear variant is one primitive, decayed causal linear attention on the paths
concatenated along the feature axis (width F = n_paths E):
    o[t] = sum_{i<=t} sum_f qt[t,f] kt[i,f] exp(L[t,f] - L[i,f]) v[i],   L non-increasing in t.
The kernels live in the package `layers/caps/` (one file each: naive, recurrent, chunked, native, fla, and
`dispatch.caps_attention` choosing among them); the derivation of qt, kt, L per path, the chunked
algorithm, the float32 safety rule of its intra-chunk factorisation and the exact fallback are in
`layers/caps/README.md`. This file keeps the layer and re-exports every public name of the package, so
`from layers.CAPS_Attention import X` works for each of them (a setting such as `FLA_IN_AUTO` or
`BLOCK_ELEMENTS` is read where it lives: change it in its home module).

This file and `layers/caps/` import only torch, einops and the standard library, so that they can be
dropped into a stock Time-Series-Library checkout next to `models/CAPS.py`; where the native CPU
kernel builds (`layers/caps/native.py` and its C++ source), `impl="auto"` runs it on the CPU, otherwise
the chunked one. On CUDA, `impl="fla"` hands the same primitive to flash-linear-attention's Triton kernel
`chunk_gla` (`pip install fla-core`, imported on first use; without it the chunked kernel runs); "auto"
keeps the chunked kernel on CUDA until `FLA_IN_AUTO` says otherwise.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from layers.caps.chunked import BLOCK_ELEMENTS, caps_attention_chunked, rows_per_block
from layers.caps.decayed import FALLBACK_CHUNK, decayed_linear_attention_chunked, factorised_chunk_candidates
from layers.caps.dispatch import (
    CAPS_KERNELS,
    FLA_IN_AUTO,
    CAPSKernel,
    caps_attention,
    caps_attention_normalised,
    dispatch_kernel,
    logger,
    native_kernel,
    native_unavailable_reason,
    native_width_problem,
    prepare_kernels,
    prepare_native_kernel,
    resolve_impl,
)
from layers.caps.fla import (
    FLA_AUTOTUNE_ENV,
    FLA_GLA_MODULES,
    FLA_MIN_WIDTH,
    FLA_PACKAGE,
    caps_attention_fla,
    fla_chunk_gla,
    fla_unavailable_reason,
    gated_linear_attention_recurrent,
    limit_fla_autotuning,
    triton_autotuners,
)
from layers.caps.maths import MAX_FACTORISED_SPREAD, factorised_is_safe
from layers.caps.naive import NAIVE_BLOCK_ELEMENTS, caps_attention_naive, path_weights
from layers.caps.native import path_mask, rope_tables
from layers.caps.normalised import elu_feature_map, normalise_linear
from layers.caps.official import official_features, rope_official
from layers.caps.options import (
    ATTN_CHOICES,
    CAPS_OPTIONS,
    DEFAULT_CHUNK,
    GPU_CHUNK,
    IMPL_CHOICES,
    LAYER_ATTN_CHOICES,
    NORMALISED_ATTN,
    NUMERICS_CHOICES,
    PATH1_MAX_CHOICES,
    PATH2_DECAY_CHOICES,
    PATHS_CHOICES,
    ROPE_CHOICES,
    ROPE_LAYOUT_CHOICES,
    CAPSOption,
    _check_choice,
    _check_chunk,
    default_chunk,
    follow_numerics,
    parse_paths,
    resolve_attn_impl,
)
from layers.caps.projection import normed_projections_tiled
from layers.caps.recomputed import recomputed_native_attention
from layers.caps.recurrent import CAPSState, caps_attention_recurrent, caps_attention_step
from layers.caps.residual_linear import residual_linear_tiled
from layers.caps.rope import rope_angles, rope_frequencies, rope_rotate

__all__ = [
    "ATTN_CHOICES", "BLOCK_ELEMENTS", "CAPS_KERNELS", "CAPS_OPTIONS", "CLOCK_EPS", "DEFAULT_CHUNK", "FALLBACK_CHUNK",
    "FLA_AUTOTUNE_ENV", "FLA_GLA_MODULES", "FLA_IN_AUTO", "FLA_MIN_WIDTH", "FLA_PACKAGE", "GEMM_WIDTH_MULTIPLE",
    "GPU_CHUNK", "IMPL_CHOICES", "LAYER_ATTN_CHOICES", "MAX_FACTORISED_SPREAD", "NAIVE_BLOCK_ELEMENTS",
    "NORMALISED_ATTN", "NUMERICS_CHOICES", "PATH1_MAX_CHOICES", "PATH2_DECAY_CHOICES", "PATHS_CHOICES",
    "ROPE_CHOICES", "ROPE_LAYOUT_CHOICES", "CAPSAttention", "CAPSKernel", "CAPSOption", "CAPSState",
    "caps_attention", "caps_attention_chunked", "caps_attention_fla", "caps_attention_naive",
    "caps_attention_normalised", "caps_attention_recurrent", "caps_attention_step", "decayed_linear_attention_chunked",
    "default_chunk", "dispatch_kernel", "elu_feature_map", "factorised_chunk_candidates", "factorised_is_safe",
    "fla_chunk_gla", "fla_unavailable_reason", "follow_numerics", "gated_linear_attention_recurrent",
    "limit_fla_autotuning", "logger", "native_kernel", "native_unavailable_reason", "native_width_problem",
    "normalise_linear", "official_features", "parse_paths", "path_weights", "prepare_kernels", "prepare_native_kernel",
    "resolve_attn_impl", "resolve_impl", "rope_angles", "rope_frequencies", "rope_official", "rope_rotate",
    "rows_per_block", "triton_autotuners",
]

CLOCK_EPS = 1e-6
# The fused input projection's output width is padded to a multiple of this (CAPSAttention.forward).
GEMM_WIDTH_MULTIPLE = 8


class CAPSAttention(nn.Module):
    """CAPS attention layer: x [B, T, D] -> [B, T, D].

    q, k, v, p, g = W x (bias-free, D x D, viewed [B, T, H, E]); clock = softplus(W_c x) + 1e-6
    ([B, T, H]); q, k rotated by RoPE; o = caps_attention(...); out = Dropout(W_o o) with W_o
    named `c_proj` (GPT-2 style scaled init by name in the model).

    numerics="paper": exact kernel (p~ = W_p x + log clock, g~ = -softplus(W_g x) clock inside it).
    numerics="official": the official code's arithmetic and RoPE layout, evaluated as plain causal
    linear (or softmax) attention on the explicit concatenated features.
    path1_max, path2_decay, rope_layout: one switch per official difference ("auto" follows numerics,
    `follow_numerics`). Paths switched to official run as explicit features through the no-decay kernel,
    the rest through `caps_attention`; their outputs add (the scores are additive), which softmax forbids,
    so softmax takes all paths one way or the other. Path 3 has no official difference and joins the
    official features only when both path switches are official (the bundle, bit for bit).
    attn="normalised": `normalise_linear` around this evaluation.
    rope: "learned" (nn.Parameter, init 10000^(-2j/E)), "fixed" (buffer) or "none".
    paths: as `parse_paths` (string or parsed tuple), parsed once here.
    chunk_size: None = `default_chunk` of the input's device.
    impl: as `caps_attention`; validated here ("softmax => naive", and impl="native" with heads wider than
    the native kernel's MAX_HEAD_DIM is a ValueError, while "auto" then runs chunked).
    Every option is validated here, once: forward calls `dispatch_kernel`, which checks none of them and
    decides only what depends on the input (the kernel for its device, the dtype it is computed in).
    Defaults as CAPS_OPTIONS.
    """

    def __init__(
        self, d_model: int, n_heads: int, attn: str = "linear", paths: str | tuple[int, ...] = "123",
        rope: str = "learned", numerics: str = "paper", chunk_size: int | None = None, dropout: float = 0.0,
        impl: str = "auto", path1_max: str = "auto", path2_decay: str = "auto", rope_layout: str = "auto",
    ) -> None:
        super().__init__()
        if n_heads < 1 or d_model % n_heads != 0:
            raise ValueError(f"--d_model {d_model} is not divisible by --n_heads {n_heads}")
        head_dim = d_model // n_heads
        _check_choice("--caps_rope", rope, ROPE_CHOICES)
        _check_choice("--caps_numerics", numerics, NUMERICS_CHOICES)
        _check_choice("--caps_attn", attn, LAYER_ATTN_CHOICES)
        self.path1_max = follow_numerics("--caps_path1_max", path1_max, PATH1_MAX_CHOICES, numerics)
        self.path2_decay = follow_numerics("--caps_path2_decay", path2_decay, PATH2_DECAY_CHOICES, numerics)
        self.rope_layout = follow_numerics("--caps_rope_layout", rope_layout, ROPE_LAYOUT_CHOICES, numerics)
        if rope != "none" and head_dim % 2 != 0:
            raise ValueError(
                f"--caps_rope {rope} needs an even head width, got d_model / n_heads = {head_dim}; "
                "change --d_model or --n_heads, or pass --caps_rope none"
            )
        _check_chunk(chunk_size)
        impl = resolve_attn_impl("linear" if attn == NORMALISED_ATTN else attn, impl)
        self.paths = parse_paths(paths)
        official = {1: self.path1_max == "global", 2: self.path2_decay == "official"}
        official[3] = official[1] and official[2]
        self.official_paths = tuple(i for i in self.paths if official[i])
        self.paper_paths = tuple(i for i in self.paths if not official[i])
        if attn == "softmax" and self.official_paths and self.paper_paths:
            raise ValueError(f"--caps_attn softmax needs the selected paths all paper or all official, got "
                             f"--caps_path1_max {self.path1_max} --caps_path2_decay {self.path2_decay} with "
                             "--caps_paths " + "".join(map(str, self.paths)) + "; set both switches alike "
                             "(or use --caps_numerics) or use --caps_attn linear")
        prepare_kernels(impl, head_dim)
        self.n_heads, self.head_dim = n_heads, head_dim
        self.attn, self.rope, self.numerics = attn, rope, numerics
        self.chunk_size, self.impl = chunk_size, impl
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.p_proj = nn.Linear(d_model, d_model, bias=False)
        self.gate_proj = nn.Linear(d_model, d_model, bias=False)
        self.clock_proj = nn.Linear(d_model, n_heads, bias=False)
        self.c_proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)
        if rope == "learned":
            self.rope_freq = nn.Parameter(rope_frequencies(head_dim))
        elif rope == "fixed":
            self.register_buffer("rope_freq", rope_frequencies(head_dim), persistent=False)

    def extra_repr(self) -> str:
        paths = "".join(str(i) for i in self.paths) or "none"
        return (f"heads={self.n_heads}, head_dim={self.head_dim}, attn={self.attn}, paths={paths}, "
                f"rope={self.rope}, numerics={self.numerics}, impl={self.impl}, chunk={self.chunk_size or 'auto'}, "
                f"path1_max={self.path1_max}, path2_decay={self.path2_decay}, rope_layout={self.rope_layout}")

    def _projections(self) -> tuple[nn.Linear, ...]:
        """The six input projections in the order of their stacked weight: q, k, v, p, gate, clock."""
        return (self.q_proj, self.k_proj, self.v_proj, self.p_proj, self.gate_proj, self.clock_proj)

    def _project(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """x [B, T, D] -> q, k, v, p, g [B, T, H, E] (views; q, k unrotated) and clock [B, T, H]."""
        # One matmul for the six input projections (forward and backward) instead of six passes over x.
        weight, widths = self._stacked_weight(x.shape[-1])
        *qkvpg, c = F.linear(x, weight).split(list(widths), dim=-1)[:6]  # the padding's outputs dropped
        q, k, v, p, g = (x.unflatten(-1, (self.n_heads, self.head_dim)) for x in qkvpg)  # [B, T, H, E] views
        # contiguous first: torch's elementwise kernels on this narrow strided view run ~10x slower.
        clock = F.softplus(c.contiguous()) + CLOCK_EPS  # [B, T, H]
        return q, k, v, p, g, clock

    def _stacked_weight(self, D: int) -> tuple[torch.Tensor, tuple[int, ...]]:
        """The six projections' weights stacked ([5 D + H, D]) and zero-padded to a multiple of GEMM_WIDTH_MULTIPLE
        rows, and the widths of its pieces (q, k, v, p, g, clock, padding). MKL's CPU GEMM is slower on other output
        widths (5 D + H = 164 at the recipe's D = 32, H = 4); the padding's outputs are dropped."""
        weight = torch.cat([proj.weight for proj in self._projections()])
        pad = -weight.shape[0] % GEMM_WIDTH_MULTIPLE
        return F.pad(weight, (0, 0, 0, pad)), (D,) * 5 + (self.n_heads,) + ((pad,) if pad else ())

    def _project_normed(self, x: torch.Tensor, norm_weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, ...]:
        """As `_project(RMSNorm(x))` with the norm's weight and eps, by `normed_projections_tiled`: the same
        values, each piece its own contiguous tensor, only x kept for backward."""
        weight, widths = self._stacked_weight(x.shape[-1])
        *qkvpg, c = normed_projections_tiled(x, norm_weight, eps, weight, widths)[:6]
        q, k, v, p, g = (piece.unflatten(-1, (self.n_heads, self.head_dim)) for piece in qkvpg)  # [B, T, H, E]
        return q, k, v, p, g, F.softplus(c) + CLOCK_EPS

    def pre_norm_residual(self, x: torch.Tensor, norm_weight: torch.Tensor, eps: float) -> torch.Tensor:
        """x + forward(RMSNorm(x)) with the norm's weight and eps: the attention half of a pre-norm block,
        x [B, T, D] -> [B, T, D], outside autocast only (the caller's check). The norm is folded into the input
        projections (`layers.caps.projection`); where the native CPU kernel runs the paper's linear paths,
        projections and kernel are one function that recomputes the projections in backward
        (`layers.caps.recomputed`, keeping x instead of five pieces); without active dropout, c_proj and the
        residual add run in tiles (`layers.caps.residual_linear`)."""
        if self._recomputes_on_native(x):
            o = self._recomputed_attention(x, norm_weight, eps)
        else:
            o = self._attention_output(*self._project_normed(x, norm_weight, eps))
        o = rearrange(o, "b t h e -> b t (h e)")
        if self.training and self.dropout.p > 0:
            return x + self.dropout(self.c_proj(o))
        return residual_linear_tiled(x, o, self.c_proj.weight)

    def _recomputed_attention(self, x: torch.Tensor, norm_weight: torch.Tensor, eps: float) -> torch.Tensor:
        """o [B, T, H, E] of the paper's linear paths from the block input x by `recomputed_native_attention`."""
        weight, widths = self._stacked_weight(x.shape[-1])
        cos, sin = rope_tables(x.shape[1], self.rope_freq if self.rope != "none" else None, x.dtype)
        return recomputed_native_attention(x.contiguous(), norm_weight, eps, weight, widths, self.n_heads, CLOCK_EPS,
                                           cos, sin, path_mask(self.paper_paths))

    def _recomputes_on_native(self, x: torch.Tensor) -> bool:
        """Whether `pre_norm_residual` takes the recomputing native path: the paper's linear attention with at
        least one path, float32/float64 input, and `resolve_impl` choosing the native kernel for it."""
        if self.attn != "linear" or self.official_paths or not self.paper_paths or self.rope_layout == "official":
            return False
        if x.dtype not in (torch.float32, torch.float64) or x.device.type != "cpu":
            return False
        return resolve_impl(self.impl, x.device, head_dim=self.head_dim) == "native"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [B, T, D] -> [B, T, D]."""
        o = self._attention_output(*self._project(x))
        return self.dropout(self.c_proj(rearrange(o, "b t h e -> b t (h e)")))  # [B, T, D]

    def _attention_output(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
                          clock: torch.Tensor) -> torch.Tensor:
        """Attention over projected q, k, v, p, g [B, T, H, E] and clock [B, T, H] -> o [B, T, H, Ev] (before c_proj)."""
        rope_freq = self.rope_freq if self.rope != "none" else None
        if self.attn == NORMALISED_ATTN:
            def attend(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, omega: torch.Tensor | None) -> torch.Tensor:
                return self._attend(a, b, c, p, g, clock, "linear", omega)

            return normalise_linear(attend, q, k, v, rope_freq)
        return self._attend(q, k, v, p, g, clock, self.attn, rope_freq)

    def _attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
        clock: torch.Tensor, attn: str, rope_freq: torch.Tensor | None,
    ) -> torch.Tensor:
        """Linear or softmax attention of unrotated q, k [B, T, H, E] under the layer's switches -> [B, T, H, Ev]."""
        if rope_freq is not None and self.rope_layout == "official":
            q, k = rope_official(q, rope_freq), rope_official(k, rope_freq)
            rope_freq = None
        # attn, the paths, impl and chunk_size were validated in __init__: dispatch_kernel checks none of them.
        if not self.official_paths:
            # RoPE is applied by the kernel call (inside the native kernel when that runs).
            return dispatch_kernel(q, k, v, p, g, clock, attn, self.paper_paths, self.impl, self.chunk_size, rope_freq)
        if rope_freq is not None:
            q, k = rope_rotate(q, rope_freq), rope_rotate(k, rope_freq)
        q_cat, k_cat = official_features(q, k, p, g, clock, self.official_paths)  # [B, T, H, n E]
        o = dispatch_kernel(q_cat, k_cat, v, q_cat, q_cat, clock, attn, (), self.impl, self.chunk_size, None)
        if self.paper_paths:
            o = o + dispatch_kernel(q, k, v, p, g, clock, attn, self.paper_paths, self.impl, self.chunk_size, None)
        return o

    def attention_inputs(self, x: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """The kernel inputs of `forward(x)` under numerics="paper", keyed by `caps_attention`'s argument
        names: q, k, v, p, g [B, T, H, E] (q, k unrotated), clock [B, T, H] and rope_freq [E/2] or None.

        `forward(x)` is Dropout(c_proj(caps_attention(**inputs, attn, paths, impl, chunk_size)) over heads);
        `python -m explain` calls the kernel on these inputs one path at a time (the paths add up), and a test
        pins this method to `forward`. The official arithmetic feeds the kernel concatenated features
        instead, and the normalised attention two kernel calls, so they raise ValueError.
        """
        if self.official_paths or self.rope_layout == "official" or self.attn == NORMALISED_ATTN:
            raise ValueError("the official arithmetic (--caps_numerics official or its switches) and --caps_attn "
                             "normalised feed the kernel other inputs than the paper's per-path ones; use the "
                             "paper's numerics and --caps_attn linear")
        q, k, v, p, g, clock = self._project(x)
        rope_freq = self.rope_freq if self.rope != "none" else None
        return {"q": q, "k": k, "v": v, "p": p, "g": g, "clock": clock, "rope_freq": rope_freq}
