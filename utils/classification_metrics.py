"""Classification metrics of TSLib's classification experiment, on integer class ids.

accuracy = mean(pred == true) (TSLib's `cal_accuracy`); macro / weighted F1, balanced accuracy (mean
per-class recall over the classes present in `true`), the per-class report and the confusion matrix
come from scikit-learn, with zero_division=0 as TSLib.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import balanced_accuracy_score, classification_report, confusion_matrix, f1_score


def cal_accuracy(pred: np.ndarray, true: np.ndarray) -> float:
    """Fraction of samples whose predicted class equals the true class (`pred`, `true`: `[N]` ints)."""
    pred, true = np.asarray(pred), np.asarray(true)
    if pred.shape != true.shape:
        raise ValueError(f"cal_accuracy: prediction shape {pred.shape} does not match target shape {true.shape}")
    return float(np.mean(pred == true))


def classification_scores(pred: np.ndarray, true: np.ndarray, class_names: Sequence[str]) -> dict:
    """accuracy, macro_f1, weighted_f1, balanced_accuracy (floats), report (text) and confusion (`[K, K]`,
    rows = true class, columns = predicted) for class ids 0..K-1 named by `class_names`."""
    labels = list(range(len(class_names)))
    return {
        "accuracy": cal_accuracy(pred, true),
        "macro_f1": float(f1_score(true, pred, labels=labels, average="macro", zero_division=0)),
        "weighted_f1": float(f1_score(true, pred, labels=labels, average="weighted", zero_division=0)),
        "balanced_accuracy": float(balanced_accuracy_score(true, pred)),
        "report": classification_report(true, pred, labels=labels, target_names=[str(c) for c in class_names],
                                        digits=4, zero_division=0),
        "confusion": confusion_matrix(true, pred, labels=labels),
    }
