"""Dynamic time warping alignment (distance and warping path) for the DTW-based augmentations.

Step cost c[i, j] = ||p_i - s_j||_2 between time steps of a prototype p ``[P, C]`` and a sample
s ``[S, C]``; symmetric step pattern D[i, j] = c[i, j] + min(D[i-1, j-1], D[i-1, j], D[i, j-1]) with
D[-1, -1] = 0; an optional Sakoe-Chiba band keeps |i - j| <= window. The distance is D[P-1, S-1]
(as in Iwana & Uchida's utils/dtw.py that TSLib ships). The traceback walks from the end to (0, 0)
preferring the diagonal, then the prototype step, then the sample step on ties.

shapeDTW (Zhao & Itti, Pattern Recognition 2018) runs the same recursion on raw-subsequence shape
descriptors (a window of neighbouring steps around every point) instead of single steps.

The recursion runs along anti-diagonals for a batch of equal-length pairs at once; `utils/dtw.py`
is the 1-D |x - y| distance used by the forecasting metric.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dtw_align", "shape_descriptors"]


def _accumulated_cost(prototypes: np.ndarray, samples: np.ndarray, band: int | None,
                      split: np.ndarray | None) -> np.ndarray:
    """D ``[N, P+1, S+1]`` (row and column 0 are the inf border, D[:, 0, 0] = 0) of the pairs
    ``[N, P, C]``, ``[N, S, C]``; cells outside the band stay inf and are never computed, and so
    do cells on opposite sides of a pair's `split` step ``[N]``."""
    num, p_len, s_len = prototypes.shape[0], prototypes.shape[1], samples.shape[1]
    band = max(p_len, s_len) if band is None else band
    acc = np.full((num, p_len + 1, s_len + 1), np.inf)
    acc[:, 0, 0] = 0.0
    for d in range(p_len + s_len - 1):
        rows, cols, cost = _diagonal_cost(prototypes, samples, d, band, split)
        best = np.minimum(np.minimum(acc[:, rows, cols], acc[:, rows, cols + 1]), acc[:, rows + 1, cols])
        acc[:, rows + 1, cols + 1] = cost + best
    return acc


def _diagonal_cost(prototypes: np.ndarray, samples: np.ndarray, d: int, band: int, split: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows i, columns j = d - i, step costs c[i, j] ``[N, len(rows)]``) of the band's cells on anti-diagonal d;
    a cell whose i and j lie on opposite sides of its pair's `split` step costs inf."""
    rows = _band_rows(d, prototypes.shape[1], samples.shape[1], band)
    cols = d - rows
    cost = np.linalg.norm(prototypes[:, rows] - samples[:, cols], axis=-1)  # [N, len(rows)]
    if split is not None:
        cost[(rows[None] < split[:, None]) != (cols[None] < split[:, None])] = np.inf
    return rows, cols, cost


def _band_rows(d: int, p_len: int, s_len: int, band: int) -> np.ndarray:
    """Rows i of anti-diagonal d (cells (i, d - i)) inside the matrix and the band |i - j| <= band."""
    low = max(0, d - s_len + 1, -((band - d) // 2))
    high = min(p_len - 1, d, (d + band) // 2)
    return np.arange(low, high + 1)


def _distances(prototypes: np.ndarray, samples: np.ndarray, band: int, split: np.ndarray | None) -> np.ndarray:
    """D[P-1, S-1] of every pair, keeping only the last two anti-diagonals (indexed by row + 1,
    column 0 the inf border) instead of the whole matrix."""
    num, p_len, s_len = prototypes.shape[0], prototypes.shape[1], samples.shape[1]
    prev2 = np.full((num, p_len + 1), np.inf)
    prev1 = np.full((num, p_len + 1), np.inf)
    for d in range(p_len + s_len - 1):
        rows, cols, cost = _diagonal_cost(prototypes, samples, d, band, split)
        if d == 0:
            best = np.zeros_like(cost)
        else:
            # D[i-1, j-1] on diagonal d-2, D[i-1, j] and D[i, j-1] on diagonal d-1
            best = np.minimum(np.minimum(prev2[:, rows], prev1[:, rows]), prev1[:, rows + 1])
        current = np.full((num, p_len + 1), np.inf)
        current[:, rows + 1] = cost + best
        prev2, prev1 = prev1, current
    return prev1[:, p_len]


def _traceback(acc: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Warping paths (prototype indices, sample indices) through accumulated matrices ``[N, P+1, S+1]``,
    all pairs walked back in lockstep; a finished pair waits at (1, 1)."""
    num, rows, cols = acc.shape
    batch = np.arange(num)
    i, j = np.full(num, rows - 1), np.full(num, cols - 1)
    trail_i, trail_j, alive = [i - 1], [j - 1], [np.ones(num, dtype=bool)]
    while True:
        active = (i > 1) | (j > 1)
        if not active.any():
            break
        options = np.stack((acc[batch, i - 1, j - 1], acc[batch, i - 1, j], acc[batch, i, j - 1]))  # [3, N]
        step = np.argmin(options, axis=0)  # first minimum: diagonal, then prototype, then sample step
        i = np.where(active & (step != 2), i - 1, i)
        j = np.where(active & (step != 1), j - 1, j)
        trail_i.append(i - 1)
        trail_j.append(j - 1)
        alive.append(active)
    trail_i, trail_j, alive = np.stack(trail_i), np.stack(trail_j), np.stack(alive)  # [K, N]
    return [(trail_i[alive[:, n], n][::-1], trail_j[alive[:, n], n][::-1]) for n in range(num)]


def shape_descriptors(x: np.ndarray, ratio: float = 0.05) -> np.ndarray:
    """Raw-subsequence shapeDTW descriptors: x ``[N, T, C]`` -> ``[N, T, w*C]``.

    The descriptor of step t is the window of w = clip(round(ratio*T), 5, 100) steps starting
    ceil(w/2) steps before t, with the series edge-padded at both ends.
    """
    num, length, channels = x.shape
    width = int(np.clip(np.round(length * ratio), 5, 100))
    front = int(np.ceil(width / 2))
    padded = np.pad(x, ((0, 0), (front, width - front), (0, 0)), mode="edge")  # [N, T+w, C]
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=1)[:, :length]  # [N, T, C, w]
    return windows.reshape(num, length, channels * width)


def dtw_align(prototypes: np.ndarray, samples: np.ndarray, window: int | None = None,
              return_path: bool = True, chunk: int | None = None, split: np.ndarray | None = None,
              ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]] | None]:
    """DTW of each pair (prototypes[n], samples[n]): ``[N, P, C]`` and ``[N, S, C]``.

    window: Sakoe-Chiba band half-width (None: unconstrained); the band always admits a path
    because it is widened to |P - S| when narrower. split ``[N]`` (equal lengths only): align
    steps [0, split) and [split, T) separately, i.e. the path passes from (split-1, split-1) to
    (split, split), as SPAWNER does. Returns the distances ``[N]`` and, when
    return_path, a list of N paths (prototype indices ``[K]``, sample indices ``[K]``), monotone,
    from (0, 0) to (P-1, S-1). Pairs are processed `chunk` at a time (None: as many as fit in
    about 64 MiB of accumulated cost).
    """
    prototypes = np.asarray(prototypes, dtype=np.float64)
    samples = np.asarray(samples, dtype=np.float64)
    if prototypes.ndim != 3 or samples.ndim != 3 or prototypes.shape[0] != samples.shape[0]:
        raise ValueError(f"dtw_align needs [N, P, C] and [N, S, C] arrays, got {prototypes.shape} and {samples.shape}")
    num, p_len, s_len = prototypes.shape[0], prototypes.shape[1], samples.shape[1]
    if p_len == 0 or s_len == 0:
        raise ValueError("dtw_align needs non-empty series")
    band = None if window is None else max(int(window), abs(p_len - s_len))
    if split is not None:
        split = np.asarray(split, dtype=np.int64)
        if p_len != s_len or split.shape != (num,) or np.any((split < 1) | (split >= p_len)):
            raise ValueError("split needs equal lengths T and one step in [1, T-1] per pair")
    if not return_path:
        return _distances(prototypes, samples, max(p_len, s_len) if band is None else band, split), None
    if chunk is None:
        # bound the accumulated matrices to about 2^23 cells (64 MiB)
        chunk = max(1, 2 ** 23 // ((p_len + 1) * (s_len + 1)))
    distances = np.empty(num)
    paths: list[tuple[np.ndarray, np.ndarray]] = []
    for start in range(0, num, chunk):
        part = None if split is None else split[start:start + chunk]
        acc = _accumulated_cost(prototypes[start:start + chunk], samples[start:start + chunk], band, part)
        distances[start:start + len(acc)] = acc[:, -1, -1]
        paths.extend(_traceback(acc))
    return distances, paths
