"""The recipes of the rest of the model zoo, whose scripts do not follow TSLib's shared head and tail (their
flags are written whole), and TimeMixer++ built on TimeMixer's recipe, in the table's row order."""

from __future__ import annotations

from compare.recipes.datasets import ILI_HORIZONS
from compare.recipes.recipe_book import DEFAULT, LONG_HORIZONS, PER_DATASET, ModelRecipe
from compare.recipes.tslib_blocks import (
    CHANNELS,
    ENCODER_DECODER,
    ILI_LENGTHS,
    KOOPA,
    KOOPA_HORIZONS,
    TSLIB_HEAD,
    TSLIB_LONG,
    TSLIB_TAIL,
    by_horizon,
    every,
    tslib_sources,
)
from compare.recipes.tslib_models import TIMEMIXER

__all__ = ["ZOO_MODELS"]


def _timemixer_pp(timemixer: ModelRecipe) -> ModelRecipe:
    """TimeMixer++ (not in TSLib; no official scripts are published) on every dataset of TimeMixer's recipe:
    TimeMixer's setting there (TimeMixer++ is its successor by the same authors, so it is the nearest
    published one) with the TimeMixer++ paper's strided-convolution down-sampling."""
    return ModelRecipe(
        "TimeMixerPP", {**timemixer.flags, "down_sampling_method": "conv"},
        {dataset: dict(flags) for dataset, flags in timemixer.per_dataset.items()},
        {dataset: dict(by_h) for dataset, by_h in timemixer.per_horizon.items()},
        sources={dataset: f"TimeMixer's {dataset} recipe ({source}) with conv down-sampling; no official "
                          "TimeMixer++ scripts are published"
                 for dataset, source in timemixer.sources.items()},
        horizons=dict(timemixer.horizons))



ZOO_MODELS = (
    ModelRecipe("Nonstationary_Transformer", {
        **TSLIB_HEAD, **ENCODER_DECODER, **TSLIB_TAIL, "train_epochs": DEFAULT, "p_hidden_dims": (256, 256),
        "p_hidden_layers": 2, "d_model": DEFAULT,
    }, {
        "ETTh1": {"d_model": 128}, "ETTh2": {"factor": 1},
        "ETTm1": {"factor": DEFAULT, "p_hidden_dims": (16, 16, 16, 16), "p_hidden_layers": 4},
        "ETTm2": {"factor": 1, "p_hidden_layers": 4},
        "Weather": {"p_hidden_dims": (128, 128)},
        "ECL": {"d_model": 2048},
        "Traffic": {"train_epochs": 3, "p_hidden_dims": (128, 128)},
        "Exchange": {},
        "ILI": ILI_LENGTHS,
    }, per_horizon={
        "ETTh2": {336: {"p_hidden_dims": (256, 256, 256, 256), "p_hidden_layers": 4}},
        "ETTm2": by_horizon(p_hidden_dims=((256,) * 4, (256,) * 4, (16,) * 4, (16,) * 4)),
        "Weather": {96: {"train_epochs": 3, "p_hidden_dims": (256, 256)}},
        "Traffic": {336: {"p_hidden_dims": (16, 16)}},
        "Exchange": {192: {"p_hidden_dims": (64, 64, 64, 64), "p_hidden_layers": 4}, 336: {"train_epochs": 1}},
        "ILI": by_horizon(ILI_HORIZONS, p_hidden_dims=((32, 32), (32, 32), (16, 16), (8, 8))),
    }, sources=tslib_sources("Nonstationary_Transformer", TSLIB_LONG)),
    ModelRecipe("PAttn", {**TSLIB_HEAD, "factor": 3, **TSLIB_TAIL, "n_heads": PER_DATASET}, {"ETTh1": {}},
                per_horizon={"ETTh1": by_horizon(n_heads=(2, 8, 8, 16))},
                sources={"ETTh1": "TSLib's PAttn_ETTh1.sh"}),
    ModelRecipe("MultiPatchFormer", {
        **TSLIB_HEAD, "e_layers": 1, "d_layers": DEFAULT, "factor": DEFAULT, **TSLIB_TAIL, "d_model": 256,
        "d_ff": 512, "top_k": DEFAULT, "n_heads": DEFAULT, "batch_size": DEFAULT,
    }, {"ETTh1": {}, **{d: {"n_heads": 8, "batch_size": 32} for d in ("ETTm1", "Weather", "ECL", "Traffic")}},
        per_horizon={"ECL": {h: {"e_layers": 2, "d_layers": 1, "factor": 3, "top_k": 5, "n_heads": DEFAULT,
                                 "batch_size": DEFAULT} for h in (192, 336, 720)}},
        sources=tslib_sources("MultiPatchFormer", ("ETTh1", "ETTm1", "Weather", "ECL", "Traffic"))),
    ModelRecipe("TimeXer", {
        **TSLIB_HEAD, "e_layers": PER_DATASET, "d_layers": DEFAULT, "factor": 3, **TSLIB_TAIL,
        "d_model": DEFAULT, "d_ff": DEFAULT, "batch_size": DEFAULT, "learning_rate": DEFAULT,
    }, {
        "ETTh1": {}, "ETTh2": {"d_ff": 1024},
        "ETTm1": {"e_layers": 1, "d_model": 256, "batch_size": 4},
        "ETTm2": {"e_layers": 1, "d_layers": 1},
        "Weather": {"batch_size": 4},
        "ECL": {"batch_size": 4},
        "Traffic": {"d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.001},
    }, per_horizon={
        "ETTh1": by_horizon(e_layers=(1, 2, 1, 1), d_model=(256, 128, 512, 256), d_ff=(DEFAULT, DEFAULT, 1024, 1024),
                              batch_size=(4, 4, 16, 16)),
        "ETTh2": by_horizon(e_layers=(1, 1, 2, 2), d_model=(256, 256, 512, 256), batch_size=(16, DEFAULT, 4, 16)),
        "ETTm1": by_horizon(d_ff=(DEFAULT, 256, 1024, 512)),
        "ETTm2": by_horizon(d_model=(256, 256, 512, 512), d_ff=(DEFAULT, 1024, 1024, DEFAULT),
                              batch_size=(DEFAULT, 16, DEFAULT, DEFAULT)),
        "Weather": by_horizon(e_layers=(1, 3, 1, 1), d_model=(256, 128, 256, 128), d_ff=(512, 1024, DEFAULT, DEFAULT)),
        "ECL": by_horizon(e_layers=(4, 3, 4, 3), d_ff=(512, DEFAULT, DEFAULT, DEFAULT)),
        "Traffic": by_horizon(e_layers=(3, 3, 2, 2)),
    }, sources=tslib_sources("TimeXer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # TSLib's Koopa scripts forecast 48/96/144/192 steps (ILI: its own 24-60) from twice as many (its paper's setting).
    ModelRecipe("Koopa", {
        **{k: v for k, v in TSLIB_HEAD.items() if k != "label_len"}, "seq_len": PER_DATASET, **ENCODER_DECODER,
        **TSLIB_TAIL, "learning_rate": 0.001,
    }, {d: {} for d in KOOPA}, per_horizon={
        d: {h: {"seq_len": 2 * h} for h in (ILI_HORIZONS if d == "ILI" else KOOPA_HORIZONS)} for d in KOOPA},
        horizons={d: KOOPA_HORIZONS for d in KOOPA if d != "ILI"}, sources=tslib_sources("Koopa", KOOPA)),
    # TSLib's Mamba scripts read as many steps as they forecast (seq_len = pred_len) and pass no --dec_in;
    # ours pass it off ETT (run.py checks it against the data; Mamba does not read it).
    *(ModelRecipe(model, {
        **TSLIB_HEAD, "seq_len": PER_DATASET, "e_layers": 2, "d_layers": 1, "enc_in": "{channels}",
        "dec_in": DEFAULT, "expand": 2, "d_ff": 16, "d_conv": 4, "c_out": "{channels}", "d_model": 128, "des": "Exp",
        "itr": 1,
    }, {d: {"d_layers": DEFAULT} if d in ("ETTh2", "ETTm1", "ETTm2") else {} if d == "ETTh1" else
        {"dec_in": "{channels}"} for d in datasets},
        per_horizon={d: {h: {"seq_len": h} for h in LONG_HORIZONS} for d in datasets},
        sources=tslib_sources(model, datasets))
      for model, datasets in (("Mamba", TSLIB_LONG[:-1]), ("MambaSimple", ("ETTh1",)))),
    # TSLib's SegRNN scripts pass no --dec_in or --c_out; ours pass them off ETT (run.py checks them against
    # the data).
    ModelRecipe("SegRNN", {
        **{k: v for k, v in TSLIB_HEAD.items() if k != "label_len"}, "seg_len": 24, "enc_in": "{channels}",
        "dec_in": DEFAULT, "c_out": DEFAULT, "d_model": 512, "dropout": 0.5, "learning_rate": 0.0001, "des": "Exp",
        "itr": 1,
    }, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {"seg_len": 48}, "ETTm2": {"seg_len": 48},
        "Weather": {"seg_len": 48, "dec_in": "{channels}", "c_out": "{channels}"},
        **{d: {"dec_in": "{channels}", "c_out": "{channels}", "dropout": 0, "learning_rate": 0.001}
           for d in ("ECL", "Traffic")},
    }, sources=tslib_sources("SegRNN", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # TSLib's TiDE_ETTh1.sh passes --c_out 8 on the 7-variate file, which run.py rejects; ours pass 7.
    ModelRecipe("TiDE", {
        **TSLIB_HEAD, "e_layers": 2, "d_layers": 2, "enc_in": "{channels}", "dec_in": "{channels}",
        "c_out": "{channels}",
        "d_model": 256, "d_ff": 256, "dropout": 0.3, "batch_size": 512, "learning_rate": 0.1, "patience": 5,
        "train_epochs": 10,
    }, {"ETTh1": {}}, sources={"ETTh1": "TSLib's TiDE_ETTh1.sh (its --c_out 8 is rejected by run.py; ours pass 7)"}),
    # WPMixer's scripts set wavelet/level/tfactor/dfactor/stride inside TSLib's model file, so TSLib runs
    # the file's defaults, as these blocks do. They read ./data/<folder>/ as model_id `wpmixer` and pass no
    # --enc_in/--dec_in/--c_out; ours read the fetched file, say <data>_<seq_len>_<H>, and pass the channels
    # off ETT (run.py checks them against the data).
    ModelRecipe("WPMixer", {
        **TSLIB_HEAD, "seq_len": 512, "label_len": 0, "d_model": PER_DATASET, "patch_len": 16,
        "batch_size": 256, "learning_rate": PER_DATASET, "lradj": "type3", "dropout": PER_DATASET, "patience": 12,
        "train_epochs": 30, "use_amp": None, "enc_in": DEFAULT, "dec_in": DEFAULT, "c_out": DEFAULT,
    }, {
        "ETTh1": {}, "ETTh2": {},
        "ETTm1": {"patch_len": 48, "train_epochs": 80, "dropout": 0.4},
        "ETTm2": {"patch_len": 48, "train_epochs": 80, "d_model": 256},
        "Weather": {"train_epochs": 60, "dropout": 0.4, **CHANNELS},
        "ECL": {"d_model": 32, "batch_size": 32, "train_epochs": 100, **CHANNELS},
        "Traffic": {"seq_len": 1200, "batch_size": 16, **CHANNELS},
    }, per_horizon={
        "ETTh1": by_horizon(d_model=(256, 256, 256, 128),
                              learning_rate=(0.000242438, 0.000201437, 0.000132929, 0.000239762),
                              dropout=(0.4, 0.05, 0.0, 0.2)),
        "ETTh2": by_horizon(d_model=(256, 256, 128, 128),
                              learning_rate=(0.000466278, 0.000294929, 0.000617476, 0.000810205),
                              dropout=(0.0, 0.0, 0.1, 0.4)),
        "ETTm1": by_horizon(d_model=(256, 128, 256, 128),
                              learning_rate=(0.001277976, 0.002415901, 0.001594735, 0.002011441)),
        "ETTm2": by_horizon(learning_rate=(0.00076587, 0.000275775, 0.000234608, 0.001039536),
                              dropout=(0.4, 0.2, 0.4, 0.4)),
        "Weather": by_horizon(d_model=(256, 128, 128, 128), batch_size=(32, 64, 32, 128),
                                learning_rate=(0.000913333, 0.001379042, 0.000607991, 0.001470479)),
        "ECL": by_horizon(learning_rate=(0.00328086, 0.000493286, 0.002505375, 0.001977516),
                            dropout=(0.1, 0.1, 0.2, 0.1)),
        "Traffic": by_horizon(d_model=(16, 32, 32, 32), learning_rate=(0.0010385, 0.000567053, 0.001026715, 0.001496217),
                                dropout=(0.05, 0.05, 0.0, 0.05), train_epochs=(60, 60, 50, 60)),
    }, sources=tslib_sources("WPMixer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    # No ETTh1 script in TSLib: run.py's defaults, the setting tslib_models.csv measures them at.
    *(ModelRecipe(model, {**TSLIB_HEAD, **TSLIB_TAIL}, {"ETTh1": {}},
                  sources={"ETTh1": "run.py defaults (TSLib ships no ETTh1 script for it)"})
      for model in ("FreTS", "MSGNet", "SCINet", "TemporalFusionTransformer", "TimeFilter")),
    # OLinear (not in TSLib): the official repo's scripts/OLinear/<Dataset>_orthoLinear.sh (jackyue1994/OLinear),
    # every value read from them (PEMS: their 12-96 loop).
    # Their q_mat/q_out_mat files, test batch size and logging flags have no counterpart here, nor their
    # --loss_mode L1 (an L1-style loss this library does not implement: ours train on MSE).
    ModelRecipe("OLinear", {
        **{k: v for k, v in TSLIB_HEAD.items() if k != "label_len"}, "enc_in": "{channels}",
        "dec_in": "{channels}", "c_out": "{channels}", "des": "Exp", "embed_size": 16, "d_model": 512,
        "d_ff": 512, "batch_size": 32, "learning_rate": PER_DATASET, "itr": 1, "e_layers": PER_DATASET,
        "train_epochs": PER_DATASET, "patience": PER_DATASET, "lradj": PER_DATASET, "dropout": PER_DATASET,
    }, {
        "ETTh1": {"e_layers": 2, "train_epochs": 30, "patience": 8, "lradj": "type1", "dropout": 0.2},
        "ETTh2": {"e_layers": 3, "learning_rate": 0.0002, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "ETTm1": {"e_layers": 2, "learning_rate": 0.0001, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "ETTm2": {"e_layers": 1, "learning_rate": 0.0001, "train_epochs": 30, "patience": 8, "lradj": "type1"},
        "Weather": {"e_layers": 2, "learning_rate": 0.001, "train_epochs": 30, "patience": 5, "lradj": "type3",
                    "dropout": 0.0},
        "Solar": {"e_layers": 2, "learning_rate": 0.0005, "patience": 5, "lradj": "type1", "dropout": 0.0},
        "ECL": {"e_layers": 3, "learning_rate": 0.0005, "patience": 5, "lradj": "cosine", "dropout": 0.0},
        **{name: {"e_layers": 3, "learning_rate": 0.0005, "train_epochs": 40, "patience": 10, "lradj": "cosine",
                  "dropout": 0.0} for name in ("PEMS03", "PEMS04", "PEMS08")},
        "Traffic": {"e_layers": 3, "learning_rate": 0.0005, "train_epochs": 50, "patience": 5, "lradj": "cosine",
                    "dropout": 0.0},
        "Exchange": {"e_layers": 2, "learning_rate": 0.0001, "train_epochs": 1, "patience": 8, "lradj": "type1",
                     "dropout": 0.0},
    }, per_horizon={
        "ETTh1": by_horizon(learning_rate=(0.0005, 0.0005, 0.0005, 0.0001)),
        "ETTh2": by_horizon(dropout=(0.2, 0.2, 0.2, 0.3)),
        "ETTm1": by_horizon(dropout=(0.1, 0.1, 0.1, 0.2)),
        "ETTm2": by_horizon(dropout=(0.2, 0.2, 0.2, 0.3)),
        "Solar": by_horizon(train_epochs=(40, 30, 40, 30)),
        "ECL": by_horizon(train_epochs=(30, 50, 50, 50)),
        "Exchange": by_horizon(d_model=(256, 128, 256, 256), d_ff=(256, 128, 256, 256), batch_size=(64, 32, 64, 32)),
    }, comments=(
        "OLinear recipe: the official repo's scripts (jackyue1994/OLinear, scripts/OLinear/), d_ff = d_model.",
        "Their --loss_mode L1 (an L1-style loss) is not implemented here: these runs train on --loss MSE.",
    ), sources={**every(("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Solar", "ECL", "PEMS03", "PEMS04",
                          "PEMS08", "Traffic", "Exchange"),
                         "the official OLinear repo's scripts/OLinear/{dataset}_orthoLinear.sh")}),
    _timemixer_pp(TIMEMIXER),
)
