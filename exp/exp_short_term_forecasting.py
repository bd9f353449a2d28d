"""Exp_Short_Term_Forecast: TSLib's M4 short-term forecasting on the long-term experiment's machinery (and the
same on custom short-term files).

What differs from `Exp_Long_Term_Forecast` (everything else — the shared training loop of exp/trainer.py with
resume, checkpoints, early stopping, AMP and non-finite guards, DDP, seeded sampling — is inherited):

- lengths: the experiment sets --pred_len to the group's horizon H, --seq_len to 2·H, --label_len to H
  and `frequency_map` to its frequency m before the model is built (so the setting string shows them);
- data: `Dataset_M4` items (insample, outsample, insample_mask, outsample_mask); the models get no time
  marks (`model(x, None, dec, None)`) and the decoder input is [outsample[:Ll]; 0];
- loss: --loss SMAPE | MASE | MAPE | MSE on (insample, m, forecast, target, outsample_mask) (utils/losses.py);
- validation: forecast every series from the last L values of its training history and score the M4
  test values with --loss (there is no validation split; the N-BEATS convention TSLib follows, #117);
  `--protocol strict` trains on each series without its last H values and validates on them instead
  (data_provider/m4.py), and the test values are read once, by `test`, whose forecasts start from the
  whole training series; its files go to ``./m4_results/strict/<model>/``;
- test: the same forecasts, written to ``./m4_results/<model>/<Group>_forecast.csv`` (id, V1..VH); once all
  six groups' files exist, the M4 summary (sMAPE, MAPE, MASE, OWA; exp/m4_summary.py) is logged. A run whose
  --model_id carries more than TSLib's ``m4_<Group>`` (a variant tag, a seed suffix) writes to a subfolder
  named by the rest (`m4_results_folder`), so two experiments of one model never mix their groups;
- custom short-term files (`--data short_term_csv | tsf`, data_provider/short_term_files.py): the same loop
  with H = --pred_len and m = --seasonality; the test writes ``./m4_results/<model>/<model_id>/<file
  stem>_forecast.csv`` and records sMAPE, MAPE, MASE and OWA against the Naive2 benchmark computed from the
  same training series (utils/naive2.py; M4's summary reads the competition's published Naive2 instead).
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from data_provider.m4 import m4_model_id_rest
from data_provider.protocol import is_strict
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.m4_summary import M4Summary
from exp.result_record import log_undefined, write_result_record
from exp.train_step import Batch, ForecastStep, model_inputs
from exp.training_guards import check_finite_outputs, checked_scores
from utils.errors import MissingDataError, UserInputError
from utils.losses import LOSSES
from utils.m4_summary import group_scores
from utils.naive2 import naive2_forecast
from utils.path_names import check_path_component
from utils.tools import append_text, atomic_write_text, visual

logger = logging.getLogger(__name__)

RESULT_FILE = "result_short_term_forecast.txt"
M4_RESULTS = "./m4_results"
# Series forecast per forward pass in validation and test (TSLib: 500 in validation, 1 in test; the
# outputs do not depend on it, the models being in eval mode).
FORECAST_CHUNK = 500


def is_m4(args: argparse.Namespace) -> bool:
    """Whether the run reads M4 (else a custom short-term file, data_provider/short_term_files.py)."""
    return args.data == "m4"


def m4_results_folder(args: argparse.Namespace) -> Path:
    """`./m4_results/<model>/` as TSLib's for model_id `m4_<Group>`; `./m4_results/<model>/<rest>/` when the
    model_id carries more (e.g. `m4_Monthly_CAPS-official_s2021` -> `.../CAPS/CAPS-official_s2021/`): the
    six groups of one experiment share that folder and the summary reads only them. A custom short-term file
    (not M4): `./m4_results/<model>/<model_id>/`."""
    rest = m4_model_id_rest(args.model_id, args.seasonal_patterns) if is_m4(args) else args.model_id
    # "strict" names no model, so the two protocols' folders never meet.
    folder = Path(M4_RESULTS) / ("strict" if is_strict(args) else "") / args.model
    return folder / check_path_component("--model_id", rest, "the ./m4_results folder") if rest else folder


def forecast_file_name(args: argparse.Namespace) -> str:
    """`<Group>_forecast.csv` for M4 (TSLib's name), `<data file stem>_forecast.csv` for a custom file."""
    name = args.seasonal_patterns if is_m4(args) else Path(args.data_path).stem
    return f"{check_path_component('--data_path', name, 'the forecast file name')}_forecast.csv"


def naive2_scores(history: list[np.ndarray], trues: np.ndarray, frequency: int) -> dict[str, float]:
    """sMAPE, MAPE and MASE of the Naive2 benchmark (utils/naive2.py) forecast from each whole training series."""
    naive2 = np.stack([naive2_forecast(x, frequency, trues.shape[1]) for x in history])
    return group_scores(naive2, history, trues, frequency)


def owa(scores: dict[str, float], naive2: dict[str, float]) -> float:
    """OWA = (sMAPE / sMAPE(Naive2) + MASE / MASE(Naive2)) / 2 on one dataset's scores."""
    return (scores["smape"] / naive2["smape"] + scores["mase"] / naive2["mase"]) / 2


class ShortTermStep(ForecastStep):
    """`ForecastStep` with M4's inputs and losses. `predict` keeps the batch's input window and target
    mask for the `loss` call that follows it (the experiment always calls them in that order)."""

    def __init__(self, model: torch.nn.Module, args: argparse.Namespace, device: torch.device, **kwargs) -> None:
        super().__init__(model, args, device, **kwargs)
        self.frequency = args.frequency_map
        self.criterion = LOSSES[args.loss]
        self._window: tuple[torch.Tensor, torch.Tensor] | None = None

    def predict(self, batch: Batch, runner: Callable[..., torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(ŷ, y) over the last H steps: `[B, H, c_out]`, `[B, H, 1]`."""
        x, _, dec, target_mask, y = model_inputs(batch, self.label_len, self.pred_len, self.device)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = (self.runner if runner is None else runner)(x, None, dec, None)
        self._window = (x, target_mask[:, -self.pred_len:, self.target_from:])
        return out[:, -self.pred_len:, :], y[:, -self.pred_len:, :]

    def loss(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """--loss on the scored channel of the last `predict` batch, padded target steps masked out."""
        insample, mask = self._window
        return self.criterion(insample, self.frequency, *self.targets(out, y), mask)

    @torch.no_grad()
    def forecast(self, windows: np.ndarray, runner: Callable[..., torch.Tensor]) -> np.ndarray:
        """Forecast from input windows `[N, L]` (no marks; decoder input [x[-Ll:]; 0]) → `[N, H]` float32."""
        x = torch.tensor(windows, dtype=torch.float32).unsqueeze(-1)  # [N, L, 1]
        preds = []
        for chunk in torch.split(x, FORECAST_CHUNK):
            chunk = chunk.to(self.device)
            dec = torch.cat([chunk[:, chunk.shape[1] - self.label_len:],
                             torch.zeros(chunk.shape[0], self.pred_len, 1, device=self.device)], dim=1)
            with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
                out = runner(chunk, None, dec, None)
            preds.append(out[:, -self.pred_len:, self.target_from:][..., 0].float().cpu())
        return torch.cat(preds).numpy()


class Exp_Short_Term_Forecast(Exp_Long_Term_Forecast):  # noqa: N801 - TSLib's public name
    step_class = ShortTermStep

    def __init__(self, args: argparse.Namespace, run_seed: int | None = None, config: dict | None = None) -> None:
        super().__init__(args, run_seed, config)
        self._train_set = None

    def _load_datasets(self) -> dict:
        """Train and 'val' (the M4 test values); the epoch's 'test' loss is the validation loss, as TSLib
        (strict: 'val' holds the held-out last horizons and there is no test split while training)."""
        loaded = {flag: self._get_data(flag) for flag in ("train", "val")}
        if not is_strict(self.args):
            loaded["test"] = loaded["val"]
        self._train_set = loaded["train"][0]
        return loaded

    def _train_dataset(self):
        if self._train_set is None:
            self._train_set = self._get_data("train")[0]
        return self._train_set

    def _forecast_last_windows(self, whole: bool = False) -> np.ndarray:
        """Forecasts `[N, H]` of every series of the group from its last training window (whole: of the whole
        training series, where strict trains on shortened ones)."""
        windows, _ = self._train_dataset().last_insample_window(whole)
        self.model.eval()
        preds = self.step.forecast(windows, self.eval_runner)
        self.model.train()
        return preds

    def vali(self, vali_data, vali_loader, criterion=None) -> float:
        """--loss of the last-window forecasts against the M4 test values (all series, every rank)."""
        train = self._train_dataset()
        if list(vali_data.ids) != list(train.ids):
            raise UserInputError(f"the training and test files of {train.data_path} list different series")
        windows, _ = train.last_insample_window()
        preds = torch.from_numpy(self._forecast_last_windows()).double()
        target = torch.from_numpy(np.stack(vali_data.timeseries))
        loss = self.step.criterion(torch.from_numpy(windows), self.args.frequency_map, preds, target,
                                   torch.ones_like(target))
        return float(loss)

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            self._load_for_test(setting)
        if not self.dist.is_main:
            return {}
        train = self._train_dataset()
        test_data, _ = self._get_data("test")
        windows, _ = train.last_insample_window(whole=True)
        preds = self._forecast_last_windows(whole=True)  # [N, H]
        trues = np.stack(test_data.timeseries)  # [N, H]
        check_finite_outputs(preds, "test forecasts", setting)
        logger.info("test shape: %s", preds.shape)

        folder = os.path.join("./test_results", setting)
        os.makedirs(folder, exist_ok=True)
        for i in range(0, len(preds), max(1, len(preds) // 10)):
            visual(np.concatenate([windows[i], trues[i]]), np.concatenate([windows[i], preds[i]]),
                   os.path.join(folder, f"{i}.pdf"))

        results = m4_results_folder(args)
        self._write_forecasts(results / forecast_file_name(args), test_data.ids, preds)
        scores = group_scores(preds, train.history, trues, args.frequency_map)
        benchmark = None
        if not is_m4(args):  # M4's OWA comes from the competition's own Naive2 forecasts, in the summary
            benchmark = naive2_scores(train.history, trues, args.frequency_map)
            scores["owa"] = owa(scores, benchmark)
        optional = ("mape", "owa")
        scores, undefined = checked_scores({k: v for k, v in scores.items() if k not in optional},
                                           {k: v for k, v in scores.items() if k in optional}, setting)
        log_undefined(undefined)
        name = args.seasonal_patterns if is_m4(args) else Path(args.data_path).name
        logger.info("%s smape:%s, mape:%s, mase:%s%s", name, scores["smape"], scores["mape"], scores["mase"],
                    f", owa:{scores['owa']} (Naive2 sMAPE {benchmark['smape']}, MASE {benchmark['mase']})"
                    if benchmark is not None else "")
        m4 = self._summary(results) if is_m4(args) else None
        append_text(RESULT_FILE, f"{setting}  \nsmape:{scores['smape']}, mape:{scores['mape']}, "
                                 f"mase:{scores['mase']}\n\n")
        return write_result_record(self, setting, {
            "task_name": args.task_name,
            "seasonal_patterns": args.seasonal_patterns if is_m4(args) else None,
            **({} if is_m4(args) else {"data_path": args.data_path, "seasonality": args.frequency_map,
                                       "naive2": benchmark}),
            "loss": args.loss,
            "seq_len": args.seq_len,
            "pred_len": args.pred_len,
            "series": int(len(preds)),
            **scores,
            "undefined": undefined or None,
            "m4_summary": m4,
        })

    @staticmethod
    def _write_forecasts(path: Path, ids: np.ndarray, preds: np.ndarray) -> None:
        """`<Group>_forecast.csv`: columns id, V1..VH, one row per series (written atomically)."""
        frame = pd.DataFrame(preds, columns=[f"V{i + 1}" for i in range(preds.shape[1])])
        frame.insert(0, "id", ids)
        atomic_write_text(path, frame.to_csv(index=False))

    def _summary(self, results: Path) -> dict | None:
        """TSLib's M4 summary once all six groups' forecasts exist (None before, or without Naive2)."""
        summary = M4Summary(results, self.args.root_path)
        if not summary.complete():
            logger.info("After all 6 tasks are finished, you can calculate the averaged index")
            return None
        try:
            scores = summary.evaluate_full()
        except MissingDataError as err:
            logger.warning("M4 summary skipped: %s", err)
            return None
        for name in ("smape", "mape", "mase", "owa"):
            logger.info("%s: %s", name, {k: round(v, 3) for k, v in scores[name].items()})
        return scores
