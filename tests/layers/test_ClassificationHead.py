"""layers/ClassificationHead.py: GELU, dropout, zeroed padded steps, flattened in (step, feature) order."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.ClassificationHead import masked_flat_features


def test_matches_a_per_step_loop_and_zeroes_padded_steps():
    tokens = torch.randn(2, 5, 3, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.float64)
    out = masked_flat_features(tokens, nn.Identity(), mask)
    for b in range(2):
        expected = []
        for t in range(5):
            step = [0.5 * v * (1 + torch.erf(v / 2 ** 0.5)) for v in tokens[b, t]]  # GELU, exact form
            expected += [v * mask[b, t] for v in step]
        torch.testing.assert_close(out[b], torch.stack(expected))
    assert (out[0, 9:] == 0).all()


def test_no_mask_keeps_every_step_and_a_wrong_mask_is_one_line():
    tokens = torch.randn(2, 4, 3)
    torch.testing.assert_close(masked_flat_features(tokens, nn.Identity()),
                               torch.nn.functional.gelu(tokens).reshape(2, 12))
    with pytest.raises(ValueError, match="padding mask"):
        masked_flat_features(tokens, nn.Identity(), torch.ones(2, 5))
