"""Issue 19 parts 3-4 at the model: `--caps_mark_norm` (the time-mark hazard and its fixes), the
per-difference switches of the official arithmetic (five, bundled by `--caps_numerics official`) and the
normalised LinAttn choice, all through `models.CAPS.Model`."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import torch

from models.CAPS import CAPS_MODEL_OPTIONS, MARK_RANGE_FLOOR, Model, normalise_marks
from tests.models.test_caps import B, H, L, batch, randomise, small
from utils.timefeatures import time_marks

OFFICIAL_SWITCHES = dict(caps_path1_max="global", caps_path2_decay="official", caps_rope_layout="official",
                         caps_mark_norm="official", caps_dropout_rescale="official")
PAPER_SWITCHES = dict(caps_path1_max="running", caps_path2_decay="exact", caps_rope_layout="paper",
                      caps_mark_norm="window", caps_dropout_rescale="paper")


def new_year_marks(steps_per_hour: int = 4) -> torch.Tensor:
    """TSLib's timeF marks (freq h, as the official scripts pass for every dataset) of 15-minute data over
    the turn of a year: [N, 4] = hour of day, day of week, day of month, day of year, each in [-0.5, 0.5]."""
    dates = pd.date_range("2016-12-25", "2017-01-06", freq=f"{60 // steps_per_hour}min")
    return torch.tensor(time_marks(dates, freq="h"), dtype=torch.float64)


def windows(marks: torch.Tensor, seq_len: int = 96, horizon: int = 96) -> tuple[torch.Tensor, torch.Tensor]:
    """Every window of `marks`, split into encoder [N, L, F] and horizon [N, H, F] marks."""
    stacked = marks.unfold(0, seq_len + horizon, 1).transpose(1, 2)  # [N, L + H, F]
    return stacked[:, :seq_len], stacked[:, seq_len:]


def test_default_mark_norm_is_the_paper_window_formula():
    enc, fut = windows(new_year_marks())
    last, std = enc[:, -1:], enc.std(dim=1, keepdim=True)
    spread = torch.where(std > 1e-6, std, torch.ones_like(std))
    expected = (torch.cat([enc, fut], dim=1) - last) / spread
    assert torch.equal(normalise_marks(enc, fut), expected)
    assert torch.equal(normalise_marks(enc, fut, "window"), expected)


def test_window_norm_explodes_near_constant_marks_and_the_fixes_bound_them():
    """ETTm-style windows (96 quarter-hours = one day) over the new year: day of year moves by one step in
    some encoder windows (std ~ 3e-4) and wraps from +0.5 to -0.5 in the horizon, so the paper's per-window
    normalisation gives values in the thousands (the official +1e-8 gives 1e8 where it stays constant);
    shift, floored and raw stay within 1, 1 / MARK_RANGE_FLOOR and 0.5."""
    enc, fut = windows(new_year_marks())
    peak = {mode: normalise_marks(enc, fut, mode).abs().max().item()
            for mode in ("window", "official", "shift", "floored", "raw")}
    assert peak["window"] > 1e3 and peak["official"] > 1e7
    assert peak["shift"] <= 1.0 and peak["raw"] <= 0.5
    assert peak["floored"] <= 1.0 / MARK_RANGE_FLOOR
    # A mark that varies over the window keeps its normalisation under floored (std above the floor).
    hour = slice(0, 1)
    torch.testing.assert_close(normalise_marks(enc[..., hour], fut[..., hour], "floored"),
                               normalise_marks(enc[..., hour], fut[..., hour], "window"), rtol=0, atol=0)


def mixer_inputs(model: Model, inputs) -> torch.Tensor:
    """The channel-token mixer's input [B, T, F + C] of one forward pass."""
    seen = []
    handle = model.channel_token_mixer.register_forward_hook(lambda module, args, out: seen.append(args[0]))
    model(*inputs)
    handle.remove()
    return seen[0]


@pytest.mark.parametrize("mode", ["official", "shift", "floored", "raw"])
def test_mark_norm_alone_changes_only_the_mark_channels(make_configs, mode):
    torch.manual_seed(0)
    default = Model(small(make_configs)).eval()
    torch.manual_seed(0)
    switched = Model(small(make_configs, caps_mark_norm=mode)).eval()
    inputs = batch(torch.float64)
    default, switched = default.double(), switched.double()
    before, after = mixer_inputs(default, inputs), mixer_inputs(switched, inputs)
    marks = 4  # time_emb_dim: the first 4 mixer columns
    torch.testing.assert_close(after[..., marks:], before[..., marks:], rtol=0, atol=0)
    x_mark, y_mark = inputs[1], inputs[3]
    torch.testing.assert_close(after[..., :marks], normalise_marks(x_mark, y_mark[:, -H:], mode), rtol=0, atol=0)


def test_shift_and_raw_marks_need_no_spread(make_configs):
    """--seq_len 1 has no window std: a one-line error for the std modes, fine for shift and raw."""
    with pytest.raises(ValueError, match=re.escape("--caps_mark_norm shift")):
        Model(small(make_configs, seq_len=1))
    for mode in ("shift", "raw"):
        Model(small(make_configs, seq_len=1, caps_mark_norm=mode))


def paired_models(make_configs, first: dict, second: dict, **common) -> tuple[Model, Model]:
    """Two models with the same parameters (moved off their init) and the given flags."""
    torch.manual_seed(0)
    a = randomise(Model(small(make_configs, **common, **first)))
    torch.manual_seed(0)
    b = Model(small(make_configs, **common, **second))
    b.load_state_dict(a.state_dict())
    return a, b


def outputs_in_train_mode(model: Model, inputs, seed: int = 5) -> torch.Tensor:
    """A training-mode forward (channel dropout on) with a fixed draw."""
    torch.manual_seed(seed)
    return model.train()(*inputs)


@pytest.mark.parametrize("paths", ["123", "none"])
def test_official_numerics_is_exactly_every_switch_official(make_configs, paths):
    """--caps_numerics official == the five switches official (marks, channel dropout and the attention's
    three), bit for bit, in training mode with marks."""
    bundle, switched = paired_models(make_configs, dict(caps_numerics="official"), OFFICIAL_SWITCHES,
                                     caps_paths=paths)
    inputs = batch(label_len=2)
    assert torch.equal(outputs_in_train_mode(bundle, inputs), outputs_in_train_mode(switched, inputs))
    assert (switched.mark_norm, switched.dropout_rescale) == ("official", "official")


def test_default_is_every_switch_paper_and_auto_follows_numerics(make_configs):
    default, explicit = paired_models(make_configs, {}, PAPER_SWITCHES)
    inputs = batch(label_len=2)
    assert torch.equal(outputs_in_train_mode(default, inputs), outputs_in_train_mode(explicit, inputs))
    assert all(CAPS_MODEL_OPTIONS[name].default == "auto" for name in ("caps_mark_norm", "caps_dropout_rescale"))
    attn = default.blocks[0].attn
    assert (default.mark_norm, default.dropout_rescale, attn.path1_max, attn.path2_decay, attn.rope_layout) == (
        "window", "paper", "running", "exact", "paper")


def resolved_switches(model: Model) -> dict[str, str]:
    """The five switches as the model and each block's attention resolved them (flag name -> value)."""
    attn = {(b.attn.path1_max, b.attn.path2_decay, b.attn.rope_layout) for b in model.blocks}
    assert len(attn) == 1, attn
    (path1_max, path2_decay, rope_layout), = attn
    return dict(caps_path1_max=path1_max, caps_path2_decay=path2_decay, caps_rope_layout=rope_layout,
                caps_mark_norm=model.mark_norm, caps_dropout_rescale=model.dropout_rescale)


# Switches whose effect at this tiny model is more than rounding; the two max/decay switches change the
# output here only at rounding level (their material effect needs large logits or long windows, tested
# on the layer in tests/layers/test_caps_hazards.py::test_each_switch_alone_changes_only_its_part).
MATERIAL_AT_THIS_SIZE = ("caps_rope_layout", "caps_mark_norm", "caps_dropout_rescale")


@pytest.mark.parametrize("leave_out", list(OFFICIAL_SWITCHES))
def test_official_numerics_with_one_switch_back_to_paper(make_configs, leave_out):
    """An explicit switch overrides --caps_numerics official (leave-one-out); it equals the bundle's other
    four switches set one by one."""
    flags = {**OFFICIAL_SWITCHES, leave_out: PAPER_SWITCHES[leave_out]}
    one_out, switched = paired_models(make_configs, dict(caps_numerics="official", **{leave_out: flags[leave_out]}),
                                      flags)
    assert resolved_switches(one_out) == resolved_switches(switched) == flags
    x, x_mark, x_dec, y_mark = batch(label_len=2)
    # A mark constant over the window (where the official +1e-8 differs from the paper's floor), then a step.
    x_mark[..., 1], y_mark[..., 1] = 0.25, 0.3
    inputs = x, x_mark, x_dec, y_mark
    out = outputs_in_train_mode(one_out, inputs)
    assert torch.equal(out, outputs_in_train_mode(switched, inputs))
    bundle, _ = paired_models(make_configs, dict(caps_numerics="official"), {})
    assert resolved_switches(bundle) == OFFICIAL_SWITCHES
    if leave_out in MATERIAL_AT_THIS_SIZE:
        official = outputs_in_train_mode(bundle, inputs)
        assert (out - official).abs().max() / official.abs().max() > 1e-4


@pytest.mark.parametrize(("overrides", "needle"), [
    (dict(caps_mark_norm="std"), "--caps_mark_norm 'std' is not valid"),
    (dict(caps_dropout_rescale="kept"), "--caps_dropout_rescale 'kept' is not valid"),
    (dict(caps_path1_max="causal"), "--caps_path1_max 'causal' is not valid"),
    (dict(caps_path2_decay="clip"), "--caps_path2_decay 'clip' is not valid"),
    (dict(caps_rope_layout="half"), "--caps_rope_layout 'half' is not valid"),
    (dict(caps_attn="softmax", caps_path2_decay="official"), "--caps_attn softmax needs the selected paths"),
], ids=["mark_norm", "dropout_rescale", "path1_max", "path2_decay", "rope_layout", "softmax-mixed"])
def test_switch_errors_name_the_flag(make_configs, overrides, needle):
    with pytest.raises(ValueError, match=re.escape(needle)) as err:
        Model(small(make_configs, **overrides))
    assert "\n" not in str(err.value)


def test_normalised_linattn_model_forecasts_and_trains(make_configs):
    """The normalised LinAttn+RoPE baseline (--caps_paths none --caps_attn normalised) through the model."""
    model = Model(small(make_configs, caps_paths="none", caps_attn="normalised", random_channel_dropout=0))
    out = model(*batch())
    assert out.shape == (B, H, 3) and torch.isfinite(out).all()
    out.square().mean().backward()
    attn = model.blocks[0].attn
    assert attn.rope_freq.grad is not None and attn.q_proj.weight.grad.abs().max() > 0
    assert L == model.seq_len


def test_switches_are_run_py_flags_recorded_with_the_run():
    """Each switch parses from run.py and lands in the run's fingerprint (saved in last.pth; --resume with
    other values is refused), where every CAPS flag is recorded."""
    from exp.arguments import build_parser
    from exp.checkpointing import run_fingerprint

    argv = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x", "--model", "CAPS",
            "--data", "ETTh1", "--caps_attn", "normalised", *[f"--{k}={v}" for k, v in OFFICIAL_SWITCHES.items()]]
    recorded = run_fingerprint(build_parser().parse_args(argv))
    assert {k: recorded[k] for k in OFFICIAL_SWITCHES} == OFFICIAL_SWITCHES and recorded["caps_attn"] == "normalised"
