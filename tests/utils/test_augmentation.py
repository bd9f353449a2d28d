"""Each augmentation preset against its defining property or a slow reference; entry points."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from tests.utils.test_dtw_path import reference_dtw
from utils import augmentation as aug
from utils.dtw_path import dtw_align, shape_descriptors

SEED = 7


def rng() -> np.random.RandomState:
    return np.random.RandomState(SEED)


def ramps(num: int, length: int, channels: int) -> np.ndarray:
    """Series whose value is the time step (so outputs reveal where each value came from)."""
    return np.broadcast_to(np.arange(length, dtype=np.float64)[None, :, None], (num, length, channels)).copy()


def bumps(centres, length: int = 60, width: float = 4.0) -> np.ndarray:
    t = np.arange(length, dtype=np.float64)
    return np.stack([np.exp(-0.5 * ((t - c) / width) ** 2) for c in centres])[:, :, None]  # [N, T, 1]


def make_args(ratio: int = 1, seed: int = SEED, extra_tag: str = "", **presets) -> argparse.Namespace:
    flags = {name: presets.get(name, False) for name in aug.PRESETS}
    return argparse.Namespace(augmentation_ratio=ratio, seed=seed, extra_tag=extra_tag, **flags)


def test_jitter_noise_statistics():
    x = np.full((200, 100, 3), 5.0)
    noise = aug.jitter(x, sigma=0.03, rng=rng()) - x
    assert abs(noise.mean()) < 3 * 0.03 / np.sqrt(noise.size)
    assert noise.std() == pytest.approx(0.03, rel=0.02)
    # independent across channels
    assert abs(np.corrcoef(noise[..., 0].ravel(), noise[..., 1].ravel())[0, 1]) < 0.02


def test_scaling_uses_one_factor_per_sample_and_channel():
    x = np.random.default_rng(0).uniform(1, 2, size=(500, 40, 3))
    out = aug.scaling(x, sigma=0.1, rng=rng())
    factor = out / x
    np.testing.assert_allclose(factor, factor[:, :1, :].repeat(40, axis=1), rtol=1e-12)
    assert factor[:, 0].mean() == pytest.approx(1.0, abs=0.01)
    assert factor[:, 0].std() == pytest.approx(0.1, rel=0.1)


def test_rotation_flips_signs_and_shuffles_channels_once_per_batch():
    x = np.random.default_rng(1).normal(size=(30, 20, 5))
    out = aug.rotation(x, rng=rng())
    np.testing.assert_allclose(np.linalg.norm(out, axis=2), np.linalg.norm(x, axis=2))
    np.testing.assert_allclose(np.sort(np.abs(out), axis=2), np.sort(np.abs(x), axis=2))
    # out[n, :, c] = ±x[n, :, perm[c]] with one perm for all samples
    perm = [int(np.argmin([np.abs(np.abs(out[0, :, c]) - np.abs(x[0, :, k])).sum() for k in range(5)]))
            for c in range(5)]
    assert sorted(perm) == list(range(5))
    signs = np.sign(out[:, 0, :] / x[:, 0, perm])
    np.testing.assert_allclose(out, signs[:, None, :] * x[:, :, perm])
    assert set(np.unique(signs)) == {-1.0, 1.0}


def _runs(series: np.ndarray) -> list[np.ndarray]:
    """Split a permuted ramp into its contiguous runs (consecutive time steps)."""
    breaks = np.flatnonzero(np.diff(series) != 1) + 1
    return np.split(series, breaks)


@pytest.mark.parametrize("seg_mode", ["equal", "random"])
def test_permutation_reorders_whole_segments(seg_mode):
    length = 37
    x = ramps(200, length, 2)
    out = aug.permutation(x, seg_mode=seg_mode, rng=rng())
    counts = []
    for n in range(len(x)):
        np.testing.assert_array_equal(out[n, :, 0], out[n, :, 1])
        np.testing.assert_array_equal(np.sort(out[n, :, 0]), np.arange(length))  # a permutation of the steps
        runs = _runs(out[n, :, 0])
        assert 1 <= len(runs) <= 4
        if seg_mode == "equal" and len(runs) > 1:
            # equal segments (sizes differ by at most one) appear as runs unless two stay adjacent
            assert all(len(r) >= length // 4 for r in runs)
        counts.append(len(runs))
    assert max(counts) >= 3


def test_magnitude_warp_matches_a_per_channel_spline_reference():
    x = np.random.default_rng(2).normal(size=(4, 50, 3))
    out = aug.magnitude_warp(x, sigma=0.2, knot=4, rng=rng())
    values = rng().normal(1.0, 0.2, size=(4, 6, 3))
    knots = np.linspace(0, 49, 6)
    for n in range(4):
        for c in range(3):
            curve = CubicSpline(knots, values[n, :, c])(np.arange(50))
            np.testing.assert_allclose(out[n, :, c], x[n, :, c] * curve, rtol=1e-12)


def test_time_warp_is_a_monotone_resampling():
    length = 80
    x = ramps(300, length, 2)
    out = aug.time_warp(x, sigma=0.2, knot=4, rng=rng())
    assert np.all(np.diff(out, axis=1) >= -1e-9)
    np.testing.assert_allclose(out[:, 0], 0.0, atol=1e-9)
    np.testing.assert_allclose(out[:, -1], length - 1.0, atol=1e-9)
    assert np.abs(out - x).max() > 1.0  # it does warp
    np.testing.assert_allclose(aug.time_warp(x, sigma=0.0, rng=rng()), x, atol=1e-9)


def test_window_slice_stretches_a_slice_to_full_length():
    length = 50
    x = ramps(40, length, 1)
    out = aug.window_slice(x, reduce_ratio=0.9, rng=rng())
    target = int(np.ceil(0.9 * length))
    assert out.shape == x.shape
    slope = (target - 1) / (length - 1)
    for n in range(len(x)):
        start = out[n, 0, 0]
        assert start == int(start) and 0 <= start <= length - target
        np.testing.assert_allclose(out[n, :, 0], start + slope * np.arange(length), atol=1e-9)
    np.testing.assert_array_equal(aug.window_slice(x, reduce_ratio=1.0, rng=rng()), x)


def reference_window_warp(x, factors, starts, size):
    """Concatenate the untouched parts with the np.interp-resampled window, then np.interp back to T."""
    num, length, channels = x.shape
    out = np.empty_like(x)
    for n in range(num):
        warped_len = int(size * factors[n])
        for c in range(channels):
            window = np.interp(np.linspace(0, size - 1, warped_len), np.arange(size),
                               x[n, starts[n]:starts[n] + size, c])
            joined = np.concatenate((x[n, :starts[n], c], window, x[n, starts[n] + size:, c]))
            out[n, :, c] = np.interp(np.linspace(0, joined.size - 1, length), np.arange(joined.size), joined)
    return out


def test_window_warp_matches_reference_and_keeps_length():
    x = np.random.default_rng(3).normal(size=(12, 45, 2))
    out = aug.window_warp(x, window_ratio=0.1, scales=(0.5, 2.0), rng=rng())
    draws = rng()
    factors = draws.choice([0.5, 2.0], 12)
    size = int(np.ceil(0.1 * 45))
    starts = draws.randint(1, 45 - size - 1, size=12)
    assert out.shape == x.shape
    np.testing.assert_allclose(out, reference_window_warp(x, factors, starts, size), atol=1e-12)
    np.testing.assert_allclose(aug.window_warp(x, scales=(1.0,), rng=rng()), x, atol=1e-12)


def test_spawner_averages_dtw_aligned_halves():
    x = np.random.default_rng(4).normal(size=(2, 30, 2)).cumsum(axis=1)
    labels = np.array([1, 1])
    out = aug.spawner(x, labels, sigma=0.0, rng=rng())
    cut = rng().randint(1, 29, size=2)
    window = 3
    for n, partner in ((0, 1), (1, 0)):
        _, p1, s1 = reference_dtw(x[n, :cut[n]], x[partner, :cut[n]], window)
        _, p2, s2 = reference_dtw(x[n, cut[n]:], x[partner, cut[n]:], window)
        path_a, path_b = np.concatenate((p1, p2 + cut[n])), np.concatenate((s1, s2 + cut[n]))
        mean = 0.5 * (x[n, path_a] + x[partner, path_b])
        expected = np.stack([np.interp(np.arange(30), np.linspace(0, 29, len(mean)), mean[:, c]) for c in range(2)], 1)
        np.testing.assert_allclose(out[n], expected, atol=1e-12)
    np.testing.assert_allclose(out[:, 0], np.tile(0.5 * (x[0, 0] + x[1, 0]), (2, 1)), atol=1e-12)


def test_spawner_without_partner_only_jitters():
    x = np.zeros((3, 20, 1))
    out = aug.spawner(x, np.array([0, 1, 2]), sigma=0.05, rng=rng())
    assert 0.03 < out.std() < 0.07


def stretch(series: np.ndarray, length: int) -> np.ndarray:
    return np.stack([np.interp(np.arange(length), np.linspace(0, length - 1, len(series)), series[:, c])
                     for c in range(series.shape[1])], axis=1)


def test_random_guided_warp_reads_the_series_along_the_dtw_path():
    x = bumps([30, 34])  # the same bump, shifted by 4 steps (inside the band of 6)
    out = aug.random_guided_warp(x, np.array([0, 0]), rng=rng())
    for n, prototype in ((0, 1), (1, 0)):
        _, path_p, path_s = reference_dtw(x[prototype], x[n], 6)
        np.testing.assert_allclose(out[n], stretch(x[n, path_s], 60), atol=1e-12)
        # aligned: the warped series matches the prototype read along the same path
        aligned = np.abs(out[n] - stretch(x[prototype, path_p], 60)).sum()
        assert aligned < 0.05 * np.abs(x[n] - x[prototype]).sum()


def test_random_guided_warp_shape_aligns_with_its_prototype():
    x = bumps([30, 34])
    out = aug.random_guided_warp_shape(x, np.array([0, 0]), rng=rng())
    _, paths = dtw_align(shape_descriptors(x[[1]]), shape_descriptors(x[[0]]), 6)
    path_p, path_s = paths[0]
    np.testing.assert_allclose(out[0], stretch(x[0, path_s], 60), atol=1e-12)
    assert np.abs(out[0] - stretch(x[1, path_p], 60)).sum() < 0.1 * np.abs(x[0] - x[1]).sum()


def test_guided_warp_leaves_samples_without_partner():
    x = bumps([30, 34, 20])
    out = aug.random_guided_warp(x, np.array([0, 0, 1]), rng=rng())
    np.testing.assert_array_equal(out[2], x[2])


def test_wdba_averages_within_the_class():
    x = np.concatenate([np.repeat(bumps([30]), 3, axis=0), bumps([20, 25, 22])])
    labels = np.array([0, 0, 0, 1, 1, 1])
    out = aug.wdba(x, labels, rng=rng())
    np.testing.assert_allclose(out[:3], x[:3])  # identical members: their average
    # a weighted average of aligned values stays inside the class's range at every step
    assert np.all(out[3:] <= x[3:].max(axis=0) + 1e-12) and np.all(out[3:] >= x[3:].min(axis=0) - 1e-12)
    assert not np.allclose(out[3], x[3])
    single = aug.wdba(x[:1], np.array([5]), rng=rng())
    np.testing.assert_array_equal(single, x[:1])


def test_wdba_two_series_weights_medoid_one_neighbour_half():
    # Two series: the medoid (first drawn) weighs 1, the other 1/2; with a diagonal path this is
    # (m + s/2) / 1.5 at every step.
    x = np.stack([np.linspace(0, 1, 25), np.linspace(0, 1, 25) + 0.01])[:, :, None]
    out = aug.wdba(x, np.array([0, 0]), rng=rng())
    first = rng().choice([0, 1], 2, replace=False)
    medoid, other = x[first[0]], x[first[1]]
    np.testing.assert_allclose(out[0], (medoid + 0.5 * other) / 1.5, atol=1e-12)


def test_discriminative_guided_warp_aligns_with_a_same_class_prototype():
    x = np.concatenate([bumps([30, 34]), bumps([10, 12]) * -1])
    labels = np.array([0, 0, 1, 1])
    out = aug.discriminative_guided_warp(x, labels, use_variable_slice=False, rng=rng())
    _, path_p, path_s = reference_dtw(x[0], x[1], 6)  # sample 1's only same-class prototype is sample 0
    np.testing.assert_allclose(out[1], stretch(x[1, path_s], 60), atol=1e-12)
    assert np.abs(out[1] - stretch(x[0, path_p], 60)).sum() < 0.05 * np.abs(x[1] - x[0]).sum()
    sliced = aug.discriminative_guided_warp(x, labels, rng=rng())
    assert sliced.shape == x.shape and np.isfinite(sliced).all()
    shape = aug.discriminative_guided_warp_shape(x, labels, rng=rng())
    assert shape.shape == x.shape and np.isfinite(shape).all()


def test_discriminative_guided_warp_without_negatives_only_slices():
    x = np.random.default_rng(5).normal(size=(4, 40, 2))
    out = aug.discriminative_guided_warp(x, np.zeros(4, dtype=int), rng=rng())
    np.testing.assert_allclose(out, aug.window_slice(x, 0.9, rng=rng()))


def test_label_presets_accept_one_hot_labels():
    x = bumps([30, 34, 20, 22])
    ids, one_hot = np.array([0, 0, 1, 1]), np.eye(2)[[0, 0, 1, 1]]
    np.testing.assert_array_equal(aug.random_guided_warp(x, ids, rng=rng()),
                                  aug.random_guided_warp(x, one_hot, rng=rng()))
    with pytest.raises(ValueError, match="got 3 labels for 4 samples"):
        aug.wdba(x, ids[:3], rng=rng())


def test_run_augmentation_appends_copies_in_tslib_order():
    x = np.random.default_rng(6).normal(size=(8, 30, 2)).astype(np.float32)
    y = np.arange(8) % 2
    args = make_args(ratio=2, scaling=True, jitter=True, extra_tag="t")
    x_aug, y_aug, tags = aug.run_augmentation(x, y, args)
    assert tags == "2_jitter_scaling_t"
    assert x_aug.shape == (24, 30, 2) and x_aug.dtype == np.float32
    np.testing.assert_array_equal(y_aug, np.tile(y, 3))
    np.testing.assert_array_equal(x_aug[:8], x)
    draws = np.random.RandomState(SEED)
    for copy in (1, 2):
        expected = aug.scaling(aug.jitter(x.astype(np.float64), rng=draws), rng=draws)
        np.testing.assert_allclose(x_aug[8 * copy:8 * (copy + 1)], expected, rtol=1e-6)


def test_run_augmentation_is_seeded_and_leaves_numpy_global_state_alone():
    x = bumps([20, 25, 30, 35])
    y = np.array([0, 0, 1, 1])
    state = np.random.get_state()[1].copy()
    args = make_args(ratio=1, jitter=True, windowwarp=True, dtwwarp=True, wdba=True)
    first, _, _ = aug.run_augmentation(x, y, args)
    again, _, _ = aug.run_augmentation(x, y, args)
    other, _, _ = aug.run_augmentation(x, y, make_args(ratio=1, seed=SEED + 1, jitter=True, windowwarp=True,
                                                       dtwwarp=True, wdba=True))
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, other)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_run_augmentation_single_keeps_the_last_round():
    x = np.zeros((3, 10, 2))
    y = np.array([1, 2, 3])
    x_aug, y_aug, tags = aug.run_augmentation_single(x, y, make_args(ratio=2, jitter=True))
    draws = np.random.RandomState(SEED)
    draws.normal(0, 0.03, size=x.shape)
    np.testing.assert_allclose(x_aug, draws.normal(0, 0.03, size=x.shape))
    assert y_aug is y and tags == "2_jitter"
    assert aug.run_augmentation_single(x, y, make_args(ratio=0, extra_tag="e")) == (x, y, "e")


@pytest.mark.parametrize("preset", [name for name in aug.PRESETS if name not in aug.LABEL_PRESETS])
def test_augment_series_keeps_shapes_and_aligns_targets(preset):
    series = np.random.default_rng(8).normal(size=(300, 3)).astype(np.float32)
    data_x, data_y, tags = aug.augment_series(series, make_args(ratio=1, **{preset: True}))
    assert data_x.shape == series.shape and data_x.dtype == np.float32
    assert tags == "1" + aug.PRESETS[preset]
    if preset in aug.TIME_MOVING_PRESETS:
        assert data_y is data_x
    else:
        assert data_y is series


def test_label_presets_need_labels():
    with pytest.raises(ValueError, match=r"^--wdba needs class labels"):
        aug.augment_series(np.zeros((50, 2)), make_args(ratio=1, wdba=True))
    with pytest.raises(ValueError, match=r"^--spawner needs class labels"):
        aug.augment(np.zeros((2, 50, 2)), None, make_args(ratio=1, spawner=True))


def test_every_preset_is_finite_on_awkward_shapes():
    x = np.random.default_rng(9).normal(size=(7, 23, 3))
    y = np.array([0, 0, 0, 1, 1, 2, 2])
    for name in aug.PRESETS:
        out, tags = aug.augment(x, y, make_args(**{name: True}), rng())
        assert out.shape == x.shape and np.isfinite(out).all(), name
        assert tags == aug.PRESETS[name]
