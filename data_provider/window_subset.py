"""Every k-th window of a forecasting split: a cheaper, clearly labelled estimate of a model's test score.

A model too slow to score all ~2 800 ETTh1 test windows on a CPU (a foundation model forecasting each channel
autoregressively) can be scored on windows 0, k, 2k, ... of the same split; the record and the setting
string carry k, so such a score is never mistaken for one over every window.
"""

from __future__ import annotations

import math
from typing import Any

from torch.utils.data import Dataset


class EveryKthWindow(Dataset):
    """Windows 0, k, 2k, ... of `dataset`; every other attribute (scaler, `scale`, `inverse_transform`) is the
    dataset's own."""

    def __init__(self, dataset: Dataset, every: int) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.dataset = dataset
        self.every = every

    def __len__(self) -> int:
        return math.ceil(len(self.dataset) / self.every)

    def __getitem__(self, index: int) -> Any:
        if not 0 <= index < len(self):
            raise IndexError(f"window {index} of {len(self)}")
        return self.dataset[index * self.every]

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this view lacks; `dataset` itself is set in __init__.
        if name == "dataset":
            raise AttributeError(name)
        return getattr(self.dataset, name)
