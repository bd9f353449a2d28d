"""Optional native CPU kernel for linear CAPS attention: the three paths as one recurrence.

    S_t = diag(decay_t) S_{t-1} + kt_t v_t^T,   o_t = S_t^T qt_t      (per sequence and head, F = n_paths E)

with the per-path features qt, kt, decay of layers/caps/README.md, section 1 (path 1's normaliser and
path 3's clock prefix are scans inside the same pass). `layers/caps/native.cpp` runs it with float64 states
and its exact reverse-mode gradient. It is compiled with `torch.utils.cpp_extension` the first time it
is needed (about 30 s on 2 cores), then cached per torch version and CPU under TORCH_EXTENSIONS_DIR
(default ~/.cache/torch_extensions). Every process builds or loads it holding an exclusive `flock` on the
folder's `caps_build.flock` (released by the OS when the process dies), so torch's own `lock` file, found while
holding it, was left by a killed process and is removed at once; where `fcntl` is missing (Windows) such a
lock is cleared after 10 minutes.
Without a C++ compiler or ninja, or with CAPS_NATIVE_KERNEL=0 in the environment, `load()` returns None
and CAPS uses the pure-torch chunked kernel, which computes the same function (tests compare both with
a float64 reference).

The kernel takes p, g and the clock and computes the gates (path 1's w = exp(p + log c - m) with m the running
max, path 2's decay) a segment at a time inside the recurrence; its backward recomputes them and applies their chain
rule, so autograd keeps only the inputs and no full-size gate tensor is ever written.

The extension's functions are registered as `torch.library` custom ops (`caps_tslib::native_forward`,
`native_backward`) with shape-only fake implementations and an autograd formula, so torch.compile traces CAPS
with the kernel as one opaque node instead of breaking the graph.

`dispatch.py` imports this file under try/except: a `layers/caps/` copied without it (or without
`native.cpp`) still runs CAPS on the chunked kernel.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType

import torch

from layers.caps.rope import rope_angles

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("native.cpp")
# Steps between stored states: backward recomputes one segment at a time, so the saved states cost
# 1 / SEGMENT of a full state history ([B, H, T / SEGMENT, F, Ev] float64).
SEGMENT = 64
ENV_SWITCH = "CAPS_NATIVE_KERNEL"
# Without fcntl, a build lock older than this was left by a killed build (a build takes ~30 s on 2 cores).
STALE_LOCK_S = 600.0
# The file every builder holds an exclusive flock on while it builds or loads the extension.
BUILD_GUARD = "caps_build.flock"
# Widest head (E and Ev) the kernel's stack arrays hold: kMaxHeadDim in native.cpp, which
# must equal it (tests/layers/test_caps_cpu_kernel.py reads the .cpp). Wider heads use the chunked kernel.
MAX_HEAD_DIM = 256


def _cpu_tag() -> str:
    """Short hash of the CPU's model and feature flags: the build uses -march=native, so a cached
    library must never be loaded on a different CPU."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        lines = [line for line in text.splitlines() if line.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = [platform.processor(), platform.machine()]
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()[:10]


def _cpp_extension() -> ModuleType:
    """torch.utils.cpp_extension, imported on first need: it loads setuptools, which a run that never builds
    or looks for the kernel (CAPS_NATIVE_KERNEL=0, a GPU) does not need."""
    from torch.utils import cpp_extension

    return cpp_extension


def disabled_reason() -> str | None:
    """Why the native kernel cannot be used here (None when it can be built)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return f"{ENV_SWITCH}=0"
    if not SOURCE.exists():
        return f"{SOURCE.name} is missing"
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        return "no C++ compiler on PATH (set CXX or install g++)"
    try:
        _cpp_extension().verify_ninja_availability()
    except RuntimeError:
        return "ninja is not installed (pip install ninja)"
    return None


def build_directory(name: str) -> Path:
    """Where the extension `name` is built: under torch's extension root (TORCH_EXTENSIONS_DIR or
    ~/.cache/torch_extensions), one folder per torch version and CPU, since a library built against
    another torch or for another CPU must never be loaded."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or _cpp_extension().get_default_build_root()
    return Path(root) / f"{name}_torch{torch.__version__}".replace("+", "_")


def clear_stale_lock(directory: Path, max_age_s: float = STALE_LOCK_S) -> bool:
    """Remove the build lock a killed build left behind (torch would otherwise wait on it forever).
    Returns whether a lock was removed."""
    lock = directory / "lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age <= max_age_s:
        return False
    logger.warning("CAPS native CPU kernel: removing the stale build lock %s (%.0f s old, left by an "
                   "interrupted build)", lock, age)
    lock.unlink(missing_ok=True)
    return True


@contextmanager
def build_guard(directory: Path) -> Iterator[None]:
    """Hold the exclusive build flock of `directory` (waiting, with one log line, while another process holds
    it); inside, no other process builds or loads there, so a torch `lock` file left there is stale and is
    removed. The OS releases the flock when its process dies, so a killed build never blocks the next one."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the age rule alone
        clear_stale_lock(directory)
        yield
        return
    with open(directory / BUILD_GUARD, "a") as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.info("CAPS native CPU kernel: waiting for another process building it in %s", directory)
            fcntl.flock(guard, fcntl.LOCK_EX)
        clear_stale_lock(directory, max_age_s=-1.0)
        try:
            yield
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)


_extension: ModuleType | None = None


def loaded() -> bool:
    """True once `load()` has succeeded; a plain global read, so torch.compile can evaluate it while tracing."""
    return _extension is not None


@cache
def load() -> ModuleType | None:
    """The compiled extension, built on first call; None (logged once) when it is unavailable."""
    global _extension
    _extension = _build()
    return _extension


def _build() -> ModuleType | None:
    reason = disabled_reason()
    if reason is not None:
        logger.info("CAPS native CPU kernel off (%s): using the pure-torch chunked kernel", reason)
        return None
    flags = ["-O3", "-march=native", "-fopenmp"]
    name = f"caps_native_{_cpu_tag()}"
    directory = build_directory(name)
    logger.info("CAPS: loading the native CPU kernel from %s (compiled on first use, about 30 s)", directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with build_guard(directory):
            return _cpp_extension().load(name=name, sources=[str(SOURCE)], extra_cflags=flags,
                                         extra_ldflags=["-fopenmp"], build_directory=str(directory), verbose=False)
    except (RuntimeError, OSError, ImportError) as err:
        lines = str(err).splitlines() or [type(err).__name__]
        # The first line of a build error is the compiler command; the compiler's own "error:" says why.
        why = next((line for line in lines if "error:" in line), lines[0])
        logger.warning("CAPS native CPU kernel failed to build (%s); using the pure-torch chunked kernel. "
                       "Set CAPS_NATIVE_KERNEL=0 to skip the build.", why.strip())
        return None


def available() -> bool:
    """True when the native kernel is built (or builds now) on this machine."""
    return load() is not None


def _packed(x: torch.Tensor) -> torch.Tensor:
    """x [B, T, H, X] with heads packed (stride(H) = X, stride(X) = 1), copying only when needed."""
    return x if x.stride(-1) == 1 and x.stride(-2) == x.shape[-1] else x.contiguous()


def path_mask(paths: tuple[int, ...]) -> int:
    """The kernel's bit mask of the selected paths: bit p - 1 for path p."""
    return sum(1 << (path - 1) for path in set(paths))


def rope_tables(steps: int, rope_freq: torch.Tensor | None, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel's RoPE tables cos, sin [T, E/2] in `dtype` for frequencies ω [E/2] (angles t ω_j from
    `rope.rope_angles`, differentiable in ω); empty tensors without RoPE (rope_freq None)."""
    if rope_freq is None:
        empty = torch.empty(0, dtype=dtype)
        return empty, empty
    angle = rope_angles(steps, rope_freq)  # [T, E/2], float64
    return angle.cos().to(dtype), angle.sin().to(dtype)


# The extension's functions as torch.library ops: opaque to torch.compile (a fake implementation gives
# their output shapes), differentiable through `register_autograd`. The extension loads on first call.
@torch.library.custom_op("caps_tslib::native_forward", mutates_args=())
def native_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
                   clock: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: int,
                   segment: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(o [B, T, H, Ev], state checkpoints [B, H, S, ⌈F/4⌉, Ev, 4] f64, scan checkpoints [B, H, S, 2E+1] f64:
    z, C and path 1's running max), S = ⌈T / segment⌉, F = n_paths E (paths = the set bits of mask); q, k, p, g
    [B, T, H, E], v [B, T, H, Ev] with packed heads, clock [B, T, H] contiguous, cos, sin: RoPE tables [T, E/2]
    applied to q and k inside the kernel, or empty. The gates are computed inside the kernel from p, g and clock
    (`caps_attention_native`)."""
    out, ckpt_state, ckpt_scan = load().forward(q, k, v, p, g, clock, cos, sin, mask, segment)
    return out, ckpt_state, ckpt_scan


@native_forward.register_fake
def _native_forward_shapes(q, k, v, p, g, clock, cos, sin, mask, segment):  # noqa: ANN001, ANN202 (fake impl)
    b, t, h, e = q.shape
    ev, segments = v.shape[-1], -(-t // segment)
    groups = -(-bin(mask).count("1") * e // 4)  # F = n_paths E features in vectors of 4
    return (q.new_empty(b, t, h, ev), q.new_empty(b, h, segments, groups, ev, 4, dtype=torch.float64),
            q.new_empty(b, h, segments, 2 * e + 1, dtype=torch.float64))


@torch.library.custom_op("caps_tslib::native_backward", mutates_args=())
def native_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
                    clock: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: int, segment: int,
                    ckpt_state: torch.Tensor, ckpt_scan: torch.Tensor,
                    dout: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                                                 torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv, dp, dg, dclock, dtrig) from `native_forward`'s checkpoints and dout [B, T, H, Ev];
    dtrig [2, T, E/2] f64: the gradients of (cos, sin), empty without RoPE. The kernel recomputes the gates and
    applies their chain rule (native.cpp's header):

        dp = dw w,  dclock += Σ_e dp / clock                                         (path 1)
        da = dd2m1 (d2m1 + 1),  dg = softplus'(g) (-clock) da,  dclock -= Σ_e softplus(g) da   (path 2)

    dp (dg) is zero where path 1 (2) is off; the autograd formula drops it then."""
    dq, dk, dv, dp, dg, dc, dtrig = load().backward(q, k, v, p, g, clock, cos, sin, mask, segment, ckpt_state,
                                                    ckpt_scan, dout)
    return dq, dk, dv, dp, dg, dc, dtrig


@native_backward.register_fake
def _native_backward_shapes(q, k, v, p, g, clock, cos, sin, mask, segment, ckpt_state, ckpt_scan, dout):  # noqa: ANN001, ANN202
    trig = q.new_empty(2, *cos.shape, dtype=torch.float64) if cos.numel() else q.new_empty(0, dtype=torch.float64)
    return (torch.empty_like(q), torch.empty_like(q), torch.empty_like(v), torch.empty_like(p),
            torch.empty_like(g), torch.empty_like(clock), trig)


def _save_for_backward(ctx, inputs, output) -> None:  # noqa: ANN001 (register_autograd protocol)
    q, k, v, p, g, clock, cos, sin, ctx.mask, ctx.segment = inputs
    ctx.save_for_backward(q, k, v, p, g, clock, cos, sin, output[1], output[2])


def _native_grad(ctx, dout, _dstate, _dscan):  # noqa: ANN001, ANN202 (register_autograd protocol)
    q, k, v, p, g, clock, cos, sin, ckpt_state, ckpt_scan = ctx.saved_tensors
    dq, dk, dv, dp, dg, dc, dtrig = native_backward(q, k, v, p, g, clock, cos, sin, ctx.mask, ctx.segment,
                                                    ckpt_state, ckpt_scan, dout.contiguous())
    dcos = dsin = None
    if cos.numel():
        dcos, dsin = dtrig.to(cos.dtype).unbind(0)  # [T, E/2] each
    # p and g stand in for each other when their path is off: no gradient then.
    return (dq, dk, dv, dp if ctx.mask & 1 else None, dg if ctx.mask & 2 else None, dc, dcos, dsin, None, None)


native_forward.register_autograd(_native_grad, setup_context=_save_for_backward)


def caps_attention_native(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Linear CAPS with the selected paths (non-empty subset of (1, 2, 3)) by the native recurrence.

    The shared kernel signature (`dispatch.CAPSKernel`): q, k, p, g: [B, T, H, E]; v: [B, T, H, Ev];
    clock: [B, T, H] > 0; float32 or float64 CPU tensors of one dtype, E, Ev <= MAX_HEAD_DIM -> o [B, T, H, Ev].
    Same function as `chunked.caps_attention_chunked`. attn: "linear" only; chunk_size: unused (no chunks).
    rope_freq ω [E/2] (optional): q and k are rotated by RoPE (pair j of step t by the angle t ω_j from
    `rope.rope_angles`) inside the kernel, as `rope.rope_rotate` would rotate them;
    ω gets its gradient.
    The recurrence's gates are computed inside the kernel, a segment at a time, in the inputs' precision: w = exp(pt - m)
    with pt = p + log clock and m its running max, held constant (the output does not depend on m), r =
    exp(m_{t-1} - m_t), and d2m1 = expm1(-softplus(g) clock), path 2's decay minus one. The op's backward
    recomputes them and applies their chain rule, so autograd keeps p, g and clock and no gate tensor.
    Call only when `available()`.
    """
    if attn != "linear":
        raise ValueError(f"--caps_attn {attn} has no native form (linear only); pass --caps_impl naive")
    if not paths or any(path not in (1, 2, 3) for path in paths):
        raise ValueError(f"caps_attention_native needs a non-empty subset of paths 1, 2, 3, got {paths}")
    if max(q.shape[-1], v.shape[-1]) > MAX_HEAD_DIM:
        raise ValueError(f"caps_attention_native holds head widths up to MAX_HEAD_DIM = {MAX_HEAD_DIM}, got "
                         f"E = {q.shape[-1]}, Ev = {v.shape[-1]}; use the chunked kernel")
    cos, sin = rope_tables(q.shape[1], rope_freq, q.dtype)
    mask = path_mask(paths)
    # q stands in for a path that is off (never read then).
    p = p if 1 in paths else q
    g = g if 2 in paths else q
    return native_forward(*(_packed(x) for x in (q, k, v, p, g)), clock.contiguous(), cos, sin, mask, SEGMENT)[0]
