"""`python -m predict CHECKPOINT_FOLDER FILE [--out DIR] [--rolling [--rolling_split test]]`: use a trained model on one file and write
its outputs (predict/outputs.py) into `--out` (default `./predictions/<setting>/`). Bad input ends with one
`error: ...` line, exit code 2, and nothing written."""

from __future__ import annotations

import argparse
from pathlib import Path

from predict.forecaster import ROLLING_SPLITS
from predict.load import load_trained
from predict.outputs import compute_outputs, write_outputs
from utils.cli_parser import OneLineArgumentParser
from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.path_names import check_path_component

__all__ = ["build_parser", "main", "predict_file"]


#: the default output folder's parent, under the working directory
DEFAULT_OUT = Path("predictions")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineArgumentParser(
        prog="python -m predict", allow_abbrev=False,
        description="Use a trained model on new data: a forecast past the end of a CSV in the training file's "
                    "format (or every window of it with --rolling), the filled CSV of an imputation model, the "
                    "anomaly scores and labels of a detection model, the labels of a classifier's .ts samples.")
    p.add_argument("checkpoint", help="the run's checkpoint folder, <checkpoints>/<setting>/ (checkpoint.pth and "
                                      "model_card.json)")
    p.add_argument("input", help="the new data: a CSV with the training file's columns (classification: a .ts file)")
    p.add_argument("--out", default=None,
                   help=f"output folder (default: {DEFAULT_OUT}/<setting>/ under the working directory)")
    p.add_argument("--rolling", action="store_true", default=False,
                   help="forecasting: every window of the file (a back-test), with metrics where the file holds "
                        "the truth")
    p.add_argument("--rolling_split", default=None, choices=ROLLING_SPLITS,
                   help="with --rolling, back-test only the windows of this split of the file, cut as the training "
                        "loader cuts it (test: on the training file, exactly the windows run.py's test scores; "
                        "default: all, every window)")
    p.add_argument("--root_path", default=None,
                   help="the folder holding the training file: needed by Koopa and OLinear only, which are built "
                        "from statistics of their training split")
    return p


def predict_file(checkpoint: str | Path, input_path: str | Path, out: str | Path | None = None,
                 rolling: bool = False, root_path: str | None = None, rolling_split: str = "all") -> list[Path]:
    """Everything `main` does after parsing: returns the files written."""
    checkpoint, input_path = Path(checkpoint), Path(input_path)
    trained = load_trained(checkpoint, root_path=root_path)
    outputs = compute_outputs(trained, input_path, rolling, rolling_split)
    folder = Path(out) if out is not None else DEFAULT_OUT / check_path_component(
        "the checkpoint folder's name", checkpoint.resolve().name, "the output folder")
    prefix = check_path_component("the input file's name", input_path.stem, "the output files' names") + "_"
    return write_outputs(folder, prefix, outputs, fix="pass --out a folder that can be created and written")


def _predict_command(args: argparse.Namespace) -> list[Path]:
    if args.rolling_split is not None and not args.rolling:
        raise UserInputError(f"--rolling_split {args.rolling_split} picks the windows of a back-test: add --rolling")
    return predict_file(args.checkpoint, args.input, args.out, args.rolling, args.root_path, args.rolling_split or "all")


def main(argv: list[str] | None = None) -> int:
    log_to_stdout()
    args = build_parser().parse_args(argv)
    return run_command(lambda: _predict_command(args))
