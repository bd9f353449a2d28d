"""HiPPO-LegT (FiLM's Legendre Projection Unit): the paper's matrices, the bilinear discretisation,
the Legendre evaluation, the recurrence against its closed form, and reconstruction of a signal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from layers.LegendreMemory import HiPPO_LegT, legt_transition


def test_transition_is_the_papers_matrices():
    n = 6
    neg_a, b = legt_transition(n)
    for i in range(n):
        assert b[i] == (2 * i + 1) * (-1) ** i
        for k in range(n):
            paper = (2 * i + 1) * (1 if k >= i else (-1) ** (i - k))
            assert neg_a[i, k] == -paper


@pytest.mark.parametrize("steps", [1, 7, 96])
def test_buffers_are_the_bilinear_discretisation(steps):
    """Ā = (I − dt/2·A)⁻¹(I + dt/2·A), B̄ = (I − dt/2·A)⁻¹·dt·B for the continuous (A, B) = legt_transition."""
    n, dt = 8, 1.0 / steps
    a, b = legt_transition(n)
    left = np.linalg.inv(np.eye(n) - dt / 2 * a)
    legt = HiPPO_LegT(n, dt=dt)
    np.testing.assert_allclose(legt.A.numpy(), left @ (np.eye(n) + dt / 2 * a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(legt.B.numpy(), left @ (dt * b), rtol=1e-5, atol=1e-6)
    assert legt.A.dtype == legt.B.dtype == legt.eval_matrix.dtype == torch.float32


def test_eval_matrix_follows_bonnets_recurrence():
    """Row j holds P_n(1 − 2j·dt), built here with (n+1)P_{n+1}(x) = (2n+1)x P_n(x) − n P_{n−1}(x)."""
    n, steps = 12, 10
    legt = HiPPO_LegT(n, dt=1.0 / steps)
    x = 1 - 2 * np.arange(steps) / steps
    p = [np.ones_like(x), x]
    for k in range(1, n - 1):
        p.append(((2 * k + 1) * x * p[k] - k * p[k - 1]) / (k + 1))
    assert legt.eval_matrix.shape == (steps, n)
    np.testing.assert_allclose(legt.eval_matrix.numpy(), np.stack(p, axis=1), rtol=1e-5, atol=1e-6)


def test_recurrence_equals_its_closed_form():
    """c_T = Σ_t Ā^{T−t} B̄ f_t after every step, over any leading shape."""
    legt = HiPPO_LegT(10, dt=1.0 / 16).double()
    f = torch.randn(2, 3, 21, dtype=torch.float64)
    states = legt(f)  # [T, 2, 3, N]
    assert states.shape == (21, 2, 3, 10)
    for t in (0, 5, 20):
        expected = sum(torch.linalg.matrix_power(legt.A, t - s) @ legt.B * f[..., s, None] for s in range(t + 1))
        torch.testing.assert_close(states[t], expected)


@pytest.mark.parametrize("order", [8, 16, 32])
def test_reconstructs_a_smooth_signal_half_a_step_late(order):
    """After a full window, reconstruct() returns the last window of f, oldest first, lagging by dt/2
    (the bilinear rule averages neighbouring samples)."""
    window = 96
    legt = HiPPO_LegT(order, dt=1.0 / window).double()
    s = torch.arange(2 * window, dtype=torch.float64) / window  # two windows of samples

    def g(t):
        return 3 * t**2 - t + 0.5 + torch.sin(5 * t)

    coefficients = legt(g(s))[-1]  # [N]
    reconstruction = legt.reconstruct(coefficients)  # [window]
    target = g(s[-window:] - 0.5 / window)
    assert (reconstruction - target).abs().max() < 3e-3
    assert (reconstruction.flip(0) - target).abs().max() > 1.0  # the orientation matters
