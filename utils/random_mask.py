"""TSLib's imputation mask: each point of a window is hidden independently with probability mask_rate.

    u ~ U[0, 1) of shape [B, L, C] (one `torch.rand` on the CPU, TSLib's draw), mask = 0 where u ≤ rate
    (hidden), 1 elsewhere (observed); the model sees x · mask.

Drawn on the CPU and then moved, so a seed gives the same mask on every device (TSLib draws on the CPU
too, then calls `.to(device)`). `generator` None draws from the global torch RNG, as TSLib does.
"""

from __future__ import annotations

import hashlib

import torch

#: mask value of a hidden (to be imputed, scored) point and of an observed one
MASKED, OBSERVED = 0.0, 1.0


def random_point_mask(shape: tuple[int, ...], mask_rate: float, generator: torch.Generator | None = None,
                      device: torch.device | str = "cpu") -> torch.Tensor:
    """Float mask of `shape` (`[B, L, C]`): 0.0 hidden with probability mask_rate, 1.0 observed."""
    u = torch.rand(shape, generator=generator)
    return torch.where(u <= mask_rate, MASKED, OBSERVED).to(device)


def mask_seed(seed: int, *parts: int) -> int:
    """A 63-bit seed for a `torch.Generator`, a fixed function of (seed, parts) (SHA-256 of their decimal
    form), so a mask drawn under it depends on what is named and nothing else (not on earlier draws)."""
    digest = hashlib.sha256(",".join(str(int(v)) for v in (seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1
