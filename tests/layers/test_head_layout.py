"""`head_major_to_steps` against element-by-element references: `per_step` moves every value to its own
step, `tslib` reads the head-major buffer's C-order memory as rows of H·E values, as TSLib's `view` does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from layers.HeadLayout import head_major_to_steps


def per_step_reference(out: np.ndarray, time_dim: int) -> np.ndarray:
    """`[B, L, H, E]` with value [b, l, h, e] = out[b, h, l, e] (time_dim 2) or out[b, h, e, l] (3)."""
    b, h = out.shape[:2]
    steps, width = (out.shape[2], out.shape[3]) if time_dim == 2 else (out.shape[3], out.shape[2])
    result = np.empty((b, steps, h, width))
    for bi in range(b):
        for li in range(steps):
            for hi in range(h):
                for ei in range(width):
                    result[bi, li, hi, ei] = out[bi, hi, li, ei] if time_dim == 2 else out[bi, hi, ei, li]
    return result


def tslib_reference(out: np.ndarray, time_dim: int) -> np.ndarray:
    """`[B, L, H·E]` rows of TSLib's `view(B, L, -1)`: row l, column c is the buffer element whose
    C-order position within its sample is l·H·E + c (found with `np.unravel_index`)."""
    b, h = out.shape[:2]
    steps = out.shape[time_dim]
    row = out[0].size // steps  # H·E
    result = np.empty((b, steps, row))
    for bi in range(b):
        for li in range(steps):
            for c in range(row):
                result[bi, li, c] = out[bi][np.unravel_index(li * row + c, out.shape[1:])]
    return result


@pytest.mark.parametrize("time_dim", [2, 3], ids=["BHLE", "BHEL"])
@pytest.mark.parametrize(("b", "h", "steps", "width"), [(2, 3, 7, 5), (1, 8, 96, 2), (2, 1, 4, 3)],
                         ids=lambda v: str(v))
def test_both_layouts_match_their_element_references(time_dim: int, b: int, h: int, steps: int, width: int):
    shape = (b, h, steps, width) if time_dim == 2 else (b, h, width, steps)
    out = torch.randn(shape, dtype=torch.float64)
    per_step = head_major_to_steps(out, "per_step", time_dim)
    tslib = head_major_to_steps(out, "tslib", time_dim)
    assert per_step.shape == tslib.shape == (b, steps, h, width)
    np.testing.assert_array_equal(per_step.numpy(), per_step_reference(out.numpy(), time_dim))
    # The layers flatten [B, L, H, E] to [B, L, H·E]; TSLib's view gives those rows.
    np.testing.assert_array_equal(tslib.reshape(b, steps, -1).numpy(), tslib_reference(out.numpy(), time_dim))


def test_tslib_rows_hold_consecutive_steps_of_one_head():
    # [B, H, L, E] with value = 100·h + step: TSLib's row 0 is head 0 at steps 0 … H-1, not step 0's heads.
    h, steps = 4, 8
    out = (100 * torch.arange(h).view(1, h, 1, 1) + torch.arange(steps).view(1, 1, steps, 1)).double()
    row0 = head_major_to_steps(out, "tslib", time_dim=2)[0, 0, :, 0]
    assert row0.tolist() == [0, 1, 2, 3]
    assert head_major_to_steps(out, "per_step", time_dim=2)[0, 0, :, 0].tolist() == [0, 100, 200, 300]


def test_gradients_flow_through_both_layouts():
    out = torch.randn(2, 3, 5, 4, dtype=torch.float64, requires_grad=True)
    for layout in ("per_step", "tslib"):
        out.grad = None
        weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view(2, 5, 3, 4)
        (head_major_to_steps(out, layout, 2) * weights).sum().backward()
        # A permutation of the elements either way: every weight reaches exactly one input element.
        assert sorted(out.grad.flatten().tolist()) == sorted(weights.flatten().tolist())


@pytest.mark.parametrize(("layout", "time_dim", "shape", "match"),
                         [("heads_first", 2, (1, 2, 3, 4), "--attn_output_layout"),
                          ("tslib", 1, (1, 2, 3, 4), "time_dim"),
                          ("per_step", 2, (2, 3, 4), "4-d")])
def test_bad_arguments_are_one_line_errors(layout: str, time_dim: int, shape: tuple, match: str):
    with pytest.raises(ValueError, match=match) as err:
        head_major_to_steps(torch.zeros(shape), layout, time_dim)
    assert "\n" not in str(err.value)
