"""`python -m compare.explain`: a look inside a trained CAPS model on one test window (issue 19).

    python -m compare.explain --checkpoint checkpoints/<setting>[/checkpoint.pth] --window 0 --channel 2 \\
        --out explain/ [run.py flags]

The run's flags are read from `<setting>/last.pth` (exp/checkpointing.py keeps them there, except the
resume-free ones such as --root_path); run.py flags given here override them, and without a last.pth
they must name the whole run (--task_name ... --model CAPS --data ...).

For every CAPS layer it writes the contribution of each path to the layer's attention output over time,
the Clock Δ_t, and the path weights as t × i heat maps (CAPS paper, Eqs. path1-path3 and the additive
composition), for one decoded channel and for the mean over the decoded channels. Nothing here
re-implements a path:

- the model runs its own forward on the window while forward hooks keep each CAPS layer's input and output;
- `CAPSAttention.attention_inputs` turns the input into the kernel's q, k, v, p, g and Clock through the
  layer's projections (a test pins it to the layer's forward);
- o^(j) is `caps_attention` with `paths=(j,)` and the layer's kernel, impl and chunk; the paths are
  additive, so Σ_j o^(j) is the layer's attention output;
- G (path 1), A (path 2) and the clock average (path 3) are `path_weights`, i.e. `_naive_weights` of the
  naive reference kernel; `scores[t, i] = Σ_e q̂_t k̂_i W[t, i, e]` applied to v gives o^(j) again.

Linear attention with the paper's numerics, forecasting, causal blocks only: the other settings are
refused with a one-line error that says why. Files and figures: layers/CAPS_Attention.md, "Looking
inside: python -m compare.explain".
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from data_provider.data_factory import build_dataset, check_channels
from exp.arguments import build_parser as build_run_parser
from exp.arguments import validate_args
from exp.checkpointing import BEST_FILE, LAST_FILE, load_checkpoint, load_model_state
from exp.train_step import model_inputs
from layers.CAPS_Attention import CAPSAttention, caps_attention, path_weights, rope_rotate
from models.CAPS import Model as CAPSModel
from utils.errors import UserInputError

logger = logging.getLogger(__name__)

# Heat-map file stem and figure title of each path's weights.
WEIGHT_FILES = {1: "riemann_weights", 2: "decay_weights", 3: "clock_weights"}
WEIGHT_TITLES = {
    1: "path 1, Riemann softmax weights G[t, i] = exp(p_i) Δ_i / Σ_{j≤t} exp(p_j) Δ_j (mean over features)",
    2: "path 2, prefix-product decay A[t, i] = exp(−Σ_{i<j≤t} softplus(g_j) Δ_j) (mean over features)",
    3: "path 3, clock average Δ_i / Σ_{j≤t} Δ_j",
}
# The run.py flags without a default: read from last.pth, or given on this command line.
REQUIRED_FLAGS = ("task_name", "model_id", "model", "data")
# Heat maps share one log colour scale from this weight up to 1.
LOG_RANGE = 1e-6
DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass
class LayerLook:
    """One CAPS layer on one window; rows are the decoded channels (B = 1).

    inputs: `attention_inputs` of the layer's input (q, k, v, p, g [Ct, T, H, E], clock [Ct, T, H], rope_freq);
    outputs: path id -> o^(j) [Ct, T, H, Ev]; total: the kernel with the layer's paths [Ct, T, H, Ev];
    layer_output: what the layer's forward returned [Ct, T, D] (its c_proj of `total`)."""

    layer: CAPSAttention
    inputs: dict[str, torch.Tensor | None]
    outputs: dict[int, torch.Tensor]
    total: torch.Tensor
    layer_output: torch.Tensor


def checkpoint_file(path: Path) -> Path:
    """`<setting>/checkpoint.pth` for a setting folder, the file itself otherwise; UserInputError when absent."""
    file = path / BEST_FILE if path.is_dir() else path
    if not file.is_file():
        raise UserInputError(f"checkpoint {file} not found: pass <checkpoints>/<setting>/checkpoint.pth "
                             "or its folder")
    return file


def saved_flags(folder: Path) -> dict:
    """The run.py flags that exp saved in `<folder>/last.pth` ({} without one)."""
    last = folder / LAST_FILE
    if not last.is_file():
        return {}
    state = load_checkpoint(last)
    flags = state.get("args") if isinstance(state, dict) else None
    return flags if isinstance(flags, dict) else {}


def run_arguments(folder: Path, flags: list[str]) -> argparse.Namespace:
    """run.py's namespace for the checkpoint in `folder`: run.py defaults, then the flags saved in
    last.pth, then `flags` (run.py flags given on this command line). is_training is 0 (a test run)."""
    saved = saved_flags(folder)
    missing = [name for name in REQUIRED_FLAGS if name not in saved and f"--{name}" not in flags]
    if missing:
        raise UserInputError(f"{folder} has no {LAST_FILE} with the run's flags: pass the run.py flags of that "
                             f"run (missing --{', --'.join(missing)})")
    head = [item for name in REQUIRED_FLAGS if name in saved for item in (f"--{name}", str(saved[name]))]
    head += ["--is_training", "0"]
    # Later occurrences win in argparse, so flags typed here override the head taken from last.pth.
    args = build_run_parser().parse_args(head + flags)
    # Which flags were typed: parse again with a marker as every default.
    unset = object()
    marker = build_run_parser()
    marker.set_defaults(**dict.fromkeys(vars(args), unset))
    given = {name for name, value in vars(marker.parse_args(head + flags)).items() if value is not unset}
    for name, value in saved.items():
        if hasattr(args, name) and name not in given:
            setattr(args, name, value)
    args.is_training = 0
    validate_args(args)
    return args


def check_explainable(args: argparse.Namespace) -> None:
    """UserInputError, one line, for runs whose attention output does not split into additive paths here."""
    if args.model != "CAPS":
        raise UserInputError(f"--model {args.model}: compare.explain looks inside CAPS checkpoints only")
    if args.task_name != "long_term_forecast":
        raise UserInputError(f"--task_name {args.task_name}: compare.explain reads long_term_forecast test "
                             "windows only")
    if getattr(args, "caps_numerics", "paper") != "paper":
        raise UserInputError("--caps_numerics official: its features carry the official arithmetic (global max, "
                             "+1e-8, clipped cumsum) that the naive path weights do not model; explain a "
                             "--caps_numerics paper run")
    for flag, paper in (("caps_path1_max", "running"), ("caps_path2_decay", "exact"), ("caps_rope_layout", "paper")):
        value = getattr(args, flag, "auto")
        if value not in ("auto", paper):
            raise UserInputError(f"--{flag} {value}: the official arithmetic is not modelled by the naive path "
                                 f"weights; explain a run with --{flag} {paper} (or auto)")
    if getattr(args, "caps_attn", "linear") != "linear":
        raise UserInputError(f"--caps_attn {args.caps_attn}: the softmax of the summed scores does not split into "
                             "per-path contributions; explain a --caps_attn linear run")
    if getattr(args, "caps_paths", "123") in ("none", ""):
        raise UserInputError("--caps_paths none is plain linear attention: it has no CAPS paths to look at")
    if getattr(args, "caps_direction", "auto") == "bidirectional":
        raise UserInputError("--caps_direction bidirectional averages two directions per layer; compare.explain "
                             "shows causal layers only")


def load_caps(path: Path, args: argparse.Namespace, dtype: torch.dtype) -> CAPSModel:
    """The CAPS model of `args` with the weights of checkpoint `path`, in eval mode, on the CPU, in `dtype`."""
    state = load_checkpoint(path)
    if not isinstance(state, dict) or not any(str(key).endswith("attn.clock_proj.weight") for key in state):
        raise UserInputError(f"checkpoint {path} holds no CAPS attention weights (no *.attn.clock_proj.weight); "
                             "compare.explain looks inside CAPS checkpoints only")
    try:
        model = CAPSModel(args)
    except ValueError as err:
        raise UserInputError(f"--model CAPS: {err}") from None
    load_model_state(model, state, path)
    return model.to(dtype).eval()


def capture_layers(model: torch.nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, list[tuple]]:
    """Run model(*inputs) without gradients; return its output and (layer, input, output) of every
    CAPSAttention call, in call order (forward hooks on the model's own layers)."""
    calls: list[tuple] = []
    hooks = [module.register_forward_hook(lambda mod, args, out: calls.append((mod, args[0], out)))
             for module in model.modules() if isinstance(module, CAPSAttention)]
    try:
        with torch.no_grad():
            prediction = model(*inputs)
    finally:
        for hook in hooks:
            hook.remove()
    return prediction, calls


def look_at_layer(layer: CAPSAttention, x: torch.Tensor, output: torch.Tensor) -> LayerLook:
    """The layer's kernel inputs for x `[Ct, T, D]` and its output split by path (`caps_attention` with
    one path at a time, the layer's attn, impl and chunk)."""
    with torch.no_grad():
        inputs = layer.attention_inputs(x)

        def kernel(paths: tuple[int, ...]) -> torch.Tensor:
            return caps_attention(**inputs, attn=layer.attn, paths=paths, impl=layer.impl,
                                  chunk_size=layer.chunk_size)

        outputs = {path: kernel((path,)) for path in layer.paths}
        return LayerLook(layer, inputs, outputs, kernel(layer.paths), output)


def path_matrices(look: LayerLook, path: int, row: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(W, scores) of one path for channel row `row`, both [H, T, T] (0 above the diagonal).

    W: `path_weights` averaged over the head's features; scores[t, i] = Σ_e q̂_t,e k̂_i,e W[t, i, e] with
    RoPE-rotated q̂, k̂: the matrix that, applied to v, gives o^(path) of that row."""
    inputs = {name: None if value is None else value[row:row + 1] if value.dim() > 1 else value
              for name, value in look.inputs.items()}
    with torch.no_grad():
        weights = path_weights(inputs["p"], inputs["g"], inputs["clock"], (path,))  # [1, H, T, T, E]
        q, k, omega = inputs["q"], inputs["k"], inputs["rope_freq"]
        if omega is not None:
            q, k = rope_rotate(q, omega), rope_rotate(k, omega)
        scores = torch.einsum("bthe,bihe,bhtie->bhti", q, k, weights)  # [1, H, T, T]
    return weights.mean(-1)[0], scores[0]


def layer_quantities(looks: list[LayerLook], channel: int) -> dict[str, dict[str, np.ndarray]]:
    """file stem -> named arrays (layers first): contributions, clock, and each path's weights."""
    def stack(tensors: list[torch.Tensor]) -> np.ndarray:
        return torch.stack(tensors).cpu().numpy()

    contributions, clock = {}, {}
    for path in [*looks[0].layer.paths, 0]:
        # [Ct, T, H] norms over the head's value features; 0 = the layer's whole attention output
        norms = [(look.total if path == 0 else look.outputs[path]).norm(dim=-1) for look in looks]
        name = "o" if path == 0 else f"o{path}"
        contributions[f"{name}_channel"] = stack([n[channel].T for n in norms])  # [L, H, T]
        contributions[f"{name}_mean"] = stack([n.mean(0).T for n in norms])
    clock["channel"] = stack([look.inputs["clock"][channel].T for look in looks])  # [L, H, T]
    clock["mean"] = stack([look.inputs["clock"].mean(0).T for look in looks])
    quantities = {"contributions": contributions, "clock": clock}
    rows = looks[0].total.shape[0]
    for path in looks[0].layer.paths:
        mine, mean, scores = [], [], []
        for look in looks:
            total = 0.0
            for row in range(rows):
                weights, row_scores = path_matrices(look, path, row)
                total = total + weights
                if row == channel:
                    mine.append(weights)
                    scores.append(row_scores)
            mean.append(total / rows)
        quantities[WEIGHT_FILES[path]] = {
            "channel": stack(mine), "mean": stack(mean),  # [L, H, T, T]
            "scores_channel": stack(scores),  # [L, H, T, T]
            "values_channel": stack([look.inputs["v"][channel] for look in looks]),  # [L, T, H, Ev]
        }
    return quantities


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _mark_horizon(ax, seq_len: int) -> None:
    ax.axvline(seq_len - 0.5, color="grey", linestyle=":", linewidth=0.8)


def plot_lines(path: Path, title: str, series: dict[str, tuple[np.ndarray, np.ndarray]], seq_len: int,
               channel_name: str, ylabel: str) -> None:
    """Rows = layers, columns = heads; each label's [L, H, T] for the channel (solid) and the mean (dashed)."""
    plt = _plt()
    layers, heads = next(iter(series.values()))[0].shape[:2]
    height = 2.4 * layers + 1.3
    fig, axes = plt.subplots(layers, heads, figsize=(3.6 * heads, height), squeeze=False, sharex=True)
    colours = plt.get_cmap("tab10")
    for layer in range(layers):
        for head in range(heads):
            ax = axes[layer, head]
            for index, (label, (mine, mean)) in enumerate(series.items()):
                ax.plot(mine[layer, head], color=colours(index), linewidth=1.2, label=f"{label}, {channel_name}")
                ax.plot(mean[layer, head], color=colours(index), linewidth=0.9, linestyle="--",
                        label=f"{label}, channel mean")
            _mark_horizon(ax, seq_len)
            ax.set_title(f"layer {layer}, head {head}", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[layer, 0].set_ylabel(ylabel, fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("t (dotted: start of the horizon)", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=7)
    fig.suptitle(title, fontsize=9)
    # Fixed margins: tight_layout measures every tick label and costs seconds on large grids.
    fig.subplots_adjust(left=0.07, right=0.98, bottom=1.0 / height, top=1 - 0.55 / height, hspace=0.35,
                        wspace=0.25)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_heat_maps(path: Path, title: str, mine: np.ndarray, mean: np.ndarray, seq_len: int,
                   channel_name: str) -> None:
    """Rows = (layer, channel | channel mean), columns = heads; [L, H, T, T] causal weights on one log colour
    scale from LOG_RANGE to 1 (every path weight lies in [0, 1]), so panels compare directly."""
    plt = _plt()
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator

    layers, heads, steps = mine.shape[:3]
    above = np.triu(np.ones((steps, steps), dtype=bool), 1)
    norm = LogNorm(vmin=LOG_RANGE, vmax=1.0)
    height = 5.4 * layers + 0.9
    fig, axes = plt.subplots(2 * layers, heads, figsize=(2.9 * heads + 0.8, height), squeeze=False)
    for layer in range(layers):
        for which, (label, values) in enumerate(((channel_name, mine), ("channel mean", mean))):
            for head in range(heads):
                ax = axes[2 * layer + which, head]
                panel = np.clip(values[layer, head].astype(np.float64), LOG_RANGE, None)
                image = ax.imshow(np.ma.masked_where(above, panel), norm=norm, cmap="viridis",
                                  interpolation="nearest")
                ax.axhline(seq_len - 0.5, color="white", linestyle=":", linewidth=0.6)
                ax.set_title(f"layer {layer}, head {head}, {label}", fontsize=7)
                ax.set_xlabel("i (key)", fontsize=7)
                ax.set_ylabel("t (query)", fontsize=7)
                ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
                ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
                ax.tick_params(labelsize=6)
    fig.suptitle(title + "\n(dotted: first horizon step; blank: i > t)", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.86, bottom=0.45 / height, top=1 - 0.95 / height, hspace=0.45,
                        wspace=0.35)
    bar = fig.colorbar(image, cax=fig.add_axes((0.89, 0.15, 0.02, 0.7)))
    bar.ax.tick_params(labelsize=7)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_forecast(path: Path, history: np.ndarray, truth: np.ndarray, prediction: np.ndarray,
                  channel_name: str) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 2.6))
    steps = np.arange(len(history) + len(truth))
    ax.plot(steps[:len(history)], history, color="black", linewidth=1.0, label="input")
    ax.plot(steps[len(history):], truth, color="black", linestyle="--", linewidth=1.0, label="truth")
    ax.plot(steps[len(history):], prediction, color="tab:red", linewidth=1.2, label="CAPS")
    _mark_horizon(ax, len(history))
    ax.set_xlabel("t")
    ax.set_title(f"window and forecast, channel {channel_name} (standardised)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_files(out: Path, quantities: dict[str, dict[str, np.ndarray]], paths: tuple[int, ...], seq_len: int,
                channel_name: str) -> list[Path]:
    """One `.npz` (named arrays) and one `.png` per quantity under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, arrays in quantities.items():
        np.savez_compressed(out / f"{stem}.npz", seq_len=seq_len, **arrays)
        written.append(out / f"{stem}.npz")
    contributions = quantities["contributions"]
    series = {f"|o{p}|": (contributions[f"o{p}_channel"], contributions[f"o{p}_mean"]) for p in paths}
    series["|o| (layer)"] = (contributions["o_channel"], contributions["o_mean"])
    plot_lines(out / "contributions.png", "contribution of each path to the attention output: norm of "
               "o^(j)_t per head (o = Σ_j o^(j))", series, seq_len, channel_name, "norm")
    plot_lines(out / "clock.png", "Clock Δ_t per head", {"Δ": (quantities["clock"]["channel"],
                                                             quantities["clock"]["mean"])}, seq_len, channel_name, "Δ_t")
    written += [out / "contributions.png", out / "clock.png"]
    for path in paths:
        stem = WEIGHT_FILES[path]
        plot_heat_maps(out / f"{stem}.png", WEIGHT_TITLES[path], quantities[stem]["channel"],
                       quantities[stem]["mean"], seq_len, channel_name)
        written.append(out / f"{stem}.png")
    return written


def explain_checkpoint(checkpoint: str, run_flags: list[str], window: int, channel: int | None,
                       out: str | None, dtype: str = "float64") -> list[Path]:
    """Everything `main` does after parsing: returns the files written."""
    path = checkpoint_file(Path(checkpoint))
    args = run_arguments(path.parent, run_flags)
    check_explainable(args)
    model = load_caps(path, args, DTYPES[dtype])
    dataset = build_dataset(args, "test")
    check_channels(args, dataset)
    if not 0 <= window < len(dataset):
        raise UserInputError(f"--window {window} is out of range: the test split of {dataset.path} has "
                             f"{len(dataset)} windows (0..{len(dataset) - 1})")
    targets = model.n_targets
    names = list(dataset.used_columns[-targets:])
    channel = targets - 1 if channel is None else channel
    if not 0 <= channel < targets:
        raise UserInputError(f"--channel {channel} is out of range: the model decodes {targets} channels "
                             f"(0..{targets - 1}: {', '.join(names)})")

    batch = tuple(torch.as_tensor(np.asarray(item))[None] for item in dataset[window])
    x, x_mark, dec, y_mark, y = (t.to(DTYPES[dtype]) for t in model_inputs(
        batch, args.label_len, args.pred_len, torch.device("cpu")))
    prediction, calls = capture_layers(model, x, x_mark, dec, y_mark)
    looks = [look_at_layer(layer, layer_in, layer_out) for layer, layer_in, layer_out in calls]
    quantities = layer_quantities(looks, channel)
    column = x.shape[-1] - targets + channel
    quantities["forecast"] = {"history": x[0, :, column].numpy(), "truth": y[0, -args.pred_len:, column].numpy(),
                              "prediction": prediction[0, :, channel].numpy()}

    folder = Path(out) if out else Path("explain") / path.parent.name / f"window{window}_channel{channel}"
    files = write_files(folder, quantities, looks[0].layer.paths, args.seq_len, names[channel])
    plot_forecast(folder / "forecast.png", *quantities["forecast"].values(), names[channel])
    summary = {
        "checkpoint": str(path), "window": window, "channel": channel, "channel_name": names[channel],
        "seq_len": args.seq_len, "pred_len": args.pred_len, "layers": len(looks),
        "heads": looks[0].layer.n_heads, "paths": list(looks[0].layer.paths), "impl": looks[0].layer.impl,
        "dtype": dtype, "files": sorted(p.name for p in [*files, folder / "forecast.png"]),
        "flags": {k: v for k, v in sorted(vars(args).items()) if isinstance(v, (bool, int, float, str))},
    }
    (folder / "explain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return [*files, folder / "forecast.png", folder / "explain.json"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m compare.explain", allow_abbrev=False,
        description="A look inside a trained CAPS checkpoint on one test window: per layer, each path's "
                    "contribution to the attention output, the Clock and the path weights (PNG + NPZ). "
                    "Other arguments are run.py flags of the run; they override those saved in last.pth.")
    p.add_argument("--checkpoint", required=True, help="<checkpoints>/<setting>/checkpoint.pth or its folder")
    p.add_argument("--window", type=int, default=0, help="index of the test window (0 = the first)")
    p.add_argument("--channel", type=int, default=None,
                   help="decoded channel to show, 0..c_out-1 of the last --c_out columns (default: the last one, "
                        "the target for --features MS)")
    p.add_argument("--out", default=None,
                   help="output folder (default: ./explain/<setting>/window<I>_channel<C>)")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float64",
                   help="precision of the look (float64: the paths add up to rounding; float32: smaller files)")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    args, run_flags = build_parser().parse_known_args(argv)
    try:
        files = explain_checkpoint(args.checkpoint, run_flags, args.window, args.channel, args.out, args.dtype)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in files:
        logger.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
