"""Linear CAPS on CUDA through flash-linear-attention's Triton kernel `chunk_gla` (impl="fla", opt-in).

The paths concatenated along features are one gated linear attention (GLA) of key width F = n_paths E:
    S_t = diag(exp(ell_t)) S_{t-1} + kt_t^T v_t,   o_t = qt_t S_t
with the chunked kernel's features (`maths._path_features`). fla-core is optional (`pip install fla-core`,
imported on first use; it needs Triton and CUDA). `gated_linear_attention_recurrent` is chunk_gla's
convention step by step, its stand-in where Triton cannot run. Derivation, the width padding and the
autotuning switch: layers/caps/README.md, "Triton kernel on CUDA".
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F
from einops import rearrange

from layers.caps.maths import _path_features
from layers.caps.options import _check_chunk, parse_paths, resolve_attn_impl
from layers.caps.rope import _rotated

# The optional package whose Triton kernel `fla.ops.gla.chunk_gla` runs impl="fla" (CUDA only).
FLA_PACKAGE = "fla-core"
# Narrowest key and value widths chunk_gla compiles for: its backward's tl.dot needs an inner dimension
# >= 16 (seen on an H200, fla-core 0.6.0, Triton 3.6: CAPS's head width 8 failed to compile), so
# `caps_attention_fla` zero-pads narrower features and values (exact: a zero key feature adds nothing).
FLA_MIN_WIDTH = 16
# Environment variable: "1" (default) lets fla autotune every Triton kernel on its first call in a process
# (hundreds of configs for chunk_gla's forward and backward: minutes on a fresh machine); "0" has Triton keep
# one config per kernel by a fixed rule instead (`limit_fla_autotuning`): the first call only compiles.
FLA_AUTOTUNE_ENV = "CAPS_FLA_AUTOTUNE"
# The fla modules of chunk_gla's kernels (their autotuners are the ones "0" limits).
FLA_GLA_MODULES = ("fla.ops.gla.chunk", "fla.ops.common.chunk_h", "fla.ops.utils.cumsum", "fla.ops.utils.index")


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
