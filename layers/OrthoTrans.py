"""OrthoTrans (Yue et al., "OLinear: A Linear Model for Time Series Forecasting in Orthogonally
Transformed Domain", 2025, https://arxiv.org/abs/2505.08550): the data-adaptive orthogonal basis that
diagonalises a series' temporal Pearson correlation matrix.

For variate j of the training rows x^j `[M]` and T lags, the lagged series are
    s_i^j = x^j[i : M − T + 1 + i],   i = 0..T−1   (each n = M − T + 1 steps),
    CorrMat^j[i, k] = Pearson(s_i^j, s_k^j),    CorrMat = (1/N) Σ_j CorrMat^j   `[T, T]`,
and CorrMat = Qᵀ Λ Q with the rows of Q `[T, T]` its eigenvectors, by decreasing eigenvalue. A window
w `[T]` maps to w Qᵀ (its coordinates on the eigenvectors) and back by z Q.

`temporal_correlation` computes every window sum from prefix sums (O(T·M) per variate);
`segments_temporal_correlation` averages it over the separate series of a split such as M4's (each series
weighted as one variate);
`temporal_correlation_reference` is the direct float64 definition (used by the tests).
`cached_orthotrans_basis` stores the basis per training split (keyed by the split's content
fingerprint, which fixes the data file, the split borders, the features and the scaling, and by T)
under `<cache_dir>/orthotrans/`, written atomically (temporary file, then rename).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from utils.tools import atomic_np_save
from utils.train_split import TrainSplit

logger = logging.getLogger(__name__)

# Bumped when the basis definition changes, so stale cache files are never read.
BASIS_VERSION = 1


def _lag_sums(values: np.ndarray, lags: int, n: int) -> np.ndarray:
    """Σ_{u=i}^{i+n−1} values[u] for i = 0..lags−1, per column: `[lags, C]`."""
    prefix = np.concatenate([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])  # [rows+1, C]
    return prefix[n:n + lags] - prefix[:lags]


def temporal_correlation(data: np.ndarray, lags: int) -> np.ndarray:
    """The variate-averaged Pearson correlation `[lags, lags]` float64 of the `lags` lagged copies of each
    column of data `[M, N]`. Variates that are constant over some lagged copy are left out of the
    average (their correlation is undefined); with none left the identity is returned."""
    corr = _usable_correlations(data, lags)  # [T, T, k]
    if corr.shape[-1] == 0:
        return np.eye(lags)
    corr = corr.mean(axis=-1)
    np.fill_diagonal(corr, 1.0)
    return corr


def segments_temporal_correlation(segments: tuple[np.ndarray, ...], lags: int) -> np.ndarray:
    """`temporal_correlation` over several series `[M_i, N]`: the mean over every (series, variate) pair of
    its Pearson correlation `[lags, lags]`, as the variates of one series are averaged (each M4 series
    counts as one variate; a series of its own scale does not outweigh the others). Series of `lags` rows
    or fewer are left out; one series gives `temporal_correlation` of it."""
    if len(segments) == 1:
        return temporal_correlation(segments[0], lags)
    long_enough = [segment for segment in segments if len(segment) > lags]
    if not long_enough:
        raise ValueError(f"none of the {len(segments)} training series has more than {lags} values; the temporal "
                         f"correlation over {lags} lags needs at least {lags + 1}")
    total, count = np.zeros((lags, lags)), 0
    for segment in long_enough:
        corr = _usable_correlations(segment, lags)  # [T, T, k]
        total += corr.sum(axis=-1)
        count += corr.shape[-1]
    if count == 0:
        return np.eye(lags)
    total /= count
    np.fill_diagonal(total, 1.0)
    return total


def _usable_correlations(data: np.ndarray, lags: int) -> np.ndarray:
    """Per variate of data `[M, N]`, the Pearson correlation of its `lags` lagged copies: `[lags, lags, k]`
    float64 for the k variates that are not constant over any lagged copy."""
    x = np.asarray(data, dtype=np.float64)
    rows = x.shape[0]
    n = rows - lags + 1
    if n < 2:
        raise ValueError(f"the training split has {rows} rows; the temporal correlation over {lags} lags needs "
                         f"at least {lags + 1}")
    # Pearson is shift invariant: centring first keeps the sums of squares well conditioned.
    x = x - x.mean(axis=0)
    mean = _lag_sums(x, lags, n) / n  # [T, N]
    var = _lag_sums(x * x, lags, n) / n - mean**2  # [T, N]
    cross = np.empty((lags, lags, x.shape[1]))
    for d in range(lags):
        sums = _lag_sums(x[:rows - d] * x[d:], lags - d, n) / n  # [T-d, N]: E[s_i s_{i+d}]
        idx = np.arange(lags - d)
        cross[idx, idx + d] = sums
        cross[idx + d, idx] = sums
    cov = cross - mean[:, None, :] * mean[None, :, :]  # [T, T, N]
    scale = np.sqrt(np.clip(var, 0.0, None))  # [T, N]
    usable = (scale > 1e-12 * max(1.0, float(np.abs(x).max(initial=0.0)))).all(axis=0)  # [N]
    return cov[..., usable] / (scale[:, None, usable] * scale[None, :, usable])


def temporal_correlation_reference(data: np.ndarray, lags: int) -> np.ndarray:
    """`temporal_correlation` by its definition: the lagged copies of each variate stacked and passed
    to np.corrcoef, averaged over the variates (slow; for tests)."""
    x = np.asarray(data, dtype=np.float64)
    n = x.shape[0] - lags + 1
    mats = []
    for j in range(x.shape[1]):
        lagged = np.stack([x[i:i + n, j] for i in range(lags)])  # [T, n]
        if (lagged.std(axis=1) > 0).all():
            mats.append(np.corrcoef(lagged))
    return np.mean(mats, axis=0) if mats else np.eye(lags)


def orthotrans_basis(corr: np.ndarray) -> np.ndarray:
    """Q `[T, T]` float64 whose rows are the eigenvectors of the symmetric corr, by decreasing
    eigenvalue; each row's largest-magnitude entry is made positive (eigenvectors are defined up to
    sign, this fixes one)."""
    eigenvalues, vectors = np.linalg.eigh(corr)
    order = np.argsort(-eigenvalues, kind="stable")
    q = vectors[:, order].T  # [T, T], rows = eigenvectors
    signs = np.sign(q[np.arange(len(q)), np.abs(q).argmax(axis=1)])
    return q * signs[:, None]


def cache_path(cache_dir: Path, split: TrainSplit, lags: int) -> Path:
    """Where the basis of `split` at `lags` lags is cached."""
    return Path(cache_dir) / "orthotrans" / f"{split.fingerprint[:40]}_T{lags}_v{BASIS_VERSION}.npy"


def cached_orthotrans_basis(split: TrainSplit, lags: int) -> np.ndarray:
    """The OrthoTrans basis `[lags, lags]` float64 of the training split, read from the split's cache
    folder when present and valid, else computed (and stored there when the split has a cache folder)."""
    path = cache_path(split.cache_dir, split, lags) if split.cache_dir is not None else None
    if path is not None and path.is_file():
        try:
            cached = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            cached = None
        if cached is not None and cached.shape == (lags, lags) and cached.dtype == np.float64:
            return cached
        logger.info("OrthoTrans cache %s is unreadable; recomputing it", path)
    basis = orthotrans_basis(segments_temporal_correlation(split.segments, lags))
    if path is not None:
        atomic_np_save(path, basis)
    return basis
