"""Classification metrics against slow, obviously correct loop references."""

from __future__ import annotations

import numpy as np
import pytest

from utils.classification_metrics import cal_accuracy, classification_scores


def accuracy_reference(pred, true) -> float:
    hits = 0
    for p, t in zip(pred, true, strict=True):
        hits += int(p == t)
    return hits / len(true)


def f1_reference(pred, true, k: int) -> tuple[float, float]:
    """(macro F1, support-weighted F1); a class with no predictions or no samples scores 0 (zero_division=0)."""
    scores, support = [], []
    for c in range(k):
        tp = sum(1 for p, t in zip(pred, true, strict=True) if p == c and t == c)
        fp = sum(1 for p, t in zip(pred, true, strict=True) if p == c and t != c)
        fn = sum(1 for p, t in zip(pred, true, strict=True) if p != c and t == c)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
        support.append(tp + fn)
    return sum(scores) / k, sum(s * n for s, n in zip(scores, support, strict=True)) / sum(support)


def balanced_reference(pred, true) -> float:
    recalls = []
    for c in sorted(set(true)):
        members = [p for p, t in zip(pred, true, strict=True) if t == c]
        recalls.append(sum(1 for p in members if p == c) / len(members))
    return sum(recalls) / len(recalls)


@pytest.mark.parametrize("n,k,seed", [(5, 2, 0), (37, 3, 1), (370, 9, 2)], ids=["N5-K2", "N37-K3", "N370-K9"])
def test_scores_match_loop_references(n, k, seed):
    rng = np.random.default_rng(seed)
    true = rng.integers(0, k, size=n)
    pred = np.where(rng.random(n) < 0.6, true, rng.integers(0, k, size=n))
    scores = classification_scores(pred, true, [f"c{i}" for i in range(k)])
    assert scores["accuracy"] == pytest.approx(accuracy_reference(pred, true), abs=1e-12)
    macro, weighted = f1_reference(pred, true, k)
    assert scores["macro_f1"] == pytest.approx(macro, abs=1e-12)
    assert scores["weighted_f1"] == pytest.approx(weighted, abs=1e-12)
    assert scores["balanced_accuracy"] == pytest.approx(balanced_reference(pred, true), abs=1e-12)
    confusion = np.zeros((k, k), dtype=int)
    for p, t in zip(pred, true, strict=True):
        confusion[t, p] += 1
    np.testing.assert_array_equal(scores["confusion"], confusion)
    assert "c0" in scores["report"]


def test_accuracy_rejects_mismatched_shapes():
    assert cal_accuracy(np.array([1, 2, 3]), np.array([1, 0, 3])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="does not match"):
        cal_accuracy(np.zeros(3), np.zeros(4))
