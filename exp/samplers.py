"""Which window indices each process reads, in which order, and what that draws from the global torch RNG.

Two train orders (``--rng_stream``):

- ``tslib`` (one process): `GlobalStreamSampler` draws from the global torch RNG exactly what TSLib's
  shuffled DataLoader draws — two numbers per iteration (the iterator's base seed, then RandomSampler's
  seed) — and yields ``randperm(n)`` under the second. Evaluation samplers draw what TSLib's val (shuffled:
  two) and test (not shuffled: one) iterators draw. With the same seed, a run therefore initialises,
  shuffles and drops out as TSLib does. A resumed epoch replays its recorded seed without drawing.
- ``epoch``: `DistributedSampler` (one process is the case `world_size=1`, where it neither pads nor
  drops), so the permutation of an epoch is a pure function of ``(seed, epoch)`` and nothing draws from
  the global RNG; required under torchrun, where ranks must agree on the permutation.

Either way `skip` drops the windows an interrupted run had already used. Evaluation reads contiguous,
non-overlapping shards (`ShardSampler`) so that concatenating the shards in rank order gives every window
exactly once, in file order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import torch
from torch.utils.data import DistributedSampler, Sampler

#: global-RNG draws per iteration of TSLib's loaders: base seed (+ RandomSampler's seed when shuffled)
TSLIB_EVAL_DRAWS = {"val": 2, "test": 1}


def draw_global_seed() -> int:
    """One int64 from the global torch RNG, the draw a DataLoader iterator or a RandomSampler makes."""
    return int(torch.empty((), dtype=torch.int64).random_().item())


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

    def epoch_length(self) -> int:
        """Windows this rank reads in a whole epoch."""
        return len(self.base)

    def __iter__(self) -> Iterator[int]:
        skip, self._skip = self._skip, 0
        return itertools.islice(iter(self.base), skip, None)

    def __len__(self) -> int:
        return max(len(self.base) - self._skip, 0)

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Nothing to restore: the permutation follows from (seed, epoch)."""


class GlobalStreamSampler(Sampler[int]):
    """TSLib's train order for `n` windows: per iteration, two draws from the global torch RNG (DataLoader
    base seed, RandomSampler seed s), then ``randperm(n, generator=Generator().manual_seed(s))``.

    `state_dict` records s of the current epoch; after `load_state_dict` the next iteration reuses it and
    draws nothing (a resumed run restores the RNG state saved after the original draws).
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.seed: int | None = None
        self._replay: int | None = None
        self._skip = 0

    def set_epoch(self, epoch: int) -> None:
        """Nothing to do: the order comes from the RNG stream, not from the epoch number."""

    def skip(self, n: int) -> None:
        self._skip = n

    def epoch_length(self) -> int:
        """Windows read in a whole epoch."""
        return self.n

    def state_dict(self) -> dict:
        return {"seed": self.seed}

    def load_state_dict(self, state: dict) -> None:
        self._replay = state.get("seed")

    def __iter__(self) -> Iterator[int]:
        skip, self._skip = self._skip, 0
        if self._replay is not None:
            self.seed, self._replay = self._replay, None
        else:
            draw_global_seed()  # the base seed TSLib's DataLoader iterator draws
            self.seed = draw_global_seed()
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed)).tolist()
        return iter(order[skip:])

    def __len__(self) -> int:
        return max(self.n - self._skip, 0)


def shard_bounds(n: int, rank: int, world_size: int) -> tuple[int, int]:
    """[start, end) of rank's contiguous shard of `n` items; sizes differ by at most one, none padded."""
    return n * rank // world_size, n * (rank + 1) // world_size


class ShardSampler(Sampler[int]):
    """The indices ``shard_bounds(n, rank, world_size)`` in increasing order (evaluation); each iteration
    first makes `global_draws` draws from the global torch RNG (see `TSLIB_EVAL_DRAWS`).

    `shuffle` (one process, two draws: TSLib's shuffled validation loader) yields instead the permutation
    TSLib's RandomSampler yields under the second draw. The order matters only to an average that
    depends on how windows fall into batches (`--vali_loss batches`)."""

    def __init__(self, n: int, rank: int = 0, world_size: int = 1, global_draws: int = 0,
                 shuffle: bool = False) -> None:
        if shuffle and (world_size != 1 or global_draws != TSLIB_EVAL_DRAWS["val"]):
            raise ValueError("a shuffled evaluation order is TSLib's validation loader's: one process, two draws")
        self.start, self.end = shard_bounds(n, rank, world_size)
        self.global_draws = global_draws
        self.shuffle = shuffle

    def __iter__(self) -> Iterator[int]:
        seed = None
        for _ in range(self.global_draws):
            seed = draw_global_seed()
        if self.shuffle:
            return iter(torch.randperm(self.end, generator=torch.Generator().manual_seed(seed)).tolist())
        return iter(range(self.start, self.end))

    def __len__(self) -> int:
        return self.end - self.start
