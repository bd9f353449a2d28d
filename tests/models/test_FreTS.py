"""FreTS: TSLib's construction order, the frequency-domain MLP against its complex-valued definition,
the learners against explicit DFT matrices, the channel switch and clear errors."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from layers.FrequencyMLP import frequency_mlp
from models.FreTS import Model


def small_configs(make_configs, **overrides):
    flags = dict(model="FreTS", seq_len=20, label_len=10, pred_len=6, enc_in=5, dec_in=5, c_out=5)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's FreTS: φ ~ N(0, 1) [1, 128]; r1, i1, rb1, ib1, r2, i2, rb2, ib2 ~ 0.02·N(0, 1); then the
    two Linears of the projection."""
    torch.manual_seed(seed)
    weights = [torch.randn(1, 128)]
    for _ in range(2):
        weights += [0.02 * torch.randn(128, 128), 0.02 * torch.randn(128, 128), 0.02 * torch.randn(128),
                    0.02 * torch.randn(128)]
    first, second = nn.Linear(configs.seq_len * 128, 256), nn.Linear(256, configs.pred_len)
    return weights + [first.weight, first.bias, second.weight, second.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = small_configs(make_configs)
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    names = [name for name, _ in model.named_parameters()]
    assert names == ["embeddings", "r1", "i1", "rb1", "ib1", "r2", "i2", "rb2", "ib2", "fc.0.weight", "fc.0.bias",
                     "fc.2.weight", "fc.2.bias"]
    for mine, theirs in zip(model.parameters(), expected, strict=True):
        assert torch.equal(mine, theirs)
    after_ours = torch.rand(4)
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))


def complex_reference(spectrum, w_real, w_imag, b_real, b_imag, sparsity, form):
    """σ(H·W + B) in complex arithmetic, σ = SoftShrink ∘ ReLU on the real and imaginary parts."""
    weight = torch.complex(w_real, w_imag)
    if form == "diagonal":
        weight = torch.diag_embed(weight.diagonal())
    pre = spectrum @ weight + torch.complex(b_real, b_imag)

    def act(v):
        v = v.clamp_min(0.0)
        return torch.where(v > sparsity, v - sparsity, torch.zeros_like(v))

    return torch.complex(act(pre.real), act(pre.imag))


@pytest.mark.parametrize("form", ["diagonal", "dense"])
def test_frequency_mlp_equals_its_complex_definition(form):
    g = torch.Generator().manual_seed(0)
    d = 7
    spectrum = torch.complex(torch.randn(2, 3, 5, d, generator=g, dtype=torch.float64),
                             torch.randn(2, 3, 5, d, generator=g, dtype=torch.float64))
    params = [torch.randn(d, d, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    params += [torch.randn(d, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    ours = frequency_mlp(spectrum, *params, sparsity=0.3, form=form)
    reference = complex_reference(spectrum, *params, sparsity=0.3, form=form)
    torch.testing.assert_close(ours, reference)
    grads = torch.autograd.grad(ours.abs().sum(), params)
    ref_grads = torch.autograd.grad(reference.abs().sum(), params)
    for mine, theirs in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(mine, theirs)


def test_diagonal_form_ignores_off_diagonal_weights():
    g = torch.Generator().manual_seed(1)
    spectrum = torch.complex(torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g))
    w_real, w_imag = torch.randn(6, 6, generator=g), torch.randn(6, 6, generator=g)
    b_real, b_imag = torch.randn(6, generator=g), torch.randn(6, generator=g)
    off = 1.0 - torch.eye(6)
    base = frequency_mlp(spectrum, w_real, w_imag, b_real, b_imag, 0.01)
    moved = frequency_mlp(spectrum, w_real + 5 * off, w_imag - 3 * off, b_real, b_imag, 0.01)
    assert torch.equal(base, moved)


def dft_learner(tokens, axis, w_real, w_imag, b_real, b_imag):
    """The learner with explicit orthonormal DFT matrices over `axis` (float64), the rfft/irfft-free way:
    the full spectrum is X_k = Σ_t x_t e^{−2πikt/n}/√n; the MLP acts on bins 0..n//2 and the inverse
    rebuilds the real signal from them with Hermitian symmetry (imaginary parts of bins 0 and n/2 dropped)."""
    x = tokens.movedim(axis, -2)  # [..., n, D]
    n = x.shape[-2]
    k = torch.arange(n // 2 + 1, dtype=torch.float64)[:, None]
    t = torch.arange(n, dtype=torch.float64)[None, :]
    forward = torch.exp(-2j * math.pi * k * t / n) / math.sqrt(n)  # [n//2+1, n]
    spectrum = forward @ x.to(torch.complex128)  # [..., n//2+1, D]
    y = frequency_mlp(spectrum, w_real, w_imag, b_real, b_imag, 0.01)
    weight = torch.full((n // 2 + 1, 1), 2.0, dtype=torch.float64)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    inverse = (weight * torch.exp(2j * math.pi * k * t / n)).T / math.sqrt(n)  # [n, n//2+1]
    out = (inverse.real @ y.real - inverse.imag @ y.imag)  # [..., n, D]
    return out.movedim(-2, axis)


@pytest.mark.parametrize(("seq_len", "enc_in"), [(20, 5), (7, 4), (1, 1)], ids=["L20-N5", "L7-N4", "L1-N1"])
def test_learners_equal_explicit_dft(make_configs, seq_len, enc_in):
    configs = small_configs(make_configs, seq_len=seq_len, enc_in=enc_in, dec_in=enc_in, c_out=enc_in,
                            channel_independence=0)
    model = Model(configs).double()
    with torch.no_grad():
        for p in (model.rb1, model.ib1, model.rb2, model.ib2):
            p.mul_(5.0)  # keep a good share of the activations above the shrink threshold
    tokens = torch.randn(2, enc_in, seq_len, 128, dtype=torch.float64)
    torch.testing.assert_close(model.temporal_learner(tokens),
                               dft_learner(tokens, 2, model.r2, model.i2, model.rb2, model.ib2))
    torch.testing.assert_close(model.channel_learner(tokens),
                               dft_learner(tokens, 1, model.r1, model.i1, model.rb1, model.ib1))


def test_forward_equals_the_block_equations(make_configs):
    configs = small_configs(make_configs, channel_independence=0)
    model = Model(configs).double().eval()
    x = torch.randn(3, configs.seq_len, configs.enc_in, dtype=torch.float64)
    tokens = x.transpose(1, 2)[..., None] * model.embeddings[0]  # [B, N, L, D]
    z = model.temporal_learner(model.channel_learner(tokens)) + tokens
    expected = model.fc(z.flatten(2)).transpose(1, 2)
    torch.testing.assert_close(model(x), expected)


def test_channel_independence_switches_the_channel_learner(make_configs):
    """Default 1 (TSLib's behaviour): variates stay separate; 0: the channel learner mixes them."""
    x = torch.randn(2, 20, 5)
    for flag, mixes in ((1, False), (0, True)):
        torch.manual_seed(0)
        model = Model(small_configs(make_configs, channel_independence=flag)).eval()
        with torch.no_grad():
            model.rb1.fill_(0.5)
            base = model(x)
            moved = x.clone()
            moved[:, :, 0] += 1.0
            changed = (model(moved) - base).abs().amax(dim=(0, 1)) > 0  # [N]
        assert changed[1:].any().item() == mixes
        assert changed[0]


@pytest.mark.parametrize(("overrides", "flag"), [
    (dict(task_name="imputation"), "--task_name"),
    (dict(task_name="zero_shot_forecast"), "--task_name"),
    (dict(channel_independence=2), "--channel_independence"),
    (dict(c_out=6), "--c_out"),
    (dict(seq_len=0), "--seq_len"),
], ids=["imputation", "short_term", "channel_independence", "c_out", "seq_len"])
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(small_configs(make_configs, **overrides))


def test_channel_dependence_reaches_every_parameter(make_configs):
    """With --channel_independence 0 the channel learner's W_1, B_1 get gradients too (the contract test
    lists them as unreached at the default 1)."""
    model = Model(small_configs(make_configs, channel_independence=0))
    with torch.no_grad():
        model.rb1.fill_(0.5)  # lift some pre-activations above the shrink threshold
    model(torch.randn(2, 20, 5)).square().mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
