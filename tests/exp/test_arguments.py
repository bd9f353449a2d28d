from __future__ import annotations

import pytest

from exp.arguments import build_parser, make_setting, validate_args
from layers.caps.model_options import CAPS_MODEL_OPTIONS
from layers.CAPS_Attention import CAPS_OPTIONS
from utils.errors import UserInputError

REQUIRED = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "ETTh1_96_96",
            "--model", "Autoformer", "--data", "ETTh1"]

# (flag, TSLib default) from the contract, section 1.1.
TSLIB_DEFAULTS = [
    ("root_path", "./data/ETT/"), ("data_path", "ETTh1.csv"), ("features", "M"), ("target", "OT"),
    ("freq", "h"), ("checkpoints", "./checkpoints/"), ("seq_len", 96), ("label_len", 48), ("pred_len", 96),
    ("seasonal_patterns", "Monthly"), ("inverse", False), ("mask_rate", 0.25), ("anomaly_ratio", 0.25),
    ("enc_in", 7), ("dec_in", 7), ("c_out", 7), ("d_model", 512), ("n_heads", 8), ("e_layers", 2),
    ("d_layers", 1), ("d_ff", 2048), ("moving_avg", 25), ("factor", 1), ("distil", True), ("dropout", 0.1),
    ("embed", "timeF"), ("activation", "gelu"), ("top_k", 5), ("num_kernels", 6), ("channel_independence", 1),
    ("decomp_method", "moving_avg"), ("use_norm", 1), ("down_sampling_layers", 0), ("down_sampling_window", 1),
    ("down_sampling_method", None), ("seg_len", 96), ("expand", 2), ("d_conv", 4), ("p_hidden_dims", [128, 128]),
    ("p_hidden_layers", 2), ("patch_len", 16), ("individual", False), ("num_workers", 10), ("itr", 1),
    ("train_epochs", 10), ("batch_size", 32), ("patience", 3), ("learning_rate", 1e-4), ("des", "test"),
    ("loss", "MSE"), ("lradj", "type1"), ("use_amp", False), ("use_gpu", True), ("gpu", 0), ("gpu_type", "cuda"),
    ("use_multi_gpu", False), ("devices", "0,1,2,3"), ("use_dtw", False), ("augmentation_ratio", 0),
    ("extra_tag", ""),
]


@pytest.mark.parametrize("flag,default", TSLIB_DEFAULTS, ids=[f for f, _ in TSLIB_DEFAULTS])
def test_flag_defaults_match_tslib(flag, default):
    assert getattr(build_parser().parse_args(REQUIRED), flag) == default


@pytest.mark.parametrize("missing", ["--task_name", "--is_training", "--model_id", "--model", "--data"])
def test_required_flags(missing):
    argv = list(REQUIRED)
    i = argv.index(missing)
    del argv[i : i + 2]
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)


def test_setting_string_is_tslibs():
    args = build_parser().parse_args(REQUIRED + ["--factor", "3", "--des", "Exp"])
    assert make_setting(args, 0) == (
        "long_term_forecast_ETTh1_96_96_Autoformer_ETTh1_ftM_sl96_ll48_pl96_dm512_nh8_el2_dl1_df2048"
        "_expand2_dc4_fc3_ebtimeF_dtTrue_Exp_0")


def test_mambasl_classification_setting_is_tslibs_own_pattern():
    """TSLib's run.py names MambaSingleLayer's classification runs its own way; the string below is the one its
    scripts/classification/MambaSL.out prints for the JapaneseVowels block (seq_len 29 set from the data)."""
    args = build_parser().parse_args([
        "--task_name", "classification", "--data", "UEA", "--model", "MambaSingleLayer", "--model_id",
        "JapaneseVowels", "--d_model", "128", "--d_ff", "8", "--expand", "1", "--d_conv", "4", "--tv_dt", "1",
        "--tv_B", "1", "--tv_C", "0", "--use_D", "0", "--num_kernels", "3", "--is_training", "1", "--pred_len", "0",
        "--label_len", "0", "--des", "gating4proposed"])
    args.seq_len = 29
    assert make_setting(args, 0) == (
        "classification_CLS_JapaneseVowels_MambaSingleLayer_UEA_ftM_sl29_ll0_pl0_dm128_ds8_expand1_dc4_nk3"
        "_tvdt1_tvB1_tvC0_useD0_gating4proposed_0")
    args.protocol = "strict"
    assert make_setting(args, 1).endswith("_gating4proposed_1_strict")
    args.task_name = "long_term_forecast"
    assert make_setting(args, 0).startswith("long_term_forecast_JapaneseVowels_MambaSingleLayer_UEA_ftM_sl29")


def test_distil_flag_disables_and_no_use_gpu_turns_gpu_off():
    args = build_parser().parse_args(REQUIRED + ["--distil", "--no_use_gpu"])
    assert args.distil is False and args.use_gpu is False


@pytest.mark.parametrize(
    "flag,value,message",
    [
        ("model", "NoSuchModel", "--model 'NoSuchModel' is not supported; valid choices: .*DLinear"),
        ("data", "ETTh3", "--data 'ETTh3' is not supported; valid choices: ETTh1"),
        ("task_name", "no_such_task", "--task_name 'no_such_task' is not supported; valid choices: long_term_forecast"),
        ("lradj", "type9", "--lradj 'type9' is not supported; valid choices: type1, type2, type3, cosine"),
        ("features", "X", "--features 'X' is not supported; valid choices: M, S, MS"),
        ("freq", "fortnight", "--freq"),
        ("pred_len", 0, "--pred_len must be a positive integer"),
        ("label_len", 200, r"--label_len must lie in \[0, --seq_len=96\], got 200: .*use --label_len <= --seq_len"),
        ("augmentation_ratio", 2, "--augmentation_ratio 2 needs at least one preset"),
        ("augmentation_ratio", -1, "--augmentation_ratio must be >= 0"),
        ("jitter", True, "--jitter does nothing without --augmentation_ratio"),
        ("compile_mode", "reduce-overhead", "--compile_mode reduce-overhead sets torch.compile's mode: add --compile"),
    ],
    ids=lambda v: str(v),
)
def test_validate_args_rejects_bad_values_listing_choices(make_configs, flag, value, message):
    args = make_configs(**{flag: value})
    with pytest.raises(UserInputError, match=message):
        validate_args(args)


def test_validate_args_accepts_defaults(make_configs):
    validate_args(make_configs())


@pytest.mark.parametrize("task", ["classification", "anomaly_detection"])
def test_window_tasks_accept_tslibs_pred_len_0(make_configs, task):
    """TSLib's MambaSL.sh (classification) and anomaly scripts pass --pred_len 0; forecasting still refuses it."""
    validate_args(make_configs(task_name=task, pred_len=0, label_len=0, data="UEA" if task == "classification"
                               else "PSM"))
    with pytest.raises(UserInputError, match="--pred_len must be a positive integer"):
        validate_args(make_configs(task_name="long_term_forecast", pred_len=0))


def test_validate_args_accepts_augmentation(make_configs):
    validate_args(make_configs(augmentation_ratio=1, jitter=True, timewarp=True))


def test_validate_args_rejects_label_presets_without_labels(make_configs):
    args = make_configs(augmentation_ratio=1, jitter=True, wdba=True)
    with pytest.raises(UserInputError, match=r"^--wdba needs class labels \(--task_name classification\); "
                                             r"--task_name long_term_forecast has none$"):
        validate_args(args)


def test_caps_flags_are_the_options_defined_beside_the_code():
    """The CAPS group's flags take choices, defaults and help from CAPS_OPTIONS (layer) and
    CAPS_MODEL_OPTIONS (model): one home per option."""
    actions = {a.dest: a for a in build_parser()._actions}
    for name, option in {**CAPS_OPTIONS, **CAPS_MODEL_OPTIONS}.items():
        action = actions[name]
        assert (action.default, action.choices, action.help, action.type) == (
            option.default, option.choices, option.help, type(option.default)), name


@pytest.mark.parametrize("name", ["Chronos", "Chronos2", "Moirai", "TimesFM", "TimeMoE", "Sundial", "TiRex", "Fracast"])
def test_foundation_models_in_a_training_task_are_a_one_line_error(make_configs, name):
    from exp.model_registry import MODEL_REGISTRY

    for check in (lambda: validate_args(make_configs(model=name)), lambda: MODEL_REGISTRY[name]):
        with pytest.raises(UserInputError, match=f"--model {name} is a zero-shot foundation model") as err:
            check()
        assert "\n" not in str(err.value) and "--task_name zero_shot_forecast" in str(err.value)


def test_help_lists_every_model():
    from exp.model_registry import MODEL_REGISTRY

    text = " ".join(build_parser().format_help().split())
    assert all(name in text for name in MODEL_REGISTRY)


@pytest.mark.parametrize("model_id", ["m4_Yearly_..", "m4_Yearly_a\\b"])
def test_m4_model_id_rest_cannot_leave_m4_results(make_configs, model_id):
    args = make_configs(task_name="short_term_forecast", data="m4", model_id=model_id, seasonal_patterns="Yearly",
                        enc_in=1, dec_in=1, c_out=1, features="S", loss="SMAPE")
    with pytest.raises(UserInputError, match=r"--model_id .* cannot name an output folder \(it becomes part of "
                                             r"the ./m4_results folder\)"):
        validate_args(args)


def test_the_parser_imports_no_torch_and_no_model():
    """run.py's flags and choice lists come from torch-free option files (`exp/train_options.py`,
    `layers/config_checks.py`, `layers/caps/options.py`, `layers/caps/model_options.py`), not from the models
    (validate_args then reads the data registry, which loads torch)."""
    import subprocess
    import sys

    code = ("import sys\nfrom exp.arguments import build_parser\n"
            "args = build_parser().parse_args(" + repr(REQUIRED + ["--model", "CAPS"]) + ")\n"
            "loaded = sorted(m for m in sys.modules if m == 'torch' or m.startswith(('models.', 'torch.')))\n"
            "print(','.join(loaded))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_every_flag_sits_in_a_named_group():
    """`run.py --help` reads as TSLib's groups plus ours: no flag falls into argparse's untitled "options"."""
    parser = build_parser()
    titled = {action for group in parser._action_groups if group.title not in ("options", "positional arguments")
              for action in group._group_actions}
    loose = [action.option_strings[0] for action in parser._actions if action.dest != "help" and action not in titled]
    assert not loose, f"flags outside a named group: {loose}"
    titles = [group.title for group in parser._action_groups]
    tslib = ["basic config", "data loader", "forecasting task", "imputation task", "anomaly detection task",
             "model define", "optimization", "GPU", "metrics (dtw)", "augmentation", "de-stationary projector params"]
    assert [title for title in titles if title in tslib] == tslib
