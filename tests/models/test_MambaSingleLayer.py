"""MambaSingleLayer (MambaSL): TSLib's parameter counts at each of MambaSL.sh's 30 blocks and its parameter names
at the JapaneseVowels block, TSLib's initial weights for a seed, the classification read-out (masked per-step
logits, a softmax over time of the max over --n_heads scores), the scans giving one model, and one-line errors.

TSLib's numbers were measured on stock TSLib (commit 4e938a1, models/MambaSingleLayer.py built with each block's
flags on the CPU; its mamba_ssm import stubbed, which builds nothing) at JapaneseVowels' shapes: enc_in 12,
seq_len 29, 9 classes (the JapaneseVowels block's 62,088 is also the row of ../shared/docs/tslib_models/
classification_JapaneseVowels.csv, checked in test_classification_heads.py). TSLib's forward was compared there too: same seed, same weights; its state dict loads
strictly here and the logits agree to float32 rounding for all 16 switch combinations.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from compare.grid.run_args import parse_run_args
from compare.recipes.tables import TASK_RECIPES
from models.MambaSingleLayer import Model
from tests.models.tslib_reference import assert_tslib_initial_weights
from tests.numerics import assert_close

JAPANESE_VOWELS = dict(seq_len=29, enc_in=12, num_class=9)
# TSLib's trainable parameters of each MambaSL.sh block's model flags at JapaneseVowels' shapes.
TSLIB_PARAMS = {
    "ArticularyWordRecognition": 61064, "AtrialFibrillation": 10536, "BasicMotions": 5192,
    "CharacterTrajectories": 60936, "Cricket": 13544, "DuckDuckGeese": 3316744, "EigenWorms": 142344,
    "Epilepsy": 6024, "ERing": 62088, "EthanolConcentration": 1042952, "FaceDetection": 232712,
    "FingerMovements": 5192, "HandMovementDirection": 248072, "Handwriting": 3363848, "Heartbeat": 24136,
    "InsectWingbeat": 3298312, "JapaneseVowels": 62088, "Libras": 3351560, "LSST": 3351560, "MotorImagery": 27752,
    "NATOPS": 837128, "PEMS-SF": 851976, "PenDigits": 16648, "PhonemeSpectra": 229640, "RacketSports": 3351560,
    "SelfRegulationSCP1": 278792, "SelfRegulationSCP2": 297224, "SpokenArabicDigits": 3298312,
    "StandWalkJump": 23304, "UWaveGestureLibrary": 3329032,
}
# TSLib's trainable parameters at the JapaneseVowels block (d_model 128, state 8, expand 1, Δ and B
# input-dependent, C time-invariant, no D, kernel 3, 8 heads): 62,088 in all.
TSLIB_SHAPES = {
    "mamba.0.C": (128, 8), "mamba.0.A_log": (128, 8), "mamba.0.in_proj.weight": (256, 128),
    "mamba.0.conv1d.weight": (128, 1, 4), "mamba.0.conv1d.bias": (128,), "mamba.0.x_proj.weight": (16, 128),
    "mamba.0.dt_proj.weight": (128, 8), "mamba.0.dt_proj.bias": (128,), "mamba.0.out_proj.weight": (128, 128),
    "mamba.1.weight": (128,), "mamba.1.bias": (128,), "embedding.value_embedding.tokenConv.weight": (128, 12, 3),
    "out_layer.1.weight": (9, 128), "attn_weight.0.weight": (8, 128), "attn_weight.0.bias": (8,),
}


def block_configs(dataset: str = "JapaneseVowels", **overrides):
    """The run.py namespace of the dataset's MambaSL.sh block at JapaneseVowels' shapes (what the experiment
    sets from the files), `overrides` applied."""
    args = parse_run_args(TASK_RECIPES.argv("classification", "MambaSingleLayer", dataset))
    for key, value in {**JAPANESE_VOWELS, **overrides}.items():
        setattr(args, key, value)
    return args


def trainable(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def test_japanese_vowels_block_has_tslibs_parameter_count_names_and_shapes():
    model = Model(block_configs())
    assert trainable(model) == 62088
    assert {name: tuple(p.shape) for name, p in model.named_parameters()} == TSLIB_SHAPES


@pytest.mark.parametrize("dataset", list(TSLIB_PARAMS))
def test_every_mambasl_block_has_tslibs_parameter_count(dataset):
    with torch.device("meta"):
        model = Model(block_configs(dataset))
    assert trainable(model) == TSLIB_PARAMS[dataset]


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's MambaSingleLayer initialisation in its draw order: the block (in_proj, conv1d, x_proj when any
    part is input-dependent, the time-invariant B and C uniform, dt_proj re-drawn uniform in ±R^-½ and its bias
    the inverse softplus of a log-uniform Δ in [0.001, 0.1]), the LayerNorm, the token Conv1d re-drawn
    Kaiming-normal, the Xavier-uniform output Linear, the time-weight Linear (zeros, unit bias). Listed as
    named_parameters lists them (the block's own B, C, A_log, D first)."""
    torch.manual_seed(seed)
    d, e, n, k = configs.d_model, configs.d_model * configs.expand, configs.d_ff, configs.d_conv
    rank = math.ceil(d / 16)
    in_proj = nn.Linear(d, 2 * e, bias=False)
    conv = nn.Conv1d(e, e, k, padding=k - 1, groups=e)
    widths = rank * configs.tv_dt + n * configs.tv_B + n * configs.tv_C
    x_proj = [nn.Linear(e, widths, bias=False).weight] if widths else []
    own = [torch.rand(e, n) for switch in (configs.tv_B, configs.tv_C) if not switch]
    dt_proj = nn.Linear(rank, e)
    nn.init.uniform_(dt_proj.weight, -rank ** -0.5, rank ** -0.5)
    dt = torch.exp(torch.rand(e) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)).clamp(min=1e-4)
    dt_bias = dt + torch.log(-torch.expm1(-dt))
    own += [torch.log(torch.arange(1, n + 1, dtype=torch.float32)).expand(e, n)]
    own += [torch.ones(e)] if configs.use_D else []
    out_proj = nn.Linear(e, d, bias=False)
    token = nn.Conv1d(configs.enc_in, d, configs.num_kernels, padding="same", padding_mode="replicate", bias=False)
    nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
    head = nn.Linear(d, configs.num_class, bias=False)
    nn.init.xavier_uniform_(head.weight)
    nn.Linear(d, configs.n_heads)  # drawn, then zeroed
    return [*own, in_proj.weight, conv.weight, conv.bias, *x_proj, dt_proj.weight, dt_bias, out_proj.weight,
            torch.ones(d), torch.zeros(d), token.weight, head.weight, torch.zeros(configs.n_heads, d),
            torch.ones(configs.n_heads)]


@pytest.mark.parametrize("dataset", ["JapaneseVowels", "ArticularyWordRecognition", "BasicMotions", "Libras"])
def test_initial_weights_follow_tslib_construction_order(dataset):
    overrides = dict(d_model=32) if dataset == "Libras" else {}
    configs = block_configs(dataset, **overrides)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))
    with_skip = block_configs(dataset, use_D=1, **overrides)
    assert_tslib_initial_weights(lambda: Model(with_skip), lambda: tslib_initial_weights(with_skip, seed=7), seed=7)


def small_configs(**overrides):
    return block_configs(**{**dict(d_model=16, d_ff=4, n_heads=3, seq_len=11, enc_in=3, num_class=4), **overrides})


def padded_batch(configs) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(3, configs.seq_len, configs.enc_in, generator=gen, dtype=torch.float64)
    mask = torch.ones(3, configs.seq_len, dtype=torch.float64)
    mask[1, 6:] = 0
    mask[2, 2:] = 0
    return x, mask


def test_at_initialisation_every_step_weighs_one_over_l():
    """Zero score weights and unit biases: the output is the sum of the masked per-step logits over L."""
    configs = small_configs()
    model = Model(configs).double().eval()
    x, mask = padded_batch(configs)
    with torch.no_grad():
        steps = model.out_layer(model.mamba(model.embedding(x)))  # [B, L, num_class]
        assert_close(model(x, mask), (steps * mask.unsqueeze(-1)).sum(1) / configs.seq_len, rtol=1e-12, atol=1e-12)


def test_output_is_the_time_weighted_sum_of_masked_step_logits():
    configs = small_configs()
    model = Model(configs).double().eval()
    with torch.no_grad():
        model.attn_weight[0].weight.normal_(generator=torch.Generator().manual_seed(5))
    x, mask = padded_batch(configs)
    with torch.no_grad():
        hidden = model.mamba(model.embedding(x))  # [B, L, D]
        scores = (hidden @ model.attn_weight[0].weight.T + model.attn_weight[0].bias).amax(-1)  # [B, L]
        weights = torch.softmax(scores, dim=1)  # over all L steps, padded ones included
        logits = (hidden @ model.out_layer[1].weight.T) * mask.unsqueeze(-1)  # [B, L, num_class]
        expected = (weights.unsqueeze(-1) * logits).sum(1)
        assert_close(model(x, mask), expected, rtol=1e-12, atol=1e-12)
        # No mask: no step is padded.
        assert_close(model(x, None), model(x, torch.ones_like(mask)), rtol=0, atol=0)


def test_scan_choice_does_not_change_the_model():
    configs = small_configs(tv_dt=1, tv_B=0, tv_C=1, use_D=1)
    torch.manual_seed(0)
    sequential = Model(configs).double().eval()
    torch.manual_seed(0)
    parallel = Model(configs, scan="parallel").double().eval()
    x, mask = padded_batch(configs)
    with torch.no_grad():
        assert_close(parallel(x, mask), sequential(x, mask), rtol=1e-12, atol=1e-12)


def test_a_long_series_keeps_its_positions():
    """EigenWorms' 17,984 steps exceed TSLib's usual 5,000-row position table; the table grows to seq_len."""
    model = Model(small_configs(seq_len=6001, d_model=8))
    assert model.embedding.position_embedding.pe.shape == (1, 6001, 8)


@pytest.mark.parametrize(("overrides", "flag"), [
    (dict(task_name="long_term_forecast", pred_len=4), "--task_name"), (dict(seq_len=0), "--seq_len"),
    (dict(d_ff=0), "--d_ff"), (dict(d_model=0), "--d_model"), (dict(expand=0), "--expand"),
    (dict(d_conv=-1), "--d_conv"), (dict(num_kernels=0), "--num_kernels"), (dict(n_heads=0), "--n_heads"),
    (dict(tv_dt=2), "--tv_dt"), (dict(tv_B=-1), "--tv_B"), (dict(tv_C=10), "--tv_C"), (dict(use_D=3), "--use_D"),
    (dict(dropout=1.0), "--dropout"), (dict(num_class=1), "num_class"),
], ids=["task", "seq_len", "d_ff", "d_model", "expand", "d_conv", "num_kernels", "n_heads", "tv_dt", "tv_B", "tv_C",
        "use_D", "dropout", "num_class"])
def test_bad_config_names_the_flag(overrides, flag):
    with pytest.raises(ValueError, match=flag) as err:
        Model(small_configs(**overrides))
    assert "\n" not in str(err.value)


def test_a_padding_mask_of_the_wrong_shape_is_refused():
    configs = small_configs()
    x, mask = padded_batch(configs)
    with pytest.raises(ValueError, match=r"padding mask has shape \(3, 10\)"):
        Model(configs).double()(x, mask[:, 1:])
