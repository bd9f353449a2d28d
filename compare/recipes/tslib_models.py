"""The recipes of the models run with TSLib's script pattern (its shared head and tail around the model's
own flags; `tslib_blocks.tslib_recipe`), TimeMixer's included, in the table's row order."""

from __future__ import annotations

from compare.recipes.datasets import ILI_HORIZONS
from compare.recipes.recipe_book import DEFAULT, LONG_HORIZONS, PER_DATASET, Flags, ModelRecipe
from compare.recipes.tslib_blocks import (
    ETT_AND_WEATHER,
    ILI_LENGTHS,
    NO_DECODER,
    PEMS_ASCENDING,
    TSLIB_HEAD,
    TSLIB_LONG,
    TSLIB_TAIL,
    WIDE_PAPER_DATASETS,
    by_horizon,
    ecl_block_sources,
    every,
    tslib_recipe,
    tslib_sources,
)

__all__ = ["TIMEMIXER", "TSLIB_SCRIPT_MODELS"]

# TSLib's TimeMixer scripts pass label_len 0 and their training flags after the common tail; the ETT ones
# pass no dec_in, d_layers or factor (TimeMixer_ETTh1.sh's batch_size variable says 16 but the block
# passes 128). Solar and PEMS are the official TimeMixer repo's (kwuking/TimeMixer).
TIMEMIXER = ModelRecipe("TimeMixer", {
    **TSLIB_HEAD, "label_len": 0, "e_layers": 2, "d_layers": DEFAULT, "factor": DEFAULT, **TSLIB_TAIL,
    "dec_in": DEFAULT, "use_norm": DEFAULT, "d_model": 16, "d_ff": 32, "channel_independence": DEFAULT,
    "batch_size": DEFAULT, "learning_rate": 0.01, "train_epochs": DEFAULT, "patience": DEFAULT,
    "down_sampling_layers": 3, "down_sampling_method": "avg", "down_sampling_window": 2,
}, {
    "ETTh1": {"batch_size": 128, "train_epochs": 10, "patience": 10},
    "ETTh2": {},
    "ETTm1": {"batch_size": 16},
    "ETTm2": {"d_model": 32, "batch_size": 128},
    "Weather": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "batch_size": 128,
                "train_epochs": 20, "patience": 10},
    "ECL": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "batch_size": 32,
            "train_epochs": 20, "patience": 10},
    # TSLib labels these runs Traffic_96_<H>; ours say traffic_96_<H> as its other Traffic scripts.
    "Traffic": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "d_model": 32, "d_ff": 64,
                "batch_size": 8},
    "Solar": {"e_layers": 3, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "use_norm": 0,
              "d_model": 512, "d_ff": 2048, "channel_independence": 0, "batch_size": 32,
              "learning_rate": 0.001, "train_epochs": 10, "patience": 3, "down_sampling_layers": 2},
    # The official PEMS script (short_term_forecast/PEMS/TimeMixer.sh) forecasts 12 steps only and spells
    # the flag --channel_independent; ours pass --channel_independence 0 as its intent.
    **{name: {"e_layers": 5, "d_layers": 1, "factor": 3, "dec_in": "{channels}", "use_norm": 0,
              "d_model": 128, "d_ff": 256, "channel_independence": 0, "batch_size": 32,
              "learning_rate": 0.003, "train_epochs": 10, "patience": 10, "down_sampling_layers": 1}
       for name in ("PEMS03", "PEMS04", "PEMS08")},
}, per_horizon={"Weather": {192: {"d_layers": DEFAULT}}, "Solar": {192: {"d_layers": DEFAULT}}},
    sources={**every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's TimeMixer_{dataset}.sh"),
             **every(("Weather", "ECL", "Traffic"), "TSLib's {dataset}_script/TimeMixer.sh"),
             "Solar": "the official TimeMixer repo's scripts/long_term_forecast/Solar_script/TimeMixer_unify.sh",
             **every(("PEMS03", "PEMS04", "PEMS08"), "the official TimeMixer repo's "
                      "scripts/short_term_forecast/PEMS/TimeMixer.sh (it forecasts 12 steps; 24, 48 and 96 "
                      "run the same block with that pred_len, as the CAPS paper reports TimeMixer there)")})


# The blocks of TSLib's scripts read as facts (thuml/Time-Series-Library, scripts/long_term_forecast/).
# Flags a TSLib block does not pass are `DEFAULT` here, so each generated block passes what TSLib's does.
_PATCHTST_ECL: Flags = {"n_heads": DEFAULT, "batch_size": 16}
_TIMESNET_ECL: Flags = {"d_model": 256, "d_ff": 512}
TSLIB_SCRIPT_MODELS = (
    tslib_recipe("DLinear", {}, {d: {} for d in (*ETT_AND_WEATHER, "ECL", *WIDE_PAPER_DATASETS)}, {
        **every(ETT_AND_WEATHER, "the DLinear_ETTh1.sh pattern (TSLib ships no DLinear script for {dataset}; "
                                  "DLinear reads only moving_avg; e_layers, d_layers and factor are passed as "
                                  "TSLib does, unused)"),
        "ETTh1": "TSLib's DLinear_ETTh1.sh",
        "ECL": "TSLib's ECL_script/DLinear.sh",
        **ecl_block_sources("DLinear")}),
    tslib_recipe("PatchTST", {"n_heads": PER_DATASET, "d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT,
                        "batch_size": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {"e_layers": 1},
        "ETTh2": {"e_layers": 3, "n_heads": 4},
        "ETTm1": {}, "ETTm2": {},
        "Weather": {"e_layers": 2, "train_epochs": 3},
        "ECL": _PATCHTST_ECL,
        "Traffic": {"n_heads": DEFAULT, "d_model": 512, "d_ff": 512, "top_k": 5, "batch_size": 4},
        "Exchange": {"n_heads": DEFAULT},
        "ILI": {**ILI_LENGTHS, "e_layers": 4},
        **{d: _PATCHTST_ECL for d in WIDE_PAPER_DATASETS},
    }, {**every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's PatchTST_{dataset}.sh"),
        **every(("Weather", "ECL", "Traffic", "Exchange", "ILI"), "TSLib's {dataset}_script/PatchTST.sh"),
        **ecl_block_sources("PatchTST")},
        per_horizon={
            "ETTh1": by_horizon(n_heads=(2, 8, 8, 16)),
            "ETTm1": by_horizon(e_layers=(1, 3, 1, 3), n_heads=(2, 2, 4, 4), batch_size=(32, 128, 128, 128)),
            "ETTm2": by_horizon(e_layers=(3, 3, 1, 3), n_heads=(16, 2, 4, 4), batch_size=(32, 128, 32, 128)),
            "Weather": by_horizon(n_heads=(4, 16, 4, 4), batch_size=(DEFAULT, DEFAULT, 128, 128)),
            "Exchange": {336: {"train_epochs": 1}},
            "ILI": by_horizon(ILI_HORIZONS, n_heads=(4, 4, 4, 16), d_model=(1024, 2048, 2048, 2048)),
        }),
    tslib_recipe("iTransformer", {"d_model": 128, "d_ff": 128, "batch_size": DEFAULT, "learning_rate": DEFAULT,
                            "use_norm": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {},
        "Weather": {"e_layers": 3, "d_model": 512, "d_ff": 512},
        "ECL": {"e_layers": 3, "d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.0005},
        "Traffic": {"e_layers": 4, "d_model": 512, "d_ff": 512, "batch_size": 16, "learning_rate": 0.001},
        "Solar": {**NO_DECODER, "d_model": 512, "d_ff": 512, "learning_rate": 0.0005},
        "PEMS03": {**NO_DECODER, "e_layers": 4, "d_model": 512, "d_ff": 512, "learning_rate": 0.001},
        "PEMS04": {**NO_DECODER, "e_layers": 4, "d_model": 1024, "d_ff": 1024, "learning_rate": 0.0005,
                   "use_norm": 0},
        "PEMS08": {**NO_DECODER, "d_model": 512, "d_ff": 512},
    }, {**every(("ETTm1", "ETTm2"), "the official iTransformer repo's iTransformer_{dataset}.sh (TSLib ships no "
                                     "iTransformer_{dataset}.sh); label_len, d_layers and factor as TSLib's "
                                     "pattern, unused by iTransformer"),
        "ETTh1": "TSLib's iTransformer_ETTh2.sh (TSLib ships no iTransformer_ETTh1.sh)",
        "ETTh2": "TSLib's iTransformer_ETTh2.sh (its --enc_in/--dec_in/--c_out 21 are a typo run.py rejects; "
                 "ours pass 7)",
        **every(("Weather", "ECL", "Traffic"), "TSLib's {dataset}_script/iTransformer.sh"),
        "Solar": "the official iTransformer repo's scripts/multivariate_forecasting/SolarEnergy/iTransformer.sh",
        **every(("PEMS03", "PEMS04", "PEMS08"),
                 "the official iTransformer repo's scripts/multivariate_forecasting/PEMS/iTransformer_{dataset}.sh"),
        },
        per_horizon={"PEMS08": by_horizon(PEMS_ASCENDING, e_layers=(2, 2, 4, 4), batch_size=(DEFAULT, DEFAULT, 16, 16),
                                            learning_rate=(DEFAULT, DEFAULT, 0.001, 0.001), use_norm=(1, 1, 0, 0))}),
    tslib_recipe("TimesNet", {"d_model": PER_DATASET, "d_ff": PER_DATASET, "top_k": 5, "train_epochs": DEFAULT}, {
        "ETTh1": {"d_model": 16, "d_ff": 32},
        "ETTh2": {"d_model": 32, "d_ff": 32},
        "ETTm1": {}, "ETTm2": {"d_ff": 32},
        "Weather": {"d_model": 32, "d_ff": 32},
        "ECL": _TIMESNET_ECL,
        "Traffic": {"d_model": 512, "d_ff": 512},
        "Exchange": {},
        "ILI": {**ILI_LENGTHS, "d_model": 768, "d_ff": 768},
        **{d: _TIMESNET_ECL for d in WIDE_PAPER_DATASETS},
    }, {**every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's TimesNet_{dataset}.sh"),
        **every(("Weather", "ECL", "Traffic", "Exchange", "ILI"), "TSLib's {dataset}_script/TimesNet.sh"),
        **ecl_block_sources("TimesNet")},
        per_horizon={
            "ETTm1": by_horizon(d_model=(64, 64, 16, 16), d_ff=(64, 64, 32, 32), train_epochs=(DEFAULT, DEFAULT, 3, DEFAULT)),
            "ETTm2": by_horizon(d_model=(32, 32, 32, 16), train_epochs=(DEFAULT, 1, DEFAULT, 1)),
            "Weather": by_horizon(train_epochs=(DEFAULT, 1, DEFAULT, 1)),
            "Exchange": by_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                     train_epochs=(DEFAULT, DEFAULT, 1, 1)),
        }),
    tslib_recipe("Transformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {},
        "ETTm1": {"factor": DEFAULT},
        "ETTm2": {"factor": 1},
        "Weather": {},
        # TSLib's ECL Transformer script is univariate (--features S; one stored version passes --enc_in 321
        # with S, which run.py rejects: ours pass 1 as its other version does).
        "ECL": {"features": "S", "enc_in": 1, "dec_in": 1, "c_out": 1},
        "Traffic": {"train_epochs": 3},
        "Exchange": {},
        "ILI": ILI_LENGTHS,
    }, {**every(("ETTh1", "ETTh2", "ETTm1", "ETTm2"), "TSLib's Transformer_{dataset}.sh (widths at run.py's defaults)"),
        **every(("Weather", "ECL", "Traffic", "Exchange", "ILI"),
                 "TSLib's {dataset}_script/Transformer.sh (widths at run.py's defaults)")},
        per_horizon={"Weather": by_horizon(train_epochs=(3, DEFAULT, DEFAULT, DEFAULT)),
                     "Exchange": {336: {"train_epochs": 1}}}),
    tslib_recipe("Informer", {}, {"ETTh1": {}, "ECL": {}}, tslib_sources("Informer", ("ETTh1", "ECL"))),
    tslib_recipe("Autoformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1}, "Weather": {}, "ECL": {},
        "Traffic": {"train_epochs": 3}, "Exchange": {}, "ILI": ILI_LENGTHS,
    }, tslib_sources("Autoformer", TSLIB_LONG), per_horizon={
        "Weather": {96: {"train_epochs": 2}}, "Exchange": {192: {"train_epochs": 1}, 336: {"train_epochs": 1}}}),
    TIMEMIXER,
    # TSLib's ETTh1 scripts of the rest of its zoo.
    tslib_recipe("Crossformer", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "n_heads": DEFAULT,
                           "batch_size": DEFAULT, "dropout": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {"factor": DEFAULT}, "ETTm2": {"factor": 1},
        "Weather": {"d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"d_model": 256, "d_ff": 512, "top_k": 5, "batch_size": 16},
        "Traffic": {"label_len": 96, "top_k": 5, "n_heads": 2, "batch_size": 4},
        "Exchange": {"label_len": 96, "top_k": 5},
        # TSLib's ILI blocks after the first spell `-dropout 0.6`, which argparse rejects; ours pass
        # --dropout 0.6 at every horizon, as its first block.
        "ILI": {**ILI_LENGTHS, "d_model": 768, "d_ff": 768, "top_k": 5, "dropout": 0.6},
    }, tslib_sources("Crossformer", TSLIB_LONG), per_horizon={
        "Weather": {192: {"train_epochs": 1}, 720: {"train_epochs": 1}},
        "Exchange": by_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                 train_epochs=(DEFAULT, DEFAULT, 1, 1))}),
    tslib_recipe("FEDformer", {}, {"ETTh1": {}, "ECL": {}}, tslib_sources("FEDformer", ("ETTh1", "ECL"))),
    tslib_recipe("LightTS", {}, {"ETTh1": {}, "ECL": {}}, tslib_sources("LightTS", ("ETTh1", "ECL"))),
    tslib_recipe("Pyraformer", {"train_epochs": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1}, "Weather": {}, "ECL": {},
        "Traffic": {"train_epochs": 3}, "Exchange": {},
    }, tslib_sources("Pyraformer", TSLIB_LONG[:-1]), per_horizon={
        "Weather": {96: {"train_epochs": 2}}, "Exchange": {192: {"train_epochs": 1}, 336: {"train_epochs": 1}}}),
    tslib_recipe("Reformer", {}, {"ETTh1": {}, "ECL": {}}, tslib_sources("Reformer", ("ETTh1", "ECL"))),
    tslib_recipe("TSMixer", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "learning_rate": DEFAULT}, {
        "ETTh1": {}, "ETTh2": {}, "ETTm1": {}, "ETTm2": {"factor": 1},
        "Weather": {"d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"label_len": 96, "d_model": 256, "d_ff": 512, "top_k": 5},
        "Traffic": {"label_len": 96, "d_model": 512, "d_ff": 32, "learning_rate": 0.001},
    }, tslib_sources("TSMixer", ("ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "ECL", "Traffic"))),
    tslib_recipe("ETSformer", {}, {"ETTh1": {"d_layers": 2}, "ECL": {"d_layers": 2}},
           tslib_sources("ETSformer", ("ETTh1", "ECL"))),
    tslib_recipe("MICN", {"d_model": DEFAULT, "d_ff": DEFAULT, "top_k": DEFAULT, "train_epochs": DEFAULT}, {
        "ETTh1": {"label_len": 96}, "ETTh2": {"label_len": 96},
        "ETTm1": {"label_len": 96, "top_k": 5}, "ETTm2": {"label_len": 96, "top_k": 5},
        "Weather": {"label_len": 96, "d_model": 32, "d_ff": 32, "top_k": 5},
        "ECL": {"label_len": 96, "d_model": 256, "d_ff": 512, "top_k": 5},
        "Traffic": {"label_len": 96, "d_model": 512, "d_ff": 512, "top_k": 5},
        "Exchange": {"label_len": 96, "top_k": 5},
        "ILI": {"seq_len": 36, "label_len": 36, "d_model": 768, "d_ff": 768, "top_k": 5},
    }, tslib_sources("MICN", TSLIB_LONG), per_horizon={
        "Weather": {192: {"train_epochs": 1}, 720: {"train_epochs": 1}},
        "Exchange": by_horizon(d_model=(64, 64, 32, 32), d_ff=(64, 64, 32, 32),
                                 train_epochs=(DEFAULT, DEFAULT, 1, 1))}),
    # FiLM's scripts read longer inputs but label their runs <data>_96_<H>; ours say <data>_<seq_len>_<H>.
    tslib_recipe("FiLM", {"batch_size": DEFAULT}, {
        "ETTh1": {"seq_len": 336}, "ETTh2": {"seq_len": 168}, "ETTm1": {"seq_len": 720}, "ETTm2": {"seq_len": 720},
        "Weather": {"seq_len": PER_DATASET},
        # Univariate, as TSLib's ECL FiLM script (--features S; its --enc_in 321 with S is rejected by run.py).
        "ECL": {"features": "S", "seq_len": 192, "enc_in": 1, "dec_in": 1, "c_out": 1, "batch_size": 4},
        "Traffic": {"seq_len": 720, "batch_size": 2},
        "Exchange": {"seq_len": PER_DATASET},
        "ILI": {"seq_len": 60, "label_len": 18},
    }, {d: f"{source} (model_id relabelled)" for d, source in tslib_sources("FiLM", TSLIB_LONG).items()},
        per_horizon={"Weather": {h: {"seq_len": h} for h in LONG_HORIZONS},
                     "Exchange": by_horizon(seq_len=(384, 384, 720, 720))}),
)
