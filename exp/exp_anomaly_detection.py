"""Exp_Anomaly_Detection: TSLib's reconstruction-based anomaly detection on the forecasting machinery.

Training reconstructs each window (MSE between model(x) and x) with the shared loop (exp/trainer.py),
so resume, checkpoints, early stopping, DDP, AMP and the non-finite guards carry over unchanged; only
the step (`ReconstructionStep`), the data checks and `test` differ.

`test` (TSLib's order): the per-step energy mean_c (x − x̂)² over every train window and every test window
(stride 1, or 100 for SMD: overlapping windows are scored once per window, as TSLib does), the threshold
at the (100 − --anomaly_ratio) percentile of both energies together, pred = energy > threshold, TSLib's
point adjustment (utils/anomaly_metrics.py), then accuracy / precision / recall / F1 on the adjusted
predictions → `result_anomaly_detection.txt`. The unadjusted precision / recall / F1 (which TSLib does not
report) and the threshold-free average precision of the test energies go to the log and `results.jsonl`
beside them.

`--protocol strict` (data_provider/protocol.py): training loads no test split (the epoch lines say `Test Loss:
skipped`), and `test` sets the threshold from the train and validation energies before it reads the test
series, once.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader

from data_provider.anomaly_loader import SegmentDataset
from data_provider.data_factory import build_dataset, make_loader
from data_provider.protocol import is_strict
from exp.distributed import gather_to_main
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.result_record import write_result_record
from exp.samplers import ShardSampler
from exp.train_step import Batch, ForecastStep
from exp.training_guards import check_finite_outputs
from utils.anomaly_metrics import average_precision, detection_scores, percentile_threshold, point_adjust
from utils.errors import UserInputError
from utils.tools import append_text

logger = logging.getLogger(__name__)

RESULT_FILE = "result_anomaly_detection.txt"


class ReconstructionStep(ForecastStep):
    """The forecasting step with the window itself as the target: batch (x `[B, L, C]`, labels `[B, L]`)
    → (model(x, None, None, None) `[B, L, c_out]`, x `[B, L, C]`); loss, backward and update are inherited."""

    def predict(self, batch: Batch, runner: Callable[..., torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        x = batch[0].float().to(self.device, non_blocking=True)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = (self.runner if runner is None else runner)(x, None, None, None)
        return out, x


def check_anomaly_channels(args: argparse.Namespace, dataset: SegmentDataset) -> None:
    """Reconstruction compares every channel: --enc_in and --c_out must both equal the file's channel count."""
    total = dataset.n_channels
    for flag in ("enc_in", "c_out"):
        if getattr(args, flag) != total:
            raise UserInputError(f"--{flag} {getattr(args, flag)} does not match --data {args.data} ({total} "
                                 f"channels): pass --enc_in {total} --dec_in {total} --c_out {total}")
    if args.features != "M":
        raise UserInputError(f"--features {args.features}: anomaly detection reconstructs all channels; pass --features M")


class Exp_Anomaly_Detection(Exp_Long_Term_Forecast):  # noqa: N801 - TSLib's public name
    step_class = ReconstructionStep

    def _model_configs(self, model_class: type) -> argparse.Namespace:
        """The args: the models that read training statistics when built (Koopa, OLinear) forecast only,
        and reject this task themselves with a one-line error."""
        return self.args

    def _load_datasets(self) -> dict:
        """train, val and test (strict: train and val; the test series waits for `test`)."""
        flags = ("train", "val") if is_strict(self.args) else ("train", "val", "test")
        loaded = {flag: self._get_data(flag) for flag in flags}
        check_anomaly_channels(self.args, loaded["train"][0])
        return loaded

    def _energy(self, loader: DataLoader) -> tuple[np.ndarray, np.ndarray] | None:
        """(energy, labels), both `[windows · L]` in window order, of this rank's shard; None when empty."""
        energies, labels = [], []
        self.model.eval()
        with torch.no_grad():
            for batch in loader:
                out, x = self.step.predict(batch, self.eval_runner)
                energies.append(torch.mean((x - out.float()) ** 2, dim=-1).cpu().numpy())  # [B, L]
                labels.append(batch[1].numpy().reshape(len(x), -1))
        if not energies:
            return None
        return np.concatenate(energies).reshape(-1), np.concatenate(labels).reshape(-1)

    def _split_energy(self, flag: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Energies and labels of every `flag` window in order (rank 0; None on the other ranks)."""
        dataset = build_dataset(self.args, flag)
        if flag == "test":
            check_anomaly_channels(self.args, dataset)
        sampler = ShardSampler(len(dataset), self.dist.rank, self.dist.world_size)
        shards = gather_to_main(self._energy(make_loader(self.args, dataset, "test", sampler, self.run_seed)),
                                self.dist)
        if not self.dist.is_main:
            return None
        shards = [shard for shard in shards if shard is not None]
        return np.concatenate([s[0] for s in shards]), np.concatenate([s[1] for s in shards])

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            self._load_for_test(setting)
        strict = is_strict(args)
        threshold_from = ("train", "val") if strict else ("train", "test")
        # TSLib's order: test, then train; strict: train and val set the threshold before test is read.
        parts, threshold = {}, None
        for flag in ("train", "val", "test") if strict else ("test", "train"):
            parts[flag] = self._split_energy(flag)
            if not self.dist.is_main:
                continue
            check_finite_outputs(parts[flag][0], f"{flag} reconstruction energies", setting)
            if threshold is None and all(name in parts for name in threshold_from):
                threshold = percentile_threshold([parts[name][0] for name in threshold_from], args.anomaly_ratio)
                logger.info("Threshold : %s (from the %s energies)", threshold, " and ".join(threshold_from))
        if not self.dist.is_main:
            return {}
        test_energy, test_labels = parts["test"]
        pred = (test_energy > threshold).astype(np.int64)
        gt = test_labels.astype(np.int64)
        logger.info("pred:    %s", pred.shape)
        logger.info("gt:      %s", gt.shape)
        raw = detection_scores(gt, pred)
        adjusted = detection_scores(gt, point_adjust(gt, pred))
        line = (f"Accuracy : {adjusted.accuracy:0.4f}, Precision : {adjusted.precision:0.4f}, "
                f"Recall : {adjusted.recall:0.4f}, F-score : {adjusted.f_score:0.4f} ")
        logger.info(line)
        logger.info("Unadjusted (no point adjustment): Precision : %.4f, Recall : %.4f, F-score : %.4f",
                    raw.precision, raw.recall, raw.f_score)
        ap = average_precision(gt, test_energy)
        logger.info("Average precision of the test energies (threshold-free): %s", "undefined (no anomaly)"
                    if ap is None else f"{ap:.4f}")
        # TSLib creates the folder and writes nothing in it; created last, so a failure leaves none behind.
        os.makedirs(os.path.join("./test_results", setting), exist_ok=True)
        append_text(RESULT_FILE, f"{setting}  \n{line}\n\n")
        return write_result_record(self, setting, {
            "task_name": args.task_name,
            "seq_len": args.seq_len,
            "anomaly_ratio": args.anomaly_ratio,
            "threshold": threshold,
            "threshold_from": "+".join(threshold_from),
            "unadjusted_accuracy": raw.accuracy,
            "unadjusted_precision": raw.precision,
            "unadjusted_recall": raw.recall,
            "unadjusted_f_score": raw.f_score,
            "average_precision": ap,
            "accuracy": adjusted.accuracy,
            "precision": adjusted.precision,
            "recall": adjusted.recall,
            "f_score": adjusted.f_score,
        })
