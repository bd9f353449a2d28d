"""Seed every random number generator a run touches, and switch torch to deterministic kernels."""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator

import numpy as np
import torch

# cuBLAS needs a fixed workspace to be deterministic (CUDA >= 10.2); ":4096:8" is the documented choice.
CUBLAS_WORKSPACE = ":4096:8"


def seed_everything(seed: int) -> None:
    """Seed python's `random`, numpy and torch (CPU and every CUDA device)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@contextlib.contextmanager
def deterministic_mode(enabled: bool) -> Iterator[None]:
    """Within the block (when `enabled`): `torch.use_deterministic_algorithms(True)`, cuDNN deterministic
    with benchmarking off, and CUBLAS_WORKSPACE_CONFIG set unless the user already chose one. The
    previous settings come back on exit, so a library caller's process is left as it was."""
    if not enabled:
        yield
        return
    previous = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
                torch.backends.cudnn.benchmark, os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        algorithms, cudnn_deterministic, cudnn_benchmark, workspace = previous
        torch.use_deterministic_algorithms(algorithms)
        torch.backends.cudnn.deterministic = cudnn_deterministic
        torch.backends.cudnn.benchmark = cudnn_benchmark
        if workspace is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
