"""compare.report.significance against textbook formulas: Welch's t-test with one constant side (a model whose seeds give
the same number) is exact and silent."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from compare.report import significance


def test_welch_with_one_constant_side_is_the_formula_and_raises_no_precision_warning():
    constant = [0.8207663782447466] * 3  # a value float64 cannot hold exactly: its computed variance is noise
    varied = [0.7640966628308401, 0.7225244831338411, 0.753688989784336]
    # Welch with var(constant) = 0: t = (mean(c) − mean(v)) / sqrt(var(v) / n), n − 1 degrees of freedom.
    t = (np.mean(constant) - np.mean(varied)) / np.sqrt(np.var(varied, ddof=1) / len(varied))
    expected = 2 * stats.t.sf(abs(t), len(varied) - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = significance.welch_p(constant, varied)
        difference = significance.cell_difference(constant, varied, relative=False)
    assert abs(p - expected) <= 1e-12 * expected
    assert difference.p == p and difference.low < difference.relative < difference.high
