"""run.py's `--do_predict` (TSLib's habit): after the test of a setting, use its checkpoint on `--predict_data`
(long-term forecasting without it: the data file itself, so the forecast continues past its end) and write the
outputs into `./results/<setting>/` beside the test's: those of predict/outputs.py without a prefix, plus, for
forecasting, `real_prediction.npy` (`[1, pred_len, K]`, in the data's units), the file TSLib's predict wrote."""

from __future__ import annotations

import argparse
import io
import logging
from pathlib import Path

import numpy as np

from predict.frames import read_table
from predict.load import load_trained
from predict.outputs import compute_outputs, forecast_files, write_outputs
from utils.errors import UserInputError

__all__ = ["predict_for_run"]

logger = logging.getLogger(__name__)


def predict_for_run(args: argparse.Namespace, setting: str) -> list[Path]:
    """Use `<--checkpoints>/<setting>/` on the --do_predict data; returns the files written."""
    data = Path(args.predict_data) if args.predict_data else Path(args.root_path) / args.data_path
    if data.suffix.lower() not in (".csv", ".ts"):
        raise UserInputError(f"--do_predict reads a CSV file (a .ts file for classification), not {data}; pass "
                             "--predict_data FILE.csv in the training file's format")
    trained = load_trained(Path(args.checkpoints) / setting, root_path=args.root_path)
    if trained.task_name == "long_term_forecast":
        table = read_table(data)
        forecast = trained.forecast(table)
        outputs = forecast_files(trained, table.frame, forecast)
        buffer = io.BytesIO()
        np.save(buffer, forecast[trained.forecast_columns].to_numpy()[None])  # [1, H, K]
        outputs["real_prediction.npy"] = buffer.getvalue()
    else:
        outputs = compute_outputs(trained, data)
    written = write_outputs(Path("./results") / setting, "", outputs,
                            fix="--do_predict writes into ./results/<setting>/: run from a folder you can write to")
    for path in written:
        logger.info("--do_predict: wrote %s", path)
    return written
