"""The recipes of TSLib's other tasks per model, as TSLib's scripts set them, and CAPS under each task's
TSLib loop (the task's iTransformer blocks with CAPS's own architecture)."""

from __future__ import annotations

from compare.recipes.caps import CAPS
from compare.recipes.recipe_book import DEFAULT, PER_DATASET, Flags
from compare.recipes.task_book import TaskRecipe
from compare.recipes.task_datasets import (
    ETT4,
    M4_DAILY_FIRST,
    M4_PATTERNS,
    MAMBASL_SETS,
    TASK_DATASETS,
    UEA_SCRIPT_SETS,
)

__all__ = ["ANOMALY", "CAPS_TASK_ARCHITECTURE", "CLASSIFICATION", "IMPUTATION", "MAMBASL", "NOT_READ_BY_CAPS",
           "SHORT_TERM", "TASK_TABLES"]

_IMPUTATION: Flags = {
    "task_name": "imputation", "is_training": 1, "root_path": "{root_path}", "data_path": "{data_path}",
    "model_id": "{id}_mask_{mask_rate}", "mask_rate": PER_DATASET, "model": "{model}", "data": "{data}",
    "features": "M", "seq_len": 96, "label_len": 0, "pred_len": 0, "e_layers": 2, "d_layers": 1, "factor": 3,
    "enc_in": "{channels}", "dec_in": "{channels}", "c_out": "{channels}", "batch_size": 16, "d_model": 128,
    "d_ff": 128, "des": "Exp", "itr": 1, "top_k": 5, "learning_rate": 0.001,
}
_W64: Flags = {"d_model": 64, "d_ff": 64, "top_k": 3}
_W16: Flags = {"d_model": 16, "d_ff": 32, "top_k": 3}


def _imputation(model: str, per_dataset: dict[str, Flags], extra: Flags | None = None, **kw) -> TaskRecipe:
    return TaskRecipe(model, {**_IMPUTATION, **(extra or {})}, per_dataset, **kw)


IMPUTATION = (
    _imputation("TimesNet", {"ETTh1": _W16, "ETTh2": {**_W64, "d_model": 32, "d_ff": 32}, "ETTm1": _W64,
                             "ETTm2": _W64, "ECL": _W64, "Weather": _W64}),
    # TSLib's ECL DLinear script passes --enc_in/--dec_in/--c_out 7 on the 321-variate file, which run.py
    # rejects; ours pass 321.
    _imputation("DLinear", {"ETTh1": {"pred_len": 96}, "ECL": {"pred_len": 96}},
                notes={"ECL": "its --enc_in/--dec_in/--c_out 7 are rejected by run.py; ours pass 321"}),
    _imputation("iTransformer", {"ETTh2": {}, "ECL": {}}),
    _imputation("Autoformer", {d: {} for d in (*ETT4, "ECL", "Weather")}),
    _imputation("Crossformer", {"ETTh1": _W64}),
    _imputation("ETSformer", {"ECL": {"d_layers": 2}}),
    _imputation("FEDformer", {"ECL": {}}),
    _imputation("FiLM", {"ETTh1": {"pred_len": 96, **_W64}}),
    _imputation("Informer", {"ECL": {}}),
    _imputation("LightTS", {"ECL": {"pred_len": 96}}),
    _imputation("MICN", {"ETTh1": _W64},
                notes={"ETTh1": "its --conv_kernel 12 16 is not a run.py flag (TSLib's argparse rejects it too); "
                                "left out"}),
    _imputation("Nonstationary_Transformer", {"ETTh1": {}}, {"p_hidden_dims": (256, 256), "p_hidden_layers": 2}),
    _imputation("Pyraformer", {"ECL": {}}),
    _imputation("Reformer", {"ECL": {}}),
    # TSLib's TiDE_ETTh1.sh: its own setting at mask 0.125, then TimesNet's ETTh1 widths.
    _imputation("TiDE", {"ETTh1": {}}, {"dropout": DEFAULT, "patience": DEFAULT, "train_epochs": DEFAULT},
                per_block={"ETTh1": (
                    {"d_layers": 2, "factor": DEFAULT, "d_model": 256, "d_ff": 256, "des": DEFAULT, "itr": DEFAULT,
                     "top_k": DEFAULT, "learning_rate": 0.1, "dropout": 0.3, "patience": 5, "train_epochs": 10},
                    _W16, _W16, _W16)}),
    _imputation("Transformer", {d: {} for d in (*ETT4, "Weather")}),
)

_ANOMALY: Flags = {
    "task_name": "anomaly_detection", "is_training": 1, "root_path": "{root_path}", "model_id": "{id}",
    "model": "{model}", "data": "{data}", "features": "M", "seq_len": 100, "pred_len": 0, "d_model": 128,
    "d_ff": 128, "e_layers": 3, "d_layers": DEFAULT, "enc_in": "{channels}", "c_out": "{channels}",
    "top_k": DEFAULT, "anomaly_ratio": 1, "batch_size": 128, "train_epochs": 10,
}
_SWAT: Flags = {"top_k": 3, "train_epochs": 3}


def _anomaly(model: str, per_dataset: dict[str, Flags], **kw) -> TaskRecipe:
    return TaskRecipe(model, dict(_ANOMALY), per_dataset, **kw)


ANOMALY = (
    # TSLib's SWAT/TimesNet.sh runs eight widths x depths, all as model_id SWAT (their settings differ).
    _anomaly("TimesNet", {
        "MSL": {"d_model": 8, "d_ff": 16, "e_layers": 1, "top_k": 3, "train_epochs": 1},
        "PSM": {"d_model": 64, "d_ff": 64, "e_layers": 2, "top_k": 3, "train_epochs": 3},
        "SMAP": {"top_k": 3, "train_epochs": 3},
        "SMD": {"d_model": 64, "d_ff": 64, "e_layers": 2, "top_k": 5, "anomaly_ratio": 0.5},
        "SWAT": _SWAT,
    }, per_block={"SWAT": tuple({"d_model": w, "d_ff": w, "e_layers": e} for e in (3, 2) for w in (8, 16, 32, 64))}),
    _anomaly("DLinear", {"MSL": {"pred_len": 100}, "PSM": {"pred_len": 100, "train_epochs": 3}}),
    _anomaly("iTransformer", {"MSL": {}}),
    _anomaly("Autoformer", {"MSL": {}, "PSM": {"train_epochs": 3}, "SMAP": {"train_epochs": 3},
                            "SMD": {"anomaly_ratio": 0.5}, "SWAT": _SWAT}),
    _anomaly("Crossformer", {"MSL": {}}),
    _anomaly("ETSformer", {"MSL": {"pred_len": 100, "d_layers": 3}}),
    _anomaly("FEDformer", {"MSL": {}}),
    _anomaly("FiLM", {"MSL": {"pred_len": 100, "batch_size": 32}}),
    _anomaly("Informer", {"MSL": {}}),
    _anomaly("LightTS", {"MSL": {}}),
    _anomaly("MICN", {"MSL": {}}),
    _anomaly("Pyraformer", {"MSL": {}}),
    _anomaly("Reformer", {"MSL": {}}),
    _anomaly("Transformer", {"MSL": {}, "PSM": {"train_epochs": 3}, "SMAP": {"train_epochs": 3},
                             "SMD": {"anomaly_ratio": 0.5}, "SWAT": _SWAT}),
)

# Classification blocks pass no --seq_len/--enc_in of their own (the experiment reads them from the files);
# the few that do keep them in place.
_CLASSIFICATION: Flags = {
    "task_name": "classification", "is_training": 1, "root_path": "{root_path}", "model_id": "{id}",
    "model": "{model}", "data": "UEA", "e_layers": 3, "d_layers": DEFAULT, "batch_size": 16, "d_model": 128,
    "d_ff": 256, "top_k": 3, "num_kernels": DEFAULT, "des": "Exp", "itr": 1, "learning_rate": 0.001,
    "train_epochs": 100, "seq_len": DEFAULT, "pred_len": DEFAULT, "c_out": DEFAULT, "patience": 10,
    "enc_in": DEFAULT,
}


def _classification(model: str, every: Flags | None = None, per_dataset: dict[str, Flags] | None = None,
                    **kw) -> TaskRecipe:
    flags = {**_CLASSIFICATION, **(every or {})}
    return TaskRecipe(model, flags, {d: (per_dataset or {}).get(d, {}) for d in UEA_SCRIPT_SETS}, **kw)


def _timesnet_uea(e_layers: int, d_model: int, d_ff: int, top_k: int = 3, **extra) -> Flags:
    return {"e_layers": e_layers, "d_model": d_model, "d_ff": d_ff, "top_k": top_k, **extra}


CLASSIFICATION = (
    _classification("TimesNet", {"train_epochs": 30}, {
        "EthanolConcentration": _timesnet_uea(2, 16, 32),
        "FaceDetection": _timesnet_uea(2, 64, 256, num_kernels=4),
        "Handwriting": _timesnet_uea(2, 32, 64),
        "Heartbeat": _timesnet_uea(3, 16, 32, 1),
        "JapaneseVowels": _timesnet_uea(2, 16, 32, train_epochs=60),
        "PEMS-SF": _timesnet_uea(6, 64, 64),
        "SelfRegulationSCP1": _timesnet_uea(3, 16, 32),
        "SelfRegulationSCP2": _timesnet_uea(3, 32, 32),
        "SpokenArabicDigits": _timesnet_uea(2, 32, 32, 2),
        "UWaveGestureLibrary": _timesnet_uea(2, 32, 64),
    }),
    _classification("DLinear"),
    # TSLib's iTransformer.sh passes --enc_in 3 everywhere (the experiment sets it from the files).
    _classification("iTransformer", {"enc_in": 3}, {"EthanolConcentration": {"d_model": 2048}}),
    _classification("PatchTST"),
    _classification("Autoformer"),
    _classification("Crossformer"),
    _classification("ETSformer", {"d_layers": 3}),
    _classification("FEDformer"),
    # seq_len/pred_len 1751 on EthanolConcentration as TSLib's (the experiment sets seq_len from the files).
    _classification("FiLM", per_dataset={"EthanolConcentration": {"seq_len": 1751, "pred_len": 1751}}),
    _classification("Informer"),
    _classification("LightTS"),
    _classification("MICN", per_dataset={"EthanolConcentration": {"c_out": 3}}),
    _classification("Pyraformer", {"batch_size": 4}),
    _classification("Reformer"),
    _classification("Transformer"),
)

# TSLib's scripts/classification/MambaSL.sh, per UEA set: (d_model, d_ff = the SSM state size, tv_dt, tv_B, tv_C,
# num_kernels); batch 16 but on EigenWorms (4).
_MAMBASL_SETTINGS = {
    "ArticularyWordRecognition": (128, 8, 0, 0, 1, 3), "AtrialFibrillation": (32, 16, 1, 0, 0, 13),
    "BasicMotions": (32, 1, 0, 0, 0, 3), "CharacterTrajectories": (128, 1, 1, 0, 0, 4), "Cricket": (32, 4, 0, 1, 0, 24),
    "DuckDuckGeese": (1024, 2, 0, 0, 1, 6), "EigenWorms": (32, 1, 1, 1, 0, 360), "Epilepsy": (32, 1, 1, 1, 0, 5),
    "ERing": (128, 8, 1, 0, 1, 3), "EthanolConcentration": (512, 4, 0, 0, 0, 36), "FaceDetection": (256, 16, 1, 0, 1, 3),
    "FingerMovements": (32, 1, 0, 1, 1, 3), "HandMovementDirection": (256, 16, 1, 0, 1, 8),
    "Handwriting": (1024, 4, 1, 0, 1, 4), "Heartbeat": (64, 16, 0, 0, 0, 9), "InsectWingbeat": (1024, 8, 0, 0, 0, 3),
    "JapaneseVowels": (128, 8, 1, 1, 0, 3), "Libras": (1024, 4, 1, 1, 1, 3), "LSST": (1024, 4, 1, 1, 1, 3),
    "MotorImagery": (32, 8, 0, 0, 0, 60), "NATOPS": (512, 2, 0, 1, 0, 3), "PEMS-SF": (512, 1, 1, 1, 0, 3),
    "PenDigits": (64, 1, 0, 1, 1, 3), "PhonemeSpectra": (256, 4, 1, 1, 0, 5), "RacketSports": (1024, 4, 1, 0, 1, 3),
    "SelfRegulationSCP1": (256, 16, 1, 0, 1, 18), "SelfRegulationSCP2": (256, 16, 1, 1, 1, 24),
    "SpokenArabicDigits": (1024, 8, 0, 1, 0, 3), "StandWalkJump": (32, 1, 1, 0, 0, 50),
    "UWaveGestureLibrary": (1024, 2, 0, 0, 1, 7),
}
_MAMBASL_PER_SET = ("d_model", "d_ff", "tv_dt", "tv_B", "tv_C", "num_kernels")
# MambaSL.sh's flags in its order, less --use_gpu --gpu_type cuda --gpu 0 (CUDA_VISIBLE_DEVICES chooses the GPU,
# and this block also runs on the CPU) and --checkpoints ./checkpoints_best/MambaSL (the authors' downloaded weights).
_MAMBASL: Flags = {
    "task_name": "classification", "data": "UEA", "root_path": "{root_path}", "model": "{model}", "model_id": "{id}",
    **dict.fromkeys(_MAMBASL_PER_SET[:2], PER_DATASET), "expand": 1, "d_conv": 4,
    **dict.fromkeys(_MAMBASL_PER_SET[2:5], PER_DATASET), "use_D": 0, "num_kernels": PER_DATASET, "is_training": 1,
    "pred_len": 0, "label_len": 0, "batch_size": 16, "des": "gating4proposed", "itr": 1, "dropout": 0.1,
    "learning_rate": 0.001, "train_epochs": 100, "patience": 10,
}
MAMBASL = TaskRecipe(
    "MambaSingleLayer", _MAMBASL,
    {name: {**dict(zip(_MAMBASL_PER_SET, _MAMBASL_SETTINGS[name], strict=True)),
            **({"batch_size": 4} if name == "EigenWorms" else {})} for name in MAMBASL_SETS},
    comments=(
        "TSLib's scripts/classification/MambaSL.sh tests the authors' trained checkpoints (--is_training 0",
        "--checkpoints ./checkpoints_best/MambaSL, downloaded by hand); these blocks train with its flags instead",
        "(--is_training 1: up to 100 epochs, patience 10). Its --use_gpu --gpu_type cuda --gpu 0 are left out.",
    ), file="MambaSL.sh", tslib_file=True)

_SHORT: Flags = {
    "task_name": "short_term_forecast", "is_training": 1, "root_path": "{root_path}",
    "seasonal_patterns": "{pattern}", "model_id": "{id}", "model": "{model}", "data": "m4", "features": "M",
    "e_layers": 2, "d_layers": 1, "factor": 3, "enc_in": 1, "dec_in": 1, "c_out": 1, "batch_size": 16,
    "d_model": 512, "d_ff": DEFAULT, "top_k": DEFAULT, "des": "Exp", "itr": 1, "learning_rate": 0.001,
    "train_epochs": DEFAULT, "patience": DEFAULT, "loss": "SMAPE",
}
# TimesNet's M4 widths (d_model, d_ff) per pattern, shared by TSLib's MICN, Crossformer and FiLM scripts.
_M4_WIDTHS = {"Monthly": (32, 32), "Yearly": (16, 32), "Quarterly": (64, 64), "Daily": (16, 16),
              "Weekly": (32, 32), "Hourly": (32, 32)}


def _short(model: str, every: Flags | None = None, per_dataset: dict[str, Flags] | None = None,
           order: tuple[str, ...] = M4_PATTERNS, flags: Flags | None = None, **kw) -> TaskRecipe:
    return TaskRecipe(model, {**(flags or _SHORT), **(every or {})},
                      {p: (per_dataset or {}).get(p, {}) for p in order}, **kw)


def _m4_widths(model: str) -> TaskRecipe:
    return _short(model, {"top_k": 5}, {p: {"d_model": m, "d_ff": f} for p, (m, f) in _M4_WIDTHS.items()},
                  M4_DAILY_FIRST)


SHORT_TERM = (
    _m4_widths("TimesNet"),
    _short("DLinear"),
    _short("iTransformer"),
    _short("Autoformer"),
    _m4_widths("Crossformer"),
    # TSLib's Monthly ETSformer block reads ../dataset/m4 (a typo); ours read ./dataset/m4 as its others.
    _short("ETSformer", {"d_layers": 2}, notes={"Monthly": "its --root_path ../dataset/m4 is a typo; ours read "
                                                           "./dataset/m4"}),
    _short("FEDformer"),
    _m4_widths("FiLM"),
    _short("Informer"),
    _short("LightTS"),
    _m4_widths("MICN"),
    # TSLib's Mamba_M4.sh passes no --d_layers, --factor or --dec_in, and Mamba's --expand/--d_conv in the middle.
    _short("Mamba", flags={
        **{k: v for k, v in _SHORT.items() if k in ("task_name", "is_training", "root_path", "seasonal_patterns",
                                                    "model_id", "model", "data", "features")},
        "e_layers": 2, "enc_in": 1, "expand": 2, "d_ff": 16, "d_conv": 4, "c_out": 1, "batch_size": 16,
        "d_model": 128, "des": "Exp", "itr": 1, "learning_rate": 0.001, "loss": "SMAPE"}),
    _short("Nonstationary_Transformer", flags={**_SHORT, "p_hidden_dims": (256, 256), "p_hidden_layers": 2}),
    _short("Pyraformer"),
    _short("Reformer"),
    # TSLib's TSMixer_M4.sh runs --model MTSMixer, a model TSLib does not have; ours run TSMixer.
    _short("TSMixer", {"d_model": 16}, notes={p: "TSLib's block says --model MTSMixer (absent from TSLib); ours "
                                                 "run TSMixer" for p in M4_PATTERNS}),
    _short("TimeMixer", {"e_layers": 4, "batch_size": 128, "d_model": 32, "learning_rate": 0.01,
                         "train_epochs": 50, "patience": 20, "down_sampling_layers": 1,
                         "down_sampling_method": "avg", "down_sampling_window": 2},
           {p: {"d_ff": f} for p, f in zip(M4_DAILY_FIRST, (32, 32, 64, 16, 32, 32), strict=True)},
           M4_DAILY_FIRST,
           flags={k: v for k, v in _SHORT.items() if k != "loss"} | {"down_sampling_layers": DEFAULT,
                                                                      "down_sampling_method": DEFAULT,
                                                                      "down_sampling_window": DEFAULT,
                                                                      "loss": "SMAPE"}),
    _short("Transformer"),
)


#: CAPS's own architecture on every task (the long-term recipe's: official width rule, 4 heads, 3 layers, no
#: dropout); the flags of the task's iTransformer block that CAPS does not read are left out.
CAPS_TASK_ARCHITECTURE: Flags = {name: CAPS.flags[name] for name in ("d_model", "n_heads", "e_layers", "dropout")}
NOT_READ_BY_CAPS = ("d_layers", "d_ff", "factor", "top_k", "num_kernels")


def _caps(task: str, base: TaskRecipe, datasets: tuple[str, ...], file: str) -> TaskRecipe:
    """CAPS under the task's TSLib loop: the flags of the task's iTransformer blocks (data, batch, learning
    rate, epochs; iTransformer's values on a dataset TSLib runs it on, else those of its first dataset) with
    CAPS's own architecture (`CAPS_TASK_ARCHITECTURE`) in place of iTransformer's widths."""
    first = next(iter(base.per_dataset))
    fetch = any(TASK_DATASETS[task][d].fetch for d in datasets)
    replaced = {**CAPS_TASK_ARCHITECTURE, **{name: DEFAULT for name in NOT_READ_BY_CAPS}}
    flags = {**base.flags, **{k: v for k, v in replaced.items() if k in base.flags}}
    flags = {**flags, **{k: v for k, v in CAPS_TASK_ARCHITECTURE.items() if k not in flags}, "caps_direction": "auto"}

    def own(values: Flags) -> Flags:
        return {k: v for k, v in values.items() if k not in replaced}

    return TaskRecipe("CAPS", flags, {d: own(base.per_dataset.get(d, base.per_dataset[first])) for d in datasets},
                      comments=(
        f"TSLib's {task} loop as its iTransformer blocks set it (data, batch, learning rate, epochs; its {first} "
        "values on datasets TSLib runs no iTransformer on),",
        "with CAPS's own architecture as in its long-term recipe (--d_model 0: the official width rule, 4 heads, "
        "3 layers, no dropout)",
        "and --caps_direction auto: bidirectional blocks on the window tasks, causal on forecasting "
        "(layers/CAPS_Attention.md).",
    ), file=file, fetch=fetch)


def _table(recipes: tuple[TaskRecipe, ...]) -> dict[str, TaskRecipe]:
    return {r.model: r for r in recipes}


#: task -> model -> its recipe, CAPS last
TASK_TABLES = {"imputation": _table(IMPUTATION), "anomaly_detection": _table(ANOMALY),
               "classification": _table((*CLASSIFICATION, MAMBASL)), "short_term_forecast": _table(SHORT_TERM)}
# CAPS runs every dataset of TSLib's per-model scripts (not the stand-in sets, not MambaSL.sh's 20 others).
for _task, _file in (("imputation", "CAPS.sh"), ("anomaly_detection", "CAPS.sh"), ("classification", "CAPS.sh"),
                     ("short_term_forecast", "CAPS_M4.sh")):
    TASK_TABLES[_task]["CAPS"] = _caps(_task, TASK_TABLES[_task]["iTransformer"],
                                       tuple(n for n, d in TASK_DATASETS[_task].items() if not d.stands_in
                                             and not d.only), _file)
