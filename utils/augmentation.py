"""Time-series data augmentation: TSLib's `--augmentation_ratio` and its 15 preset flags.

The methods of Iwana & Uchida, "An empirical survey of data augmentation for time series
classification with neural networks" (PLOS ONE 2021), with the defaults TSLib uses:

==================  ==============================================================  =========================
flag                method                                                          defaults
==================  ==============================================================  =========================
--jitter            add N(0, σ²) noise to every value (Um et al. 2017)               σ = 0.03
--scaling           multiply each channel by a factor ~ N(1, σ²) (Um et al. 2017)     σ = 0.1
--rotation          flip the sign of each channel at random and shuffle the          -
                    channels (TSLib's multivariate "rotation")
--permutation       cut into 1..4 equal segments and shuffle them (Um et al. 2017)   max_segments = 5
--randompermutation the same with random cut points                                  max_segments = 5
--magwarp           multiply by a cubic spline through knot values ~ N(1, σ²)         σ = 0.2, 4 knots
--timewarp          resample along a smooth monotone time warp (cubic spline)        σ = 0.2, 4 knots
--windowslice       stretch a random slice of 90 % of the length to the full length  reduce_ratio = 0.9
                    (Le Guennec et al. 2016)
--windowwarp        speed up or slow down (×0.5 or ×2) a random window of 10 %        window_ratio = 0.1
                    (Le Guennec et al. 2016)
--spawner           SPAWNER (Kamycki et al. 2019): average of a same-class pair      σ = 0.05, band ⌈T/10⌉
                    aligned by DTW with a random split point, then jitter
--dtwwarp           random guided warping (Iwana & Uchida 2020): warp onto the time  band ⌈T/10⌉
                    axis of a random same-class prototype by DTW
--shapedtwwarp      the same with shapeDTW                                           band ⌈T/10⌉
--wdba              weighted DTW barycentre averaging (Forestier et al. 2017) of 6    batch 6, band ⌈T/10⌉
                    random same-class series around their medoid
--discdtw           discriminative guided warping (Iwana & Uchida 2020): warp onto   batch 6, band ⌈T/10⌉
                    the most discriminative of 3 same-class prototypes (vs 3 of
                    other classes), then a window slice that shrinks with the warp
--discsdtw          the same with shapeDTW                                           batch 6, band ⌈T/10⌉
==================  ==============================================================  =========================

Inputs are ``[N, T, C]`` (samples, time, channels); labels ``[N]`` class ids or ``[N, K]`` one-hot.
Every method takes an optional `rng` (a numpy RandomState; None draws from numpy's global one, as
TSLib does). `augment` applies the chosen presets in TSLib's order (jitter, scaling, rotation,
permutation, randompermutation, magwarp, timewarp, windowslice, windowwarp, spawner, dtwwarp,
shapedtwwarp, wdba, discdtw, discsdtw) and returns TSLib's tag ("_jitter_scaling..."). The entry
points seed a private RandomState with --seed, so they never touch numpy's global state:

* `run_augmentation(x, y, args)`: the survey's protocol (classification): the train set grows to
  (1 + ratio)·N samples, the original followed by `ratio` augmented copies, labels repeated.
* `run_augmentation_single(x, y, args)`: TSLib's call in its loaders: `ratio` rounds each from the
  original x, the last one kept; y is returned unchanged.
* `augment_series(series, args)`: the forecasting loaders' train split ``[rows, C]``, augmented as
  one series ``[1, rows, C]`` (see its docstring for which of x and y change).

The presets that need class labels (spawner, dtwwarp, shapedtwwarp, wdba, discdtw, discsdtw) are
listed in `LABEL_PRESETS`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Sequence

import numpy as np
from scipy.interpolate import CubicSpline

from utils.dtw_path import dtw_align, shape_descriptors
from utils.flag_defaults import flag_default

__all__ = [
    "LABEL_PRESETS", "PRESETS", "TIME_MOVING_PRESETS", "TSLIB_AUGMENTATION_SEED", "augment", "augment_series",
    "chosen_presets", "discriminative_guided_warp", "discriminative_guided_warp_shape", "jitter", "magnitude_warp",
    "permutation", "random_guided_warp", "random_guided_warp_shape", "rotation", "run_augmentation",
    "run_augmentation_single", "scaling", "spawner", "time_warp", "wdba", "window_slice", "window_warp",
]

logger = logging.getLogger(__name__)

Rng = np.random.RandomState

#: TSLib's --seed default, used when `args` carries no seed.
TSLIB_AUGMENTATION_SEED = 2

#: preset flag -> tag TSLib appends for it, in the order TSLib applies them.
PRESETS: dict[str, str] = {
    "jitter": "_jitter", "scaling": "_scaling", "rotation": "_rotation", "permutation": "_permutation",
    "randompermutation": "_randomperm", "magwarp": "_magwarp", "timewarp": "_timewarp",
    "windowslice": "_windowslice", "windowwarp": "_windowwarp", "spawner": "_spawner", "dtwwarp": "_rgw",
    "shapedtwwarp": "_rgws", "wdba": "_wdba", "discdtw": "_dgw", "discsdtw": "_dgws",
}
#: presets that pick partners of the same (or another) class, so they need class labels.
LABEL_PRESETS = ("spawner", "dtwwarp", "shapedtwwarp", "wdba", "discdtw", "discsdtw")
#: presets that move values along the time axis (the others change values in place).
TIME_MOVING_PRESETS = ("permutation", "randompermutation", "timewarp", "windowslice", "windowwarp")


def _rng(rng: Rng | None):
    # numpy's module-level functions draw from its global RandomState (TSLib's behaviour).
    return np.random if rng is None else rng


def _resample(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Linear interpolation of x ``[B, T, C]`` at fractional time positions ``[B, T']`` or ``[B, T', C]``
    (clipped to [0, T-1]) -> ``[B, T', C]``."""
    length = x.shape[1]
    if positions.ndim == 2:
        positions = positions[:, :, None]  # [B, T', 1], broadcast over channels
    if length == 1:
        return np.broadcast_to(x, (x.shape[0], positions.shape[1], x.shape[2])).copy()
    pos = np.clip(positions, 0.0, length - 1.0)
    lower = np.minimum(np.floor(pos).astype(np.int64), length - 2)
    frac = pos - lower
    below = np.take_along_axis(x, lower, axis=1)
    above = np.take_along_axis(x, lower + 1, axis=1)
    return below + frac * (above - below)


def _stretch(x: np.ndarray, length: int) -> np.ndarray:
    """Resample one series ``[K, C]`` uniformly to ``[length, C]`` (end points kept)."""
    positions = np.linspace(0.0, x.shape[0] - 1.0, length)[None]  # [1, length]
    return _resample(x[None], positions)[0]


def _class_ids(labels: np.ndarray, num: int) -> np.ndarray:
    """Class id per sample from ``[N]``, ``[N, 1]`` ids or ``[N, K]`` one-hot labels."""
    labels = np.asarray(labels)
    if labels.ndim > 1:
        labels = labels[:, 0] if labels.shape[1] == 1 else np.argmax(labels, axis=1)
    if labels.shape[0] != num:
        raise ValueError(f"got {labels.shape[0]} labels for {num} samples")
    return labels


def _band(length: int) -> int:
    """The DTW band of the label-guided presets: a tenth of the length, rounded up."""
    return int(np.ceil(length / 10.0))


def jitter(x: np.ndarray, sigma: float = 0.03, rng: Rng | None = None) -> np.ndarray:
    """x ``[N, T, C]`` plus i.i.d. N(0, sigma²) noise."""
    return x + _rng(rng).normal(loc=0.0, scale=sigma, size=x.shape)


def scaling(x: np.ndarray, sigma: float = 0.1, rng: Rng | None = None) -> np.ndarray:
    """x ``[N, T, C]`` times one factor ~ N(1, sigma²) per sample and channel."""
    factor = _rng(rng).normal(loc=1.0, scale=sigma, size=(x.shape[0], x.shape[2]))  # [N, C]
    return x * factor[:, None, :]


def rotation(x: np.ndarray, rng: Rng | None = None) -> np.ndarray:
    """Random sign per sample and channel, and one random channel order for the batch:
    out[n, t, c] = flip[n, c] · x[n, t, perm[c]]."""
    rng = _rng(rng)
    flip = rng.choice([-1, 1], size=(x.shape[0], x.shape[2]))  # [N, C]
    order = rng.permutation(x.shape[2])
    return flip[:, None, :] * x[:, :, order]


def permutation(x: np.ndarray, max_segments: int = 5, seg_mode: str = "equal", rng: Rng | None = None) -> np.ndarray:
    """Cut each series into k ~ U{1, ..., max_segments-1} segments and concatenate them in random order.

    seg_mode 'equal': segments of (nearly) equal length; 'random': k-1 distinct random cut points
    in [1, T-2] (so no segment is empty).
    """
    if seg_mode not in ("equal", "random"):
        raise ValueError(f"seg_mode must be 'equal' or 'random', got {seg_mode!r}")
    rng = _rng(rng)
    length = x.shape[1]
    steps = np.arange(length)
    num_segments = rng.randint(1, max_segments, size=x.shape[0])
    out = np.array(x, copy=True)
    for n, k in enumerate(num_segments):
        if k <= 1:
            continue
        if seg_mode == "random":
            if length < k + 1:
                raise ValueError(f"random permutation into {k} segments needs at least {k + 1} steps, got {length}")
            cuts = np.sort(rng.choice(length - 2, k - 1, replace=False) + 1)
            segments = np.split(steps, cuts)
        else:
            segments = np.array_split(steps, k)
        order = rng.permutation(len(segments))
        out[n] = x[n, np.concatenate([segments[s] for s in order])]
    return out


def _knot_curves(x: np.ndarray, sigma: float, knot: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """knot positions ``[knot+2]`` over [0, T-1] and random knot values ~ N(1, sigma²) ``[N, knot+2, C]``."""
    values = rng.normal(loc=1.0, scale=sigma, size=(x.shape[0], knot + 2, x.shape[2]))
    return np.linspace(0.0, x.shape[1] - 1.0, num=knot + 2), values


def magnitude_warp(x: np.ndarray, sigma: float = 0.2, knot: int = 4, rng: Rng | None = None) -> np.ndarray:
    """x ``[N, T, C]`` times a smooth curve per sample and channel: the cubic spline through
    knot+2 equally spaced knots (end points included) with values ~ N(1, sigma²)."""
    knots, values = _knot_curves(x, sigma, knot, _rng(rng))
    curve = CubicSpline(knots, values, axis=1)(np.arange(x.shape[1]))  # [N, T, C]
    return x * curve


def time_warp(x: np.ndarray, sigma: float = 0.2, knot: int = 4, rng: Rng | None = None) -> np.ndarray:
    """Resample each series and channel along a smooth random time warp.

    The warp w(t) is the cubic spline through (k_i, k_i·r_i) for knot+2 knots k_i over [0, T-1] and
    r_i ~ N(1, sigma²), made increasing (a running maximum), rescaled so that w(T-1) = T-1 and
    clipped to [0, T-1]. Sample t of x is placed at time w(t): out(u) = x(w⁻¹(u)), linearly interpolated.
    """
    length = x.shape[1]
    knots, values = _knot_curves(x, sigma, knot, _rng(rng))
    steps = np.arange(length, dtype=np.float64)
    warp = CubicSpline(knots, knots[None, :, None] * values, axis=1)(steps)  # [N, T, C]
    # A large draw can make the spline dip (np.interp then reads garbage); a warp must not reverse
    # time, so take the running maximum and add a negligible slope to keep it strictly increasing.
    warp = np.maximum.accumulate(warp, axis=1) + 1e-9 * steps[None, :, None]
    end = warp[:, -1:, :]
    warp = np.clip(warp * np.where(end > 0, (length - 1.0) / np.where(end > 0, end, 1.0), 1.0), 0.0, length - 1.0)
    source = np.empty_like(warp)  # w⁻¹(u) for u = 0..T-1
    for n in range(x.shape[0]):
        for c in range(x.shape[2]):
            source[n, :, c] = np.interp(steps, warp[n, :, c], steps)
    return _resample(x, source)


def window_slice(x: np.ndarray, reduce_ratio: float | np.ndarray = 0.9, rng: Rng | None = None) -> np.ndarray:
    """Stretch a random window of ⌈reduce_ratio·T⌉ steps of each series to the full length T.

    reduce_ratio: one ratio or one per sample ``[N]``; a sample whose window is the whole
    series is returned unchanged.
    """
    num, length = x.shape[0], x.shape[1]
    ratios = np.broadcast_to(np.asarray(reduce_ratio, dtype=np.float64), (num,))
    target = np.minimum(np.ceil(ratios * length).astype(np.int64), length)  # [N]
    if np.all(target >= length):
        return np.array(x, copy=True)
    starts = _rng(rng).randint(low=0, high=np.maximum(length - target, 1), size=num)  # [N]
    positions = starts[:, None] + np.linspace(0.0, 1.0, length)[None, :] * (target[:, None] - 1.0)  # [N, T]
    out = _resample(x, positions)
    keep = target >= length
    out[keep] = x[keep]
    return out


def window_warp(x: np.ndarray, window_ratio: float = 0.1, scales: Sequence[float] = (0.5, 2.0),
                rng: Rng | None = None) -> np.ndarray:
    """Resample a random window of ⌈window_ratio·T⌉ steps by a factor drawn from `scales`, then
    resample the whole series back to T steps."""
    rng = _rng(rng)
    num, length = x.shape[0], x.shape[1]
    factors = rng.choice(np.asarray(scales, dtype=np.float64), num)
    size = int(np.ceil(window_ratio * length))
    if length - size - 1 <= 1:
        raise ValueError(f"window warping needs series longer than {size + 2} steps, got {length}")
    starts = rng.randint(low=1, high=length - size - 1, size=num)
    out = np.empty_like(x, dtype=np.float64)
    for n in range(num):
        start, warped = starts[n], int(size * factors[n])
        # Original time of every step of the series with its window resampled to `warped` steps.
        positions = np.concatenate((np.arange(start), start + np.linspace(0.0, size - 1.0, warped),
                                    np.arange(start + size, length)))
        out[n] = _stretch(_resample(x[n:n + 1], positions[None])[0], length)
    return out


def _same_class_partner(classes: np.ndarray, rng) -> np.ndarray:
    """For each sample a random other sample of its class, -1 where it has none."""
    partners = np.full(len(classes), -1)
    for n, label in enumerate(classes):
        candidates = np.flatnonzero(classes == label)
        candidates = candidates[candidates != n]
        if candidates.size:
            partners[n] = rng.choice(candidates)
    return partners


def spawner(x: np.ndarray, labels: np.ndarray, sigma: float = 0.05, rng: Rng | None = None) -> np.ndarray:
    """SPAWNER: split each series and a random same-class partner at one random step, align both
    halves by DTW (band ⌈T/10⌉), average the aligned pairs of steps, resample the averaged path to
    T steps and add N(0, sigma²) jitter. Samples without a partner are only jittered."""
    rng = _rng(rng)
    num, length = x.shape[0], x.shape[1]
    if length < 3:
        raise ValueError(f"SPAWNER needs series of at least 3 steps, got {length}")
    classes = _class_ids(labels, num)
    splits = rng.randint(low=1, high=length - 1, size=num)
    band = _band(length)
    out = np.array(x, dtype=np.float64, copy=True)
    partners = _same_class_partner(classes, rng)
    paired = np.flatnonzero(partners >= 0)
    if paired.size:
        # Both halves of every pair in one batch: a path that must cross the split diagonally is
        # the head path followed by the tail path.
        _, paths = dtw_align(x[paired], x[partners[paired]], band, split=splits[paired])
        for n, (steps_a, steps_b) in zip(paired, paths, strict=True):
            out[n] = _stretch(0.5 * (x[n, steps_a] + x[partners[n], steps_b]), length)
    return jitter(out, sigma=sigma, rng=rng)


def _guided_features(x: np.ndarray, dtw_type: str) -> np.ndarray:
    if dtw_type == "shape":
        return shape_descriptors(x)
    if dtw_type == "normal":
        return x
    raise ValueError(f"dtw_type must be 'normal' or 'shape', got {dtw_type!r}")


def random_guided_warp(x: np.ndarray, labels: np.ndarray, dtw_type: str = "normal", rng: Rng | None = None,
                       ) -> np.ndarray:
    """Random guided warping: warp each series onto the time axis of a random same-class prototype.

    The DTW path (band ⌈T/10⌉; shapeDTW when dtw_type='shape') pairs prototype steps with sample
    steps; the sample read along the path is resampled to T steps. Samples without a same-class
    partner are returned unchanged.
    """
    rng = _rng(rng)
    num, length = x.shape[0], x.shape[1]
    classes = _class_ids(labels, num)
    partners = _same_class_partner(classes, rng)
    out = np.array(x, dtype=np.float64, copy=True)
    guided = np.flatnonzero(partners >= 0)
    if guided.size == 0:
        return out
    features = _guided_features(x, dtw_type)
    _, paths = dtw_align(features[partners[guided]], features[guided], _band(length))
    for n, (_, sample_steps) in zip(guided, paths, strict=True):
        out[n] = _stretch(x[n, sample_steps], length)
    return out


def random_guided_warp_shape(x: np.ndarray, labels: np.ndarray, rng: Rng | None = None) -> np.ndarray:
    """Random guided warping with shapeDTW."""
    return random_guided_warp(x, labels, dtw_type="shape", rng=rng)


def wdba(x: np.ndarray, labels: np.ndarray, batch_size: int = 6, rng: Rng | None = None) -> np.ndarray:
    """Weighted DBA (one iteration): for each sample, average up to `batch_size` random series of its
    class (itself possibly among them) around their DTW medoid m.

    Each other series s is aligned to m by DTW (band ⌈T/10⌉) and contributes its aligned steps with
    weight exp(ln(0.5)·d(m, s)/d(m, s_nearest)) (the nearest neighbour weighs 1/2, the medoid 1).
    When the nearest neighbour is at distance 0 the medoid itself is returned.
    """
    rng = _rng(rng)
    num, length = x.shape[0], x.shape[1]
    classes = _class_ids(labels, num)
    band = _band(length)
    groups = []
    for label in classes:
        members = np.flatnonzero(classes == label)
        groups.append(rng.choice(members, min(members.size, batch_size), replace=False))
    # Pairwise DTW distances within every group, computed in one batch (DTW here is symmetric).
    pairs = [(g, a, b) for g, group in enumerate(groups) for a in range(len(group)) for b in range(a + 1, len(group))]
    distance = [np.zeros((len(group), len(group))) for group in groups]
    if pairs:
        first = np.array([groups[g][a] for g, a, _ in pairs])
        second = np.array([groups[g][b] for g, _, b in pairs])
        values, _ = dtw_align(x[first], x[second], band, return_path=False)
        for (g, a, b), value in zip(pairs, values, strict=True):
            distance[g][a, b] = distance[g][b, a] = value
    medoids = [int(np.argmin(d.sum(axis=1))) for d in distance]
    # Align every non-medoid member to its group's medoid.
    links = [(g, m) for g, group in enumerate(groups) for m in range(len(group)) if m != medoids[g]]
    paths = []
    if links:
        medoid_series = np.stack([x[groups[g][medoids[g]]] for g, _ in links])
        member_series = np.stack([x[groups[g][m]] for g, m in links])
        _, paths = dtw_align(medoid_series, member_series, band)
    out = np.empty_like(x, dtype=np.float64)
    link = 0
    for g, group in enumerate(groups):
        medoid, d = medoids[g], distance[g][medoids[g]]
        others = [m for m in range(len(group)) if m != medoid]
        nearest = min((d[m] for m in others), default=0.0)
        total = np.array(x[group[medoid]], dtype=np.float64)
        weights = np.ones(length)
        for m in others:
            medoid_steps, member_steps = paths[link]
            link += 1
            if nearest == 0.0:
                continue
            weight = np.exp(np.log(0.5) * d[m] / nearest)
            np.add.at(total, medoid_steps, weight * x[group[m], member_steps])
            np.add.at(weights, medoid_steps, weight)
        out[g] = total / weights[:, None]
    return out


def discriminative_guided_warp(x: np.ndarray, labels: np.ndarray, batch_size: int = 6, dtw_type: str = "normal",
                               use_variable_slice: bool = True, rng: Rng | None = None) -> np.ndarray:
    """Discriminative guided warping: warp each series onto its most discriminative same-class prototype.

    Among ⌈batch/2⌉ random same-class series (itself excluded) and ⌊batch/2⌋ random series of
    other classes, the prototype is the same-class one maximising (mean DTW to the other-class
    ones) − (mean DTW to the other same-class ones); the series is warped onto it as in
    `random_guided_warp`. With use_variable_slice, a window slice follows whose ratio
    0.9 + 0.1·a/max(a) grows with the warp amount a = Σ_t |t − path(t)| (all 0.9 when nothing warped).
    Samples lacking same-class or other-class partners are only sliced.
    """
    rng = _rng(rng)
    num, length = x.shape[0], x.shape[1]
    classes = _class_ids(labels, num)
    band = _band(length)
    features = _guided_features(x, dtw_type)
    positive_k, negative_k = int(np.ceil(batch_size / 2)), int(np.floor(batch_size / 2))
    draws: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for n, label in enumerate(classes):
        others = np.delete(np.arange(num), n)
        positive, negative = others[classes[others] == label], others[classes[others] != label]
        if positive.size and negative.size:
            draws[n] = (rng.choice(positive, min(positive.size, positive_k), replace=False),
                        rng.choice(negative, min(negative.size, negative_k), replace=False))
    # Every distance the selection needs, in one batch.
    pairs = [(a, b) for pos, neg in draws.values() for a in pos for b in (*pos, *neg) if a != b]
    known: dict[tuple[int, int], float] = {}
    if pairs:
        first, second = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
        values, _ = dtw_align(features[first], features[second], band, return_path=False)
        known = dict(zip(pairs, values, strict=True))
    out = np.array(x, dtype=np.float64, copy=True)
    chosen = {}
    for n, (pos, neg) in draws.items():
        pos_mean = np.array([np.mean([known[(a, b)] for b in pos if b != a]) if len(pos) > 1 else 0.0 for a in pos])
        neg_mean = np.array([np.mean([known[(a, b)] for b in neg]) for a in pos])
        chosen[n] = pos[int(np.argmax(neg_mean - pos_mean))]
    amount = np.zeros(num)
    if chosen:
        samples = np.array(list(chosen))
        _, paths = dtw_align(features[[chosen[n] for n in samples]], features[samples], band)
        steps = np.arange(length, dtype=np.float64)
        for n, (_, sample_steps) in zip(samples, paths, strict=True):
            out[n] = _stretch(x[n, sample_steps], length)
            along = np.interp(steps, np.linspace(0.0, length - 1.0, sample_steps.size), sample_steps)
            amount[n] = np.abs(steps - along).sum()
    if not use_variable_slice:
        return out
    peak = amount.max()
    ratio = 0.9 + 0.1 * amount / peak if peak > 0 else 0.9
    return window_slice(out, reduce_ratio=ratio, rng=rng)


def discriminative_guided_warp_shape(x: np.ndarray, labels: np.ndarray, batch_size: int = 6,
                                     rng: Rng | None = None) -> np.ndarray:
    """Discriminative guided warping with shapeDTW."""
    return discriminative_guided_warp(x, labels, batch_size, dtw_type="shape", rng=rng)


_METHODS: dict[str, Callable[[np.ndarray, np.ndarray, Rng], np.ndarray]] = {
    "jitter": lambda x, y, rng: jitter(x, rng=rng),
    "scaling": lambda x, y, rng: scaling(x, rng=rng),
    "rotation": lambda x, y, rng: rotation(x, rng=rng),
    "permutation": lambda x, y, rng: permutation(x, rng=rng),
    "randompermutation": lambda x, y, rng: permutation(x, seg_mode="random", rng=rng),
    "magwarp": lambda x, y, rng: magnitude_warp(x, rng=rng),
    "timewarp": lambda x, y, rng: time_warp(x, rng=rng),
    "windowslice": lambda x, y, rng: window_slice(x, rng=rng),
    "windowwarp": lambda x, y, rng: window_warp(x, rng=rng),
    "spawner": lambda x, y, rng: spawner(x, y, rng=rng),
    "dtwwarp": lambda x, y, rng: random_guided_warp(x, y, rng=rng),
    "shapedtwwarp": lambda x, y, rng: random_guided_warp_shape(x, y, rng=rng),
    "wdba": lambda x, y, rng: wdba(x, y, rng=rng),
    "discdtw": lambda x, y, rng: discriminative_guided_warp(x, y, rng=rng),
    "discsdtw": lambda x, y, rng: discriminative_guided_warp_shape(x, y, rng=rng),
}


def chosen_presets(args: argparse.Namespace) -> list[str]:
    """The preset flags set in `args`, in TSLib's order of application."""
    return [name for name in PRESETS if getattr(args, name, False)]


def augment(x: np.ndarray, y: np.ndarray | None, args: argparse.Namespace,
            rng: Rng | None = None) -> tuple[np.ndarray, str]:
    """One round: apply every chosen preset to x ``[N, T, C]`` in TSLib's order -> (x', tags)."""
    tags = ""
    for name in chosen_presets(args):
        if name in LABEL_PRESETS and y is None:
            raise ValueError(f"--{name} needs class labels")
        x = _METHODS[name](x, y, rng)
        tags += PRESETS[name]
    return x, tags


def _with_extra_tag(tags: str, args: argparse.Namespace) -> str:
    extra = getattr(args, "extra_tag", flag_default("extra_tag"))
    return f"{tags}_{extra}" if extra else tags


def run_augmentation(x: np.ndarray, y: np.ndarray, args: argparse.Namespace,
                     ) -> tuple[np.ndarray, np.ndarray, str]:
    """The train set plus `--augmentation_ratio` augmented copies: x ``[N, T, C]``, y ``[N, ...]`` ->
    (``[(1+r)·N, T, C]``, y repeated (1+r) times, tags "<r>_<preset>...[_<extra_tag>]").

    Every copy is drawn from the original x by a RandomState seeded with --seed; ratio 0 returns
    the inputs and the extra tag.
    """
    ratio = int(args.augmentation_ratio)
    if ratio <= 0:
        return x, y, getattr(args, "extra_tag", flag_default("extra_tag"))
    rng = np.random.RandomState(getattr(args, "seed", TSLIB_AUGMENTATION_SEED))
    copies, labels, tags = [x], [y], ""
    for round_ in range(ratio):
        augmented, tags = augment(x, y, args, rng)
        copies.append(augmented.astype(x.dtype, copy=False))
        labels.append(y)
        logger.info("augmentation round %d: %s done", round_, tags)
    return np.concatenate(copies, axis=0), np.concatenate(labels, axis=0), _with_extra_tag(f"{ratio}{tags}", args)


def run_augmentation_single(x: np.ndarray, y: np.ndarray, args: argparse.Namespace,
                            ) -> tuple[np.ndarray, np.ndarray, str]:
    """TSLib's in-place variant: `--augmentation_ratio` rounds, each from the original x ``[N, T, C]``,
    the last one returned in place of x (so the ratio only advances the random stream); y unchanged."""
    ratio = int(args.augmentation_ratio)
    if ratio <= 0:
        return x, y, getattr(args, "extra_tag", flag_default("extra_tag"))
    rng = np.random.RandomState(getattr(args, "seed", TSLIB_AUGMENTATION_SEED))
    augmented, tags = x, ""
    for _ in range(ratio):
        augmented, tags = augment(x, y, args, rng)
    return augmented.astype(x.dtype, copy=False), y, _with_extra_tag(f"{ratio}{tags}", args)


def augment_series(series: np.ndarray, args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, str]:
    """Augment a forecasting train split ``[rows, C]`` as one series ``[1, rows, C]``.

    Returns (data_x, data_y, tags). As in TSLib the inputs x come from the augmented series and the
    targets y from the clean one, so value-only presets (jitter, scaling, rotation, magwarp) train on
    perturbed inputs with clean targets. The presets that move values in time (permutation,
    randompermutation, timewarp, windowslice, windowwarp) serve y from the augmented series too,
    because otherwise every target would belong to a different stretch of time than its input.
    """
    for name in chosen_presets(args):
        if name in LABEL_PRESETS:
            raise ValueError(f"--{name} needs class labels (--task_name classification); forecasting series have none")
    augmented, _, tags = run_augmentation_single(series[None], None, args)
    data_x = augmented[0]
    moved = any(name in TIME_MOVING_PRESETS for name in chosen_presets(args))
    return data_x, (data_x if moved else series), tags
