"""CAPS attention (Clock-weighted Aggregation with Prefix products and SO(2) rotations).

Implements the attention layer of "CAPS" (paper, section Methodology, Eqs. path1-path3 and
additive composition) as a functional kernel `caps_attention` and the module `CAPSAttention`.

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
The derivation of qt, kt, L per path, the chunked algorithm, the float32 safety rule of its
intra-chunk factorisation and the exact fallback are in `layers/CAPS_Attention.md`.

This file imports only torch, einops and the standard library so that it can be dropped into
a stock Time-Series-Library checkout next to `models/CAPS.py`; if `layers/CAPS_cpu_kernel.py` (and
its C++ source) sit beside it, `impl="auto"` runs that native CPU kernel, otherwise the chunked one.
On CUDA, `impl="fla"` hands the same primitive to flash-linear-attention's Triton kernel `chunk_gla`
(`pip install fla-core`, imported on first use; without it the chunked kernel runs); "auto" keeps the
chunked kernel on CUDA until `FLA_IN_AUTO` says otherwise.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

try:  # optional native CPU kernel (two more files); without it, "auto" means "chunked"
    from layers import CAPS_cpu_kernel as native_kernel
except ImportError:
    native_kernel = None

logger = logging.getLogger(__name__)

CLOCK_EPS = 1e-6

# Largest in-chunk spread of the log decay for which the factorised intra-chunk product is used.
# With the reference at the middle of the chunk both factors lie in [exp(-40), exp(40)], far inside
# float32's normal range [exp(-87), exp(88)], leaving ~exp(45) of head-room for |q|, |k|, |v|.
# Chunks beyond it switch the whole call (eager: the whole block of sequences) to a smaller chunk or
# the exact pairwise form (CAPS_Attention.md, section 3).
MAX_FACTORISED_SPREAD = 80.0
# Default chunk length of the chunked kernel. Its cost is O(T C F) in [C, C] score matmuls plus
# O(T F Ev / C) in states; on CPU at the paper's widths (E = 8, F <= 24) 32 is the fastest measured
# (benchmarks/README.md) and halves the in-chunk decay spread of 64. On a GPU the kernel is launch-bound
# and fewer, larger chunks win: 64 measured 1.6-1.9x faster than 32 on an H100 (T = 816 to 16 384).
DEFAULT_CHUNK = 32
GPU_CHUNK = 64
# Chunk length of the exact pairwise fallback: its [C, C, F] decay tensor makes memory grow with C.
FALLBACK_CHUNK = 16
# Elements of one [B, H, rows, T, E] block in the naive reference (bounds its forward memory).
NAIVE_BLOCK_ELEMENTS = 1 << 23
# Elements of one [rows, H, T, F] feature tensor per block of the eager chunked kernel (4 MiB in
# float32): small enough for the allocator to reuse and for the caches to hold a block's working set.
BLOCK_ELEMENTS = 1 << 20
# The fused input projection's output width is padded to a multiple of this (CAPSAttention.forward).
GEMM_WIDTH_MULTIPLE = 8


# The CAPS options: each choice list, default and help line lives here once; models/CAPS.py reads them
# with getattr(configs, name, default) and exp/arguments.py builds the run.py flags from CAPS_OPTIONS.
ATTN_CHOICES = ("linear", "softmax")
# Path subsets as run.py spells them ("none": plain causal linear attention, LinAttn).
PATHS_CHOICES = ("123", "12", "13", "23", "1", "2", "3", "none")
ROPE_CHOICES = ("learned", "fixed", "none")
NUMERICS_CHOICES = ("paper", "official")
# Normalised linear attention (Katharopoulos et al. 2020): two linear calls, a numerator and a normaliser.
NORMALISED_ATTN = "normalised"
# --caps_attn as run.py spells it: the kernels' ATTN_CHOICES plus the normalised form built on them.
LAYER_ATTN_CHOICES = (*ATTN_CHOICES, NORMALISED_ATTN)
# One switch per difference of the official arithmetic (CAPS_Attention.md, "Hazards and switches"); "auto"
# follows --caps_numerics, so --caps_numerics official is exactly every switch set to its official value.
PATH1_MAX_CHOICES = ("auto", "running", "global")
PATH2_DECAY_CHOICES = ("auto", "exact", "official")
ROPE_LAYOUT_CHOICES = ("auto", "paper", "official")
# The kernels of CAPS_KERNELS, in that order, after "auto" (native on the CPU when it builds; fla on CUDA
# when FLA_IN_AUTO and fla-core imports; else chunked).
IMPL_CHOICES = ("auto", "naive", "recurrent", "chunked", "native", "fla")
# The optional package whose Triton kernel `fla.ops.gla.chunk_gla` runs impl="fla" (CUDA only).
FLA_PACKAGE = "fla-core"
# Narrowest key and value widths chunk_gla compiles for: its backward's tl.dot needs an inner dimension
# >= 16 (seen on an H200, fla-core 0.6.0, Triton 3.6: CAPS's head width 8 failed to compile), so
# `caps_attention_fla` zero-pads narrower features and values (exact: a zero key feature adds nothing).
FLA_MIN_WIDTH = 16
# Whether impl="auto" picks fla on CUDA. Off: on an H200 (2026-11-27, docs/results/gpu_slice_2026-11-27) the
# CUDA exactness tests passed but one (T = 4 096, gates x10: a Clock gradient at 1.66e-5 relative, the bar
# 1e-5), and the eager fla step was faster than chunked at H = 720 (32.9 vs 54.8 ms) but slower at H = 96
# (42.3 vs 35.6 ms) with untuned configs; fla also autotunes for minutes on a fresh machine unless
# CAPS_FLA_AUTOTUNE=0 (benchmarks/fla_autotune.py).
FLA_IN_AUTO = False
# Environment variable: "1" (default) lets fla autotune every Triton kernel on its first call in a process
# (hundreds of configs for chunk_gla's forward and backward: minutes on a fresh machine); "0" has Triton keep
# one config per kernel by a fixed rule instead (`limit_fla_autotuning`): the first call only compiles.
FLA_AUTOTUNE_ENV = "CAPS_FLA_AUTOTUNE"
# The fla modules of chunk_gla's kernels (their autotuners are the ones "0" limits).
FLA_GLA_MODULES = ("fla.ops.gla.chunk", "fla.ops.common.chunk_h", "fla.ops.utils.cumsum", "fla.ops.utils.index")


@dataclass(frozen=True)
class CAPSOption:
    """One CAPS option: its default, its choices (None: any value of the default's type) and its help line."""

    default: str | int
    choices: tuple[str, ...] | None
    help: str


CAPS_OPTIONS: dict[str, CAPSOption] = {
    "caps_attn": CAPSOption("linear", LAYER_ATTN_CHOICES, "CAPS: phi = identity (linear), causal softmax "
                            "(softmax runs only as --caps_impl naive, which auto selects) or normalised linear "
                            "attention (Katharopoulos et al.: elu(x) + 1 features over their causal normaliser, RoPE "
                            "on the numerator's features as RoFormer eq. 19)"),
    "caps_paths": CAPSOption("123", PATHS_CHOICES, "CAPS: active paths (1 Riemann softmax, 2 prefix product, "
                             "3 clock); none = LinAttn"),
    "caps_rope": CAPSOption("learned", ROPE_CHOICES, "CAPS: RoPE frequencies"),
    "caps_numerics": CAPSOption("paper", NUMERICS_CHOICES, "CAPS: exact paper maths or the official code's arithmetic "
                                "(the value every auto switch below follows: --caps_path1_max, --caps_path2_decay, "
                                "--caps_rope_layout, --caps_mark_norm, --caps_dropout_rescale)"),
    "caps_path1_max": CAPSOption("auto", PATH1_MAX_CHOICES, "CAPS: path 1's max, running over i <= t (paper) or "
                                 "global over all T plus 1e-8 in the normaliser (official); auto = --caps_numerics"),
    "caps_path2_decay": CAPSOption("auto", PATH2_DECAY_CHOICES, "CAPS: path 2's decay, exact segment sums (paper) or "
                                   "the official Gamma_t / (Gamma_i + 1e-8) with log Gamma clipped to [-50, 40]; "
                                   "auto = --caps_numerics"),
    "caps_rope_layout": CAPSOption("auto", ROPE_LAYOUT_CHOICES, "CAPS: RoPE pairs, true rotations of pairs "
                                   "(2j, 2j+1) (paper) or the official half-split angles with interleaved partners "
                                   "(not a rotation); auto = --caps_numerics"),
    "caps_impl": CAPSOption("auto", IMPL_CHOICES, "CAPS: attention implementation; auto = the native C++ kernel on "
                            "CPU when it builds and the head width fits (layers/CAPS_cpu_kernel.py), else the torch "
                            "chunked kernel (CUDA too); fla = fla-core's chunk_gla Triton kernel on CUDA (opt-in); "
                            "naive for --caps_attn softmax"),
    "caps_chunk": CAPSOption(0, None, "CAPS: chunk size of the linear-attention kernel; 0 = 32 on CPU, 64 on GPU "
                             "(fastest measured)"),
}

# Every path subset in its canonical form (sorted distinct ids; () is LinAttn).
_PATH_TUPLES = frozenset(tuple(int(c) for c in text.replace("none", "")) for text in PATHS_CHOICES)


def parse_paths(paths: str | tuple[int, ...]) -> tuple[int, ...]:
    """'123', '31', '' or 'none' (or an already parsed tuple such as (1, 2, 3)) -> sorted tuple of path ids.

    Raises ValueError on anything but distinct digits from 1, 2, 3 (or 'none' / '').
    """
    if isinstance(paths, tuple):
        if paths in _PATH_TUPLES:
            return paths
        text = "".join(str(i) for i in paths)
    else:
        text = "" if paths == "none" else str(paths)
    ids = tuple(sorted(int(c) for c in text if c in "123"))
    if len(ids) != len(text) or len(set(ids)) != len(ids):
        raise ValueError(f"--caps_paths {paths!r} is invalid: use distinct digits from 1, 2, 3 "
                         "(e.g. 123, 12, 13, 23) or none for plain linear attention")
    return ids


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} {value!r} is invalid: choose one of {', '.join(choices)}")


def follow_numerics(flag: str, value: str, choices: tuple[str, ...], numerics: str) -> str:
    """A per-difference switch with its "auto" resolved: choices[1] (the paper's) under --caps_numerics paper,
    choices[2] (the official code's) under official; an explicit value is kept (so one difference can be
    measured alone, or left out of the official bundle). Raises ValueError naming `flag` on a bad value."""
    _check_choice(flag, value, choices)
    _check_choice("--caps_numerics", numerics, NUMERICS_CHOICES)
    if value != "auto":
        return value
    return choices[1] if numerics == "paper" else choices[2]


def resolve_attn_impl(attn: str, impl: str) -> str:
    """The impl that runs `attn`: softmax attention is quadratic by nature and exists only as the naive
    kernel, so impl="auto" selects "naive" and any other linear-time choice raises ValueError; linear
    attention keeps `impl`. The one home of the "softmax => naive" rule."""
    _check_choice("--caps_attn", attn, ATTN_CHOICES)
    _check_choice("--caps_impl", impl, IMPL_CHOICES)
    if attn != "softmax":
        return impl
    if impl not in ("auto", "naive"):
        raise ValueError(f"--caps_attn softmax only has impl='naive' (quadratic by nature), got --caps_impl {impl}; "
                         "pass --caps_impl naive (or auto), or use --caps_attn linear")
    return "naive"


def _check_chunk(chunk_size: int | None) -> None:
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"--caps_chunk {chunk_size} is invalid: pass a positive chunk size (e.g. 32), "
                         "or 0 on the command line for the device's default")


def default_chunk(device: torch.device) -> int:
    """The chunk length used when none is given: DEFAULT_CHUNK on the CPU, GPU_CHUNK elsewhere."""
    return DEFAULT_CHUNK if device.type == "cpu" else GPU_CHUNK


def native_width_problem(head_dim: int) -> str | None:
    """Why the native CPU kernel cannot hold heads of width `head_dim` (None when it can, or is not installed)."""
    if native_kernel is None or head_dim <= native_kernel.MAX_HEAD_DIM:
        return None
    return (f"head width {head_dim} exceeds the native CPU kernel's limit of {native_kernel.MAX_HEAD_DIM} "
            "(MAX_HEAD_DIM in layers/CAPS_cpu_kernel.py)")


@cache
def _log_wide_head_fallback(head_dim: int) -> None:
    """One log line per head width: impl="auto" runs the chunked kernel for heads too wide for the native one."""
    logger.info("CAPS: %s; --caps_impl auto uses the chunked kernel", native_width_problem(head_dim))


def native_unavailable_reason(head_dim: int | None = None) -> str | None:
    """Why impl="native" cannot run here for heads of width `head_dim` (None when the native CPU kernel is
    built and loaded and, if given, the width fits)."""
    if native_kernel is None:
        return "layers/CAPS_cpu_kernel.py is not installed next to CAPS_Attention.py"
    wide = None if head_dim is None else native_width_problem(head_dim)
    if wide is not None:
        return wide
    if not _native_kernel_ready():
        if torch.compiler.is_compiling():
            # Tracing must not build: the layer's construction (or an eager call) has loaded it by now.
            return "it was not loaded before torch.compile traced the layer"
        return native_kernel.disabled_reason() or "the build failed (see the warning logged by layers.CAPS_cpu_kernel)"
    return None


def _native_kernel_ready() -> bool:
    """Whether the native CPU kernel is importable and built (a cached check, cheap on every call); under
    torch.compile, whether it is loaded."""
    if native_kernel is None:
        return False
    return native_kernel.loaded() if torch.compiler.is_compiling() else native_kernel.available()


def prepare_native_kernel(impl: str, head_dim: int | None = None) -> None:
    """Build/load the native kernel ahead of use when `impl` may pick it on this CPU-only machine, so that
    a torch.compile trace, which cannot build it, finds it loaded. Heads too wide for it: an explicit
    impl="native" raises ValueError here (at construction), impl="auto" logs once that it runs chunked."""
    wide = None if head_dim is None else native_width_problem(head_dim)
    if impl == "native" and wide is not None:
        raise ValueError(f"--caps_impl native: {wide}; use --caps_impl auto or chunked, or more --n_heads")
    if impl == "auto" and wide is not None:
        _log_wide_head_fallback(head_dim)
        return
    if impl in ("auto", "native") and native_kernel is not None and not torch.cuda.is_available():
        native_kernel.available()


# (chunk_gla or None, why it cannot be used or None), filled on the first `fla_chunk_gla()` call. A plain
# list rather than functools.cache, so that a torch.compile trace reads it without running the import.
_FLA_IMPORT: list[tuple[Callable | None, str | None]] = []


def fla_chunk_gla() -> tuple[Callable | None, str | None]:
    """fla-core's `chunk_gla` and None, or None and why it does not import (imported once, on first use)."""
    if not _FLA_IMPORT:
        try:
            from fla.ops.gla import chunk_gla
        except Exception as exc:  # noqa: BLE001 (ImportError, or Triton failing to initialise: both mean "not here")
            _FLA_IMPORT.append((None, f"{FLA_PACKAGE} does not import ({type(exc).__name__}: {exc})"))
        else:
            if _fla_autotune_setting() == "0":
                limit_fla_autotuning([sys.modules[name] for name in FLA_GLA_MODULES if name in sys.modules])
            _FLA_IMPORT.append((chunk_gla, None))
    return _FLA_IMPORT[0]


def _fla_autotune_setting() -> str:
    value = os.environ.get(FLA_AUTOTUNE_ENV, "1")
    if value not in ("0", "1"):
        raise ValueError(f"{FLA_AUTOTUNE_ENV}={value!r}: expected 1 (fla autotunes its kernels) or 0 (one fixed "
                         "config per kernel, no autotuning); set it to one of those or unset it")
    return value


def _fixed_config_rank(block_keys: set[str]) -> Callable[..., tuple]:
    """A Triton perf_model that ranks configs by a fixed rule, best first: 4 warps (else the nearest), the
    fewest pipeline stages, the smallest tiles (CAPS's key and value widths are 16-24)."""
    def rank(**kwargs) -> tuple:
        tiles = sum(v for k, v in kwargs.items() if k in block_keys and isinstance(v, int))
        return (abs(math.log2(kwargs["num_warps"] / 4)), kwargs["num_stages"], tiles)
    return rank


def triton_autotuners(modules: list) -> list:
    """The Triton autotuners defined in `modules`, each once. Duck-typed, so that it needs no Triton import:
    an autotuner has `configs` and `configs_top_k`; `@triton.heuristics` wrappers are unwrapped via `.fn`."""
    found: dict[int, object] = {}
    for module in modules:
        for obj in vars(module).values():
            while not hasattr(obj, "configs_top_k") and hasattr(obj, "fn"):
                obj = obj.fn
            if hasattr(obj, "configs_top_k") and hasattr(obj, "configs"):
                found.setdefault(id(obj), obj)
    return list(found.values())


def limit_fla_autotuning(modules: list) -> int:
    """Make every Triton autotuner in `modules` keep one config: Triton's own pruning (`perf_model` with
    `top_k` = 1) after fla's pruning rules, which still run first (they guard known miscompiles). Returns
    the number of autotuners limited."""
    tuners = triton_autotuners(modules)
    for tuner in tuners:
        tuner.perf_model = _fixed_config_rank({k for c in tuner.configs for k in c.kwargs})
        tuner.configs_top_k = 1
    return len(tuners)


def fla_unavailable_reason(device: torch.device) -> str | None:
    """Why impl="fla" cannot run on `device` (None when fla-core's Triton kernel can)."""
    if device.type != "cuda":
        return f"fla-core's Triton kernels run on CUDA, not on {device.type}"
    return fla_chunk_gla()[1]


@cache
def _log_fla_fallback(reason: str) -> None:
    """One log line per reason: impl="fla" runs the chunked kernel where fla-core cannot."""
    logger.info("CAPS: --caps_impl fla: %s; running the torch chunked kernel instead (pip install %s on a CUDA "
                "machine for the Triton kernel)", reason, FLA_PACKAGE)


def resolve_impl(impl: str, device: torch.device, head_dim: int | None = None) -> str:
    """"auto" -> "native" on the CPU when the native kernel is available (eager, or torch.compile where it
    is an opaque op) and holds heads of width `head_dim`; "fla" on CUDA when FLA_IN_AUTO and fla-core
    imports; else "chunked". "fla" where fla-core cannot run -> "chunked" with one log line per reason;
    other choices are returned unchanged ("native" raises ValueError where it cannot run)."""
    if impl == "native":
        if device.type != "cpu":
            raise ValueError(f"--caps_impl native is the CPU kernel; use chunked (or auto) on {device.type}")
        reason = native_unavailable_reason(head_dim)
        if reason is not None:
            raise ValueError(f"--caps_impl native is unavailable: {reason}; use --caps_impl chunked or auto")
    if impl == "fla":
        reason = fla_unavailable_reason(device)
        if reason is None:
            return "fla"
        if not torch.compiler.is_compiling():
            _log_fla_fallback(reason)
        return "chunked"
    if impl != "auto":
        return impl
    if device.type != "cpu":
        return "fla" if FLA_IN_AUTO and fla_unavailable_reason(device) is None else "chunked"
    if head_dim is not None and native_width_problem(head_dim) is not None:
        if not torch.compiler.is_compiling():
            _log_wide_head_fallback(head_dim)
        return "chunked"
    return "native" if _native_kernel_ready() else "chunked"


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float64 stays float64; everything else (bf16/fp16 under autocast too) is computed in float32."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


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


def _rotated(q: torch.Tensor, k: torch.Tensor, rope_freq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k rotated by `rope_rotate` when rope_freq is given, else unchanged (the pure-torch kernels' RoPE)."""
    if rope_freq is None:
        return q, k
    return rope_rotate(q, rope_freq), rope_rotate(k, rope_freq)


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


@dataclass
class CAPSState:
    """Recurrent state of one CAPS layer: S [B, H, F, Ev] and the scan carries of paths 1 and 3.

    m, z: running max of pt and sum_{j<=t} exp(pt_j - m_t) [B, H, E] (path 1); c: sum of clock [B, H, 1].
    """

    s: torch.Tensor
    m: torch.Tensor | None = None
    z: torch.Tensor | None = None
    c: torch.Tensor | None = None


def caps_attention_step(
    state: CAPSState | None, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor,
    g: torch.Tensor, clock: torch.Tensor, paths: tuple[int, ...] = (1, 2, 3),
) -> tuple[torch.Tensor, CAPSState]:
    """One step of linear CAPS: q, k, p, g [B, H, E], v [B, H, Ev], clock [B, H] -> (o [B, H, Ev], state).

    S_t = exp(L_t - L_{t-1}) * S_{t-1} + kt_t^T v_t,  o_t = qt_t S_t  (every decay factor <= 1).
    paths: parsed ids (`parse_paths`), so a caller stepping over t parses them once, not per step.
    q, k already rotated when RoPE is used (the rotation angle depends on the absolute step t).
    """
    ids = paths
    clock = clock[..., None]  # [B, H, 1]
    qs, ks, decays = [], [], []
    m_new = z_new = c_new = None
    for path in ids:
        if path == 1:
            pt = p + torch.log(clock)
            m_old = pt if state is None else state.m
            m_new = torch.maximum(m_old, pt)
            z_old = torch.zeros_like(pt) if state is None else state.z
            z_new = z_old * torch.exp(m_old - m_new) + torch.exp(pt - m_new)
            qs.append(q / z_new)
            ks.append(k * torch.exp(pt - m_new))
            decays.append(torch.exp(m_old - m_new))
        elif path == 2:
            qs.append(q)
            ks.append(k)
            decays.append(torch.exp(-F.softplus(g) * clock))
        else:
            c_new = clock if state is None else state.c + clock
            qs.append(q / c_new)
            ks.append(k * clock)
            decays.append(torch.ones_like(q))
    if not ids:
        qs, ks, decays = [q], [k], [torch.ones_like(q)]
    qt, kt, decay = (torch.cat(x, dim=-1) for x in (qs, ks, decays))  # [B, H, F]
    kv = kt[..., :, None] * v[..., None, :]  # [B, H, F, Ev]
    s = kv if state is None else decay[..., None] * state.s + kv
    o = torch.einsum("bhf,bhfv->bhv", qt, s)
    return o, CAPSState(s=s, m=m_new, z=z_new, c=c_new)


def caps_attention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """O(T) recurrent form: `caps_attention_step` over t. The `CAPSKernel` signature; linear attention
    only; chunk_size unused."""
    resolve_attn_impl(attn, "recurrent")
    paths = parse_paths(paths)
    q, k = _rotated(q, k, rope_freq)
    state = None
    outs = []
    for t in range(q.shape[1]):
        o, state = caps_attention_step(
            state, q[:, t], k[:, t], v[:, t], p[:, t], g[:, t], clock[:, t], paths
        )
        outs.append(o)
    return torch.stack(outs, dim=1)  # [B, T, H, Ev]


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


def _caps_chunked_rows(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
    clock: torch.Tensor, paths: tuple[int, ...], chunk_size: int,
) -> torch.Tensor:
    """Chunked linear CAPS on a set of rows (sequences): the selected paths fused along features."""
    qt, kt, ell = _path_features(q, k, p, g, clock, paths, chunk_size)  # [B, H, T, F]
    o = decayed_linear_attention_chunked(qt, kt, rearrange(v, "b t h v -> b h t v"), ell, chunk_size)
    return rearrange(o, "b h t v -> b t h v")


def rows_per_block(shape: torch.Size, n_paths: int, block_elements: int = BLOCK_ELEMENTS) -> int:
    """Sequences per block so that one [rows, H, T, F] feature tensor holds about block_elements values."""
    _, T, H, E = shape
    return max(1, block_elements // max(1, T * H * E * max(1, n_paths)))


class _BlockedChunkedCAPS(torch.autograd.Function):
    """Chunked CAPS run block by block over the batch, recomputing each block in backward.

    Every intermediate of the chunked kernel is a [B, H, T, F]- or [B, H, N, C, C]-sized tensor;
    computed for the whole batch, each one is a fresh allocation of tens to hundreds of MB whose
    first touch costs page faults, and autograd keeps dozens of them alive until backward. Run
    over blocks of `rows` sequences instead, the intermediates are a few MB (allocator reuse, cache
    resident), forward saves only the inputs, and backward recomputes one block at a time under
    autograd (activation checkpointing per block). The arithmetic per sequence is unchanged, so the
    result equals the unblocked kernel up to floating-point summation order in matmuls.
    """

    @staticmethod
    def forward(ctx, q, k, v, p, g, clock, paths, chunk_size, rows):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        ctx.paths, ctx.chunk_size, ctx.rows = paths, chunk_size, rows
        ctx.save_for_backward(q, k, v, p, g, clock)
        out = v.new_empty(v.shape)  # [B, T, H, Ev]
        for start in range(0, q.shape[0], rows):
            block = slice(start, start + rows)
            out[block] = _caps_chunked_rows(q[block], k[block], v[block], p[block], g[block], clock[block],
                                            paths, chunk_size)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, do):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        inputs = ctx.saved_tensors
        grads = [torch.empty_like(x) if need else None for x, need in zip(inputs, ctx.needs_input_grad[:6], strict=True)]
        wanted = [i for i, need in enumerate(ctx.needs_input_grad[:6]) if need]
        for start in range(0, do.shape[0], ctx.rows):
            block = slice(start, start + ctx.rows)
            with torch.enable_grad():
                xs = [x[block].detach().requires_grad_(i in wanted) for i, x in enumerate(inputs)]
                o = _caps_chunked_rows(*xs, ctx.paths, ctx.chunk_size)
                # allow_unused: an input the selected paths never read (g without path 2) gets zeros.
                gs = torch.autograd.grad(o, [xs[i] for i in wanted], do[block], allow_unused=True)
            for i, grad in zip(wanted, gs, strict=True):
                grads[i][block] = 0.0 if grad is None else grad
        return (*grads, None, None, None)


def caps_attention_chunked(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Chunked O(T C F) linear CAPS. The `CAPSKernel` signature; linear attention only; chunk_size None:
    `default_chunk(q.device)`.

    Eager mode on the CPU runs blocks of sequences (`_BlockedChunkedCAPS`, block size from the module's
    BLOCK_ELEMENTS, read at call time); on a GPU (whose caching allocator has no first-touch cost, and where
    each block would add kernel launches: 3.7x slower at the H=720 recipe on an H100) and under
    torch.compile the whole batch is one pass.
    """
    resolve_attn_impl(attn, "chunked")
    _check_chunk(chunk_size)
    ids = parse_paths(paths)
    chunk_size = chunk_size or default_chunk(q.device)
    q, k = _rotated(q, k, rope_freq)
    rows = rows_per_block(q.shape, len(ids), BLOCK_ELEMENTS)
    if torch.compiler.is_compiling() or q.device.type != "cpu" or rows >= q.shape[0]:
        return _caps_chunked_rows(q, k, v, p, g, clock, ids, chunk_size)
    return _BlockedChunkedCAPS.apply(q, k, v, p, g, clock, ids, chunk_size, rows)


def gated_linear_attention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference gated linear attention in fla's `chunk_gla` convention, one step at a time.

    q, k, g: [B, T, H, K]; v: [B, T, H, V]; g = log forget gate per step (<= 0).
        S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,   o_t = scale q_t S_t,   S_0 = 0, S_t: [B, H, K, V].
    Returns (o [B, T, H, V], S_T). scale None: 1 / sqrt(K), as chunk_gla. O(T) Python steps: slow and
    obviously correct; the stand-in for chunk_gla where Triton cannot run (tests of `caps_attention_fla`).
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    state = q.new_zeros(q.shape[0], q.shape[2], q.shape[3], v.shape[3])
    outs = []
    for t in range(q.shape[1]):
        state = torch.exp(g[:, t])[..., None] * state + k[:, t, :, :, None] * v[:, t, :, None, :]
        outs.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], state))
    return torch.stack(outs, dim=1), state


def caps_attention_fla(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Linear CAPS as one gated-linear-attention call of fla-core's `chunk_gla` (Triton, CUDA).

    The `CAPSKernel` signature; linear attention only. The paths concatenated along features are one
    gated linear attention of key width F = n_paths E (`_path_features`, the chunked kernel's features):
        queries [q / Z_t, q, q / sum_{j<=t} clock_j], keys [k exp(pt - m_t), k, k clock_t],
        log gates per step [m_{t-1} - m_t, -softplus(g_t) clock_t, 0],
    with pt = p + log clock and m_t = max_{i<=t} pt_i (path 1's running max), so that
        o_t = sum_{i<=t} sum_f qt[t,f] kt[i,f] exp(L[t,f] - L[i,f]) v_i,  scale 1
    is chunk_gla's S_t = diag(exp(ell_t)) S_{t-1} + kt_t^T v_t, o_t = qt_t S_t. Path 1's normaliser Z comes
    from the branch-free two-level scan, so the call never waits for the device; chunk_size is checked but
    unused (chunk_gla picks its own chunks); float32/bf16 only (Triton). Keys and values narrower than
    FLA_MIN_WIDTH are zero-padded for chunk_gla and the output cut back to v's width.
    """
    resolve_attn_impl(attn, "fla")
    _check_chunk(chunk_size)
    gla, reason = fla_chunk_gla()
    if gla is None:
        raise ValueError(f"--caps_impl fla: {reason}; pip install {FLA_PACKAGE} on a CUDA machine, or use "
                         "--caps_impl auto or chunked")
    ids = parse_paths(paths)
    q, k = _rotated(q, k, rope_freq)
    # branch_free: no device-to-host sync anywhere in the call (launch-bound GPU steps, CUDA graphs).
    qt, kt, ell = _path_features(q, k, p, g, clock, ids, branch_free=True)  # [B, H, T, F]
    if ell is None:
        ell = torch.zeros_like(qt)
    qt, kt, ell = (_pad_width(rearrange(x, "b h t f -> b t h f"), FLA_MIN_WIDTH) for x in (qt, kt, ell))
    o, _ = gla(qt, kt, _pad_width(v, FLA_MIN_WIDTH), ell, scale=1.0)
    return o[..., : v.shape[-1]]


def _pad_width(x: torch.Tensor, width: int) -> torch.Tensor:
    """x [..., F] zero-padded to [..., max(F, width)], contiguous (chunk_gla's minimum widths)."""
    if x.shape[-1] >= width:
        return x.contiguous()
    return F.pad(x, (0, width - x.shape[-1]))


CAPSKernel = Callable[..., torch.Tensor]
"""The signature every CAPS kernel shares, so that tests and benchmarks swap them by name:

    kernel(q, k, v, p, g, clock, paths, *, attn="linear", chunk_size=None, rope_freq=None) -> o

q, k, p, g: [B, T, H, E]; v: [B, T, H, Ev]; clock: [B, T, H] > 0, all of one dtype and device;
paths: parsed path ids (`parse_paths`: a sorted tuple such as (1, 2, 3), () for LinAttn);
attn: "linear" (every kernel) or "softmax" (naive only; the others raise ValueError);
chunk_size: the chunked kernel's chunk length (None: `default_chunk`), unused by the others;
rope_freq ω [E/2] or None: q and k are rotated by RoPE first (`rope_rotate`; inside the recurrence for
the native kernel, same function). Returns o [B, T, H, Ev] in the inputs' dtype, with no autocast
handling or dtype policy: `caps_attention` adds those.
"""


def _kernels() -> dict[str, CAPSKernel]:
    kernels: dict[str, CAPSKernel] = {
        "naive": caps_attention_naive, "recurrent": caps_attention_recurrent, "chunked": caps_attention_chunked,
    }
    if native_kernel is not None:
        kernels["native"] = native_kernel.caps_attention_native
    kernels["fla"] = caps_attention_fla
    return kernels


# name -> kernel, in IMPL_CHOICES order ("native" only where layers/CAPS_cpu_kernel.py is installed; it
# runs only when `native_unavailable_reason()` is None; "fla" only where `fla_unavailable_reason()` is).
CAPS_KERNELS: dict[str, CAPSKernel] = _kernels()


def caps_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
    clock: torch.Tensor, attn: str = "linear", paths: str | tuple[int, ...] = "123", impl: str = "auto",
    chunk_size: int | None = None, rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """CAPS attention (module docstring for the equations): validates, picks the kernel, then runs
    `CAPS_KERNELS[impl]` under the dtype policy below.

    q, k, p, g: [B, T, H, E]; v: [B, T, H, Ev]; clock: [B, T, H] > 0.
    rope_freq ω [E/2] or None: when given, q and k are first rotated by `rope_rotate(x, ω)` (the
    native kernel rotates them inside its recurrence, the other impls beforehand); None: q, k are used
    as given (already rotated, or no RoPE).
    attn: "linear" | "softmax"; paths: any of "123" ("" or "none": plain causal q.k) or its parsed tuple;
    impl: "naive" (reference) | "recurrent" (O(T) step form) | "chunked" (pure-torch chunked kernel)
    | "native" (C++ CPU recurrence, `layers/CAPS_cpu_kernel.py`; an opaque op under torch.compile)
    | "fla" (fla-core's Triton `chunk_gla` on CUDA; elsewhere the chunked kernel, with one log line)
    | "auto" (native on the CPU when it builds and the head width fits, fla on CUDA when FLA_IN_AUTO
    and fla-core imports, else chunked; naive for attn="softmax", which has no other form: `resolve_attn_impl`).
    chunk_size: the chunked kernel's chunk length; None picks `default_chunk(q.device)` (the result
    does not depend on it beyond float rounding).
    Returns o: [B, T, H, Ev] in q's dtype. Computed in float64 for float64 inputs, else in float32
    with autocast disabled (bf16/fp16 inputs are upcast: the decays need float32's exponent range).
    attn="normalised": `caps_attention_normalised` (two linear calls of this function).
    """
    if attn == NORMALISED_ATTN:
        return caps_attention_normalised(q, k, v, p, g, clock, paths, impl, chunk_size, rope_freq)
    impl = resolve_attn_impl(attn, impl)
    _check_chunk(chunk_size)
    ids = parse_paths(paths)
    if q.dim() != 4 or q.shape[1] == 0:
        raise ValueError(f"caps_attention needs q of shape [B, T, H, E] with T >= 1, got {tuple(q.shape)}")
    if not ids and impl in ("auto", "native"):
        # Without paths the chunked kernel is plain matmuls: the native recurrence has nothing to add.
        impl = "chunked"
    requested, impl = impl, resolve_impl(impl, q.device, head_dim=max(q.shape[-1], v.shape[-1]))
    dtype = _compute_dtype(q)
    if impl == "fla" and dtype == torch.float64:
        # Triton computes in float32/bf16: auto keeps float64 on the chunked kernel, an explicit fla is refused.
        if requested != "auto":
            raise ValueError("--caps_impl fla: fla-core's Triton kernels compute in float32/bf16, got float64 "
                             "inputs; use --caps_impl chunked (or auto) for float64")
        impl = "chunked"
    out_dtype = q.dtype
    with torch.autocast(device_type=q.device.type, enabled=False):
        q, k, v, p, g, clock = (x.to(dtype) for x in (q, k, v, p, g, clock))
        o = CAPS_KERNELS[impl](q, k, v, p, g, clock, ids, attn=attn, chunk_size=chunk_size, rope_freq=rope_freq)
    return o.to(out_dtype)


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1 > 0, Katharopoulos et al.'s feature map (exp(x) below 0, x + 1 above)."""
    return F.elu(x) + 1.0


def normalise_linear(
    attend: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor],
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rope_freq: torch.Tensor | None,
) -> torch.Tensor:
    """Normalised linear attention from a linear one: o_t = num_t / den_t with phi = `elu_feature_map`,

        num_t = sum_{i<=t} s(R_t phi(q_t), R_i phi(k_i)) v_i,   den_t = sum_{i<=t} s(phi(q_t), phi(k_i)),

    where attend(q, k, v, rope_freq) -> sum_{i<=t} s(q_t, k_i) v_i is linear attention with scores s (q.k,
    or q.k times non-negative path weights) that rotates q, k by RoPE when rope_freq is given. RoPE acts on
    the features, not on q, k (RoFormer, Su et al., eq. 19): rotated after phi the numerator's score depends
    on t - i alone (phi of a rotated vector would not), and the normaliser stays unrotated, a sum of
    positive terms (>= its i = t term > 0), which rotation would make signed and possibly ~0.
    den is the numerator of v = 1 ([B, T, H, 1]). Shapes as `caps_attention`.
    """
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    num = attend(fq, fk, v, rope_freq)  # [B, T, H, Ev]
    den = attend(fq, fk, v.new_ones(*v.shape[:-1], 1), None)  # [B, T, H, 1]
    return num / den


def caps_attention_normalised(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: str | tuple[int, ...] = "none", impl: str = "auto", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Normalised linear attention (Katharopoulos et al. 2020, eq. 6 with phi = elu + 1), causal:
    `normalise_linear` over `caps_attention(attn="linear")` with the same paths, impl and chunk (paths "none":
    the LinAttn baseline as the cited paper defines it; with paths, the scores phi(q).phi(k) carry the
    non-negative path weights and stay positive). Arguments, shapes and dtype policy as `caps_attention`."""
    dtype, out_dtype = _compute_dtype(q), q.dtype
    with torch.autocast(device_type=q.device.type, enabled=False):
        q, k, v, p, g, clock = (x.to(dtype) for x in (q, k, v, p, g, clock))

        def attend(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, omega: torch.Tensor | None) -> torch.Tensor:
            return caps_attention(a, b, c, p, g, clock, "linear", paths, impl, chunk_size, omega)

        o = normalise_linear(attend, q, k, v, rope_freq)
    return o.to(out_dtype)


def rope_frequencies(head_dim: int) -> torch.Tensor:
    """omega_j = 10000^(-2j/E), j < E/2: [E/2]."""
    return 10000.0 ** (-2.0 * torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)


def rope_angles(length: int, omega: torch.Tensor) -> torch.Tensor:
    """The angles t omega_j, t = 0..length-1: [length, E/2], formed in float64 (float32 on MPS, which has
    no float64): a float32 product t omega is off by up to ~2e-4 rad at t = 4096."""
    wide = torch.float32 if omega.device.type == "mps" else torch.float64
    return torch.arange(length, device=omega.device, dtype=wide)[:, None] * omega.to(wide)


def rope_rotate(x: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    """Block-diagonal SO(2) rotation of pairs (2j, 2j+1) by angle t omega_j, t = 0..T-1. x [B, T, H, E].

    Computed as the complex product (x_2j + i x_2j+1) e^(i t omega_j): one vectorised pass instead of
    four products over strided halves. Half-precision inputs are rotated in float32 and cast back.
    """
    pairs = (x if x.dtype in (torch.float32, torch.float64) else x.float()).unflatten(-1, (-1, 2))
    angle = rope_angles(x.shape[1], omega)  # [T, E/2]
    turn = torch.polar(torch.ones_like(angle), angle)[:, None].to(  # [T, 1, E/2]
        torch.complex64 if pairs.dtype == torch.float32 else torch.complex128)
    # view_as_complex needs (re, im) adjacent, even strides and an even offset; the layout test is
    # eager-only (storage_offset would break a torch.compile graph, where the copy is fused anyway).
    if torch.compiler.is_compiling() or pairs.stride(-1) != 1 or pairs.storage_offset() % 2 or any(
            st % 2 for st in pairs.stride()[:-1]):
        pairs = pairs.contiguous()
    return torch.view_as_real(torch.view_as_complex(pairs) * turn).flatten(-2).to(x.dtype)  # [B, T, H, E]


def rope_official(x: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    """The official code's layout (caps_reference section 4): half-split angles, interleaved partners.

    angles [t w_0 .. t w_{E/2-1}, t w_0 .. t w_{E/2-1}], out = x cos + rot(x) sin with
    rot(x)_{2j} = -x_{2j+1}, rot(x)_{2j+1} = x_{2j}. Not a rotation (norms change). x [B, T, H, E].
    """
    angle = torch.arange(x.shape[1], device=x.device, dtype=omega.dtype)[:, None] * omega  # [T, E/2]
    angle = torch.cat([angle, angle], dim=-1)[:, None].to(x.dtype)  # [T, 1, E]
    rot = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * angle.cos() + rot * angle.sin()


def official_features(
    q: torch.Tensor, k: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenated q_cat, k_cat [B, T, H, n E] with the official arithmetic (caps_reference section 4).

    Path 1: global max over T, q / (cumsum(w) + 1e-8), k w. Path 2: cumsum clipped to [-50, 40],
    q Gamma, k / (Gamma + 1e-8). Path 3: q / cumsum(clock), k clock. Inputs as `caps_attention`.
    """
    clock = clock[..., None]  # [B, T, H, 1]
    qs, ks = [], []
    for path in paths:
        if path == 1:
            pt = p + torch.log(clock)
            w = torch.exp(pt - pt.amax(dim=1, keepdim=True))
            qs.append(q / (torch.cumsum(w, dim=1) + 1e-8))
            ks.append(k * w)
        elif path == 2:
            gamma = torch.exp(torch.cumsum(-F.softplus(g) * clock, dim=1).clamp(-50.0, 40.0))
            qs.append(q * gamma)
            ks.append(k / (gamma + 1e-8))
        else:
            qs.append(q / torch.cumsum(clock, dim=1))
            ks.append(k * clock)
    if not paths:
        return q, k
    return torch.cat(qs, dim=-1), torch.cat(ks, dim=-1)


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
        prepare_native_kernel(impl, head_dim)
        if (impl == "fla" or impl == "auto" and FLA_IN_AUTO) and torch.cuda.is_available():
            fla_chunk_gla()  # import now: a torch.compile trace reads the result without importing
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

    def _project(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """x [B, T, D] -> q, k, v, p, g [B, T, H, E] (views; q, k unrotated) and clock [B, T, H]."""
        D = x.shape[-1]
        # One matmul for the six input projections (forward and backward) instead of six passes over x.
        projs = (self.q_proj, self.k_proj, self.v_proj, self.p_proj, self.gate_proj, self.clock_proj)
        weight = torch.cat([proj.weight for proj in projs])  # [5 D + H, D]
        # Zero rows pad the output width to a multiple of 8: MKL's CPU GEMM is slower on other widths
        # (5 D + H = 164 at the recipe's D = 32, H = 4). Their outputs are dropped.
        pad = -weight.shape[0] % GEMM_WIDTH_MULTIPLE
        *qkvpg, c, _ = F.linear(x, F.pad(weight, (0, 0, 0, pad))).split([D] * 5 + [self.n_heads, pad], dim=-1)
        q, k, v, p, g = (x.unflatten(-1, (self.n_heads, self.head_dim)) for x in qkvpg)  # [B, T, H, E] views
        # contiguous first: torch's elementwise kernels on this narrow strided view run ~10x slower.
        clock = F.softplus(c.contiguous()) + CLOCK_EPS  # [B, T, H]
        return q, k, v, p, g, clock

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [B, T, D] -> [B, T, D]."""
        q, k, v, p, g, clock = self._project(x)
        rope_freq = self.rope_freq if self.rope != "none" else None
        if self.attn == NORMALISED_ATTN:
            def attend(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, omega: torch.Tensor | None) -> torch.Tensor:
                return self._attend(a, b, c, p, g, clock, "linear", omega)

            o = normalise_linear(attend, q, k, v, rope_freq)
        else:
            o = self._attend(q, k, v, p, g, clock, self.attn, rope_freq)
        return self.dropout(self.c_proj(rearrange(o, "b t h e -> b t (h e)")))  # [B, T, D]

    def _attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
        clock: torch.Tensor, attn: str, rope_freq: torch.Tensor | None,
    ) -> torch.Tensor:
        """Linear or softmax attention of unrotated q, k [B, T, H, E] under the layer's switches -> [B, T, H, Ev]."""
        if rope_freq is not None and self.rope_layout == "official":
            q, k = rope_official(q, rope_freq), rope_official(k, rope_freq)
            rope_freq = None
        if not self.official_paths:
            # RoPE is applied by caps_attention (inside the native kernel when that runs).
            return caps_attention(q, k, v, p, g, clock, attn, self.paper_paths, self.impl, self.chunk_size, rope_freq)
        if rope_freq is not None:
            q, k = rope_rotate(q, rope_freq), rope_rotate(k, rope_freq)
        q_cat, k_cat = official_features(q, k, p, g, clock, self.official_paths)  # [B, T, H, n E]
        o = caps_attention(q_cat, k_cat, v, q_cat, q_cat, clock, attn, (), self.impl, self.chunk_size)
        if self.paper_paths:
            o = o + caps_attention(q, k, v, p, g, clock, attn, self.paper_paths, self.impl, self.chunk_size)
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


def path_weights(p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor, paths: str | tuple[int, ...]) -> torch.Tensor:
    """The naive kernel's summed path weights W[b, h, t, i, e] for every query row t (0 where i > t).

    p, g: [B, T, H, E]; clock: [B, T, H] (the kernel's layout); paths as `parse_paths`. Path 1 alone gives
    the Riemann weights G, path 2 the decay A, path 3 the clock average (feature width 1), all from
    `_naive_weights`, so sum_e q_t k_i W[t, i, e] (q, k rotated) applied to v is the kernel's output.
    Memory [B, H, T, T, E]: for inspection (`explain`) and tests, not training.
    """
    ids = parse_paths(paths)
    p, g = (rearrange(x, "b t h e -> b h t e") for x in (p, g))  # [B, H, T, E]
    clock = rearrange(clock, "b t h -> b h t")[..., None]  # [B, H, T, 1]
    return _naive_weights(p + torch.log(clock), F.softplus(g) * clock, clock, ids, 0, p.shape[2])
