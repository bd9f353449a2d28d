"""Observed-points instance normalisation against a per-series loop reference."""

from __future__ import annotations

import math

import torch

from layers.MaskedNorm import masked_denormalize, masked_normalize


def reference(x, mask, eps=1e-5):
    b, length, n = x.shape
    xn, mu, sd = torch.zeros_like(x), torch.zeros(b, 1, n, dtype=x.dtype), torch.zeros(b, 1, n, dtype=x.dtype)
    for i in range(b):
        for j in range(n):
            obs = [float(x[i, t, j]) for t in range(length) if mask[i, t, j] == 1]
            m = sum(obs) / max(len(obs), 1)
            v = sum((o - m) ** 2 for o in obs) / max(len(obs), 1)
            s = math.sqrt(v + eps)
            mu[i, 0, j], sd[i, 0, j] = m, s
            for t in range(length):
                xn[i, t, j] = (float(x[i, t, j]) - m) / s if mask[i, t, j] == 1 else 0.0
    return xn, mu, sd


def test_matches_reference_and_zeroes_hidden_points():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 17, 4, generator=g, dtype=torch.float64) * 2 + 1
    mask = (torch.rand(3, 17, 4, generator=g) > 0.4).double()
    x = x * mask  # the experiment zero-fills hidden points
    mask[1, :, 2] = 0  # a variate hidden for the whole window
    x[1, :, 2] = 0
    got = masked_normalize(x, mask)
    for a, b in zip(got, reference(x, mask), strict=True):
        torch.testing.assert_close(a, b)
    assert torch.all(got[0][mask == 0] == 0) and torch.isfinite(got[0]).all()
    back = masked_denormalize(got[0], got[1], got[2])
    torch.testing.assert_close(back[mask == 1], x[mask == 1])
