"""The tests' numerical comparisons, each reporting max-abs and max-relative error: `assert_close` (elementwise,
torch.allclose's rule) and `assert_close_to_scale` (relative to the largest expected magnitude)."""

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


def assert_close_to_scale(actual: torch.Tensor, expected: torch.Tensor, tol: float, what: str = "",
                          scale_floor: float = 0.0) -> None:
    """Fail unless the shapes agree, `actual` is finite and max|actual − expected| <= tol · max(max|expected|,
    scale_floor) (in float64): for outputs whose small entries carry only cancellation error."""
    label = f"{what}: " if what else ""
    assert actual.shape == expected.shape, f"{label}shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    actual, expected = actual.detach().double(), expected.detach().double()
    assert bool(torch.isfinite(actual).all()), f"{label}non-finite values"
    diff = (actual - expected).abs().max().item() if actual.numel() else 0.0
    scale = max(expected.abs().max().item() if expected.numel() else 0.0, scale_floor)
    rel = diff / scale if scale > 0 else diff
    assert rel <= tol, f"{label}max-abs error {diff:.3e}, relative {rel:.3e} > tolerance {tol:.1e}"
