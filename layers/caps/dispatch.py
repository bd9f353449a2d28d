"""Which CAPS kernel runs, and the entry point `caps_attention` that runs it under one dtype policy.

Every kernel shares one signature (`CAPSKernel`) and is registered by name in `CAPS_KERNELS`, so tests and
benchmarks swap them: naive (reference), recurrent (step form), chunked (pure torch), native (C++ CPU
recurrence, optional) and fla (fla-core's Triton kernel on CUDA, optional). `resolve_impl` turns
impl="auto" into a kernel for the device at hand and says why an explicit choice cannot run here;
`caps_attention` validates its arguments and calls `dispatch_kernel`, which the layer calls directly with
the arguments it validated once at construction. layers/caps/README.md, sections 4 and 5.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache

import torch

from layers.caps.chunked import caps_attention_chunked
from layers.caps.fla import FLA_PACKAGE, caps_attention_fla, fla_chunk_gla, fla_unavailable_reason
from layers.caps.maths import _compute_dtype
from layers.caps.naive import caps_attention_naive
from layers.caps.normalised import normalise_linear
from layers.caps.options import NORMALISED_ATTN, _check_chunk, parse_paths, resolve_attn_impl
from layers.caps.recurrent import caps_attention_recurrent

try:  # optional native CPU kernel (native.py and native.cpp); without it, "auto" means "chunked"
    from layers.caps import native as native_kernel
except ImportError:
    native_kernel = None

logger = logging.getLogger(__name__)

# Whether impl="auto" picks fla on CUDA. Off: on an H200 (2026-11-27, docs/results/gpu_slice_2026-11-27) the
# CUDA exactness tests passed but one (T = 4 096, gates x10: a Clock gradient at 1.66e-5 relative, the bar
# 1e-5), and the eager fla step was faster than chunked at H = 720 (32.9 vs 54.8 ms) but slower at H = 96
# (42.3 vs 35.6 ms) with untuned configs; fla also autotunes for minutes on a fresh machine unless
# CAPS_FLA_AUTOTUNE=0 (benchmarks/fla_autotune.py).
FLA_IN_AUTO = False


def native_width_problem(head_dim: int) -> str | None:
    """Why the native CPU kernel cannot hold heads of width `head_dim` (None when it can, or is not installed)."""
    if native_kernel is None or head_dim <= native_kernel.MAX_HEAD_DIM:
        return None
    return (f"head width {head_dim} exceeds the native CPU kernel's limit of {native_kernel.MAX_HEAD_DIM} "
            "(MAX_HEAD_DIM in layers/caps/native.py)")


@cache
def _log_wide_head_fallback(head_dim: int) -> None:
    """One log line per head width: impl="auto" runs the chunked kernel for heads too wide for the native one."""
    logger.info("CAPS: %s; --caps_impl auto uses the chunked kernel", native_width_problem(head_dim))


def native_unavailable_reason(head_dim: int | None = None) -> str | None:
    """Why impl="native" cannot run here for heads of width `head_dim` (None when the native CPU kernel is
    built and loaded and, if given, the width fits)."""
    if native_kernel is None:
        return "layers/caps/native.py is not installed"
    wide = None if head_dim is None else native_width_problem(head_dim)
    if wide is not None:
        return wide
    if not _native_kernel_ready():
        if torch.compiler.is_compiling():
            # Tracing must not build: the layer's construction (or an eager call) has loaded it by now.
            return "it was not loaded before torch.compile traced the layer"
        return native_kernel.disabled_reason() or "the build failed (see the warning logged by layers.caps.native)"
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
    impl="native" raises ValueError here (at construction), impl="auto" logs once that it runs chunked.
    A layer built on the meta device (shapes only, e.g. `exp.model_flags.flags_read`) never runs: nothing
    is built for it."""
    wide = None if head_dim is None else native_width_problem(head_dim)
    if impl == "native" and wide is not None:
        raise ValueError(f"--caps_impl native: {wide}; use --caps_impl auto or chunked, or more --n_heads")
    if impl == "auto" and wide is not None:
        _log_wide_head_fallback(head_dim)
        return
    if torch.get_default_device().type == "meta":
        return
    if impl in ("auto", "native") and native_kernel is not None and not torch.cuda.is_available():
        native_kernel.available()


def prepare_kernels(impl: str, head_dim: int) -> None:
    """Load ahead of use what `impl` may run, once, when a layer is built: the native CPU kernel
    (`prepare_native_kernel`, which raises ValueError for heads too wide for an explicit impl="native") and,
    on CUDA, fla-core's import, whose result a torch.compile trace reads without importing."""
    prepare_native_kernel(impl, head_dim)
    if (impl == "fla" or impl == "auto" and FLA_IN_AUTO) and torch.cuda.is_available():
        fla_chunk_gla()


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


# name -> kernel, in IMPL_CHOICES order ("native" only where layers/caps/native.py is installed; it
# runs only when `native_unavailable_reason()` is None; "fla" only where `fla_unavailable_reason()` is).
CAPS_KERNELS: dict[str, CAPSKernel] = _kernels()


def caps_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
    clock: torch.Tensor, attn: str = "linear", paths: str | tuple[int, ...] = "123", impl: str = "auto",
    chunk_size: int | None = None, rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """CAPS attention (equations: layers/CAPS_Attention.py's docstring): validates, picks the kernel, then runs
    `CAPS_KERNELS[impl]` under the dtype policy below.

    q, k, p, g: [B, T, H, E]; v: [B, T, H, Ev]; clock: [B, T, H] > 0.
    rope_freq ω [E/2] or None: when given, q and k are first rotated by `rope_rotate(x, ω)` (the
    native kernel rotates them inside its recurrence, the other impls beforehand); None: q, k are used
    as given (already rotated, or no RoPE).
    attn: "linear" | "softmax"; paths: any of "123" ("" or "none": plain causal q.k) or its parsed tuple;
    impl: "naive" (reference) | "recurrent" (O(T) step form) | "chunked" (pure-torch chunked kernel)
    | "native" (C++ CPU recurrence, `layers/caps/native.py`; an opaque op under torch.compile)
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
    return dispatch_kernel(q, k, v, p, g, clock, attn, parse_paths(paths), impl, chunk_size, rope_freq)


def dispatch_kernel(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    attn: str, ids: tuple[int, ...], impl: str, chunk_size: int | None, rope_freq: torch.Tensor | None,
) -> torch.Tensor:
    """`caps_attention` past its argument checks: attn in ATTN_CHOICES, ids parsed (`parse_paths`), impl as
    `resolve_attn_impl` returns it, chunk_size checked. `CAPSAttention` validates these once, when it is
    built, and calls this at every forward. What depends on the inputs is decided here: the kernel for
    their device and head width (`resolve_impl`) and the dtype they are computed in. Shapes as `caps_attention`."""
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
