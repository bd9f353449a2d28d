"""Host-memory allocator tuning: keep large freed blocks in the process instead of unmapping them.

glibc's malloc serves every block above its mmap threshold (at most 32 MiB by its dynamic rule) with a
fresh `mmap` and returns it to the kernel on `free`. A CPU training step allocates and frees activations
of tens to hundreds of MiB (CAPS at ETTh1 H = 720: `[224, 816, 128]` float32 = 94 MiB per MLP
activation), so every such tensor is paged in again, one page fault and one zeroed 4 KiB page at a time:
an elementwise op on it runs several times slower than on reused memory. Raising the mmap threshold to
1 GiB serves smaller blocks from the heap, and turning off heap trimming keeps freed heap memory for
the next step, as PyTorch's CUDA caching allocator keeps device memory. (Trimming must be off, not
merely raised: a step whose activations exceed the trim threshold frees them all at once at its end,
and the heap top would be returned to the kernel and paged in again.)

Cost: the process keeps its peak heap size (blocks of 1 GiB or more are still mapped and unmapped).
The setting is process-wide and inherited by forked data-loader workers. It applies only to glibc
(Linux); elsewhere `retain_freed_memory` does nothing and returns False.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import platform

logger = logging.getLogger(__name__)

HOST_MALLOC_CHOICES = ("retain", "system")
# mallopt parameters (glibc <malloc.h>).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
# Blocks below this size are served from the heap. mallopt takes a C int, so it must stay below 2 GiB.
RETAIN_BYTES = 1 << 30
# M_TRIM_THRESHOLD -1: never return the top of the heap to the kernel (glibc's documented value).
NO_TRIM = -1


def retain_freed_memory(limit_bytes: int = RETAIN_BYTES) -> bool:
    """Set glibc's mmap threshold to `limit_bytes` (1 B .. 2 GiB - 1) and turn heap trimming off. Returns
    True when both were set, False on a non-glibc C library (nothing changed)."""
    if not 0 < limit_bytes < 2**31:
        raise ValueError(f"limit_bytes must lie in [1, 2**31 - 1] (mallopt takes a C int), got {limit_bytes}")
    if platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    ok = libc.mallopt(M_MMAP_THRESHOLD, limit_bytes) == 1 and libc.mallopt(M_TRIM_THRESHOLD, NO_TRIM) == 1
    if not ok:
        logger.warning("glibc refused mallopt(%d); host memory is allocated with its default thresholds", limit_bytes)
    return ok


def configure_host_malloc(choice: str) -> bool:
    """Apply `--host_malloc`: "retain" calls `retain_freed_memory()`, "system" leaves malloc as it is.
    Returns whether the allocator was changed."""
    if choice not in HOST_MALLOC_CHOICES:
        raise ValueError(f"--host_malloc {choice!r} is not supported; valid choices: {', '.join(HOST_MALLOC_CHOICES)}")
    return choice == "retain" and retain_freed_memory()
