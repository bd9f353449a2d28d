"""CAPS in TSLib's other tasks (models/CAPS.py heads; choices in layers/CAPS_Attention.md, "CAPS in TSLib's
other tasks"): shapes, the bidirectional blocks against the causal layer on reversed inputs, padding
invariance of classification, what imputation sees, finite gradients, parameter counts, one-line errors."""

from __future__ import annotations

import re

import pytest
import torch

from models.CAPS import CAPSBlock, Model, bidirectional_attention, time_reversal

B, L, H, C, MARKS, CLASSES = 3, 12, 4, 3, 4, 5
TASKS = ("long_term_forecast", "short_term_forecast", "imputation", "anomaly_detection", "classification")


def configs_for(make_configs, task: str, **overrides):
    """A tiny CAPS config (C + F = 7: D = 16, 4 heads of width 4); num_class as the experiment sets it. The
    chunked kernel (the native one's first build takes minutes on a busy machine; tests/layers compare them)."""
    base = dict(model="CAPS", task_name=task, seq_len=L, label_len=0, pred_len=H if "forecast" in task else 0,
                enc_in=C, dec_in=C, c_out=C, d_model=0, n_heads=4, e_layers=2, dropout=0.0, caps_impl="chunked")
    num_class = overrides.pop("num_class", CLASSES)
    base.update(overrides)
    configs = make_configs(**base)
    if task == "classification" and num_class is not None:
        configs.num_class = num_class
    return configs


def randomise(model: Model, seed: int = 3) -> Model:
    """Move every parameter away from its init (the zero tables included), as after training."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return model


def inputs(task: str, seed: int = 1, dtype=torch.float32):
    """TSLib's forward arguments for `task` (x_enc, x_mark_enc, x_dec, x_mark_dec, mask)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, C, generator=gen, dtype=dtype)
    marks = torch.rand(B, L, MARKS, generator=gen, dtype=dtype) - 0.5
    if task == "long_term_forecast":
        return x, marks, torch.zeros(B, H, C, dtype=dtype), torch.rand(B, H, MARKS, generator=gen, dtype=dtype)
    if task == "short_term_forecast":
        return x, None, torch.zeros(B, H, C, dtype=dtype), None
    if task == "imputation":
        mask = (torch.rand(B, L, C, generator=gen) > 0.3).to(dtype)
        return x * mask, marks, None, None, mask
    if task == "anomaly_detection":
        return x, None, None, None
    padding = torch.zeros(B, L, dtype=dtype)
    for b, length in enumerate((L, 7, 1)):
        padding[b, :length] = 1
    return x * padding[..., None], padding, None, None


EXPECTED_SHAPES = {"long_term_forecast": (B, H, C), "short_term_forecast": (B, H, C), "imputation": (B, L, C),
                   "anomaly_detection": (B, L, C), "classification": (B, CLASSES)}


@pytest.mark.parametrize("direction", ["auto", "causal", "bidirectional"])
@pytest.mark.parametrize("task", TASKS)
def test_shapes_and_finite_gradients(make_configs, task, direction):
    model = randomise(Model(configs_for(make_configs, task, caps_direction=direction)))
    model.train()
    out = model(*inputs(task))
    assert out.shape == EXPECTED_SHAPES[task]
    out.square().mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    head = {"imputation": "mask_emb", "classification": "projection.weight"}.get(task)
    if head is not None:
        assert dict(model.named_parameters())[head].grad.abs().sum() > 0


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection"])
def test_decoded_channels_follow_c_out(make_configs, task):
    model = Model(configs_for(make_configs, task, c_out=1))
    assert model(*inputs(task)).shape == (B, L, 1)


def test_forecasting_is_unchanged_by_the_heads(make_configs):
    """The forecast build (parameters, names, shapes, initial values for a seed) is the causal one; the
    other tasks drop W_ext and the horizon's positions and add only their heads."""
    counts = {}
    for task in TASKS:
        torch.manual_seed(0)
        counts[task] = {name: p.numel() for name, p in Model(configs_for(make_configs, task)).named_parameters()}
    base = counts["long_term_forecast"]
    assert counts["short_term_forecast"] == base
    assert sum(base.values()) == 7_796
    d, window = 16, {**base, "pos_emb.weight": L * 16}
    del window["out_fill.weight"]
    assert counts["anomaly_detection"] == window
    assert counts["imputation"] == {**window, "mask_emb": C * d}
    assert counts["classification"] == {**window, "class_norm.weight": d, "projection.weight": CLASSES * C * d,
                                        "projection.bias": CLASSES}
    forecast = Model(configs_for(make_configs, "long_term_forecast"))
    assert not forecast.bidirectional


# ---- the bidirectional combination ------------------------------------------------------------------


def reference_block(block: CAPSBlock, x: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """One bidirectional block, sample by sample: the causal layer on the sample and on its valid prefix
    reversed in time (padding kept after it), mean of the two, then the MLP."""
    rows = []
    for b, n in enumerate(lengths):
        a = block.norm1(x[b:b + 1])  # [1, T, D]
        flipped = torch.cat([a[:, :n].flip(1), a[:, n:]], dim=1)
        back = block.attn(flipped)
        back = torch.cat([back[:, :n].flip(1), back[:, n:]], dim=1)
        y = x[b:b + 1] + 0.5 * (block.attn(a) + back)
        rows.append(y + block.mlp(block.norm2(y)))
    return torch.cat(rows)


@pytest.mark.parametrize("impl", ["chunked", "naive", "recurrent"])
@pytest.mark.parametrize("lengths", [[L, L, L], [L, 7, 1]], ids=["full", "ragged"])
def test_bidirectional_block_matches_the_causal_layer_on_reversed_inputs(make_configs, impl, lengths):
    model = randomise(Model(configs_for(make_configs, "anomaly_detection", caps_impl=impl)))
    block = model.blocks[0]
    x = torch.randn(len(lengths), L, model.width, dtype=torch.float64, requires_grad=True)
    block.double()
    reverse = time_reversal(torch.tensor(lengths), L)
    out = block(x, reverse)
    ref = reference_block(block, x, lengths)
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-10)
    grads = torch.autograd.grad(out.square().sum(), [x, *block.parameters()])
    ref_grads = torch.autograd.grad(ref.square().sum(), [x, *block.parameters()])
    for g, r in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-9, atol=1e-10)


def test_time_reversal_is_an_involution_that_keeps_padding_behind():
    reverse = time_reversal(torch.tensor([5, 3, 0]), 5)
    assert reverse.tolist() == [[4, 3, 2, 1, 0], [2, 1, 0, 3, 4], [0, 1, 2, 3, 4]]
    assert torch.equal(reverse.gather(1, reverse), torch.arange(5).expand(3, 5))


def test_model_stack_is_the_bidirectional_block_recursion(make_configs):
    """The whole stack of an anomaly model: every block is ½(A + R A R) on the full window (R = flip)."""
    model = randomise(Model(configs_for(make_configs, "anomaly_detection"))).double()
    seen = {}
    # Hooks must return None (a returned tensor would replace the block's output).
    model.blocks[0].register_forward_hook(lambda m, args, out: seen.update(input=args[0]))
    model.blocks[-1].register_forward_hook(lambda m, args, out: seen.update(output=out))
    model(*inputs("anomaly_detection", dtype=torch.float64))
    z = seen["input"]
    for block in model.blocks:
        a = block.norm1(z)
        z = z + 0.5 * (block.attn(a) + block.attn(a.flip(1)).flip(1))
        z = z + block.mlp(block.norm2(z))
    torch.testing.assert_close(seen["output"], z, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("direction", ["causal", "bidirectional"])
def test_reconstruction_sees_the_window_as_the_direction_says(make_configs, direction):
    """Causal: step t is reconstructed from steps ≤ t only; bidirectional: the first step sees the last."""
    model = randomise(Model(configs_for(make_configs, "anomaly_detection", caps_direction=direction,
                                        time_emb_dim=0))).double()
    # The window-mean shift reaches every step; compare on the shifted window itself.
    x = torch.randn(1, C, L, dtype=torch.float64, requires_grad=True)
    z = model._window_states(x, None)  # [1, C, L, D]
    (grad,) = torch.autograd.grad(z[:, :, 0].sum(), x)
    future = grad[..., 1:].abs().max().item()
    # Causal: zero up to rounding (the chunked kernel's in-chunk reference G_end / 2 cancels analytically).
    assert (future < 1e-12) if direction == "causal" else (future > 1e-4), future


def test_bidirectional_attention_doubles_the_batch_once(make_configs):
    model = Model(configs_for(make_configs, "anomaly_detection"))
    calls = []
    attn = model.blocks[0].attn
    attn.register_forward_hook(lambda m, args, out: calls.append(args[0].shape[0]))
    x = torch.randn(2, L, model.width)
    bidirectional_attention(attn, x, time_reversal(torch.tensor([L, 3]), L))
    assert calls == [4]


# ---- classification: padding --------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["causal", "bidirectional"])
def test_padded_steps_do_not_reach_the_logits(make_configs, direction):
    """Arbitrary values at padded steps change nothing, and the logits get no gradient from them."""
    model = randomise(Model(configs_for(make_configs, "classification", caps_direction=direction))).double().eval()
    x, padding, _, _ = inputs("classification", dtype=torch.float64)
    noisy = torch.where(padding[..., None] > 0, x, 1e3 * torch.randn_like(x)).requires_grad_()
    logits = model(noisy, padding, None, None)
    torch.testing.assert_close(logits, model(x, padding, None, None), rtol=1e-12, atol=1e-12)
    (grad,) = torch.autograd.grad(logits.sum(), noisy)
    assert grad[padding == 0].abs().max() == 0
    assert grad[padding == 1].abs().max() > 0


@pytest.mark.parametrize("direction", ["causal", "bidirectional"])
def test_logits_do_not_depend_on_the_padded_length(make_configs, direction):
    """A series of 5 steps padded to 12 and the same 5 steps padded to 9 (a model built for 9 with the
    same weights, position table truncated) give the same logits."""
    short = 9
    torch.manual_seed(0)
    model = randomise(Model(configs_for(make_configs, "classification", caps_direction=direction))).double().eval()
    small = Model(configs_for(make_configs, "classification", caps_direction=direction, seq_len=short)).double()
    state = dict(model.state_dict())
    state["pos_emb.weight"] = state["pos_emb.weight"][:short]
    small.load_state_dict(state)
    small.eval()
    series = torch.randn(1, 5, C, dtype=torch.float64)

    def padded(length):
        x = torch.zeros(1, length, C, dtype=torch.float64)
        x[:, :5] = series
        mask = torch.zeros(1, length, dtype=torch.float64)
        mask[:, :5] = 1
        return x, mask, None, None

    torch.testing.assert_close(model(*padded(L)), small(*padded(short)), rtol=1e-12, atol=1e-12)


def test_no_padding_mask_means_every_step_is_valid(make_configs):
    model = randomise(Model(configs_for(make_configs, "classification"))).eval()
    x = torch.randn(B, L, C)
    torch.testing.assert_close(model(x, None, None, None), model(x, torch.ones(B, L), None, None), rtol=0, atol=0)


# ---- imputation: what the model sees ------------------------------------------------------------------


def test_imputation_ignores_values_at_masked_points(make_configs):
    """Masked points enter as the channel's observed mean (0 after the shift) plus mask_emb, whatever x_enc
    holds there; the shift uses observed values only."""
    model = randomise(Model(configs_for(make_configs, "imputation"))).eval()
    x, marks, _, _, mask = inputs("imputation")
    garbage = torch.where(mask > 0, x, 50 * torch.randn_like(x))
    torch.testing.assert_close(model(garbage, marks, None, None, mask), model(x, marks, None, None, mask),
                               rtol=0, atol=0)
    # The mask itself is an input: the same zeros read as observed values give another reconstruction.
    assert not torch.allclose(model(x, marks, None, None, torch.ones_like(mask)), model(x, marks, None, None, mask))


def test_imputation_shift_and_mask_embedding(make_configs):
    """With zero weights the reconstruction is the observed mean of each channel; mask_emb reaches the output."""
    model = Model(configs_for(make_configs, "imputation")).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    x, marks, _, _, mask = inputs("imputation")
    means = (x * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True)
    torch.testing.assert_close(model(x, marks, None, None, mask), means.expand(B, L, C), rtol=1e-6, atol=1e-6)


def test_anomaly_reconstruction_is_shift_equivariant(make_configs):
    """The window-mean shift: adding a constant to a channel adds it to that channel's reconstruction."""
    model = randomise(Model(configs_for(make_configs, "anomaly_detection"))).double().eval()
    x = inputs("anomaly_detection", dtype=torch.float64)[0]
    offset = torch.tensor([3.0, -2.0, 0.5], dtype=torch.float64)
    torch.testing.assert_close(model(x + offset, None, None, None), model(x, None, None, None) + offset,
                               rtol=1e-10, atol=1e-10)


def test_checkpointed_bidirectional_stack_matches_the_plain_one(make_configs):
    plain = randomise(Model(configs_for(make_configs, "classification", random_channel_dropout=0)))
    grouped = Model(configs_for(make_configs, "classification", random_channel_dropout=0, caps_checkpoint_rows=4))
    grouped.load_state_dict(plain.state_dict())
    x, padding, _, _ = inputs("classification")
    outs = [m(x, padding, None, None) for m in (plain, grouped)]
    torch.testing.assert_close(outs[1], outs[0], rtol=1e-6, atol=1e-6)
    grads = [torch.autograd.grad(o.square().sum(), list(m.parameters())) for o, m in zip(outs, (plain, grouped),
                                                                                          strict=True)]
    for g0, g1 in zip(*grads, strict=True):
        torch.testing.assert_close(g1, g0, rtol=1e-5, atol=1e-7)


# ---- errors -------------------------------------------------------------------------------------------

ERRORS = {
    "unknown-task": ("long_term_forecast", dict(task_name="zero_shot_forecast"), "--task_name 'zero_shot_forecast'"),
    "missing-num_class": ("classification", dict(num_class=None), "configs.num_class"),
    "zero-num_class": ("classification", dict(num_class=0), "configs.num_class >= 1"),
    "direction": ("imputation", dict(caps_direction="both"), "--caps_direction 'both'"),
}


@pytest.mark.parametrize(("task", "overrides", "needle"), ERRORS.values(), ids=ERRORS.keys())
def test_config_errors_are_one_line(make_configs, task, overrides, needle):
    with pytest.raises(ValueError, match=re.escape(needle)) as info:
        Model(configs_for(make_configs, task, **overrides))
    assert "\n" not in str(info.value)


def test_input_errors_are_one_line(make_configs):
    model = Model(configs_for(make_configs, "classification"))
    x, padding, _, _ = inputs("classification")
    holes = padding.clone()
    holes[1, 0] = 0
    with pytest.raises(ValueError, match="trailing padding"):
        model(x, holes, None, None)
    with pytest.raises(ValueError, match=re.escape(f"--seq_len {L}")):
        model(x[:, :-1], padding[:, :-1], None, None)
