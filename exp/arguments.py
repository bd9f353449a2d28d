"""The `run.py` command line: TSLib's long-term forecasting flags plus our documented extras.

Every TSLib flag keeps its name, type and default (see docs/tslib_differences.md for the few
behaviours we fixed). `validate_args` rejects unknown choices up front with the valid list.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from data_provider.protocol import PROTOCOLS, RUN_DEFAULT, setting_tag
from exp.model_registry import MODEL_REGISTRY
from exp.tasks import TASK_NAMES
from exp.trackers.options import TRACKERS, LoggerNames, check_logger_flags
from exp.train_options import (
    COMPILE_MODES,
    CPU_DENORMAL_MODES,
    TRAIN_LOOP_HELP,
    TRAIN_LOOPS,
    check_train_loop,
)
from layers.caps.model_options import CAPS_MODEL_OPTIONS
from layers.caps.options import CAPS_OPTIONS
from layers.config_checks import (
    EMBED_TYPES,
    OLINEAR_EMBED_SIZE,
    OUTPUT_LAYOUTS,
    PROB_EVAL_SAMPLING,
    check_label_len,
)
from utils.cli_parser import OneLineArgumentParser, did_you_mean
from utils.errors import UserInputError
from utils.flag_defaults import flag_default
from utils.host_memory import HOST_MALLOC_CHOICES
from utils.path_names import check_path_component, path_component_problem

FEATURES = ("M", "S", "MS")
LRADJ_CHOICES = ("type1", "type2", "type3", "cosine", "constant", "onecycle")
OPTIMIZERS = ("adam", "adamw")
AMP_DTYPES = ("fp16", "bf16")

# TSLib's flag order (its --help); utils/augmentation.py applies them in its own fixed order.
AUGMENTATIONS = ("jitter", "scaling", "permutation", "randompermutation", "magwarp", "timewarp", "windowslice",
                 "windowwarp", "rotation", "spawner", "dtwwarp", "shapedtwwarp", "wdba", "discdtw", "discsdtw")

# TSLib seeds random/numpy/torch with this value at start-up; our default keeps it.
TSLIB_DEFAULT_SEED = 2021
RNG_STREAMS = ("tslib", "epoch")
#: validation-loss averages: over every element (ours) or TSLib's unweighted mean of per-batch losses
VALI_LOSSES = ("samples", "batches")
VALI_LOSS_TASKS = ("long_term_forecast", "imputation")


def _add_basic_config_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "basic config" flags."""
    g = p.add_argument_group("basic config")
    g.add_argument("--task_name", type=str, required=True, help="task: " + ", ".join(TASK_NAMES))
    g.add_argument("--is_training", type=int, required=True, help="1: train then test; 0: test a saved checkpoint")
    g.add_argument("--model_id", type=str, required=True, help="free-form run tag used in the setting string")
    g.add_argument("--model", type=str, required=True,
                   help="model name (a file in models/): " + ", ".join(MODEL_REGISTRY))


def _add_data_loader_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "data loader" flags."""
    g = p.add_argument_group("data loader")
    g.add_argument("--data", type=str, required=True, help="dataset type (ETTh1, ETTh2, ETTm1, ETTm2, custom, Solar, PEMS, m4, "
                                                                    "anomaly_csv, ...; the README's Datasets)")
    g.add_argument("--root_path", type=str, default="./data/ETT/", help="root folder of the data file")
    g.add_argument("--data_path", type=str, default="ETTh1.csv", help="data file name inside --root_path")
    g.add_argument("--features", type=str, default="M", help="M: multivariate->multivariate, S: univariate, MS: multivariate->target")
    g.add_argument("--target", type=str, default="OT", help="target column for S or MS")
    g.add_argument("--freq", type=str, default="h", help="time-feature frequency: s, t/min, h, d, b, w, m, or e.g. 15min, 10min")
    g.add_argument("--checkpoints", type=str, default="./checkpoints/", help="where checkpoints are written and read")
    g.add_argument("--fillna", type=str, default="none", choices=("none", "ffill", "interpolate"),
                   help="policy for NaN values in the data file; 'none' rejects files that contain NaN")


def _add_forecasting_task_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "forecasting task" flags."""
    g = p.add_argument_group("forecasting task")
    g.add_argument("--seq_len", type=int, default=96, help="input sequence length")
    g.add_argument("--label_len", type=int, default=48, help="decoder start-token length")
    g.add_argument("--pred_len", type=int, default=96, help="prediction horizon")
    g.add_argument("--seasonal_patterns", type=str, default="Monthly", help="M4 group for --task_name short_term_forecast: Yearly, Quarterly, Monthly, Weekly, Daily, Hourly")
    g.add_argument("--inverse", action="store_true", default=False, help="de-standardise outputs before computing metrics")
    g.add_argument("--seasonality", type=int, default=None,
                   help="--data short_term_csv | tsf: the seasonal period m of the series (MASE's lag, Naive2's period: "
                        "12 monthly, 4 quarterly, 1 yearly); their horizon is --pred_len")


def _add_imputation_task_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "imputation task" flags."""
    g = p.add_argument_group("imputation task")
    g.add_argument("--mask_rate", type=float, default=0.25, help="imputation mask ratio")


def _add_anomaly_detection_task_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "anomaly detection task" flags."""
    g = p.add_argument_group("anomaly detection task")
    g.add_argument("--anomaly_ratio", type=float, default=0.25, help="anomaly ratio in percent")
    g.add_argument("--anomaly_train_ratio", type=float, default=None,
                   help="--data anomaly_csv: the share of the file's rows (the first ones) that trains; the rest is "
                        "the test series (default 0.5; the registered Yahoo and MITDB have fixed splits)")


def _add_model_define_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "model define" flags, shared by many models (plus how Informer and FEDformer lay out attention)."""
    g = p.add_argument_group("model define")
    g.add_argument("--expand", type=int, default=2, help="Mamba expansion factor")
    g.add_argument("--d_conv", type=int, default=4, help="Mamba conv kernel size")
    g.add_argument("--top_k", type=int, default=5, help="TimesNet: number of periods")
    g.add_argument("--num_kernels", type=int, default=6, help="Inception block kernels")
    g.add_argument("--enc_in", type=int, default=7, help="encoder input size (number of variates)")
    g.add_argument("--dec_in", type=int, default=7, help="decoder input size")
    g.add_argument("--c_out", type=int, default=7, help="output size")
    g.add_argument("--d_model", type=int, default=512, help="model width (CAPS: 0 = width rule)")
    g.add_argument("--n_heads", type=int, default=8, help="number of attention heads")
    g.add_argument("--e_layers", type=int, default=2, help="number of encoder layers")
    g.add_argument("--d_layers", type=int, default=1, help="number of decoder layers")
    g.add_argument("--d_ff", type=int, default=2048, help="feed-forward width")
    g.add_argument("--moving_avg", type=int, default=25, help="moving-average window for decomposition")
    g.add_argument("--factor", type=int, default=1, help="attention factor")
    g.add_argument("--distil", action="store_false", default=True, help="pass to disable distilling in the encoder")
    g.add_argument("--dropout", type=float, default=0.1, help="dropout")
    g.add_argument("--embed", type=str, default="timeF", help="time-feature encoding: timeF, fixed, learned")
    g.add_argument("--activation", type=str, default="gelu", help="activation")
    g.add_argument("--channel_independence", type=int, default=1, help="0: channel dependence, 1: channel independence")
    g.add_argument("--decomp_method", type=str, default="moving_avg", help="series decomposition: moving_avg or dft_decomp")
    g.add_argument("--use_norm", type=int, default=1, help="whether to use instance normalisation")
    g.add_argument("--down_sampling_layers", type=int, default=0, help="number of down-sampling layers")
    g.add_argument("--down_sampling_window", type=int, default=1, help="down-sampling window size")
    g.add_argument("--down_sampling_method", type=str, default=None, help="down-sampling method: avg, max, conv")
    g.add_argument("--seg_len", type=int, default=96, help="SegRNN segment length")
    g.add_argument("--attn_output_layout", choices=OUTPUT_LAYOUTS, default=OUTPUT_LAYOUTS[0],
                   help="Informer, FEDformer: how the attention's head-major output is flattened; per_step: each "
                        "step keeps its own heads (the papers), tslib: TSLib's view of the buffer, which "
                        "interleaves steps and heads (layers/HeadLayout.py)")
    g.add_argument("--prob_eval_sampling", choices=PROB_EVAL_SAMPLING, default=PROB_EVAL_SAMPLING[0],
                   help="Informer: keys ProbSparse attention samples in evaluation; fixed: a generator seeded "
                        "with 0 (reproducible metrics), global: torch's global RNG as in training and TSLib "
                        "(TSLib's random stream; two evaluations of one checkpoint differ)")


def _add_model_specific_flags(p: argparse.ArgumentParser) -> None:
    """One group per model family that reads its own flags (TSLib's "de-stationary projector params", "TimeXer",
    "GCN", "TimeFilter", plus MambaSL's, WPMixer's and DLinear's)."""
    g = p.add_argument_group("de-stationary projector params")
    g.add_argument("--p_hidden_dims", type=int, nargs="+", default=[128, 128], help="projector hidden dims")
    g.add_argument("--p_hidden_layers", type=int, default=2, help="projector hidden layers")
    g = p.add_argument_group("TimeXer")
    g.add_argument("--patch_len", type=int, default=16, help="patch length (TimeXer only, as in TSLib)")
    g = p.add_argument_group("GCN (MSGNet)")
    g.add_argument("--node_dim", type=int, default=10, help="MSGNet node dim")
    g.add_argument("--gcn_depth", type=int, default=2, help="MSGNet gcn depth")
    g.add_argument("--gcn_dropout", type=float, default=0.3, help="MSGNet gcn dropout")
    g.add_argument("--propalpha", type=float, default=0.3, help="MSGNet prop alpha")
    g.add_argument("--conv_channel", type=int, default=32, help="MSGNet conv channel")
    g.add_argument("--skip_channel", type=int, default=32, help="MSGNet skip channel")
    g = p.add_argument_group("TimeFilter")
    g.add_argument("--alpha", type=float, default=0.1, help="TimeFilter alpha")
    g.add_argument("--top_p", type=float, default=0.5, help="TimeFilter top_p")
    g.add_argument("--pos", type=int, choices=[0, 1], default=1, help="TimeFilter positional embedding")
    g = p.add_argument_group("MambaSL")
    g.add_argument("--tv_dt", type=int, default=0, help="MambaSL time-varying dt")
    g.add_argument("--tv_B", type=int, default=0, help="MambaSL time-varying B")
    g.add_argument("--tv_C", type=int, default=0, help="MambaSL time-varying C")
    g.add_argument("--use_D", type=int, default=0, help="MambaSL skip term")
    g = p.add_argument_group("WPMixer")
    g.add_argument("--wavelet", type=str, default="db2", help="WPMixer: PyWavelets discrete wavelet (TSLib: edit in WPMixer.py)")
    g.add_argument("--level", type=int, default=1, help="WPMixer: wavelet decomposition levels")
    g.add_argument("--tfactor", type=int, default=5, help="WPMixer: token-mixing MLP expansion factor")
    g.add_argument("--dfactor", type=int, default=5, help="WPMixer: embedding-mixing MLP expansion factor")
    g.add_argument("--stride", type=int, default=8, help="WPMixer: patch stride")
    g = p.add_argument_group("DLinear")
    g.add_argument("--individual", action="store_true", default=False, help="DLinear: one linear layer per variate")


def _add_caps_flags(p: argparse.ArgumentParser) -> None:
    """The "CAPS" flags."""
    g = p.add_argument_group("CAPS")
    # Choices, defaults and help live beside the code: the attention's in layers/caps/options.py, the model's
    # in models/CAPS.py.
    for name, option in {**CAPS_OPTIONS, **CAPS_MODEL_OPTIONS}.items():
        g.add_argument(f"--{name}", type=type(option.default), default=option.default, choices=option.choices,
                       help=option.help)

def _add_olinear_flags(p: argparse.ArgumentParser) -> None:
    """The "OLinear" flags."""
    g = p.add_argument_group("OLinear")
    g.add_argument("--embed_size", type=int, default=OLINEAR_EMBED_SIZE,
                   help="OLinear: width of the dimension extension (the paper's ETTh1 setting)")


def _add_optimization_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "optimization" flags, plus our optimiser, clipping, accumulation and validation options."""
    g = p.add_argument_group("optimization")
    g.add_argument("--num_workers", type=int, default=10, help="data loader workers")
    g.add_argument("--itr", type=int, default=1, help="number of repeated runs")
    g.add_argument("--train_epochs", type=int, default=10, help="training epochs")
    g.add_argument("--batch_size", type=int, default=32, help="batch size")
    g.add_argument("--patience", type=int, default=3, help="early-stopping patience")
    g.add_argument("--learning_rate", type=float, default=0.0001, help="learning rate")
    g.add_argument("--des", type=str, default="test", help="experiment description (in the setting string)")
    g.add_argument("--loss", type=str, default="MSE", help="short_term_forecast loss: MSE, MAPE, MASE, SMAPE (long-term forecasting always uses MSE)")
    g.add_argument("--lradj", type=str, default="type1", help="learning-rate schedule: " + ", ".join(LRADJ_CHOICES))
    g.add_argument("--pct_start", type=float, default=0.3, help="onecycle: fraction of steps spent warming up")
    g.add_argument("--use_amp", action="store_true", default=False, help="automatic mixed precision")
    g.add_argument("--amp_dtype", type=str, default="fp16", choices=AMP_DTYPES, help="AMP dtype (bf16 needs no loss scaling)")
    g.add_argument("--optimizer", type=str, default="adam", choices=OPTIMIZERS, help="optimiser")
    g.add_argument("--weight_decay", type=float, default=0.0, help="weight decay (decoupled for adamw)")
    g.add_argument("--max_grad_norm", type=float, default=0.0, help="clip the gradient norm (after AMP unscaling); 0 disables")
    g.add_argument("--grad_accum", type=int, default=1, help="gradient accumulation steps (loss divided by k; a final partial group still steps)")
    # No argparse choices: validate_args rejects an unknown loop in one line, like --lradj.
    g.add_argument("--vali_loss", type=str, default="samples", choices=VALI_LOSSES,
                   help="the early-stopping signal (long_term_forecast, imputation): samples = mean over every "
                        "validation element (batch-size independent); batches = TSLib's unweighted mean of "
                        "per-batch losses (the short last batch counts fully), to reproduce TSLib's epoch choice")
    g.add_argument("--train_loop", type=str, default="ours", metavar="{" + ",".join(TRAIN_LOOPS) + "}",
                   help=TRAIN_LOOP_HELP)
    g.add_argument("--vali_only", action="store_true", default=False,
                   help="long_term_forecast, for tuning: train and validate only; the test windows are never "
                        "evaluated (epoch lines say 'Test Loss: skipped') and no test result is recorded")


def _add_gpu_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "GPU" flags."""
    g = p.add_argument_group("GPU")
    g.add_argument("--use_gpu", action="store_true", default=True, help="use a GPU when one is available")
    g.add_argument("--no_use_gpu", action="store_false", dest="use_gpu", help="force CPU")
    g.add_argument("--gpu", type=int, default=0, help="gpu index")
    g.add_argument("--gpu_type", type=str, default="cuda", help="cuda or mps")
    g.add_argument("--use_multi_gpu", action="store_true", default=False, help="use several GPUs (DataParallel)")
    g.add_argument("--devices", type=str, default="0,1,2,3", help="device ids of the GPUs")


def _add_metrics_and_augmentation_flags(p: argparse.ArgumentParser) -> None:
    """TSLib's "metrics (dtw)" and "augmentation" flags (TSLib's --seed lives among the latter)."""
    g = p.add_argument_group("metrics (dtw)")
    g.add_argument("--use_dtw", action="store_true", default=False, help="compute DTW (slow)")
    g = p.add_argument_group("augmentation")
    g.add_argument("--augmentation_ratio", type=int, default=0,
                   help="how many times to augment the train split (0: off); forecasting augments its train "
                        "series once, classification adds this many augmented copies")
    g.add_argument("--seed", type=int, default=TSLIB_DEFAULT_SEED, help="seed for python, numpy and torch; each itr run ii uses seed + ii")
    g.add_argument("--rng_stream", type=str, default="tslib", choices=RNG_STREAMS,
                   help="tslib: the train shuffle and the loaders' seeds are drawn from the global torch RNG where "
                        "TSLib's DataLoaders draw them, so a run with TSLib's seed initialises, shuffles and drops "
                        "out as TSLib does; epoch: the train order is a function of (seed, epoch) and evaluation "
                        "draws nothing (used under torchrun)")
    for name in AUGMENTATIONS:
        g.add_argument(f"--{name}", action="store_true", default=False,
                       help=f"{name} augmentation preset (with --augmentation_ratio > 0; see utils/augmentation.py)")
    g.add_argument("--extra_tag", type=str, default="", help="extra tag")


def _add_protocol_flags(p: argparse.ArgumentParser) -> None:
    """Our "evaluation protocol" flag (data_provider/protocol.py; the comparison runner's default differs)."""
    g = p.add_argument_group("evaluation protocol")
    g.add_argument("--protocol", type=str, default=RUN_DEFAULT, choices=PROTOCOLS,
                   help="tslib: TSLib's evaluation protocol (its numbers); strict: no TEST sample reaches training, "
                        "early stopping or the anomaly threshold (classification validates on a stratified share "
                        "of TRAIN, M4 on each series' held-out last horizon; docs/tasks.md)")


def _add_zero_shot_flags(p: argparse.ArgumentParser) -> None:
    """The "zero-shot" flags (--task_name zero_shot_forecast, models/foundation/)."""
    g = p.add_argument_group("zero-shot")
    g.add_argument("--pretrained_path", type=str, default=None,
                   help="--task_name zero_shot_forecast: the local folder of the foundation model's weights; default: the "
                        "Hugging Face hub cache (read offline), or for Fracast the weights inside its package")
    g.add_argument("--test_every", type=int, default=1,
                   help="--task_name zero_shot_forecast: score every k-th test window only (1: all windows, as trained "
                        "models are scored); a cheaper estimate for a model too slow for the whole split, tagged "
                        "_every<k> in the setting and recorded")


def _add_speed_flags(p: argparse.ArgumentParser) -> None:
    """The "speed and memory" flags."""
    g = p.add_argument_group("speed and memory")
    g.add_argument("--compile", action="store_true", default=False, help="torch.compile the model")
    g.add_argument("--compile_mode", type=str, default=None, choices=COMPILE_MODES,
                   help="with --compile: torch.compile's mode (default: torch's default); reduce-overhead replays "
                        "the compiled step as CUDA graphs (launch-bound GPU steps), max-autotune also tunes kernels")
    g.add_argument("--host_malloc", type=str, default="retain", choices=HOST_MALLOC_CHOICES,
                   help="retain: glibc serves blocks below 1 GiB from the heap and never trims it, so freed activations "
                        "are reused instead of paged in again at every step (faster CPU steps; the process keeps its "
                        "peak heap size); system: the C library's default")
    g.add_argument("--cpu_denormals", type=str, default="flush", choices=CPU_DENORMAL_MODES,
                   help="flush: CPU arithmetic reads and writes subnormal floats (below 1.2e-38) as zero, which x86 "
                        "cores otherwise compute tens of times slower (a trained TimesNet's step: 11-17x); "
                        "keep: IEEE gradual underflow, as TSLib. Changes nothing a float32 result can hold")


def _add_long_runs_flags(p: argparse.ArgumentParser) -> None:
    """The "long runs" flags."""
    g = p.add_argument_group("long runs (see README: Long runs and multiple GPUs)")
    g.add_argument("--resume", action="store_true", default=False,
                   help="continue from <checkpoints>/<setting>/last.pth (starts from scratch when there is none)")
    g.add_argument("--save_every_steps", type=int, default=500,
                   help="also write last.pth every N optimiser steps (it is always written at epoch ends and on SIGTERM/SIGINT); 0: epoch ends only")
    g.add_argument("--detect_anomaly", action="store_true", default=False,
                   help="torch.autograd anomaly detection while training (slow; names the op that produced NaN)")
    g.add_argument("--deterministic", action="store_true", default=False,
                   help="deterministic torch algorithms, cuDNN deterministic without benchmarking, CUBLAS_WORKSPACE_CONFIG")


def _add_use_flags(p: argparse.ArgumentParser) -> None:
    """The "use a trained model" flags (predict/, README: Use a trained model)."""
    g = p.add_argument_group("use a trained model (see README: Use a trained model)")
    g.add_argument("--do_predict", action="store_true", default=False,
                   help="after the test, use the checkpoint on --predict_data (default for long_term_forecast: the "
                        "data file itself, forecasting past its end); writes ./results/<setting>/ forecast.csv, "
                        "forecast.png and real_prediction.npy (or the task's output)")
    g.add_argument("--predict_data", type=str, default=None,
                   help="with --do_predict: a file in the training data's format (CSV; .ts for classification)")


def _add_tracking_flags(p: argparse.ArgumentParser) -> None:
    """The "trackers and printout" flags (exp/trackers/)."""
    g = p.add_argument_group("trackers and printout")
    g.add_argument("--logger", nargs="+", action=LoggerNames, default=[], metavar="NAME",
                   help=f"experiment trackers to log to, offline, several allowed ({' '.join(TRACKERS)}; or a comma "
                        "list): per-step train loss and learning rate, per-epoch losses, the configuration, the "
                        "final metrics and the forecast figures")
    g.add_argument("--logger_dir", type=str, default=None,
                   help="with --logger: the trackers' folder (default ./tracking, beside ./results)")
    g.add_argument("--logger_group", type=str, default=None,
                   help="with --logger: the group of runs (MLflow experiment, W&B group, TensorBoard sub-folder); "
                        "default: the task name")
    g.add_argument("--print_all_args", action="store_true", default=False,
                   help="print every argument at the start (TSLib's printout) instead of those that differ from "
                        "the defaults")
    g.add_argument("--no_progress", action="store_true", default=False, help="hide the per-epoch progress bar")



#: The flag groups that configure a model (rather than data, training or the machine): a flag they add and a model
#: never reads, set away from its default, is named in one warning line (exp/model_flags.py). A new group of
#: model flags goes here, and the warning covers it by construction.
MODEL_FLAG_GROUPS = (_add_model_define_flags, _add_model_specific_flags, _add_caps_flags, _add_olinear_flags)


def model_flag_actions() -> list[argparse.Action]:
    """The argparse actions of every model-specific flag (those of MODEL_FLAG_GROUPS)."""
    scratch = argparse.ArgumentParser(add_help=False)
    for add in MODEL_FLAG_GROUPS:
        add(scratch)
    return list(scratch._actions)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser shared by `run.py`, the tests and the comparison runner."""
    p = OneLineArgumentParser(
        prog="run.py",
        description="CAPS-TSLib: TSLib-compatible long-term forecasting (run.py)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    # TSLib's groups in TSLib's order, then ours.
    _add_basic_config_flags(p)
    _add_data_loader_flags(p)
    _add_forecasting_task_flags(p)
    _add_imputation_task_flags(p)
    _add_anomaly_detection_task_flags(p)
    _add_model_define_flags(p)
    _add_optimization_flags(p)
    _add_gpu_flags(p)
    _add_metrics_and_augmentation_flags(p)
    _add_model_specific_flags(p)
    _add_caps_flags(p)
    _add_olinear_flags(p)
    _add_protocol_flags(p)
    _add_zero_shot_flags(p)
    _add_speed_flags(p)
    _add_long_runs_flags(p)
    _add_use_flags(p)
    _add_tracking_flags(p)
    # Not a command-line flag: the training split that Koopa/OLinear read when built
    # (utils/train_split.py); the experiment attaches it to a copy of the args.
    p.set_defaults(train_split=None)
    return p


def differing_from_defaults(args: argparse.Namespace) -> dict:
    """The arguments whose values differ from run.py's defaults (required flags always), sorted by name."""
    parser = build_parser()
    required = {action.dest for action in parser._actions if action.required}
    return {key: value for key, value in sorted(vars(args).items())
            if key in required or value != parser.get_default(key)}


def make_setting(args: argparse.Namespace, ii: int) -> str:
    """TSLib's setting string, character for character; a strict run of a task whose results the protocol
    changes ends in `_strict` (data_provider/protocol.py), so it never reuses a tslib run's folders.
    MambaSingleLayer's classification runs take TSLib's own pattern for them (`_CLS_`, state size, kernel and
    switches), so the authors' checkpoints are found under `--checkpoints` as TSLib finds them."""
    if args.model == "MambaSingleLayer" and args.task_name == "classification":
        return (
            f"{args.task_name}_CLS_{args.model_id}_{args.model}_{args.data}_ft{args.features}_sl{args.seq_len}"
            f"_ll{args.label_len}_pl{args.pred_len}_dm{args.d_model}_ds{args.d_ff}_expand{args.expand}"
            f"_dc{args.d_conv}_nk{args.num_kernels}_tvdt{args.tv_dt}_tvB{args.tv_B}_tvC{args.tv_C}"
            f"_useD{args.use_D}_{args.des}_{ii}{setting_tag(args)}"
        )
    return (
        f"{args.task_name}_{args.model_id}_{args.model}_{args.data}_ft{args.features}_sl{args.seq_len}"
        f"_ll{args.label_len}_pl{args.pred_len}_dm{args.d_model}_nh{args.n_heads}_el{args.e_layers}"
        f"_dl{args.d_layers}_df{args.d_ff}_expand{args.expand}_dc{args.d_conv}_fc{args.factor}"
        f"_eb{args.embed}_dt{args.distil}_{args.des}_{ii}{setting_tag(args)}{every_tag(args)}"
    )


def every_tag(args: argparse.Namespace) -> str:
    """`_every<k>` for a zero-shot run scored on every k-th test window only (--test_every k > 1), else ''."""
    every = getattr(args, "test_every", flag_default("test_every"))
    return f"_every{every}" if every > 1 else ""


def _choice_error(flag: str, value: object, choices) -> UserInputError:
    return UserInputError(f"--{flag} {value!r} is not supported; valid choices: {', '.join(map(str, choices))}"
                          f"{did_you_mean(str(value), choices)}")


#: numpy seeds must lie in [0, 2**32): run ii uses --seed + ii.
SEED_LIMIT = 2**32


def check_numbers(args: argparse.Namespace) -> None:
    """Every float flag finite (`--learning_rate nan` would pass `<= 0` checks and fail later; `--max_grad_norm
    nan` would turn clipping off), and every seed of the itr loop a valid numpy seed."""
    for action in build_parser()._actions:
        value = getattr(args, action.dest, None)
        if action.type is float and isinstance(value, float) and not math.isfinite(value):
            raise UserInputError(f"{action.option_strings[0]} {value} is not a finite number")
    if not 0 <= args.seed <= SEED_LIMIT - args.itr:
        raise UserInputError(f"--seed {args.seed} must lie in [0, {SEED_LIMIT - args.itr}] (run ii of --itr "
                             f"{args.itr} uses --seed + ii, and numpy seeds stop at 2**32 - 1)")


def check_output_names(args: argparse.Namespace) -> None:
    """--model_id and --des become part of output folders (`<checkpoints>/<setting>/`, `./results/<setting>/`):
    neither may leave them, and the longest setting string must fit a file name."""
    check_path_component("--model_id", args.model_id, "the setting string")
    check_path_component("--des", args.des, "the setting string")
    setting = make_setting(args, args.itr - 1)
    problem = path_component_problem(setting)
    if problem is not None:
        raise UserInputError(f"the setting string {setting[:40]}... cannot name an output folder: {problem}; "
                             "shorten --model_id or --des")


def validate_args(args: argparse.Namespace) -> None:
    """Reject unusable flag values up front (before any file is read or written)."""
    from data_provider.anomaly_csv import check_anomaly_csv_args
    from data_provider.m4 import check_m4_args
    from data_provider.short_term_files import check_short_term_file_args

    check_task_and_model(args)
    check_data_choices(args)
    check_m4_args(args)
    check_short_term_file_args(args)
    check_anomaly_csv_args(args)
    check_training_choices(args)
    check_window_choices(args)
    check_lengths(args)
    check_optimisation_numbers(args)
    check_predict_flags(args)
    check_numbers(args)
    check_output_names(args)
    check_augmentation(args)
    check_logger_flags(args)


def check_data_choices(args: argparse.Namespace) -> None:
    """--data names a registered loader and --embed a known time-feature encoding."""
    from data_provider.data_factory import DATA_DICT

    if args.data not in DATA_DICT:
        raise _choice_error("data", args.data, list(DATA_DICT))
    if args.embed not in EMBED_TYPES:
        raise _choice_error("embed", args.embed, EMBED_TYPES)


def check_training_choices(args: argparse.Namespace) -> None:
    """--lradj, --train_loop, --compile_mode and --vali_loss name something this run can do."""
    if args.lradj not in LRADJ_CHOICES:
        raise _choice_error("lradj", args.lradj, LRADJ_CHOICES)
    try:
        check_train_loop(args)
    except ValueError as err:
        raise UserInputError(str(err)) from None
    if args.compile_mode is not None and not args.compile:
        raise UserInputError(f"--compile_mode {args.compile_mode} sets torch.compile's mode: add --compile, or drop "
                             "--compile_mode")
    if args.vali_loss != "samples" and args.task_name not in VALI_LOSS_TASKS:
        raise UserInputError(f"--vali_loss {args.vali_loss} applies to {' and '.join(VALI_LOSS_TASKS)} only; "
                             f"drop it for --task_name {args.task_name}")


def check_window_choices(args: argparse.Namespace) -> None:
    """--features, --is_training and --freq are known values."""
    from utils.timefeatures import num_time_features

    if args.features not in FEATURES:
        raise _choice_error("features", args.features, FEATURES)
    if args.is_training not in (0, 1):
        raise _choice_error("is_training", args.is_training, (0, 1))
    try:
        num_time_features(args.freq)
    except ValueError as err:
        raise UserInputError(str(err)) from None


def check_lengths(args: argparse.Namespace) -> None:
    """The window lengths and counts are positive where the task reads them, and --label_len (the decoder's start
    tokens, the last label_len input steps) lies in [0, --seq_len] (layers.config_checks.check_label_len)."""
    positive = ("seq_len", "pred_len", "batch_size", "train_epochs", "itr", "grad_accum", "patience")
    if args.task_name == "imputation":
        # Imputation reconstructs the input window; TSLib's scripts pass --pred_len 0 (or 96, unused).
        positive = tuple(name for name in positive if name != "pred_len")
        if args.pred_len < 0:
            raise UserInputError(f"--pred_len must be >= 0, got {args.pred_len}")
        if not 0.0 < args.mask_rate < 1.0:
            raise UserInputError(f"--mask_rate must lie in (0, 1) (the share of points hidden), got {args.mask_rate}")
    for name in positive:
        # Anomaly detection reconstructs the input window and classification sets pred_len to 0 from the data:
        # TSLib's scripts pass --pred_len 0 there (anomaly detection also 100; MambaSL.sh 0).
        if name == "pred_len" and args.task_name in ("anomaly_detection", "classification"):
            continue
        if getattr(args, name) <= 0:
            raise UserInputError(f"--{name} must be a positive integer, got {getattr(args, name)}")
    if args.task_name == "anomaly_detection" and not 0.0 <= args.anomaly_ratio <= 100.0:
        raise UserInputError(f"--anomaly_ratio is a percentage in [0, 100], got {args.anomaly_ratio}")
    # --label_len (decoder start tokens) means nothing to reconstruction (anomaly detection).
    if args.task_name != "anomaly_detection":
        check_label_len(args)


def check_optimisation_numbers(args: argparse.Namespace) -> None:
    """The optimiser's numbers, the checkpoint cadence and the loader workers lie in their ranges; --vali_only
    trains long-term forecasting."""
    if args.learning_rate <= 0:
        raise UserInputError(f"--learning_rate must be positive, got {args.learning_rate}")
    if args.lradj == "onecycle" and not 0.0 <= args.pct_start < 1.0:
        raise UserInputError(f"--pct_start must lie in [0, 1), got {args.pct_start}")
    if args.max_grad_norm < 0 or args.weight_decay < 0:
        raise UserInputError("--max_grad_norm and --weight_decay must be >= 0")
    if args.save_every_steps < 0:
        raise UserInputError(f"--save_every_steps must be >= 0 (0 saves last.pth at epoch ends only), got {args.save_every_steps}")
    if args.num_workers < 0:
        raise UserInputError(f"--num_workers must be >= 0, got {args.num_workers}")
    if args.vali_only and (args.task_name != "long_term_forecast" or not args.is_training):
        raise UserInputError("--vali_only (tuning trials) applies to --task_name long_term_forecast with "
                             "--is_training 1; drop it")


def check_task_and_model(args: argparse.Namespace) -> None:
    """--task_name and --model are known, and the model serves the task (its module's `TASKS`): a task it does
    not serve is refused here, before any data is read, in the line the model itself would raise."""
    from exp.model_registry import FOUNDATION_MODELS, model_tasks, not_included_error
    from layers.config_checks import check_task
    from models.foundation import foundation_class

    if args.task_name not in TASK_NAMES:
        raise _choice_error("task_name", args.task_name, TASK_NAMES)
    if args.test_every < 1:
        raise UserInputError(f"--test_every {args.test_every} must be at least 1 (1 scores every test window)")
    if args.task_name == "zero_shot_forecast":
        foundation_class(args.model)  # one line for a model that is not a wrapped foundation model
        return
    if args.test_every != 1:
        raise UserInputError(f"--test_every {args.test_every} is read by --task_name zero_shot_forecast only; drop it")
    if args.model in FOUNDATION_MODELS:
        raise not_included_error(args.model)
    if args.pretrained_path is not None:
        raise UserInputError(f"--pretrained_path {args.pretrained_path} is read by --task_name zero_shot_forecast only; "
                             "drop it")
    if args.model not in MODEL_REGISTRY:
        raise _choice_error("model", args.model, list(MODEL_REGISTRY))
    check_task(args, args.model, model_tasks(args.model))


def check_predict_flags(args: argparse.Namespace) -> None:
    """--predict_data needs --do_predict; --do_predict needs a tested checkpoint and, outside long-term
    forecasting, a file to use it on."""
    if args.predict_data is not None and not args.do_predict:
        raise UserInputError(f"--predict_data {args.predict_data} is read by --do_predict only; add --do_predict or "
                             "drop --predict_data")
    if not args.do_predict:
        return
    if args.predict_data is not None and not Path(args.predict_data).is_file():
        raise UserInputError(f"--predict_data {args.predict_data} is not a file; pass the CSV (.ts for classification) "
                             "to use the model on")
    if args.vali_only:
        raise UserInputError("--do_predict uses the tested checkpoint, and --vali_only skips the test; drop one")
    if args.predict_data is None and args.task_name != "long_term_forecast":
        raise UserInputError(f"--do_predict with --task_name {args.task_name} needs --predict_data FILE (the new data "
                             "to use the model on)")


def check_augmentation(args: argparse.Namespace) -> None:
    """Reject augmentation flags that would do nothing or cannot apply to --task_name."""
    from utils.augmentation import LABEL_PRESETS

    presets = [name for name in AUGMENTATIONS if getattr(args, name)]
    if args.augmentation_ratio < 0:
        raise UserInputError(f"--augmentation_ratio must be >= 0 (0 turns augmentation off), got {args.augmentation_ratio}")
    if args.augmentation_ratio == 0 and presets:
        raise UserInputError(f"--{presets[0]} does nothing without --augmentation_ratio N (N >= 1); add it or drop the preset")
    if args.augmentation_ratio > 0 and not presets:
        raise UserInputError(f"--augmentation_ratio {args.augmentation_ratio} needs at least one preset "
                             f"(--{' --'.join(AUGMENTATIONS)})")
    labelled = [name for name in presets if name in LABEL_PRESETS]
    if labelled and args.task_name != "classification":
        raise UserInputError(f"--{labelled[0]} needs class labels (--task_name classification); "
                             f"--task_name {args.task_name} has none")
