"""Anomaly-detection scoring of TSLib's `Exp_Anomaly_Detection`: threshold, point adjustment, P/R/F1.

    energy_t    = mean_c (x_tc − x̂_tc)²                       (per-step reconstruction error)
    threshold   = percentile(train energy ∪ test energy, 100 − anomaly_ratio)      (TSLib's protocol)
                = percentile(train energy ∪ validation energy, 100 − anomaly_ratio) (--protocol strict)
    pred_t      = energy_t > threshold
    adjusted    = every true anomaly segment (a maximal run of label 1) that holds at least one
                  pred_t = 1 is predicted whole                 (point adjustment)

Precision, recall and F1 are the binary ones of scikit-learn on the adjusted predictions (TSLib's
numbers) and on the raw predictions (the unadjusted F1, which TSLib does not report).

Point adjustment inflates the scores: one flagged step anywhere inside a long anomaly segment turns
the whole segment into true positives, so a detector that fires at random on a few percent of the
steps already reaches a high adjusted F1 on data with long segments. Read the unadjusted F1 beside it.

The threshold-free score is the average precision of the energies as scores for the labels (the area under
the step-wise precision-recall curve over every threshold; scikit-learn's `average_precision_score`):

    AP = Σ_k (R_k − R_{k−1}) · P_k        over the thresholds k of the distinct energies, highest first

TSLib's loop never back-fills index 0 (its backward scan runs `range(i, 0, -1)`), so a segment that
starts at the first step and is first hit later keeps step 0 unflagged; `point_adjust` fills it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics import accuracy_score, average_precision_score, precision_recall_fscore_support

__all__ = ["DetectionScores", "anomaly_threshold", "average_precision", "detection_scores", "percentile_threshold",
           "point_adjust", "reconstruction_energy"]


def reconstruction_energy(x: np.ndarray, x_hat: np.ndarray) -> np.ndarray:
    """Per-step squared reconstruction error averaged over channels: `[..., C]` → `[...]`."""
    return np.mean((np.asarray(x, dtype=np.float64) - np.asarray(x_hat, dtype=np.float64)) ** 2, axis=-1)


def percentile_threshold(energies: list[np.ndarray], anomaly_ratio: float) -> float:
    """The (100 − anomaly_ratio) percentile (numpy's linear interpolation) of all `energies` together;
    anomaly_ratio is in percent (1 flags about 1% of the steps)."""
    if not 0.0 <= anomaly_ratio <= 100.0:
        raise ValueError(f"--anomaly_ratio {anomaly_ratio} must lie in [0, 100] (a percentage)")
    combined = np.concatenate([np.ravel(energy) for energy in energies])
    return float(np.percentile(combined, 100.0 - anomaly_ratio))


def anomaly_threshold(train_energy: np.ndarray, test_energy: np.ndarray, anomaly_ratio: float) -> float:
    """TSLib's threshold: `percentile_threshold` of the train and test energies together."""
    return percentile_threshold([train_energy, test_energy], anomaly_ratio)


def average_precision(gt: np.ndarray, energy: np.ndarray) -> float | None:
    """Average precision of `energy` `[T]` as the anomaly score of the 0/1 labels `gt` `[T]` (threshold-free,
    scikit-learn's `average_precision_score`); None when `gt` has no anomaly (undefined)."""
    gt = np.asarray(gt).astype(np.int64).ravel()
    if not gt.any():
        return None
    return float(average_precision_score(gt, np.asarray(energy, dtype=np.float64).ravel()))


def point_adjust(gt: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Point-adjusted predictions `[T]`: each segment of consecutive gt = 1 with any pred = 1 becomes all 1;
    predictions outside true segments are unchanged. gt and pred are 0/1 arrays `[T]`; inputs are not modified."""
    gt = np.asarray(gt).astype(bool).ravel()
    pred = np.asarray(pred).astype(bool).ravel()
    if gt.shape != pred.shape:
        raise ValueError(f"labels {gt.shape} and predictions {pred.shape} differ in length")
    # Segment id of each anomalous step: steps of one run share the count of run starts up to them.
    starts = gt & ~np.concatenate([[False], gt[:-1]])
    segment = np.cumsum(starts) * gt  # 0 outside anomalies, 1..S inside
    hit = np.zeros(int(segment.max(initial=0)) + 1, dtype=bool)
    np.logical_or.at(hit, segment[pred & gt], True)
    hit[0] = False
    return (pred | hit[segment]).astype(np.int64)


@dataclass(frozen=True)
class DetectionScores:
    """Accuracy, precision, recall and F1 of binary predictions (positive class 1)."""

    accuracy: float
    precision: float
    recall: float
    f_score: float


def detection_scores(gt: np.ndarray, pred: np.ndarray) -> DetectionScores:
    """scikit-learn's accuracy and binary precision/recall/F1 (0 where undefined, as sklearn warns)."""
    gt = np.asarray(gt).astype(np.int64).ravel()
    pred = np.asarray(pred).astype(np.int64).ravel()
    precision, recall, f_score, _ = precision_recall_fscore_support(gt, pred, average="binary", zero_division=0)
    return DetectionScores(float(accuracy_score(gt, pred)), float(precision), float(recall), float(f_score))
