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


def _accumulated_cost(cost: np.ndarray) -> np.ndarray:
    """D ``[N, P+1, S+1]`` (row and column 0 are the inf border, D[:, 0, 0] = 0) from cost ``[N, P, S]``."""
    num, p_len, s_len = cost.shape
    acc = np.full((num, p_len + 1, s_len + 1), np.inf)
    acc[:, 0, 0] = 0.0
    for d in range(p_len + s_len - 1):
        rows = np.arange(max(0, d - s_len + 1), min(p_len - 1, d) + 1)
        cols = d - rows
        best = np.minimum(np.minimum(acc[:, rows, cols], acc[:, rows, cols + 1]), acc[:, rows + 1, cols])
        acc[:, rows + 1, cols + 1] = cost[:, rows, cols] + best
    return acc


def _traceback(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Warping path (prototype indices, sample indices) through one accumulated matrix ``[P+1, S+1]``."""
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    path_p, path_s = [i - 1], [j - 1]
    while i > 1 or j > 1:
        step = int(np.argmin((acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])))
        if step == 0:
            i, j = i - 1, j - 1
        elif step == 1:
            i -= 1
        else:
            j -= 1
        path_p.append(i - 1)
        path_s.append(j - 1)
    return np.asarray(path_p[::-1]), np.asarray(path_s[::-1])


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
              return_path: bool = True, chunk: int = 64,
              ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]] | None]:
    """DTW of each pair (prototypes[n], samples[n]): ``[N, P, C]`` and ``[N, S, C]``.

    window: Sakoe-Chiba band half-width (None: unconstrained); the band always admits a path
    because it is widened to |P - S| when narrower. Returns the distances ``[N]`` and, when
    return_path, a list of N paths (prototype indices ``[K]``, sample indices ``[K]``), monotone,
    from (0, 0) to (P-1, S-1). Pairs are processed `chunk` at a time to bound memory (N*P*S floats).
    """
    prototypes = np.asarray(prototypes, dtype=np.float64)
    samples = np.asarray(samples, dtype=np.float64)
    if prototypes.ndim != 3 or samples.ndim != 3 or prototypes.shape[0] != samples.shape[0]:
        raise ValueError(f"dtw_align needs [N, P, C] and [N, S, C] arrays, got {prototypes.shape} and {samples.shape}")
    num, p_len, s_len = prototypes.shape[0], prototypes.shape[1], samples.shape[1]
    if p_len == 0 or s_len == 0:
        raise ValueError("dtw_align needs non-empty series")
    band = None if window is None else max(int(window), abs(p_len - s_len))
    outside = None
    if band is not None:
        outside = np.abs(np.arange(p_len)[:, None] - np.arange(s_len)[None, :]) > band  # [P, S]
    distances = np.empty(num)
    paths: list[tuple[np.ndarray, np.ndarray]] | None = [] if return_path else None
    for start in range(0, num, chunk):
        p, s = prototypes[start:start + chunk], samples[start:start + chunk]
        cost = np.linalg.norm(p[:, :, None, :] - s[:, None, :, :], axis=-1)  # [n, P, S]
        if outside is not None:
            cost[:, outside] = np.inf
        acc = _accumulated_cost(cost)
        distances[start:start + len(p)] = acc[:, -1, -1]
        if paths is not None:
            paths.extend(_traceback(a) for a in acc)
    return distances, paths
