"""Imputation metrics over the hidden points only, against a loop reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from utils.metrics import masked_metric


def masked_reference(pred, true, mask):
    errs = [(float(p), float(t)) for p, t, m in zip(pred.ravel(), true.ravel(), mask.ravel(), strict=True)
            if m == 0]
    n = len(errs)
    mae = sum(abs(p - t) for p, t in errs) / n
    mse = sum((p - t) ** 2 for p, t in errs) / n
    mape = sum(abs((p - t) / t) for p, t in errs) / n
    mspe = sum(((p - t) / t) ** 2 for p, t in errs) / n
    return mae, mse, math.sqrt(mse), mape, mspe


def test_masked_metric_scores_only_hidden_points():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(5, 13, 3)).astype(np.float32) + 3.0
    pred = true + rng.normal(size=true.shape).astype(np.float32)
    mask = (rng.random(true.shape) > 0.3).astype(np.float32)
    got = masked_metric(pred, true, mask)
    np.testing.assert_allclose(got, masked_reference(pred, true, mask), rtol=1e-6)
    # observed points do not count, however wrong
    pred2 = np.where(mask == 1, 1e6, pred)
    np.testing.assert_allclose(masked_metric(pred2, true, mask), got, rtol=1e-12)


def test_masked_metric_without_hidden_points_is_an_error():
    x = np.ones((2, 4, 1))
    with pytest.raises(ValueError, match="no point is masked"):
        masked_metric(x, x, np.ones_like(x))
