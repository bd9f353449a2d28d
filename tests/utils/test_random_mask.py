"""TSLib's imputation mask: statistics, TSLib's draw from the global RNG, and seeded reproducibility."""

from __future__ import annotations

import math

import pytest
import torch

from utils.random_mask import mask_seed, random_point_mask


def tslib_mask_reference(u: torch.Tensor, rate: float) -> torch.Tensor:
    """TSLib's two in-place assignments, written out element by element."""
    out = torch.empty_like(u)
    for idx in range(u.numel()):
        out.view(-1)[idx] = 0.0 if u.view(-1)[idx] <= rate else 1.0
    return out


@pytest.mark.parametrize("rate", [0.125, 0.25, 0.375, 0.5])
def test_hidden_share_matches_the_rate(rate):
    mask = random_point_mask((64, 96, 7), rate, torch.Generator().manual_seed(1))
    assert set(mask.unique().tolist()) <= {0.0, 1.0}
    n = mask.numel()
    hidden = float((mask == 0).sum())
    # Binomial(n, rate): 5 standard deviations
    assert abs(hidden - n * rate) < 5 * math.sqrt(n * rate * (1 - rate))


def test_points_are_hidden_independently_of_position():
    mask = random_point_mask((2000, 24, 3), 0.25, torch.Generator().manual_seed(2))
    per_step = (mask == 0).float().mean(dim=(0, 2))  # share hidden at each time step
    per_channel = (mask == 0).float().mean(dim=(0, 1))
    assert torch.all((per_step - 0.25).abs() < 0.02) and torch.all((per_channel - 0.25).abs() < 0.01)


def test_global_draw_is_tslibs_single_rand_and_its_thresholding():
    shape, rate = (3, 11, 4), 0.3
    torch.manual_seed(7)
    mask = random_point_mask(shape, rate)
    after_ours = torch.rand(1)
    torch.manual_seed(7)
    u = torch.rand(shape)
    after_tslib = torch.rand(1)
    assert torch.equal(mask, tslib_mask_reference(u, rate))
    assert torch.equal(after_ours, after_tslib)  # the global stream advanced by exactly TSLib's draw


def test_seeded_generator_reproduces_and_ignores_the_global_rng():
    g1, g2 = torch.Generator().manual_seed(mask_seed(2021, 0, 3, 5)), torch.Generator().manual_seed(
        mask_seed(2021, 0, 3, 5))
    torch.manual_seed(0)
    a = random_point_mask((4, 96, 7), 0.125, g1)
    torch.manual_seed(1)
    state = torch.get_rng_state()
    b = random_point_mask((4, 96, 7), 0.125, g2)
    assert torch.equal(a, b)
    assert torch.equal(state, torch.get_rng_state())


def test_mask_seed_is_a_fixed_function_of_its_parts():
    assert mask_seed(2021, 1, 2) == mask_seed(2021, 1, 2)
    seeds = {mask_seed(s, *parts) for s in (2021, 2022) for parts in ((0, 0, 0), (0, 0, 1), (0, 1, 0), (1,), (2,))}
    assert len(seeds) == 10
    assert all(0 <= s < 2**63 for s in seeds)
