"""The tests' one numerical comparison: `assert_close`, which always reports max-abs and max-relative error."""

from __future__ import annotations

import torch


def assert_close(actual: torch.Tensor, expected: torch.Tensor, atol: float = 1e-10, rtol: float = 1e-10,
                 what: str = "") -> None:
    """Fail unless the shapes agree, `actual` is finite where `expected` is, and |actual − expected| <=
    atol + rtol·|expected| everywhere (torch.allclose's rule, in float64); the message gives both errors."""
    label = f"{what}: " if what else ""
    assert actual.shape == expected.shape, f"{label}shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    actual, expected = actual.detach().double(), expected.detach().double()
    assert bool((torch.isfinite(actual) == torch.isfinite(expected)).all()), f"{label}non-finite values differ"
    err = (actual - expected).abs().nan_to_num(0.0)
    rel = (err / expected.abs().clamp_min(1e-300)).max().item() if err.numel() else 0.0
    ok = bool((err <= atol + rtol * expected.abs().nan_to_num(0.0)).all())
    assert ok, f"{label}max abs err {err.max().item():.3e}, max rel err {rel:.3e} (atol {atol:g}, rtol {rtol:g})"
