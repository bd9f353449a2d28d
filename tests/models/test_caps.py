"""Tests for models/CAPS.py: variants, parameter counts, normalisation, channel dropout, channel
independence, targets, config errors and the CAPS scripts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import torch

from models.CAPS import Model, caps_widths, nearest_pow2_sqrt, random_ratio_channel_dropout

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts" / "long_term_forecast"
B, L, H, C, MARKS = 2, 16, 8, 3, 4


def small(make_configs, **overrides):
    """A tiny CAPS config: C + F = 7 gives d_emb = d_input = 8, D = 16, 4 heads of width 4."""
    base = dict(model="CAPS", seq_len=L, label_len=0, pred_len=H, enc_in=C, dec_in=C, c_out=C,
                d_model=0, n_heads=4, e_layers=2, dropout=0.0)
    base.update(overrides)
    return make_configs(**base)


def batch(dtype=torch.float32, label_len=0, seed=1, size=B):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(size, L, C, generator=gen, dtype=dtype)
    x_mark = torch.rand(size, L, MARKS, generator=gen, dtype=dtype) - 0.5
    y_mark = torch.rand(size, label_len + H, MARKS, generator=gen, dtype=dtype) - 0.5
    return x, x_mark, torch.zeros(size, label_len + H, C, dtype=dtype), y_mark


def randomise(model: Model, seed: int = 3) -> Model:
    """Move every parameter away from its init (zero tables included), as after training."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return model


VARIANTS = {
    "caps-linear": {},
    "linattn-rope": dict(caps_paths="none"),
    "attn-rope": dict(caps_attn="softmax", caps_paths="none", caps_impl="naive"),
    "pure-softmax": dict(caps_attn="softmax", caps_paths="none", caps_rope="none", caps_impl="naive"),
    "caps-softmax": dict(caps_attn="softmax", caps_paths="123", caps_impl="naive"),
    "wo-path1": dict(caps_paths="23"),
    "wo-path2": dict(caps_paths="13"),
    "wo-path3": dict(caps_paths="12"),
    "path2-only": dict(caps_paths="2"),
    "rope-fixed": dict(caps_rope="fixed"),
    "official-numerics": dict(caps_numerics="official"),
    "linattn-normalised": dict(caps_paths="none", caps_attn="normalised"),
    "caps-normalised": dict(caps_attn="normalised"),
    "path1-global": dict(caps_path1_max="global"),
    "path2-official": dict(caps_path2_decay="official"),
    "rope-layout-official": dict(caps_rope_layout="official"),
    "mark-norm-shift": dict(caps_mark_norm="shift"),
    "official-but-running-max": dict(caps_numerics="official", caps_path1_max="running"),
    "impl-recurrent": dict(caps_impl="recurrent"),
    "impl-naive": dict(caps_impl="naive"),
    "chunk-5": dict(caps_chunk=5),
    "no-time-features": dict(time_emb_dim=0),
    "two-targets": dict(number_of_targets=2, c_out=2),
    "dropout-0.1": dict(dropout=0.1),
}


def unused_params(overrides: dict) -> tuple[str, ...]:
    """Attention projections a variant never reads (so they must get no gradient)."""
    paths = overrides.get("caps_paths", "123").replace("none", "")
    unused = []
    if "1" not in paths:
        unused.append("p_proj")
    if "2" not in paths:
        unused.append("gate_proj")
    if not paths:
        unused.append("clock_proj")
    return tuple(unused)


@pytest.mark.parametrize("overrides", VARIANTS.values(), ids=VARIANTS.keys())
def test_variant_forward_backward(make_configs, overrides):
    model = Model(small(make_configs, **overrides)).train()
    # 8 samples: the chance that channel dropout removes every channel of every sample (leaving the
    # channel-token mixer without gradient) is below 1e-4 even without time features.
    out = model(*batch(label_len=4, size=8))
    targets = overrides.get("c_out", C)
    assert type(out) is torch.Tensor and out.shape == (8, H, targets) and out.dtype == torch.float32
    out.square().mean().backward()
    unused = unused_params(overrides)
    for name, p in model.named_parameters():
        if any(f".{u}." in name for u in unused):
            assert p.grad is None or not p.grad.any(), f"{name} should be unused"
        else:
            assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.any(), name
    model.eval()
    with torch.no_grad():
        first, second = model(*batch()), model(*batch())
    assert type(first) is torch.Tensor and first.shape == (B, H, targets)
    assert torch.equal(first, second)


# The official figures of caps_reference §2 (official code, scripts' flags, H = 96 unless noted).
ETTM1_OFFICIAL = {96: 59_456, 192: 71_744, 336: 90_176, 720: 139_328}
WIDTH_OFFICIAL = {"Weather": (21, 60_352), "Solar": (137, 759_552), "ECL": (321, 806_656),
                  "PEMS03": (358, 816_128), "PEMS04": (307, 803_072), "PEMS08": (170, 768_000)}


def script_configs(make_configs, enc_in: int, pred_len: int, **overrides):
    return make_configs(model="CAPS", enc_in=enc_in, dec_in=enc_in, c_out=enc_in, d_model=0, n_heads=4,
                        e_layers=3, seq_len=96, label_len=0, pred_len=pred_len, dropout=0.0, **overrides)


@pytest.mark.parametrize("pred_len", ETTM1_OFFICIAL, ids=lambda h: f"ETTm1-H{h}")
def test_parameter_count_matches_official(make_configs, pred_len):
    """The official code's RoPE frequencies are a fixed buffer. With --caps_rope fixed (or none) the
    count equals the official figure exactly; the default learned RoPE adds exactly E/2 = 4
    frequencies per layer (3 layers: +12), and nothing else."""
    fixed = Model(script_configs(make_configs, 7, pred_len, caps_rope="fixed"))
    assert sum(p.numel() for p in fixed.parameters()) == ETTM1_OFFICIAL[pred_len]
    learned = Model(script_configs(make_configs, 7, pred_len))
    named = dict(learned.named_parameters())
    rope = [n for n in named if n.endswith("rope_freq")]
    assert len(rope) == 3 and all(named[n].shape == (4,) for n in rope)
    assert sum(p.numel() for p in learned.parameters()) == ETTM1_OFFICIAL[pred_len] + 3 * 4


@pytest.mark.parametrize("name", WIDTH_OFFICIAL)
def test_width_rule_parameter_counts(make_configs, name):
    enc_in, official = WIDTH_OFFICIAL[name]
    model = Model(script_configs(make_configs, enc_in, 96, caps_rope="fixed"))
    assert sum(p.numel() for p in model.parameters()) == official


@pytest.mark.parametrize(("x", "expected"), [(1, 2), (2, 2), (8, 4), (11, 4), (25, 4), (32, 4), (128, 16), (141, 16),
                                             (325, 16), (512, 16), (887, 32)])
def test_nearest_pow2_sqrt_rounds_half_to_even(x, expected):
    assert nearest_pow2_sqrt(x) == expected


def test_width_rule_with_explicit_d_model_and_derived_heads():
    assert caps_widths(7, 4, 0, 4) == (16, 16, 4)
    assert caps_widths(321, 4, 0, 0) == (64, 64, 8)
    assert caps_widths(7, 4, 48, 0) == (48, 16, 6)


def test_init_rules(make_configs):
    model = Model(script_configs(make_configs, 7, 96))
    assert not model.pos_emb.weight.any() and not model.channel_emb.any()
    for block in model.blocks:
        assert torch.equal(block.norm1.weight, torch.ones(32))
    # 0.02 / sqrt(2 * 3) for every c_proj (attention output and MLP down-projection), 0.02 elsewhere.
    proj = torch.cat([p.flatten() for n, p in model.named_parameters() if n.endswith("c_proj.weight")])
    assert abs(proj.std().item() - 0.02 / 6 ** 0.5) < 0.0006
    mlp_up = torch.cat([b.mlp.c_fc.weight.flatten() for b in model.blocks])
    assert abs(mlp_up.std().item() - 0.02) < 0.001
    # out_fill keeps PyTorch's default U(-1/sqrt(L), 1/sqrt(L)) init.
    bound = 96 ** -0.5
    assert model.out_fill.weight.abs().max() <= bound and model.out_fill.weight.std() > 0.9 * bound / 3 ** 0.5


def test_constant_series_is_forecast_exactly_without_time_features(make_configs):
    """At init the positional and channel tables are zero, so a constant series gives x − last = 0,
    h = 0 through every block (RMSNorm(0) = 0, q = k = v = 0, MLP(0) = 0) and ŷ = last exactly —
    provided no time features enter (none given, or --time_emb_dim 0)."""
    level = torch.tensor([3.5, -1.25, 40.0])
    x = level.expand(B, L, C).clone()
    for overrides, marks in (({}, None), (dict(time_emb_dim=0), batch()[1])):
        model = Model(small(make_configs, **overrides)).eval()
        x_mark = marks
        y_mark = None if marks is None else batch()[3]
        out = model(x, x_mark, None, y_mark)
        assert torch.equal(out, level.expand(B, H, C))


def test_constant_series_with_time_features_is_not_constant(make_configs):
    """With time features the channel token is non-zero, so the constant forecast is not exact."""
    model = Model(small(make_configs)).eval()
    _, x_mark, x_dec, y_mark = batch()
    x = torch.full((B, L, C), 2.0)
    out = model(x, x_mark, x_dec, y_mark)
    assert (out - 2.0).abs().max() > 1e-4


def test_level_shift_equivariance(make_configs):
    """For any weights: adding a constant a_c to channel c shifts its forecast by exactly a_c."""
    model = randomise(Model(small(make_configs)).double()).eval()
    x, x_mark, x_dec, y_mark = batch(torch.float64)
    shift = torch.tensor([10.0, -3.0, 0.5], dtype=torch.float64)
    out, shifted = model(x, x_mark, x_dec, y_mark), model(x + shift, x_mark, x_dec, y_mark)
    torch.testing.assert_close(shifted, out + shift, rtol=0, atol=1e-10)


def test_forecast_is_causal_in_future_time_marks(make_configs):
    """Paper numerics: the forecast at horizon step t ignores the time marks of later steps."""
    model = randomise(Model(small(make_configs)).double()).eval()
    x, x_mark, x_dec, y_mark = batch(torch.float64)
    changed = y_mark.clone()
    changed[:, -1] += 1.0
    out, out_changed = model(x, x_mark, x_dec, y_mark), model(x, x_mark, x_dec, changed)
    torch.testing.assert_close(out_changed[:, :-1], out[:, :-1], rtol=0, atol=1e-12)
    assert (out_changed[:, -1] - out[:, -1]).abs().max() > 1e-6


def test_channels_interact_only_through_the_channel_token(make_configs):
    """With channel j's column of the channel-token mixer zeroed, x_j reaches no other channel's
    forecast (each channel's value tokens are processed independently); with it, x_j does."""
    model = randomise(Model(small(make_configs)).double()).eval()
    x, x_mark, x_dec, y_mark = batch(torch.float64)
    j = 1
    bumped = x.clone()
    bumped[:, :, j] += torch.linspace(0.0, 2.0, L, dtype=torch.float64)
    coupled = model(bumped, x_mark, x_dec, y_mark) - model(x, x_mark, x_dec, y_mark)
    assert coupled[..., [0, 2]].abs().max() > 1e-6
    with torch.no_grad():
        model.channel_token_mixer.weight[:, MARKS + j] = 0.0
    delta = model(bumped, x_mark, x_dec, y_mark) - model(x, x_mark, x_dec, y_mark)
    torch.testing.assert_close(delta[..., [0, 2]], torch.zeros_like(delta[..., [0, 2]]), rtol=0, atol=1e-12)
    assert delta[..., j].abs().max() > 1e-6


def test_number_of_targets_decodes_the_last_channels(make_configs):
    """number_of_targets k equals the full model restricted to its last k channels."""
    k = 2
    full = randomise(Model(small(make_configs)).double()).eval()
    part = Model(small(make_configs, number_of_targets=k, c_out=k)).double().eval()
    state = full.state_dict()
    state["value_token_mixer"] = state["value_token_mixer"][-k:]
    state["channel_emb"] = state["channel_emb"][:, -k:]
    part.load_state_dict(state)
    inputs = batch(torch.float64)
    out = part(*inputs)
    assert out.shape == (B, H, k)
    torch.testing.assert_close(out, full(*inputs)[..., -k:], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c_out", [1, 2])
def test_c_out_alone_decodes_the_last_channels(make_configs, c_out):
    """--number_of_targets 0 (default) decodes the last --c_out channels: --features MS --c_out 1 is the
    target (last) channel, equal to the full model restricted to it and to --number_of_targets 1."""
    full = randomise(Model(small(make_configs)).double()).eval()
    part = Model(small(make_configs, c_out=c_out)).double().eval()
    explicit = Model(small(make_configs, c_out=c_out, number_of_targets=c_out)).double().eval()
    state = full.state_dict()
    state["value_token_mixer"] = state["value_token_mixer"][-c_out:]
    state["channel_emb"] = state["channel_emb"][:, -c_out:]
    part.load_state_dict(state)
    explicit.load_state_dict(state)
    inputs = batch(torch.float64)
    out = part(*inputs)
    assert out.shape == (B, H, c_out) and part.n_targets == c_out
    torch.testing.assert_close(out, full(*inputs)[..., -c_out:], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(explicit(*inputs), out, rtol=0, atol=0)


def test_wide_heads_run_on_the_chunked_kernel_under_auto(make_configs):
    """--d_model 512 --n_heads 2: heads of width (512 + 8) / 2 = 260 exceed the native kernel's
    MAX_HEAD_DIM; auto runs them on the chunked kernel (it used to crash in the C++ kernel)."""
    model = Model(small(make_configs, d_model=512, n_heads=2))
    assert model.blocks[0].attn.head_dim == 260
    out = model(*batch())
    assert out.shape == (B, H, C) and torch.isfinite(out).all()


def test_channel_token_input_is_normalised_marks_then_extended_series(make_configs):
    """Steps 1-3 exactly: the mixer sees [(m − m_L) / unbiased std_L(m) ; x − x_L ; W_ext(x − x_L)]
    (random marks: no std falls under the paper-numerics floor)."""
    model = randomise(Model(small(make_configs)).double()).eval()
    x, x_mark, x_dec, y_mark = batch(torch.float64, label_len=5)
    seen = []
    model.channel_token_mixer.register_forward_pre_hook(lambda _, args: seen.append(args[0]))
    model(x, x_mark, x_dec, y_mark)
    marks = torch.cat([x_mark, y_mark[:, -H:]], dim=1)  # [B, T, F]
    spread = ((x_mark - x_mark.mean(1, keepdim=True)).square().sum(1, keepdim=True) / (L - 1)).sqrt()
    assert spread.min() > 1e-3
    expected_marks = (marks - x_mark[:, -1:]) / spread
    centred = x - x[:, -1:]  # [B, L, C]
    future = (centred.transpose(1, 2) @ model.out_fill.weight.T).transpose(1, 2)  # [B, H, C]
    extended = torch.cat([centred, future], dim=1)  # [B, T, C]
    torch.testing.assert_close(seen[0], torch.cat([expected_marks, extended], dim=-1), rtol=1e-12, atol=1e-12)


def test_tied_value_read_out(make_configs):
    """ŷ_{c,t} = ⟨h_{c,t}[−d_emb:], V_c⟩ + x_{c,L} on the last H positions of the final block."""
    model = randomise(Model(small(make_configs)).double()).eval()
    x, x_mark, x_dec, y_mark = batch(torch.float64)
    final = []
    model.blocks[-1].register_forward_hook(lambda _m, _a, out: final.append(out))
    out = model(x, x_mark, x_dec, y_mark)
    h = final[0].view(B, C, L + H, model.width)[:, :, -H:, -model.d_emb:]  # [B, C, H, d_emb]
    expected = (h * model.value_token_mixer[None, :, :, :]).sum(-1).transpose(1, 2) + x[:, -1:]
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)


def test_time_feature_columns_and_missing_marks(make_configs):
    """Marks wider than --time_emb_dim use their last columns; None marks equal all-zero marks."""
    model = randomise(Model(small(make_configs))).eval()
    x, x_mark, x_dec, y_mark = batch()
    wide_enc = torch.cat([torch.randn(B, L, 1), x_mark], dim=-1)  # an extra leading (e.g. minute) column
    wide_dec = torch.cat([torch.randn(B, H, 1), y_mark], dim=-1)
    torch.testing.assert_close(model(x, wide_enc, x_dec, wide_dec), model(x, x_mark, x_dec, y_mark))
    zeros_enc, zeros_dec = torch.zeros_like(x_mark), torch.zeros_like(y_mark)
    torch.testing.assert_close(model(x, None, x_dec, None), model(x, zeros_enc, x_dec, zeros_dec))
    narrow = model(x, x_mark[..., -2:], x_dec, y_mark[..., -2:])
    padded = model(x, torch.cat([zeros_enc[..., :2], x_mark[..., -2:]], -1), x_dec,
                   torch.cat([zeros_dec[..., :2], y_mark[..., -2:]], -1))
    torch.testing.assert_close(narrow, padded)


def test_channel_dropout_function_exact():
    x = torch.arange(1.0, 9.0).reshape(2, 4, 1)  # [B=2, N=4, T=1]
    ratio = torch.tensor([0.25, 1.0]).reshape(2, 1, 1)
    uniform = torch.tensor([[0.1, 0.3, 0.25, 0.9], [0.2, 0.4, 0.6, 0.8]]).reshape(2, 4, 1)
    paper = random_ratio_channel_dropout(x, ratio, uniform, "paper")
    expected = torch.tensor([0.0, 2.0, 3.0, 4.0, 0, 0, 0, 0]).reshape(2, 4, 1) / 0.75
    torch.testing.assert_close(paper, expected, rtol=0, atol=1e-6)
    official = random_ratio_channel_dropout(x, ratio, uniform, "official")
    torch.testing.assert_close(official, torch.tensor([0.0, 2, 3, 4, 0, 0, 0, 0]).reshape(2, 4, 1) * 4 / 3)
    # r = 1 (beyond what torch.rand returns): the 1e-6 floor keeps the factor finite.
    edge = random_ratio_channel_dropout(x, ratio.new_ones(2, 1, 1), torch.ones(2, 4, 1), "paper")
    torch.testing.assert_close(edge, x * 1e6)
    torch.testing.assert_close(random_ratio_channel_dropout(x, torch.zeros(2, 1, 1), uniform, "paper"), x)


@pytest.mark.parametrize("numerics", ["paper", "official"])
def test_channel_dropout_statistics(make_configs, numerics):
    torch.manual_seed(0)
    model = Model(small(make_configs, caps_numerics=numerics)).train()
    n_samples, n_channels = 4000, MARKS + C
    dropped = model._drop_channels(torch.ones(n_samples, n_channels, 1))[..., 0]  # [S, N]
    kept = dropped != 0
    # Drop probability r with r ~ U(0, 1): half of all channels on average.
    assert abs(1.0 - kept.float().mean().item() - 0.5) < 0.025
    scale = dropped.amax(dim=1)
    some = kept.any(dim=1)
    # Every survivor of a sample carries the same factor, and it is >= 1.
    assert torch.equal(dropped[some], kept[some] * scale[some, None]) and (scale[some] >= 1).all()
    fraction = kept.float().mean(dim=1)
    if numerics == "official":
        torch.testing.assert_close(scale[some], 1.0 / fraction[some])
    else:
        ratio = 1.0 - 1.0 / scale  # r recovered from the factor 1 / (1 − r)
        low = some & (ratio < 0.5)
        assert abs((fraction[low] - (1.0 - ratio[low])).mean().item()) < 0.02
        assert not torch.allclose(scale[some], 1.0 / fraction[some])


def test_channel_dropout_only_in_training_and_only_on_channel_tokens(make_configs):
    model = randomise(Model(small(make_configs))).train()
    inputs = batch()
    with torch.no_grad():
        reference = model.eval()(*inputs)
        model.train()
        first, second = model(*inputs), model(*inputs)
        assert not torch.equal(first, reference) and not torch.equal(first, second)
        off = Model(small(make_configs, random_channel_dropout=0))
        off.load_state_dict(model.state_dict())
        torch.testing.assert_close(off.train()(*inputs), reference, rtol=0, atol=0)
        # Without the channel-token path, the dropped copy has nothing to act on: the value
        # tokens and the horizon extension always see the undropped series.
        model.channel_token_mixer.weight.zero_()
        torch.testing.assert_close(model(*inputs), model.eval()(*inputs), rtol=0, atol=0)


CONFIG_ERRORS = {
    "heads-do-not-divide": (dict(d_model=30), "--d_model 30"),
    "derived-zero-heads": (dict(d_model=4, n_heads=0), "--n_heads"),
    "odd-head-width": (dict(d_model=6, n_heads=2), "--caps_rope none"),
    "c_out": (dict(c_out=5), "pass --c_out 3"),
    "c_out-with-targets": (dict(number_of_targets=1), "pass --c_out 1"),
    "too-many-targets": (dict(number_of_targets=4, c_out=4), "--number_of_targets 4"),
    "paths": (dict(caps_paths="14"), "--caps_paths"),
    "repeated-paths": (dict(caps_paths="11"), "--caps_paths"),
    "attn": (dict(caps_attn="quadratic"), "--caps_attn"),
    "rope": (dict(caps_rope="alibi"), "--caps_rope"),
    "numerics": (dict(caps_numerics="exact"), "--caps_numerics"),
    "impl": (dict(caps_impl="fast"), "--caps_impl"),
    "softmax-recurrent": (dict(caps_attn="softmax", caps_impl="recurrent"), "--caps_impl naive"),
    "softmax-chunked": (dict(caps_attn="softmax", caps_impl="chunked"), "--caps_impl naive"),
    "softmax-native": (dict(caps_attn="softmax", caps_impl="native"), "--caps_impl naive"),
    "c_out-zero": (dict(c_out=0), "--c_out 0 must lie in 1..3 (--enc_in)"),
    "targets-disagree-with-c_out": (dict(number_of_targets=2, c_out=1),
                                    "--number_of_targets 2 disagrees with --c_out 1"),
    "native-wide-heads": (dict(d_model=512, n_heads=2, caps_impl="native"), "MAX_HEAD_DIM"),
    "chunk": (dict(caps_chunk=-1), "--caps_chunk"),
    "checkpoint-rows": (dict(caps_checkpoint_rows=-1), "--caps_checkpoint_rows"),
    "time_emb_dim": (dict(time_emb_dim=-1), "--time_emb_dim"),
    "seq_len-for-marks": (dict(seq_len=1), "--seq_len 1"),
    "channel-dropout": (dict(random_channel_dropout=2), "--random_channel_dropout"),
    "task": (dict(task_name="zero_shot_forecast"), "--task_name"),
    "e_layers": (dict(e_layers=0), "--e_layers"),
    "dropout": (dict(dropout=1.0), "--dropout"),
}


@pytest.mark.parametrize(("overrides", "needle"), CONFIG_ERRORS.values(), ids=CONFIG_ERRORS.keys())
def test_config_errors_name_the_flag(make_configs, overrides, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        Model(small(make_configs, **overrides))


def test_checkpointed_groups_match_the_plain_block_stack(make_configs):
    """--caps_checkpoint_rows 4 on B·C = 6 sequences (groups 4 + 2): same forecast and same gradient
    for every parameter as the plain stack, and the groups really are recomputed in backward."""
    torch.manual_seed(0)
    plain = randomise(Model(small(make_configs, random_channel_dropout=0)))
    grouped = Model(small(make_configs, random_channel_dropout=0, caps_checkpoint_rows=4))
    grouped.load_state_dict(plain.state_dict())
    calls = []
    grouped.blocks[0].register_forward_hook(lambda module, args, out: calls.append(args[0].shape[0]))
    inputs = batch()
    outs = [m(*inputs) for m in (plain, grouped)]
    assert calls == [4, 2]
    torch.testing.assert_close(outs[1], outs[0], rtol=0, atol=1e-6)
    grads = [torch.autograd.grad(out.square().sum(), list(m.parameters())) for out, m in zip(outs, (plain, grouped), strict=True)]
    assert sorted(calls[2:]) == [2, 4]  # each group recomputed once (autograd order)
    for (name, _), g0, g1 in zip(plain.named_parameters(), *grads, strict=True):
        torch.testing.assert_close(g1, g0, rtol=1e-5, atol=1e-7, msg=lambda m, n=name: f"{n}: {m}")


def test_softmax_with_default_impl_uses_the_naive_form(make_configs):
    model = Model(small(make_configs, caps_attn="softmax"))
    assert all(block.attn.impl == "naive" for block in model.blocks)


# ---- scripts ------------------------------------------------------------------------------------

# The CAPS recipes live in compare/recipes/tables.py (scripts/ is generated from it); here they are checked
# against the official code's settings as recorded in the reference's section 7.
REFERENCE = REPO.parent / "shared" / "docs" / "caps_reference.md"
RENAMED = {"random_seed": "seed"}  # official flag name -> run.py's
# Official common flags our recipe must state too (the rest: official-only or deliberately run.py defaults).
SHARED_COMMON = {"features", "seq_len", "label_len", "des", "itr", "e_layers", "n_heads", "d_model", "dropout",
                 "time_emb_dim", "train_epochs", "patience", "max_grad_norm", "seed", "use_amp", "pct_start"}


def reference_section() -> str:
    """Section 7 of caps_reference.md; skipped when the file is absent, failed under CI=true."""
    import os

    if not REFERENCE.is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {REFERENCE} is missing; CI must run with ../shared/docs beside the clone")
        pytest.skip(f"official-code reference not found at {REFERENCE}")
    return REFERENCE.read_text().split("\n## 7.")[1].split("\n## ")[0]


def _spread(cell: str, names: list[str]) -> list[str]:
    """`a / b / c` -> one value per name; a single value is shared."""
    parts = cell.split(" / ")
    assert len(parts) in (1, len(names)), cell
    return parts * len(names) if len(parts) == 1 else parts


def reference_datasets(section: str) -> dict[str, dict]:
    """alias -> data_path, data, enc_in, batch, accum, dropout, decay, horizons from the dataset table."""
    rows, horizons = {}, ()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 8 or cells[0] == "alias" or set(cells[0]) <= {"-"}:
            continue
        alias, path, data, enc_in, batch, dropout, decay, horizon_cell = cells
        if "skipped" in alias:
            continue
        horizons = horizons if horizon_cell == "same" else tuple(int(h) for h in horizon_cell.split())
        first, *rest = alias.split(" / ")
        names = [first] + [first[: len(first) - len(part)] + part for part in rest]  # PEMS03 / 04 -> PEMS04
        paths = _spread(path, names)
        paths = [p if "/" in p else paths[0].rsplit("/", 1)[0] + "/" + p for p in paths]
        size, accum = (int(v) for v in batch.split("×"))
        for name, file, data_name, channels in zip(names, paths, _spread(data, names), _spread(enc_in, names),
                                                   strict=True):
            rows[name] = dict(data_path=re.sub(r"[^/]*X(?=\.)", name, file), data=data_name, enc_in=int(channels),
                              batch=size, accum=accum, dropout=int(dropout), decay=float(decay), horizons=horizons)
    return rows


def reference_common(section: str) -> tuple[dict[str, str | None], float, float]:
    """The common flags (name -> value, None for a switch) and the caps.sh and caps_baseline.sh lr."""
    flags: dict[str, str | None] = {}
    common = section.split("Common flags:")[1].split("\n\n")[0]
    for span in re.findall(r"`(--[^`]*)`", common):
        words = shlex.split(span)
        for i, word in enumerate(words):
            if word.startswith("--"):
                value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None
                flags[RENAMED.get(word[2:], word[2:])] = value
    lr_cells = next(line for line in section.splitlines() if line.startswith("| lr |")).strip("|").split("|")
    return flags, float(lr_cells[1]), float(lr_cells[2])


def _same(ours: object, official: str) -> bool:
    """run.py's parsed value equals the official text (numbers compared as numbers: 0.0 == 0)."""
    try:
        return float(ours) == float(official)
    except (TypeError, ValueError):
        return str(ours) == official


def caps_rows() -> list[str]:
    from compare.recipes.tables import RECIPES

    return [row for row in RECIPES.rows if RECIPES.row_model(row) == "CAPS"]


def caps_blocks():
    """(row, dataset, horizon, parsed run.py namespace) of every CAPS and CAPS-variant block."""
    from compare.recipes.tables import RECIPES
    from exp.arguments import build_parser

    for row in caps_rows():
        for dataset in RECIPES.row_datasets(row):
            for horizon in RECIPES.datasets[dataset].horizons:
                yield row, dataset, horizon, build_parser().parse_args(RECIPES.argv(row, dataset, horizon))


def test_caps_datasets_match_the_official_table():
    from compare.recipes.tables import RECIPES

    reference = reference_datasets(reference_section())
    assert len(reference) == 10  # the paper's datasets; Traffic and PEMS07 are skipped
    assert sorted(RECIPES.row_datasets("CAPS")) == sorted(reference)
    for name, ref in reference.items():
        assert RECIPES.datasets[name].horizons == ref["horizons"], name
    for row, dataset, horizon, args in caps_blocks():
        ref = reference[dataset]
        where = (row, dataset, horizon)
        assert args.root_path + args.data_path == f"./dataset/{ref['data_path']}", where
        assert (args.data, args.enc_in, args.dec_in, args.c_out) == (ref["data"], *[ref["enc_in"]] * 3), where
        assert (args.batch_size, args.grad_accum, args.random_channel_dropout, args.weight_decay) == (
            ref["batch"], ref["accum"], ref["dropout"], ref["decay"]), where


def test_caps_common_flags_and_learning_rates_match_the_official_scripts():
    flags, caps_lr, baseline_lr = reference_common(reference_section())
    assert (caps_lr, baseline_lr) == (5e-4, 6e-4)
    for row, dataset, horizon, args in caps_blocks():
        compared = set()
        for name, value in flags.items():
            if name in SHARED_COMMON:
                ours = getattr(args, name)
                assert (ours is True) if value is None else _same(ours, value), (row, dataset, name, ours, value)
                compared.add(name)
        assert compared == SHARED_COMMON
        baseline = row in ("LinAttn+RoPE", "LinAttn+RoPE (normalised)")
        assert args.learning_rate == (baseline_lr if baseline else caps_lr), (row, dataset, horizon)


@pytest.mark.parametrize("row", caps_rows())
def test_caps_recipe_builds_the_model_it_names(row):
    """One block per CAPS row (its last dataset and horizon) builds models.CAPS.Model with its attention."""
    from compare.recipes.tables import RECIPES
    from exp.arguments import build_parser

    dataset = RECIPES.row_datasets(row)[-1]
    args = build_parser().parse_args(RECIPES.argv(row, dataset, RECIPES.datasets[dataset].horizons[-1]))
    text = repr(Model(args))
    assert f"attn={args.caps_attn}, paths={args.caps_paths}, rope={args.caps_rope}," in text


def test_constant_mark_over_the_window_does_not_explode_in_paper_numerics():
    from models.CAPS import normalise_marks

    enc = torch.zeros(1, 8, 2)
    enc[0, :, 0] = torch.linspace(-0.5, 0.5, 8)  # varies over the window
    enc[0, :, 1] = 0.25  # constant over the window, e.g. day-of-week of a one-day window
    fut = torch.full((1, 3, 2), 0.4)
    paper = normalise_marks(enc, fut, "window")
    official = normalise_marks(enc, fut, "official")
    torch.testing.assert_close(paper[0, -1, 1], torch.tensor(0.15))  # raw offset 0.4 - 0.25
    assert official[0, -1, 1] > 1e6  # the official +1e-8 denominator
    torch.testing.assert_close(paper[..., 0], official[..., 0], rtol=1e-6, atol=0)
