"""Exp_Classification: TSLib's classification experiment (`--task_name classification`, `--data UEA`) on the
long-term experiment's machinery and the shared training loop (exp/trainer.py: resume, last.pth, guards,
seeded sampling, DDP).

What differs from forecasting, as TSLib's `exp_classification.py`:
- the model is built after reading the data: `seq_len` = the longest series of the TRAIN and TEST files,
  `pred_len` = 0, `enc_in` = their number of dimensions, `num_class` = their number of labels (these
  overwrite the flags, so the setting string reads e.g. `sl29_ll48_pl0`);
- batches are (x `[B, L, C]`, labels `[B, 1]`, padding mask `[B, L]`); the model is called as
  `model(x, padding_mask, None, None)` and returns logits `[B, num_class]`;
- loss: cross-entropy; optimiser: RAdam at --learning_rate; gradient norm clipped at 4.0 (or at
  --max_grad_norm when set); the learning rate stays constant (no --lradj step, as TSLib's current
  classification loop; --lradj onecycle still schedules);
- validation reads the TEST file (TSLib's convention: UEA has no validation split) and early stopping
  watches validation accuracy (an equal accuracy counts as an improvement, as TSLib);
- `--protocol strict` (data_provider/protocol.py): seq_len is the longest TRAIN series (a longer TEST series is
  cut to it), validation is a seeded, stratified share of TRAIN (data_provider/uea.py), and the TEST file is
  read once, by `test` (the epoch lines say `Test Loss: skipped`);
- test: accuracy, macro/weighted F1, balanced accuracy; `result_classification.txt` in the working
  directory (setting line, `accuracy:<acc>` line, empty line) and `./results/<setting>/metrics.txt`,
  `pred.csv`, `cm.csv` as TSLib's current code writes them; one JSON line in `results.jsonl`.

Validation loss is the sample-weighted mean cross-entropy (TSLib averages per-batch means).
"""

from __future__ import annotations

import argparse
import csv
import io
import logging
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from data_provider.protocol import is_strict
from exp.distributed import all_reduce_sum, gather_to_main
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.result_record import write_result_record
from exp.train_step import Batch, ForecastStep
from utils.classification_metrics import classification_scores
from utils.errors import UserInputError
from utils.tools import append_text

logger = logging.getLogger(__name__)

RESULT_FILE = "result_classification.txt"
# TSLib's classification loop clips the gradient norm at this value.
TSLIB_CLIP_NORM = 4.0


class ClassificationStep(ForecastStep):
    """Forward, cross-entropy loss, backward and update of classification (the update is ForecastStep's)."""

    def __init__(self, model: nn.Module, args: argparse.Namespace, device: torch.device, **kwargs) -> None:
        super().__init__(model, args, device, **kwargs)
        self.max_grad_norm = args.max_grad_norm if args.max_grad_norm > 0 else TSLIB_CLIP_NORM

    def predict(self, batch: Batch, runner=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits `[B, num_class]`, class ids `[B]`) of a (x, labels, padding mask) batch."""
        x, labels, padding_mask = batch
        x = x.float().to(self.device, non_blocking=True)
        padding_mask = padding_mask.float().to(self.device, non_blocking=True)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            logits = (self.runner if runner is None else runner)(x, padding_mask, None, None)
        return logits, labels.to(self.device).long().reshape(-1)

    def targets(self, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return out.float(), y

    def loss(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the logits against the class ids."""
        return F.cross_entropy(*self.targets(out, y))


class Exp_Classification(Exp_Long_Term_Forecast):  # noqa: N801 - TSLib's public name
    step_class = ClassificationStep
    # The learning rate stays constant between epochs, as TSLib's current classification loop (--lradj
    # onecycle still schedules it per step).
    epoch_lr_schedule = False

    def __init__(self, args: argparse.Namespace, run_seed: int | None = None, config: dict | None = None) -> None:
        if args.optimizer != "adam":
            raise UserInputError(f"--optimizer {args.optimizer} applies to forecasting; classification trains "
                                 "with RAdam as TSLib (drop the flag)")
        super().__init__(args, run_seed, config)

    def _load_datasets(self) -> dict:
        """The splits training reads: train, val and test (strict: train and val; test waits for `test`)."""
        flags = ("train", "val") if is_strict(self.args) else ("train", "val", "test")
        return {flag: self._get_data(flag) for flag in flags}

    def build_optimizer(self) -> torch.optim.Optimizer:
        """RAdam at --learning_rate, TSLib's classification optimiser."""
        args = self.args
        if args.lradj not in ("type1", "onecycle"):
            logger.info("--lradj %s is not applied: classification keeps the learning rate constant, as TSLib "
                        "(only --lradj onecycle schedules it)", args.lradj)
        return torch.optim.RAdam(self.model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)

    def _classify(self, loader) -> tuple[np.ndarray, np.ndarray, float] | None:
        """(predicted ids `[n]`, true ids `[n]`, summed cross-entropy) of this rank's shard; None when empty."""
        preds, trues, loss_sum = [], [], 0.0
        self.model.eval()
        with torch.no_grad():
            for batch in loader:
                logits, y = self.step.targets(*self._predict(batch, self.eval_runner))
                loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
                preds.append(logits.argmax(dim=1).cpu().numpy())
                trues.append(y.cpu().numpy())
        self.model.train()
        if not preds:
            return None
        return np.concatenate(preds), np.concatenate(trues), loss_sum

    def vali(self, vali_data, vali_loader, criterion=None) -> tuple[float, float]:
        """(mean cross-entropy, accuracy) over every sample of the split, summed over all ranks' shards."""
        shard = self._classify(vali_loader)
        loss_sum, correct, count = (0.0, 0.0, 0.0) if shard is None else (
            shard[2], float(np.sum(shard[0] == shard[1])), float(len(shard[1])))
        loss_sum, correct, count = all_reduce_sum([loss_sum, correct, count], self.dist)
        return loss_sum / max(count, 1.0), correct / max(count, 1.0)

    def evaluate_epoch(self, epoch: int, steps: int, train_loss: float, data: dict) -> tuple[dict, float]:
        """Validation (and test) loss and accuracy, TSLib's epoch line; early stopping watches the validation
        accuracy (an equal accuracy counts as an improvement, as TSLib)."""
        vali_loss, val_accuracy = self.vali(*data["val"])
        test_loss, test_accuracy = self.vali(*data["test"]) if "test" in data else (None, None)
        logger.info("Epoch: %d, Steps: %d | Train Loss: %.3f Vali Loss: %.3f Vali Acc: %.3f Test Loss: %s "
                    "Test Acc: %s", epoch, steps, train_loss, vali_loss, val_accuracy, _shown(test_loss),
                    _shown(test_accuracy))
        return {"epoch": epoch, "train": train_loss, "vali": vali_loss, "test": test_loss,
                "vali_accuracy": val_accuracy, "test_accuracy": test_accuracy}, -val_accuracy

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            self._load_for_test(setting)
        test_data, test_loader = self._get_data("test")
        cut = sum(len(series) > args.seq_len for series in test_data.series)
        if cut:
            logger.info("%d test series are longer than seq_len %d (the longest TRAIN series under --protocol "
                        "strict) and are cut to it", cut, args.seq_len)
        shards = gather_to_main(self._classify(test_loader), self.dist)
        if not self.dist.is_main:
            return {}
        shards = [shard for shard in shards if shard is not None]
        preds = np.concatenate([shard[0] for shard in shards])  # [N] in sample order
        trues = np.concatenate([shard[1] for shard in shards])
        logger.info("test shape: %s %s", preds.shape, trues.shape)

        names = [str(name) for name in test_data.class_names]
        scores = classification_scores(preds, trues, names)
        for key in ("accuracy", "macro_f1", "weighted_f1", "balanced_accuracy"):
            logger.info("%s:%s", key, scores[key])
        logger.info("%s", scores["report"])
        # TSLib creates the folder and writes nothing in it; created last, so a failure leaves none behind.
        os.makedirs(os.path.join("./test_results", setting), exist_ok=True)
        self._write_results(setting, preds, trues, names, scores)
        return write_result_record(self, setting, {
            "task_name": args.task_name,
            "seq_len": args.seq_len,
            "enc_in": args.enc_in,
            "num_class": args.num_class,
            "accuracy": scores["accuracy"],
            "macro_f1": scores["macro_f1"],
            "weighted_f1": scores["weighted_f1"],
            "balanced_accuracy": scores["balanced_accuracy"],
            "n_test": int(len(trues)),
        })

    @staticmethod
    def _write_results(setting: str, preds: np.ndarray, trues: np.ndarray, names: list[str], scores: dict) -> None:
        """TSLib's files: result_classification.txt (working directory), results/<setting>/metrics.txt,
        pred.csv (true/predicted index and label per test sample) and cm.csv (confusion matrix)."""
        append_text(RESULT_FILE, f"{setting}  \naccuracy:{scores['accuracy']}\n\n")
        folder = Path("./results") / setting
        folder.mkdir(parents=True, exist_ok=True)
        append_text(folder / "metrics.txt", (
            f"{setting}  \naccuracy:{scores['accuracy']}\nmacro_f1:{scores['macro_f1']}\n"
            f"weighted_f1:{scores['weighted_f1']}\nbalanced_accuracy:{scores['balanced_accuracy']}\n"
            f"{scores['report']}\n\n"))
        rows = [["true_index", "pred_index", "true_label", "pred_label"]]
        rows += [[int(t), int(p), names[t], names[p]] for t, p in zip(trues, preds, strict=True)]
        (folder / "pred.csv").write_text(_csv(rows))
        matrix = [[""] + names] + [[name, *map(int, row)] for name, row in zip(names, scores["confusion"], strict=True)]
        (folder / "cm.csv").write_text(_csv(matrix))


def _shown(value: float | None) -> str:
    """An epoch line's figure at 3 decimals, or `skipped` (a strict run evaluates no test split while training)."""
    return "skipped" if value is None else f"{value:.3f}"


def _csv(rows: list[list]) -> str:
    """Rows as CSV text (lines end in \\n)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()
