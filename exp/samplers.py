"""Which window indices each process reads, in which order.

Training shuffles with `DistributedSampler` (one process is the case `world_size=1`, where it neither pads
nor drops), so the permutation of an epoch is a pure function of ``(seed, epoch)``: a resumed run replays
it exactly, and `ResumableSampler` skips the windows the interrupted run had already used. Evaluation
reads contiguous, non-overlapping shards (`ShardSampler`) so that concatenating the shards in rank order
gives every window exactly once, in file order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from torch.utils.data import DistributedSampler, Sampler


class ResumableSampler(Sampler[int]):
    """Wrap a `DistributedSampler`; `skip(n)` drops the first `n` indices of the next iteration only.

    With ``drop_last=False`` batches are consecutive runs of `batch_size` indices, so skipping
    ``step * batch_size`` indices skips exactly the first `step` batches of the epoch.
    """

    def __init__(self, base: DistributedSampler) -> None:
        self.base = base
        self._skip = 0

    def set_epoch(self, epoch: int) -> None:
        self.base.set_epoch(epoch)

    def skip(self, n: int) -> None:
        self._skip = n

    def __iter__(self) -> Iterator[int]:
        skip, self._skip = self._skip, 0
        return itertools.islice(iter(self.base), skip, None)

    def __len__(self) -> int:
        return max(len(self.base) - self._skip, 0)


def shard_bounds(n: int, rank: int, world_size: int) -> tuple[int, int]:
    """[start, end) of rank's contiguous shard of `n` items; sizes differ by at most one, none padded."""
    return n * rank // world_size, n * (rank + 1) // world_size


class ShardSampler(Sampler[int]):
    """The indices ``shard_bounds(n, rank, world_size)`` in increasing order (evaluation)."""

    def __init__(self, n: int, rank: int = 0, world_size: int = 1) -> None:
        self.start, self.end = shard_bounds(n, rank, world_size)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.end))

    def __len__(self) -> int:
        return self.end - self.start
