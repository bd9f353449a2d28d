"""DTW alignment against a slow double-loop reference; shapeDTW descriptors against a slow loop."""

from __future__ import annotations

import numpy as np
import pytest

from utils.dtw_path import dtw_align, shape_descriptors


def reference_dtw(p: np.ndarray, s: np.ndarray, window: int | None) -> tuple[float, np.ndarray, np.ndarray]:
    """Textbook DTW: Euclidean step cost, steps (1,1), (1,0), (0,1), band |i - j| <= window."""
    n, m = len(p), len(s)
    band = max(n, m) if window is None else max(window, abs(n - m))
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if abs(i - j) <= band:
                acc[i, j] = np.linalg.norm(p[i - 1] - s[j - 1]) + min(acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
    i, j, path = n, m, [(n - 1, m - 1)]
    while (i, j) != (1, 1):
        options = [(acc[i - 1, j - 1], i - 1, j - 1), (acc[i - 1, j], i - 1, j), (acc[i, j - 1], i, j - 1)]
        _, i, j = min(options, key=lambda o: o[0])  # first minimum: diagonal, then prototype, then sample
        path.append((i - 1, j - 1))
    path = np.array(path[::-1])
    return acc[n, m], path[:, 0], path[:, 1]


@pytest.mark.parametrize("p_len, s_len, channels, window", [
    (1, 7, 1, None), (7, 1, 2, None), (13, 13, 3, 2), (17, 11, 2, None), (23, 23, 1, 3), (9, 14, 4, 1),
    (12, 12, 2, 0),
], ids=lambda v: str(v))
def test_dtw_align_matches_reference(p_len, s_len, channels, window):
    rng = np.random.default_rng(p_len * 100 + s_len)
    prototypes = rng.normal(size=(3, p_len, channels))
    samples = rng.normal(size=(3, s_len, channels))
    distances, paths = dtw_align(prototypes, samples, window, chunk=2)
    only, none = dtw_align(prototypes, samples, window, return_path=False)
    assert none is None
    np.testing.assert_allclose(only, distances, rtol=1e-12)
    for n in range(3):
        value, path_p, path_s = reference_dtw(prototypes[n], samples[n], window)
        np.testing.assert_allclose(distances[n], value, rtol=1e-12)
        np.testing.assert_array_equal(paths[n][0], path_p)
        np.testing.assert_array_equal(paths[n][1], path_s)
        steps = np.diff(np.stack(paths[n]), axis=1).T
        assert {tuple(step) for step in steps} <= {(1, 0), (0, 1), (1, 1)}
        assert (paths[n][0][0], paths[n][1][0]) == (0, 0)
        assert (paths[n][0][-1], paths[n][1][-1]) == (p_len - 1, s_len - 1)


def test_dtw_of_a_series_with_itself_is_zero_on_the_diagonal():
    x = np.random.default_rng(0).normal(size=(2, 31, 2))
    distances, paths = dtw_align(x, x, window=3)
    np.testing.assert_array_equal(distances, 0.0)
    for path_p, path_s in paths:
        np.testing.assert_array_equal(path_p, np.arange(31))
        np.testing.assert_array_equal(path_s, np.arange(31))


def test_dtw_realigns_a_shifted_bump():
    t = np.arange(60.0)
    bump = np.exp(-0.5 * ((t - 30) / 4) ** 2)
    shifted = np.exp(-0.5 * ((t - 34) / 4) ** 2)
    distance, (path,) = dtw_align(bump[None, :, None], shifted[None, :, None], window=6)
    # The peak of the prototype is paired with the peak of the shifted sample.
    assert 34 in path[1][path[0] == 30]
    assert distance[0] < np.abs(bump - shifted).sum() / 3


def test_dtw_align_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"\[N, P, C\] and \[N, S, C\]"):
        dtw_align(np.zeros((2, 5)), np.zeros((2, 5)))


@pytest.mark.parametrize("length", [7, 50, 97, 2500])
def test_shape_descriptors_match_slow_windows(length):
    x = np.random.default_rng(length).normal(size=(2, length, 3))
    desc = shape_descriptors(x)
    width = int(np.clip(np.round(length * 0.05), 5, 100))
    front = int(np.ceil(width / 2))
    assert desc.shape == (2, length, width * 3)
    for t in (0, length // 2, length - 1):
        rows = np.clip(np.arange(t - front, t - front + width), 0, length - 1)  # edge padding
        np.testing.assert_array_equal(desc[:, t].reshape(2, 3, width), x[:, rows].transpose(0, 2, 1))


def test_split_alignment_is_the_two_halves_aligned_separately():
    rng = np.random.default_rng(11)
    p, s = rng.normal(size=(4, 26, 2)), rng.normal(size=(4, 26, 2))
    split = np.array([1, 9, 13, 25])
    distances, paths = dtw_align(p, s, window=3, split=split)
    np.testing.assert_allclose(dtw_align(p, s, window=3, split=split, return_path=False)[0], distances, rtol=1e-12)
    for n, cut in enumerate(split):
        head = reference_dtw(p[n, :cut], s[n, :cut], 3)
        tail = reference_dtw(p[n, cut:], s[n, cut:], 3)
        np.testing.assert_allclose(distances[n], head[0] + tail[0], rtol=1e-12)
        np.testing.assert_array_equal(paths[n][0], np.concatenate((head[1], tail[1] + cut)))
        np.testing.assert_array_equal(paths[n][1], np.concatenate((head[2], tail[2] + cut)))
    with pytest.raises(ValueError, match="split needs"):
        dtw_align(p, s, split=np.array([0, 1, 2, 3]))
