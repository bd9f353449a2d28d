"""M4 scores (utils/m4_summary.py): hand-checked sMAPE, MAPE, MASE, the pooled summary and OWA, and the
whole summary against a slow reference written from the M4 competition's definitions."""

from __future__ import annotations

import numpy as np
import pytest

from utils.m4_summary import M4_GROUPS, group_scores, mape, mase, smape, summarize_groups, summary


def test_hand_checked_elements():
    assert smape([[110.0, 0.0]], [[100.0, 0.0]])[0].tolist() == pytest.approx([2000 / 210, 0.0])
    assert mape([[110.0, 5.0]], [[100.0, 0.0]])[0].tolist() == pytest.approx([10.0, 500.0])
    # Lag-1 differences of [1, 2, 4, 7] average 2; mean |error| 1 → 0.5. Lag 2: differences 3, 5 → 1/4.
    assert mase([8.0, 10.0], [1.0, 2.0, 4.0, 7.0], np.array([9.0, 9.0]), 1) == pytest.approx(0.5)
    assert mase([8.0, 10.0], [1.0, 2.0, 4.0, 7.0], np.array([9.0, 9.0]), 2) == pytest.approx(0.25)


def test_group_scores_hand_checked():
    forecast = np.array([[110.0, 90.0], [50.0, 50.0]])
    target = np.array([[100.0, 100.0], [50.0, 40.0]])
    insample = [np.array([1.0, 3.0, 5.0]), np.array([10.0, 20.0])]
    scores = group_scores(forecast, insample, target, 1)
    # sMAPE terms 200·10/210, 200·10/190, 0, 200·10/90; MAPE terms 10, 10, 0, 25.
    assert scores["smape"] == pytest.approx((2000 / 210 + 2000 / 190 + 0 + 2000 / 90) / 4)
    assert scores["mape"] == pytest.approx(45 / 4)
    # Series 1: mean |error| 10, scale 2 → 5. Series 2: mean |error| 5, scale 10 → 0.5.
    assert scores["mase"] == pytest.approx((5 + 0.5) / 2)


def test_group_scores_rejects_a_wrong_number_of_forecasts():
    with pytest.raises(ValueError, match="do not match"):
        group_scores(np.ones((2, 3)), [np.ones(4)] * 3, np.ones((3, 3)), 1)


def test_summarize_groups_pools_weekly_daily_hourly_and_weights_by_series():
    scores = dict(zip(M4_GROUPS, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], strict=True))
    counts = dict(zip(M4_GROUPS, [2, 1, 1, 1, 1, 2], strict=True))
    out = summarize_groups(scores, counts)
    assert out == pytest.approx({"Yearly": 10.0, "Quarterly": 20.0, "Monthly": 30.0,
                                 "Others": (40 + 50 + 120) / 4, "Average": 280 / 8})


def test_owa_is_half_the_sum_of_the_ratios_of_pooled_scores():
    counts = dict(zip(M4_GROUPS, [1, 1, 1, 1, 1, 1], strict=True))
    model = {g: {"smape": 10.0, "mape": 1.0, "mase": 1.0} for g in M4_GROUPS}
    naive2 = {g: {"smape": 20.0, "mape": 2.0, "mase": 4.0} for g in M4_GROUPS}
    # (1/4 + 10/20) / 2 = 0.375 everywhere.
    assert summary(model, naive2, counts)["owa"] == pytest.approx(dict.fromkeys(
        ("Yearly", "Quarterly", "Monthly", "Others", "Average"), 0.375))
    # OWA of pooled scores, not the mean of per-group OWAs: Weekly twice as good on sMAPE only.
    model["Weekly"]["smape"] = 5.0
    owa = summary(model, naive2, counts)["owa"]
    assert owa["Others"] == pytest.approx((0.25 + (5 + 10 + 10) / 3 / 20) / 2)


def slow_summary(data: dict) -> dict:
    """The M4 summary in plain loops: per group per series per step, then pooled with series counts."""
    per_group = {}
    for g, d in data.items():
        acc = {"smape": [], "mape": [], "mase": [], "n_smape": [], "n_mase": []}
        for f, n2, x, y in zip(d["forecast"], d["naive2"], d["insample"], d["target"], strict=True):
            m = d["frequency"]
            scale = sum(abs(x[i] - x[i - m]) for i in range(m, len(x))) / (len(x) - m)
            for name, fc in (("", f), ("n_", n2)):
                sm = [200 * abs(a - b) / (abs(a) + abs(b)) if abs(a) + abs(b) else 0.0 for a, b in zip(fc, y, strict=True)]
                acc[name + "smape"].extend(sm)
                acc[name + "mase"].append(sum(abs(a - b) for a, b in zip(fc, y, strict=True)) / len(y) / scale)
            acc["mape"].extend(100 * abs(a - b) / (abs(b) if b else 1.0) for a, b in zip(f, y, strict=True))
        per_group[g] = {k: sum(v) / len(v) for k, v in acc.items()} | {"count": len(d["target"])}
    out = {}
    for name in ("smape", "mape", "mase", "n_smape", "n_mase"):
        rows = {g: per_group[g][name] for g in ("Yearly", "Quarterly", "Monthly")}
        others = [g for g in ("Weekly", "Daily", "Hourly")]
        rows["Others"] = (sum(per_group[g][name] * per_group[g]["count"] for g in others)
                          / sum(per_group[g]["count"] for g in others))
        rows["Average"] = (sum(per_group[g][name] * per_group[g]["count"] for g in per_group)
                           / sum(per_group[g]["count"] for g in per_group))
        out[name] = rows
    out["owa"] = {k: (out["mase"][k] / out["n_mase"][k] + out["smape"][k] / out["n_smape"][k]) / 2
                  for k in out["smape"]}
    return {k: out[k] for k in ("smape", "mape", "mase", "owa")}


def test_summary_matches_the_slow_reference():
    rng = np.random.default_rng(7)
    data = {}
    for g, (n, h, m) in zip(M4_GROUPS, [(4, 6, 1), (3, 8, 4), (5, 18, 12), (2, 13, 1), (3, 14, 1), (2, 48, 24)], strict=True):
        target = rng.uniform(50, 150, (n, h))
        target[0, 0] = 0.0  # a zero target: MAPE divides by 1
        data[g] = {"forecast": target + rng.normal(0, 10, (n, h)), "naive2": target + rng.normal(0, 20, (n, h)),
                   "insample": [rng.uniform(50, 150, rng.integers(m + 2, 3 * h)) for _ in range(n)],
                   "target": target, "frequency": m}
    data["Yearly"]["forecast"][0, 0] = 0.0  # a 0/0 sMAPE term
    model = {g: group_scores(d["forecast"], d["insample"], d["target"], d["frequency"]) for g, d in data.items()}
    naive2 = {g: group_scores(d["naive2"], d["insample"], d["target"], d["frequency"]) for g, d in data.items()}
    counts = {g: len(d["target"]) for g, d in data.items()}
    fast = summary(model, naive2, counts)
    ref = slow_summary({g: {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
                        for g, d in data.items()})
    for name in ("smape", "mape", "mase", "owa"):
        assert fast[name] == pytest.approx(ref[name], rel=1e-12), name
