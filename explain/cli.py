"""`python -m explain`: the command line of a look inside a trained CAPS checkpoint (`explain`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from data_provider.data_factory import build_dataset, check_channels
from exp.saved_run_flags import run_arguments
from exp.train_step import model_inputs
from explain.checkpoint import DTYPES, check_explainable, checkpoint_file, load_caps
from explain.figures import plot_forecast, write_files
from explain.paths import capture_layers, layer_quantities, look_at_layer
from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.record_paths import record_path, relative_record

__all__ = ["build_parser", "explain_checkpoint", "main"]


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

    # Beside run.py's own test figures of the setting (git-ignored), not in the package folder `explain/`.
    default = Path("test_results") / path.parent.name / "explain" / f"window{window}_channel{channel}"
    folder = Path(out) if out else default
    files = write_files(folder, quantities, looks[0].layer.paths, args.seq_len, names[channel])
    files += plot_forecast(folder / "forecast", *quantities["forecast"].values(), names[channel])
    summary = {
        "checkpoint": record_path(str(path.resolve())), "window": window, "channel": channel, "channel_name": names[channel],
        "seq_len": args.seq_len, "pred_len": args.pred_len, "layers": len(looks),
        "heads": looks[0].layer.n_heads, "paths": list(looks[0].layer.paths), "impl": looks[0].layer.impl,
        "dtype": dtype, "files": sorted(p.name for p in files),
        "flags": {k: v for k, v in sorted(vars(args).items()) if isinstance(v, (bool, int, float, str))},
    }
    # A record: paths relative to the repository, none of the machine that ran it (utils/record_paths.py).
    summary = relative_record(summary)
    (folder / "explain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return [*files, folder / "explain.json"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m explain", allow_abbrev=False,
        description="A look inside a trained CAPS checkpoint on one test window: per layer, each path's "
                    "contribution to the attention output, the Clock and the path weights (PNG + PDF + NPZ). "
                    "Other arguments are run.py flags of the run; they override those saved in last.pth.")
    p.add_argument("--checkpoint", required=True, help="<checkpoints>/<setting>/checkpoint.pth or its folder")
    p.add_argument("--window", type=int, default=0, help="index of the test window (0 = the first)")
    p.add_argument("--channel", type=int, default=None,
                   help="decoded channel to show, 0..c_out-1 of the last --c_out columns (default: the last one, "
                        "the target for --features MS)")
    p.add_argument("--out", default=None,
                   help="output folder (default: ./test_results/<setting>/explain/window<I>_channel<C>)")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float64",
                   help="precision of the look (float64: the paths add up to rounding; float32: smaller files)")
    return p


def main(argv: list[str] | None = None) -> int:
    log_to_stdout()
    args, run_flags = build_parser().parse_known_args(argv)
    return run_command(lambda: explain_checkpoint(args.checkpoint, run_flags, args.window, args.channel, args.out,
                                                  args.dtype))
