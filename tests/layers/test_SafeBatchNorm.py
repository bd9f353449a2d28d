"""SafeBatchNorm1d: torch's BatchNorm1d for every batch with more than one value per channel (outputs, running
statistics, gradients, state_dict names), and the running statistics for a training batch of one value per
channel, where torch raises (issue 49)."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

from layers.SafeBatchNorm import SafeBatchNorm1d


def pair(seed: int = 0) -> tuple[SafeBatchNorm1d, nn.BatchNorm1d]:
    torch.manual_seed(seed)
    ours = SafeBatchNorm1d(4).double()
    with torch.no_grad():
        ours.weight.uniform_(0.5, 1.5)
        ours.bias.uniform_(-0.5, 0.5)
        ours.running_mean.uniform_(-1, 1)
        ours.running_var.uniform_(0.5, 2)
    reference = nn.BatchNorm1d(4).double()
    reference.load_state_dict(ours.state_dict())
    return ours, reference


@pytest.mark.parametrize("shape", [(2, 4), (1, 4, 2), (3, 4, 1), (5, 4, 7)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_equals_torch_batch_norm_with_more_than_one_value(shape, training):
    ours, reference = pair()
    ours.train(training)
    reference.train(training)
    x = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    x_ours, x_ref = x.clone().requires_grad_(), x.clone().requires_grad_()
    out, expected = ours(x_ours), reference(x_ref)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
    (expected * torch.arange(expected.numel()).reshape(expected.shape)).sum().backward()
    torch.testing.assert_close(x_ours.grad, x_ref.grad, rtol=0, atol=0)
    torch.testing.assert_close(ours.weight.grad, reference.weight.grad, rtol=0, atol=0)
    for name, buffer in reference.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[name], buffer, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(1, 4), (1, 4, 1)], ids=["1x4", "1x4x1"])
def test_one_value_per_channel_in_training_uses_the_running_statistics(shape):
    ours, reference = pair()
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        reference.train()(x)
    before = copy.deepcopy(ours.state_dict())
    out = ours.train()(x)
    torch.testing.assert_close(out, reference.eval()(x), rtol=0, atol=0)
    for name, buffer in before.items():
        torch.testing.assert_close(ours.state_dict()[name], buffer, rtol=0, atol=0)
    out.sum().backward()
    assert torch.isfinite(x.grad).all() and ours.weight.grad.abs().sum() > 0
