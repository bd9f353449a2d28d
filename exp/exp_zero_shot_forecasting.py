"""Exp_Zero_Shot_Forecast: TSLib's `zero_shot_forecast` task, a pretrained foundation model scored with no training.

The test is the long-term experiment's own (`Exp_Long_Term_Forecast.test`): the same test windows, the same
scaling (the scaler fit on the training rows), the same MSE/MAE on the scaled data (or de-standardised under
--inverse), the same output files (`results/<setting>/`, `test_results/<setting>/`,
`result_long_term_forecast.txt`, `results.jsonl`). Its record adds `zero_shot: true` and the model's
look-back. For ETT the test targets do not depend on --seq_len (the test split starts --seq_len rows
early), so a zero-shot run at a longer look-back is scored on exactly the trained models' windows.
"""

from __future__ import annotations

import logging

import torch.nn as nn

from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.scored_windows import shard_loader, windows_every
from models.foundation import foundation_class

logger = logging.getLogger(__name__)


class Exp_Zero_Shot_Forecast(Exp_Long_Term_Forecast):  # noqa: N801 - TSLib's public name
    """No training and no checkpoint: `train` is a no-op, `test` scores the pretrained model."""

    def __init__(self, args, run_seed: int | None = None, config: dict | None = None) -> None:
        super().__init__(args, run_seed=run_seed, config=config)
        self.train_stats = {"epochs_run": 0, "best_epoch": None, "train_seconds": 0.0, "curve": None}

    def _build_model(self) -> nn.Module:
        return foundation_class(self.args.model)(self.args).eval()

    def train(self, setting: str) -> nn.Module:
        logger.info("zero-shot: %s is not trained", self.args.model)
        return self.model

    def test(self, setting: str, test: int = 0) -> dict:
        """Score the pretrained model on the test split; `test` is accepted for TSLib's call and ignored (there
        is no checkpoint to load)."""
        logger.info("zero-shot: %s, look-back %d, horizon %d", self.args.model, self.args.seq_len, self.args.pred_len)
        return super().test(setting, test=0)

    def _get_data(self, flag: str):
        """The long-term experiment's splits; with --test_every k > 1, every k-th test window only."""
        dataset, loader = super()._get_data(flag)
        every = self.args.test_every
        if flag != "test" or every == 1:
            return dataset, loader
        self._all_test_windows = len(dataset)
        subset = windows_every(dataset, every)
        return subset, shard_loader(self.args, subset, flag, self.dist.rank, self.dist.world_size, seed=self.run_seed)

    def _extra_record_fields(self) -> dict:
        described = self._bare_model().describe()
        windows = {"test_every": self.args.test_every}
        if self.args.test_every > 1:
            windows["test_windows_of"] = self._all_test_windows
        return {"zero_shot": True, **described, **windows}
