"""The model contract, for every registered model that forecasts, plus per-model checks of the baselines.

Contract (TSLib §4): `Model(configs)`; `forward(x_enc, x_mark_enc, x_dec, x_mark_dec)` returns a finite
`[B, pred_len, c_out]` for features M, S and MS; one backward pass reaches every trainable parameter
with finite gradients; `--pred_len 0` / `--seq_len 0` raise a ValueError naming the flag. A model that serves
window tasks only (MambaSingleLayer: classification) goes through its task's contract in test_task_contract.py.
"""

from __future__ import annotations

import importlib

import pandas as pd
import pytest
import torch

from exp.model_registry import MODEL_REGISTRY
from tests.models.tslib_reference import model_params
from utils.timefeatures import calendar_features, num_time_features
from utils.train_split import synthetic_train_split

BATCH = 3
TINY = dict(d_model=16, n_heads=2, d_ff=32, e_layers=1, d_layers=1, seq_len=32, label_len=16, pred_len=24)
# (enc_in, dec_in, c_out) per --features, as TSLib scripts set them for a 7-variate dataset.
FEATURES = {"M": (7, 7, 7), "S": (1, 1, 1), "MS": (7, 7, 1)}
# Per-model overrides on top of TINY (keep the tests fast; they do not weaken the contract).
MODEL_OVERRIDES: dict[str, dict] = {
    "TimesNet": dict(top_k=2, num_kernels=2),
    # run.py's defaults give TimeMixer one scale; two avg-pooled scales (32, 16, 8 steps) exercise the
    # multiscale mixing (TSLib's script uses 3 layers of window 2 at seq_len 96).
    "TimeMixer": dict(down_sampling_layers=2, down_sampling_window=2, down_sampling_method="avg"),
    # SegRNN needs --seg_len dividing --seq_len 32 and --pred_len 24 (run.py's default is 96).
    "SegRNN": dict(seg_len=8),
    # MultiPatchFormer's four patch scales agree on the patch count only for a few --seq_len (62 … 97).
    "MultiPatchFormer": dict(seq_len=62),
    # Koopa and OLinear read training statistics when built (utils/train_split.py): a synthetic split.
    "Koopa": dict(train_split=synthetic_train_split(rows=256)),
    "OLinear": dict(train_split=synthetic_train_split(rows=256), embed_size=4),
    # TimeMixerPP: three avg-pooled scales (32, 16, 8 steps) exercise the multi-scale image mixing; the
    # coarsest scale's 8 steps hold 4 non-constant frequencies, so --top_k 2 (run.py's 5 is too many).
    "TimeMixerPP": dict(down_sampling_layers=2, down_sampling_window=2, down_sampling_method="avg", top_k=2),
}
# Per-(model, features) overrides (none: every model takes TSLib's MS flags, CAPS decoding the last
# --c_out channels, i.e. the target).
FEATURE_OVERRIDES: dict[tuple[str, str], dict] = {}
# Trainable parameters a model legitimately leaves untouched by one forecasting forward pass.
UNREACHED_PARAMETERS: dict[str, set[str]] = {
    # TSLib's PastDecomposableMixing builds a LayerNorm it never applies (kept for TSLib's parameter count).
    "TimeMixer": {"pdm_blocks.0.layer_norm.weight", "pdm_blocks.0.layer_norm.bias"},
    # TiDE's temporal decoder keeps TSLib's LayerNorm but does not apply it (over width 1 it would
    # output its bias whatever the input; see models/TiDE.py).
    "TiDE": {"temporalDecoder.ln.weight", "temporalDecoder.ln.bias"},
    # FreTS's channel learner (W_1, B_1) runs only with --channel_independence 0 (TSLib never runs it).
    "FreTS": {"r1", "i1", "rb1", "ib1"},
    # TSLib's MultiPatchFormer builds `remap` (D → seq_len) but forecasting never uses it.
    "MultiPatchFormer": {"remap.weight", "remap.bias"},
    # TimeFilter's router (gate, noise) chooses a hard 0/1 top-p set of neighbour regions: the forecast has
    # no gradient to it; only the auxiliary routing loss (Model.moe_loss, unused by TSLib's training) has.
    "TimeFilter": {"backbone.blocks.0.gnn.graph_learner.mask_moe.gate.weight",
                   "backbone.blocks.0.gnn.graph_learner.mask_moe.noise.weight"},
    # TSLib's TFT builds the four static-context GRNs and the context inputs (lin_c) of the selection and
    # enrichment GRNs for every dataset; they run only when a dataset declares static variables (none does).
    "TemporalFusionTransformer": {
        f"static_encoder.grns.{i}.{part}" for i in range(4)
        for part in ("lin_a.weight", "lin_a.bias", "lin_i.weight", "lin_i.bias", "gate.glu.fc1.weight",
                     "gate.glu.fc1.bias", "gate.glu.fc2.weight", "gate.glu.fc2.bias", "gate.layer_norm.weight",
                     "gate.layer_norm.bias")
    } | {f"{block}.lin_c.{kind}" for block in ("history_vsn.joint_grn", "future_vsn.joint_grn",
                                                "temporal_fusion_decoder.enrichment_grn")
         for kind in ("weight", "bias")},
    # MSGNet builds TSLib's predict_linear (Linear(L → L + H)) and, as TSLib, never applies it.
    "MSGNet": {"predict_linear.weight", "predict_linear.bias"},
    # ETSformer's last encoder layer's residual path (FF, LayerNorms) does not reach the forecast (TSLib).
    "ETSformer": {f"encoder.layers.0.{name}" for name in ("ff.linear1.weight", "ff.linear2.weight", "norm1.weight",
                                                          "norm1.bias", "norm2.weight", "norm2.bias")},
    # FEB-f reads only its query (paper and TSLib): self-attention key/value projections get no gradient.
    "FEDformer": {f"{layer}.{proj}_projection.{p}" for layer in ("encoder.attn_layers.0.attention",
                                                                  "decoder.layers.0.self_attention")
                  for proj in ("key", "value") for p in ("weight", "bias")},
}


def tiny_configs(make_configs, model: str, features: str, **extra):
    enc_in, dec_in, c_out = FEATURES[features]
    channels = dict(enc_in=enc_in, dec_in=dec_in, c_out=c_out)
    overrides = {**TINY, **channels, **MODEL_OVERRIDES.get(model, {}),
                 **FEATURE_OVERRIDES.get((model, features), {}), **extra}
    return make_configs(model=model, features=features, **overrides)


def _marks(configs, steps: int, generator: torch.Generator, batch: int = BATCH) -> torch.Tensor:
    """`[batch, steps, F]` marks as the data loader writes them: timeF values in [-0.5, 0.5], or with
    --embed fixed/learned the loader's integer calendar columns (`calendar_features`) of random times."""
    if configs.embed == "timeF":
        return torch.rand(batch, steps, num_time_features(configs.freq), generator=generator) - 0.5
    seconds = torch.randint(0, 366 * 24 * 3600, (batch * steps,), generator=generator).numpy()
    dates = pd.Timestamp("2024-01-01") + pd.to_timedelta(seconds, unit="s")
    return torch.from_numpy(calendar_features(dates, configs.freq)).reshape(batch, steps, -1)


def make_batch(configs, generator: torch.Generator, batch: int = BATCH) -> tuple[torch.Tensor, ...]:
    """(x_enc, x_mark_enc, x_dec, x_mark_dec) of `batch` windows as the exp builds them: the decoder input is
    the last label_len inputs followed by pred_len zeros; marks as `_marks`."""
    dec_len = configs.label_len + configs.pred_len
    x_enc = torch.randn(batch, configs.seq_len, configs.enc_in, generator=generator)
    x_mark_enc = _marks(configs, configs.seq_len, generator, batch)
    start = x_enc[:, configs.seq_len - configs.label_len:, : configs.dec_in]
    x_dec = torch.cat([start, torch.zeros(batch, configs.pred_len, configs.dec_in)], dim=1)
    x_mark_dec = _marks(configs, dec_len, generator, batch)
    return x_enc, x_mark_enc, x_dec, x_mark_dec


FORECAST_TASKS = ("long_term_forecast", "short_term_forecast")


def declared_tasks(model: str) -> set[str]:
    """The tasks a model module declares (`TASKS`; a module without it serves the two forecasting tasks)."""
    module = importlib.import_module(f"models.{model}")
    return set(getattr(module, "TASKS", FORECAST_TASKS))


FORECASTERS = [m for m in sorted(MODEL_REGISTRY) if "long_term_forecast" in declared_tasks(m)]
MODELS = model_params(FORECASTERS)


def test_every_model_forecasts_or_serves_a_window_task():
    """No registered model escapes both contracts (this file's, and test_task_contract.py's per task)."""
    window = {"imputation", "anomaly_detection", "classification"}
    assert [m for m in MODEL_REGISTRY if m not in FORECASTERS and not declared_tasks(m) & window] == []
    assert "MambaSingleLayer" in MODEL_REGISTRY and "MambaSingleLayer" not in FORECASTERS


@pytest.mark.parametrize("features", list(FEATURES))
@pytest.mark.parametrize("model_name", MODELS)
def test_forward_shape_and_backward(make_configs, model_name: str, features: str) -> None:
    configs = tiny_configs(make_configs, model_name, features)
    model = MODEL_REGISTRY[model_name](configs).float()
    model.train()
    batch = make_batch(configs, torch.Generator().manual_seed(1))

    out = model(*batch)
    assert out.shape == (BATCH, configs.pred_len, configs.c_out)
    assert torch.isfinite(out).all()

    target = torch.randn(out.shape, generator=torch.Generator().manual_seed(2))
    torch.nn.functional.mse_loss(out, target).backward()
    trainable = {name: p for name, p in model.named_parameters() if p.requires_grad}
    unreached = {name for name, p in trainable.items() if p.grad is None}
    assert unreached == UNREACHED_PARAMETERS.get(model_name, set())
    grads = [p.grad for p in trainable.values() if p.grad is not None]
    assert all(torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize("model_name", MODELS)
def test_eval_mode_is_deterministic(make_configs, model_name: str) -> None:
    configs = tiny_configs(make_configs, model_name, "M")
    model = MODEL_REGISTRY[model_name](configs).eval()
    batch = make_batch(configs, torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(model(*batch), model(*batch), rtol=0, atol=0)


@pytest.mark.parametrize("flag", ["pred_len", "seq_len"])
@pytest.mark.parametrize("model_name", MODELS)
def test_non_positive_length_is_rejected(make_configs, model_name: str, flag: str) -> None:
    configs = tiny_configs(make_configs, model_name, "M", **{flag: 0})
    with pytest.raises(ValueError, match=f"--{flag}"):
        MODEL_REGISTRY[model_name](configs)


BASELINES = ["DLinear", "PatchTST", "TimesNet", "Transformer", "iTransformer"]
ATTENTION_MODELS = ["PatchTST", "Transformer", "iTransformer"]


@pytest.mark.parametrize(
    ("model_name", "overrides", "flag"),
    [
        *[(m, dict(d_model=30, n_heads=4), "--d_model") for m in ATTENTION_MODELS],
        *[(m, dict(activation="swish"), "--activation") for m in ATTENTION_MODELS],
        *[(m, dict(task_name="no_such_task"), "--task_name") for m in BASELINES],
        *[(m, dict(c_out=8), "--c_out") for m in ["DLinear", "PatchTST", "TimesNet", "iTransformer"]],
        ("Transformer", dict(embed="onehot"), "--embed"),
        ("TimesNet", dict(embed="onehot"), "--embed"),
        ("TimesNet", dict(top_k=29), "--top_k"),
        ("PatchTST", dict(seq_len=7), "--seq_len"),
        ("DLinear", dict(moving_avg=0), "--moving_avg"),
        ("Transformer", dict(d_layers=0), "--d_layers"),
        ("iTransformer", dict(dropout=1.0), "--dropout"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, model_name: str, overrides: dict, flag: str) -> None:
    configs = tiny_configs(make_configs, model_name, "M", **overrides)
    with pytest.raises(ValueError, match=flag):
        MODEL_REGISTRY[model_name](configs)


def test_timesnet_top_k_at_the_frequency_limit_runs(make_configs) -> None:
    # seq_len 32 + pred_len 24 = 56 steps have 28 non-zero rfft frequencies: top_k 28 is the maximum.
    configs = tiny_configs(make_configs, "TimesNet", "S", top_k=28, num_kernels=1)
    out = MODEL_REGISTRY["TimesNet"](configs)(*make_batch(configs, torch.Generator().manual_seed(4)))
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("model_name", ["PatchTST", "TimesNet", "iTransformer"])
def test_instance_normalised_models_are_shift_and_scale_equivariant(make_configs, model_name: str) -> None:
    """RevIN makes f(a·x + b) = a·f(x) + b (up to the 1e-5 variance epsilon)."""
    configs = tiny_configs(make_configs, model_name, "M")
    model = MODEL_REGISTRY[model_name](configs).eval()
    x_enc, x_mark_enc, x_dec, x_mark_dec = make_batch(configs, torch.Generator().manual_seed(5))
    with torch.no_grad():
        base = model(x_enc, x_mark_enc, x_dec, x_mark_dec)
        moved = model(3.0 * x_enc + 5.0, x_mark_enc, 3.0 * x_dec + 5.0, x_mark_dec)
    torch.testing.assert_close(moved, 3.0 * base + 5.0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("individual", [False, True], ids=["shared", "individual"])
def test_dlinear_starts_as_the_window_mean(make_configs, individual: bool) -> None:
    """Weights 1/L and seasonal + trend = x: with zero biases every forecast step is the window mean."""
    configs = tiny_configs(make_configs, "DLinear", "M", individual=individual)
    model = MODEL_REGISTRY["DLinear"](configs)
    with torch.no_grad():
        model.Linear_Seasonal.bias.zero_()
        model.Linear_Trend.bias.zero_()
    x = torch.randn(BATCH, configs.seq_len, configs.enc_in, dtype=torch.float64)
    out = model.double()(x)
    torch.testing.assert_close(out, x.mean(dim=1, keepdim=True).expand_as(out))


def test_dlinear_individual_keeps_variates_separate(make_configs) -> None:
    configs = tiny_configs(make_configs, "DLinear", "M", individual=True)
    model = MODEL_REGISTRY["DLinear"](configs)
    x = torch.randn(BATCH, configs.seq_len, configs.enc_in)
    before = model(x).detach()
    with torch.no_grad():
        model.Linear_Trend.weight[2].mul_(2.0)
    changed = (model(x).detach() - before).abs().amax(dim=(0, 1)) > 0  # [N]
    assert changed.tolist() == [i == 2 for i in range(configs.enc_in)]


@pytest.mark.parametrize(("seq_len", "patches"), [(96, 12), (32, 4), (8, 1), (100, 12)])
def test_patchtst_head_width(make_configs, seq_len: int, patches: int) -> None:
    """Head input is d_model · (⌊(L − 16) / 8⌋ + 2): patch 16, stride 8, end padding 8."""
    configs = tiny_configs(make_configs, "PatchTST", "S", seq_len=seq_len)
    model = MODEL_REGISTRY["PatchTST"](configs)
    assert model.head.linear.in_features == configs.d_model * patches
    assert isinstance(model.encoder.norm[1], torch.nn.BatchNorm1d)


def test_itransformer_marks_are_extra_tokens(make_configs) -> None:
    """Marks join as variate tokens (they change the forecast), and the output keeps the N data variates."""
    configs = tiny_configs(make_configs, "iTransformer", "M")
    model = MODEL_REGISTRY["iTransformer"](configs).eval()
    x_enc, x_mark_enc, x_dec, x_mark_dec = make_batch(configs, torch.Generator().manual_seed(6))
    tokens = model.enc_embedding(x_enc, x_mark_enc)
    assert tokens.shape == (BATCH, configs.enc_in + x_mark_enc.shape[-1], configs.d_model)
    with torch.no_grad():
        with_marks = model(x_enc, x_mark_enc, x_dec, x_mark_dec)
        without_marks = model(x_enc, None, x_dec, None)
    assert with_marks.shape == without_marks.shape == (BATCH, configs.pred_len, configs.enc_in)
    assert not torch.allclose(with_marks, without_marks)


def test_timesnet_finds_the_dominant_period() -> None:
    from models.TimesNet import fft_periods

    t = torch.arange(96, dtype=torch.float32)
    x = (torch.sin(2 * torch.pi * t / 12) + 0.3 * torch.sin(2 * torch.pi * t / 32))[None, :, None]  # [1, 96, 1]
    periods, weights = fft_periods(x.expand(2, -1, 3), k=2)
    assert periods == [12, 32]
    assert weights.shape == (2, 2) and (weights[:, 0] > weights[:, 1]).all()


def test_transformer_decoder_is_causal(make_configs) -> None:
    """Editing decoder input step 30 leaves decoder outputs before step 29 unchanged: self-attention
    is causal and the kernel-3 value convolution carries step 30 back to step 29 only."""
    configs = tiny_configs(make_configs, "Transformer", "M", label_len=16, pred_len=24)
    model = MODEL_REGISTRY["Transformer"](configs).eval()
    x_enc, x_mark_enc, x_dec, x_mark_dec = make_batch(configs, torch.Generator().manual_seed(7))
    decoded = {}
    with torch.no_grad():
        for name, dec in [("base", x_dec), ("edited", x_dec.clone().index_fill_(1, torch.tensor([30]), 9.0))]:
            memory, _ = model.encoder(model.enc_embedding(x_enc, x_mark_enc))
            decoded[name] = model.decoder(model.dec_embedding(dec, x_mark_dec), memory)
    diff = (decoded["edited"] - decoded["base"]).abs().amax(dim=(0, 2))  # [Ll + H]
    assert (diff[:29] == 0).all() and (diff[29:] > 0).all()
