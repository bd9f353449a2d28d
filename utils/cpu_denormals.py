"""Subnormal floats on the CPU: flush them to zero for a run (`--cpu_denormals flush`), or keep them.

A float32 below 2^-126 ≈ 1.18e-38 in magnitude is subnormal; x86 cores compute with subnormal operands in
microcode, tens of times slower than with normal ones. A trained model can feed whole tensors of them to a
kernel: TimesNet's period weights are a softmax over FFT amplitudes that grow to 100–200 in training, so
a branch weighted e^-100 ≈ 4e-44 passes a subnormal gradient to its whole Inception backward (TSLib's
ETTh1-336 script, trained 5 epochs: 11 s a backward step against 0.5 s flushed, one thread). Flushing
(FTZ + DAZ in MXCSR, `torch.set_flush_denormal`) reads and writes them as zero. What that changes is
below float32's resolution beside any normal term (1 + 4e-44 = 1 in float32), and Adam divides a
gradient by √v + 1e-8, so a subnormal gradient moves no weight; benchmarks/bench_cpu_denormals.py
measures both on a trained checkpoint.

MXCSR is per thread and a new thread copies its creator's, so the setting reaches torch's intra-op
threads only when set before they start (a fresh run.py process: the comparison runner starts each run
so). `cpu_denormals` checks that every thread flushes and says so in one line when some do not.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import torch

logger = logging.getLogger(__name__)

# 1e-20² = 1e-40 is subnormal in float32: kept, it is nonzero; flushed, it is zero.
_SQUARED_TO_SUBNORMAL = 1e-20
# Elements enough for torch to split the product over every intra-op thread (its grain is 32 768).
_PROBE_ELEMENTS = 1 << 20


def flushing_share(elements: int = _PROBE_ELEMENTS) -> float:
    """Share (0..1) of a product of `elements` subnormal-valued results that the CPU flushed to zero: 1.0
    when every thread that computed it flushes, 0.0 when none does. `elements` = 1 probes the calling thread."""
    x = torch.full((elements,), _SQUARED_TO_SUBNORMAL, dtype=torch.float32)
    return ((x * x) == 0).float().mean().item()


@contextlib.contextmanager
def cpu_denormals(flush: bool) -> Iterator[None]:
    """Within the block: subnormal floats flushed to zero on the CPU (`flush`) or kept (IEEE gradual underflow).
    The calling thread's previous setting comes back on exit; pool threads started inside the block keep it."""
    previous = flushing_share(1) == 1.0
    mode = "flush" if flush else "keep"
    if not torch.set_flush_denormal(flush) and flush:
        logger.warning("--cpu_denormals flush: this CPU cannot flush subnormal floats (torch.set_flush_denormal "
                       "needs SSE3 on x86); they are kept, which can make CPU steps slower")
    elif flushing_share() != float(flush):
        logger.warning("--cpu_denormals %s: torch's CPU threads started before this run and keep their own "
                       "setting, so only some of them %s subnormal floats; start the run as its own process "
                       "(python run.py ...) to set all of them", mode, mode)
    try:
        yield
    finally:
        torch.set_flush_denormal(previous)
