from __future__ import annotations

import numpy as np
import pytest

from utils.metrics import metric


def test_metric_matches_definitions():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(5, 4, 3)).astype(np.float32) + 3.0
    pred = true + rng.normal(size=true.shape).astype(np.float32) * 0.1
    mae, mse, rmse, mape, mspe = metric(pred, true)
    err = pred.astype(np.float64) - true
    assert mae == pytest.approx(np.abs(err).mean(), rel=1e-12)
    assert mse == pytest.approx((err**2).mean(), rel=1e-12)
    assert rmse == pytest.approx(np.sqrt((err**2).mean()), rel=1e-12)
    assert mape == pytest.approx(np.abs(err / true).mean(), rel=1e-12)
    assert mspe == pytest.approx(((err / true) ** 2).mean(), rel=1e-12)


def test_metric_zero_target_gives_inf_mape_like_tslib():
    mae, mse, _, mape, _ = metric(np.array([1.0, 2.0]), np.array([0.0, 2.0]))
    assert (mae, mse) == (0.5, 0.5)
    assert np.isinf(mape)


def test_metric_rejects_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        metric(np.zeros((2, 3)), np.zeros((3, 2)))
