"""Point adjustment, threshold and detection scores against slow, obviously correct references."""

from __future__ import annotations

import numpy as np
import pytest

from utils.anomaly_metrics import (
    anomaly_threshold,
    average_precision,
    detection_scores,
    percentile_threshold,
    point_adjust,
    reconstruction_energy,
)


def point_adjust_reference(gt, pred):
    """Walk the labels; at the end of each run of 1s, fill the run if any prediction inside it is 1."""
    gt, out = list(gt), list(pred)
    i = 0
    while i < len(gt):
        if gt[i] == 1:
            j = i
            while j < len(gt) and gt[j] == 1:
                j += 1
            if any(out[k] == 1 for k in range(i, j)):
                for k in range(i, j):
                    out[k] = 1
            i = j
        else:
            i += 1
    return np.array(out)


def tslib_adjustment_semantics(gt, pred):
    """What TSLib's loop computes, written out: like the reference, except that its backward scan stops
    before index 0, so a first segment starting at 0 and first hit later keeps pred[0]."""
    out = point_adjust_reference(gt, pred)
    if len(gt) and gt[0] == 1 and pred[0] == 0:
        out[0] = 0
    return out


def scores_reference(gt, pred):
    tp = sum(1 for g, p in zip(gt, pred, strict=True) if g == 1 and p == 1)
    fp = sum(1 for g, p in zip(gt, pred, strict=True) if g == 0 and p == 1)
    fn = sum(1 for g, p in zip(gt, pred, strict=True) if g == 1 and p == 0)
    correct = sum(1 for g, p in zip(gt, pred, strict=True) if g == p)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return correct / len(gt), precision, recall, f1


HAND = [
    # (gt, pred, adjusted)
    pytest.param([0, 1, 1, 1, 0, 0], [0, 0, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0], id="hit-in-middle"),
    pytest.param([0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 1, 0], id="miss-keeps-false-alarm"),
    pytest.param([1, 1, 1, 0, 0], [0, 0, 1, 0, 0], [1, 1, 1, 0, 0], id="segment-at-start-hit-late"),
    pytest.param([0, 0, 1, 1, 1], [0, 0, 0, 0, 1], [0, 0, 1, 1, 1], id="segment-at-end-hit-last"),
    pytest.param([1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [1, 0, 0, 1, 1], id="single-step-segments"),
    pytest.param([1, 1, 0, 1, 1], [0, 1, 0, 0, 0], [1, 1, 0, 0, 0], id="two-segments-one-hit"),
    pytest.param([1, 1, 1, 1], [0, 0, 0, 1], [1, 1, 1, 1], id="all-anomalous"),
    pytest.param([0, 0, 0], [0, 1, 0], [0, 1, 0], id="no-anomaly"),
    pytest.param([], [], [], id="empty"),
]


@pytest.mark.parametrize("gt, pred, adjusted", HAND)
def test_point_adjust_hand_examples(gt, pred, adjusted):
    np.testing.assert_array_equal(point_adjust(np.array(gt), np.array(pred)), adjusted)
    np.testing.assert_array_equal(point_adjust_reference(gt, pred), adjusted)


def test_tslib_leaves_index_zero_only_in_a_first_segment_hit_late():
    gt, pred = [1, 1, 1, 0, 0], [0, 0, 1, 0, 0]
    np.testing.assert_array_equal(tslib_adjustment_semantics(gt, pred), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(point_adjust(np.array(gt), np.array(pred)), [1, 1, 1, 0, 0])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("density", [0.05, 0.3, 0.7])
def test_point_adjust_matches_reference_on_random_labels(seed, density):
    rng = np.random.default_rng(seed)
    gt = (rng.random(997) < density).astype(int)
    pred = (rng.random(997) < 0.1).astype(int)
    before = pred.copy()
    np.testing.assert_array_equal(point_adjust(gt, pred), point_adjust_reference(gt, pred))
    np.testing.assert_array_equal(pred, before)  # inputs untouched
    if gt[0] == 0 or pred[0] == 1:
        np.testing.assert_array_equal(point_adjust(gt, pred), tslib_adjustment_semantics(gt, pred))


def test_point_adjust_rejects_length_mismatch():
    with pytest.raises(ValueError, match="differ in length"):
        point_adjust(np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("seed", range(4))
def test_detection_scores_match_counting(seed):
    rng = np.random.default_rng(seed)
    gt = (rng.random(311) < 0.2).astype(int)
    pred = (rng.random(311) < 0.3).astype(int)
    got = detection_scores(gt, pred)
    np.testing.assert_allclose([got.accuracy, got.precision, got.recall, got.f_score], scores_reference(gt, pred))


def test_detection_scores_hand_example_and_zero_division():
    # tp 2, fp 1, fn 2: precision 2/3, recall 1/2, F1 4/7, accuracy 5/8.
    got = detection_scores([1, 1, 1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose([got.accuracy, got.precision, got.recall, got.f_score], [5 / 8, 2 / 3, 1 / 2, 4 / 7])
    none = detection_scores([0, 0, 1], [0, 0, 0])
    assert (none.precision, none.recall, none.f_score) == (0.0, 0.0, 0.0)


def percentile_reference(values, q):
    """Linear interpolation between the sorted values at rank q/100·(n−1) (numpy's default)."""
    v = sorted(values)
    rank = q / 100 * (len(v) - 1)
    low = int(rank)
    high = min(low + 1, len(v) - 1)
    return v[low] + (v[high] - v[low]) * (rank - low)


@pytest.mark.parametrize("ratio", [0.0, 0.5, 1.0, 25.0, 100.0])
def test_threshold_is_the_percentile_of_train_and_test_together(ratio):
    rng = np.random.default_rng(1)
    train, test = rng.exponential(size=400), rng.exponential(size=137) * 3
    expected = percentile_reference(list(train) + list(test), 100 - ratio)
    assert anomaly_threshold(train, test, ratio) == pytest.approx(expected, rel=1e-12)


def test_threshold_flags_about_anomaly_ratio_percent():
    energy = np.arange(1000, dtype=float)
    threshold = anomaly_threshold(energy[:600], energy[600:], 1.0)
    assert (energy > threshold).sum() == 10
    assert anomaly_threshold(energy[:1], energy[1:], 0.0) == energy.max()


def test_threshold_rejects_a_fraction_out_of_range():
    with pytest.raises(ValueError, match="anomaly_ratio"):
        anomaly_threshold(np.ones(3), np.ones(3), 101.0)


def test_energy_is_the_channel_mean_of_squared_errors():
    x = np.array([[[1.0, 2.0], [0.0, 0.0]]])
    x_hat = np.array([[[0.0, 0.0], [1.0, 3.0]]])
    np.testing.assert_allclose(reconstruction_energy(x, x_hat), [[2.5, 5.0]])


def average_precision_reference(gt, scores) -> float:
    """Walk the distinct scores from the highest down; at each, add (recall gained) x (precision there)."""
    gt, scores = list(gt), list(scores)
    positives, total, previous_recall = sum(gt), 0.0, 0.0
    for cut in sorted(set(scores), reverse=True):
        flagged = [g for g, s in zip(gt, scores, strict=True) if s >= cut]
        recall = sum(flagged) / positives
        total += (recall - previous_recall) * sum(flagged) / len(flagged)
        previous_recall = recall
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_average_precision_matches_a_threshold_walk(seed):
    rng = np.random.default_rng(seed)
    gt = (rng.random(60) < 0.2).astype(int)
    # Rounded scores, so several steps share a threshold (ties count together).
    scores = np.round(rng.random(60) + gt * 0.3, 1)
    assert average_precision(gt, scores) == pytest.approx(average_precision_reference(gt, scores), rel=1e-12)


def test_average_precision_is_undefined_without_anomalies_and_one_for_a_perfect_ranking():
    assert average_precision(np.zeros(5), np.arange(5.0)) is None
    assert average_precision(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.8, 0.9])) == 1.0


def test_strict_threshold_is_the_percentile_of_the_energies_given():
    train, val = np.arange(80.0), np.arange(80.0, 100.0)
    assert percentile_threshold([train, val], 5.0) == pytest.approx(np.percentile(np.arange(100.0), 95.0))
    assert percentile_threshold([train, val], 5.0) == anomaly_threshold(train, val, 5.0)
