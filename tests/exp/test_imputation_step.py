"""ImputationStep: the model sees x·mask and the mask, the loss reads the hidden points only."""

from __future__ import annotations

import torch
import torch.nn as nn

from exp.imputation_step import ImputationStep
from tests.conftest import build_configs


class Recorder(nn.Module):
    """Returns its input plus a learnable offset and remembers what it was called with."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = nn.Parameter(torch.tensor(0.5))
        self.calls = []

    def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None):
        self.calls.append((x_enc.clone(), x_mark_enc, x_dec, x_mark_dec, mask.clone()))
        return x_enc + self.offset


def make_batch(b=4, length=10, c=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, length, c, generator=g) + 2.0
    return x, torch.zeros(b, 0, c), torch.randn(b, length, 4, generator=g), torch.zeros(b, 0, 4)


def reference_loss(out, x, mask, f_dim=0):
    total, n = 0.0, 0
    for idx in (mask[..., f_dim:] == 0).nonzero().tolist():
        i, t, j = idx
        total += (float(out.detach()[i, t, f_dim:][j]) - float(x[i, t, f_dim:][j])) ** 2
        n += 1
    return total / n


def test_inputs_are_masked_and_loss_is_on_hidden_points_only():
    model = Recorder()
    step = ImputationStep(model, build_configs(task_name="imputation", mask_rate=0.3), torch.device("cpu"))
    step.generator = torch.Generator().manual_seed(3)
    batch = make_batch()
    out, target = step.predict(batch)
    inp, mark, dec, dec_mark, mask = model.calls[0]
    assert dec is None and dec_mark is None and torch.equal(mark, batch[2])
    assert torch.equal(inp, batch[0] * mask)
    assert torch.equal(torch.isnan(target), mask == 1)
    loss = step.loss(out, target)
    assert abs(loss.item() - reference_loss(out, batch[0], mask)) < 1e-5


def test_ms_scores_the_last_channel():
    model = Recorder()
    step = ImputationStep(model, build_configs(task_name="imputation", features="MS", mask_rate=0.5),
                          torch.device("cpu"))
    step.generator = torch.Generator().manual_seed(4)
    batch = make_batch()
    out, target = step.predict(batch)
    mask = model.calls[0][4]
    assert abs(step.loss(out, target).item() - reference_loss(out, batch[0], mask, f_dim=-1)) < 1e-5


def test_a_batch_with_nothing_hidden_gives_zero_loss_with_a_gradient():
    model = Recorder()
    step = ImputationStep(model, build_configs(task_name="imputation", mask_rate=1e-9), torch.device("cpu"))
    out, target = step.predict(make_batch(b=1, length=2, c=1))
    loss = step.loss(out, target)
    loss.backward()
    assert loss.item() == 0.0 and model.offset.grad is not None and model.offset.grad.item() == 0.0


def test_same_generator_seed_same_masks():
    masks = []
    for _ in range(2):
        model = Recorder()
        step = ImputationStep(model, build_configs(task_name="imputation"), torch.device("cpu"))
        step.generator = torch.Generator().manual_seed(11)
        step.predict(make_batch())
        masks.append(model.calls[0][4])
    assert torch.equal(*masks)
