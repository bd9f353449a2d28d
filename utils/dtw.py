"""Dynamic time warping distance with |x - y| cost (TSLib's `--use_dtw` metric).

D[i, j] = |x_i - y_j| + min(D[i-1, j], D[i, j-1], D[i-1, j-1]); the distance is D[n-1, m-1].
Computed along anti-diagonals for a whole batch of series at once, keeping two diagonals in memory.
"""

from __future__ import annotations

import numpy as np


def batch_dtw(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """DTW distance of each pair of rows: x `[N, n]`, y `[N, m]` -> `[N]`."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    num, n = x.shape
    m = y.shape[1]
    # prev2 / prev1 hold diagonals d-2 and d-1; row i lives in column i + 1 and column 0 stays inf,
    # so the i - 1 neighbour of row 0 needs no special case.
    prev2 = np.full((num, n + 1), np.inf)
    prev1 = np.full((num, n + 1), np.inf)
    for d in range(n + m - 1):
        rows = np.arange(max(0, d - m + 1), min(n - 1, d) + 1)
        cost = np.abs(x[:, rows] - y[:, d - rows])  # [N, len(rows)]
        if d == 0:
            best = np.zeros_like(cost)
        else:
            best = np.minimum(np.minimum(prev1[:, rows], prev1[:, rows + 1]), prev2[:, rows])
        current = np.full((num, n + 1), np.inf)
        current[:, rows + 1] = cost + best
        prev2, prev1 = prev1, current
    return prev1[:, n]
