"""Boolean attention masks in TSLib's form (`utils/masking.py`): an object whose `.mask` is True where a
position is hidden, so TSLib model files that build masks themselves run unchanged."""

from __future__ import annotations

import torch


class TriangularCausalMask:
    """Causal mask `[B, 1, L, L]`: True where key position s > query position l."""

    def __init__(self, B: int, L: int, device: torch.device | str = "cpu") -> None:  # noqa: N803 (TSLib's names)
        self._mask = torch.ones(L, L, dtype=torch.bool, device=device).triu(diagonal=1).expand(B, 1, L, L)

    @property
    def mask(self) -> torch.Tensor:
        return self._mask
