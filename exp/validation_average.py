"""The validation loss that early stopping reads, averaged one of two ways (`--vali_loss`):

- `samples` (default): L = Σ_b S_b / Σ_b n_b — S_b the summed squared error of batch b, n_b its element
  count — the mean over every validation element, independent of the batch size;
- `batches` (TSLib): L = (1/K) Σ_b S_b / n_b — the unweighted mean of the K per-batch means, where each
  element of a short last batch weighs more than the others.

Under DDP the sums (or the per-batch means and the batch count) are added over all ranks' shards.
"""

from __future__ import annotations

from exp.distributed import DistContext, all_reduce_sum


class ValidationAverage:
    """Accumulates (squared-error sum, element count) per batch; `result` gives the chosen average."""

    def __init__(self, how: str) -> None:
        if how not in ("samples", "batches"):
            raise ValueError(f"--vali_loss {how!r} is not supported; use samples or batches")
        self.how = how
        self.total, self.count = 0.0, 0.0

    def add(self, squared_error_sum: float, n: int) -> None:
        """One batch: the sum of its squared errors over its `n` elements (a batch with n = 0 is skipped
        under `batches`, whose per-batch mean would be undefined)."""
        if self.how == "samples":
            self.total += squared_error_sum
            self.count += n
        elif n > 0:
            self.total += squared_error_sum / n
            self.count += 1

    def result(self, dist: DistContext) -> float:
        total, count = all_reduce_sum([self.total, self.count], dist)
        return total / max(count, 1.0)
