"""Exp_Imputation: TSLib's imputation task on the forecasting data sets, on the forecasting experiment's
machinery and the shared training loop (exp/trainer.py: resume, checkpoints, early stopping, DDP, AMP,
non-finite guards).

Each window's points are hidden at random with probability --mask_rate (utils/random_mask.py); the model
reconstructs the window from the rest and is trained, validated and tested on the hidden points only
(exp/imputation_step.py). Where the masks come from (`--rng_stream`):

- ``tslib``: every mask is one `torch.rand([B, L, C])` from the global torch RNG, drawn per batch in
  TSLib's order (train, then the val and test passes of each epoch, then the final test), so a seed
  reproduces TSLib's stream. The RNG state is in last.pth, so a resumed run draws the same masks.
- ``epoch``: train batch i of epoch e draws from a generator seeded by (seed, e, i, rank); each val or
  test pass draws from one seeded by (seed, split, rank). Masks then depend on nothing else, and every
  validation pass scores the same hidden points, so validation losses compare across epochs.

Outputs as TSLib's: `result_imputation.txt` (`<setting>  ` / `mse:…, mae:…` / blank line), and in
`./results/<setting>/` metrics.npy [mae, mse, rmse, mape, mspe] over the hidden points, pred.npy and
true.npy `[N, L, C']` (whole windows); plus mask.npy (1 observed, 0 hidden), which TSLib does not save
but without which the metrics cannot be recomputed, and one line in results.jsonl.
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np
import torch

from exp.distributed import gather_to_main
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.imputation_step import ImputationStep
from exp.result_record import log_undefined, save_result_arrays, write_result_record
from exp.training_guards import check_finite_outputs, checked_scores
from exp.validation_average import ValidationAverage
from utils.metrics import masked_metric
from utils.random_mask import mask_seed
from utils.tools import append_text, visual

logger = logging.getLogger(__name__)

RESULT_FILE = "result_imputation.txt"
#: generator stream ids of the splits under --rng_stream epoch
_SPLIT_IDS = {"train": 0, "val": 1, "test": 2}


class Exp_Imputation(Exp_Long_Term_Forecast):  # noqa: N801 - TSLib's public name
    step_class = ImputationStep

    def __init__(self, args, run_seed: int | None = None, config: dict | None = None) -> None:
        super().__init__(args, run_seed, config)
        if args.inverse:
            logger.info("--inverse is ignored by imputation: TSLib scores it on the standardised data")

    def _mask_generator(self, *parts: int) -> torch.Generator | None:
        """None (the global RNG) under --rng_stream tslib, else a generator seeded by (run seed, parts, rank)."""
        if self._tslib_stream():
            return None
        return torch.Generator().manual_seed(mask_seed(self.run_seed, *parts, self.dist.rank))

    def before_train_batch(self, epoch: int, batch: int) -> None:
        """Train batch `batch` of `epoch` draws its masks from their own generator (--rng_stream epoch)."""
        self.step.generator = self._mask_generator(_SPLIT_IDS["train"], epoch, batch)

    def vali(self, vali_data, vali_loader, criterion=None) -> float:
        """Mean squared error over every hidden point of the split (weighted by points, unlike TSLib's
        unweighted mean of per-batch losses; that one under `--vali_loss batches`), over all ranks' shards."""
        self.step.generator = self._mask_generator(_SPLIT_IDS[vali_data.flag])
        self.model.eval()
        average = ValidationAverage(self.args.vali_loss)
        with torch.no_grad():
            for batch in vali_loader:
                out, target = self.step.targets(*self.step.predict(batch, self.eval_runner))
                hidden = ~torch.isnan(target)
                average.add(torch.sum((out[hidden] - target[hidden]) ** 2).item(), int(hidden.sum().item()))
        self.model.train()
        return average.result(self.dist)

    def _impute(self, test_loader) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Reconstructions, windows and masks `[N, L, C']` of this rank's test shard; None when it is empty."""
        f_dim = -1 if self.args.features == "MS" else 0
        self.step.generator = self._mask_generator(_SPLIT_IDS["test"])
        preds, trues, masks = [], [], []
        self.model.eval()
        with torch.no_grad():
            for batch in test_loader:
                out, x, mask = self.step.reconstruct(batch, self.eval_runner)
                preds.append(out[..., f_dim:].float().cpu().numpy())
                trues.append(x[..., f_dim:].cpu().numpy())
                masks.append(mask[..., f_dim:].cpu().numpy())
        if not preds:
            return None
        return np.concatenate(preds), np.concatenate(trues), np.concatenate(masks)

    def _plot_every_20th_batch(self, preds: np.ndarray, trues: np.ndarray, masks: np.ndarray,
                               folder: str) -> None:
        """TSLib's `<i>.pdf` for every 20th test batch i: the first window's last channel, truth versus
        the window with its hidden points filled in by the model."""
        batch_size = self.args.batch_size
        for i in range(0, math.ceil(len(preds) / batch_size), 20):
            w = i * batch_size
            filled = trues[w, :, -1] * masks[w, :, -1] + preds[w, :, -1] * (1 - masks[w, :, -1])
            visual(trues[w, :, -1], filled, os.path.join(folder, f"{i}.pdf"))
            self.trackers.log_forecast(f"forecast/{i}", trues[w, :, -1], filled, os.path.join(folder, f"{i}.pdf"))

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            self._load_for_test(setting)
        test_data, test_loader = self._get_data("test")
        shards = gather_to_main(self._impute(test_loader), self.dist)
        if not self.dist.is_main:
            return {}
        shards = [shard for shard in shards if shard is not None]
        preds, trues, masks = (np.concatenate([shard[k] for shard in shards]) for k in range(3))
        logger.info("test shape: %s %s", preds.shape, trues.shape)
        check_finite_outputs(preds, "test predictions", setting)
        folder_path = os.path.join("./test_results", setting)
        os.makedirs(folder_path, exist_ok=True)
        self._plot_every_20th_batch(preds, trues, masks, folder_path)

        mae, mse, rmse, mape, mspe = masked_metric(preds, trues, masks)
        scores, undefined = checked_scores({"mae": mae, "mse": mse, "rmse": rmse}, {"mape": mape, "mspe": mspe},
                                           setting)
        logger.info("mse:%s, mae:%s", mse, mae)
        log_undefined(undefined)
        save_result_arrays(setting, {"metrics": np.array([mae, mse, rmse, mape, mspe]), "pred": preds, "true": trues,
                                     "mask": masks})
        append_text(RESULT_FILE, f"{setting}  \nmse:{mse}, mae:{mae}\n\n")
        return write_result_record(self, setting, {
            "task_name": args.task_name,
            "data_path": args.data_path,
            "features": args.features,
            "seq_len": args.seq_len,
            "mask_rate": args.mask_rate,
            "rng_stream": args.rng_stream,
            **scores,
            "undefined": undefined or None,
            "masked_points": int((masks == 0).sum()),
        })
