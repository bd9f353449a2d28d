"""Exp_Long_Term_Forecast: TSLib's train / vali / test loop with its traps fixed.

One forward/loss path serves AMP and full precision (`torch.autocast(enabled=...)` plus
`GradScaler(enabled=...)`); validation loss is weighted by samples; gradient clipping happens after
unscaling; gradient accumulation divides each micro-batch loss by the size of its group.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

from data_provider.data_factory import check_channels, data_provider
from exp.exp_basic import Exp_Basic
from utils.dtw import batch_dtw
from utils.errors import UserInputError
from utils.metrics import metric
from utils.tools import (
    EarlyStopping,
    adjust_learning_rate,
    append_jsonl,
    append_text,
    atomic_np_save,
    visual,
)

logger = logging.getLogger(__name__)

RESULT_FILE = "result_long_term_forecast.txt"
RESULTS_JSONL = "results.jsonl"


class Exp_Long_Term_Forecast(Exp_Basic):  # noqa: N801 - TSLib's public name
    def __init__(self, args) -> None:
        super().__init__(args)
        self.amp_enabled = bool(args.use_amp) and self.device.type == "cuda"
        if args.use_amp and not self.amp_enabled:
            logger.info("--use_amp is ignored on %s: AMP runs only on CUDA", self.device.type)
        self.amp_dtype = torch.bfloat16 if args.amp_dtype == "bf16" else torch.float16
        self.runner = torch.compile(self.model) if args.compile else self.model
        self.train_stats: dict = {}

    def _build_model(self) -> nn.Module:
        try:
            model = self.model_dict[self.args.model](self.args).float()
        except ValueError as err:
            raise UserInputError(f"--model {self.args.model}: {err}") from err
        if self.args.use_multi_gpu and self.args.use_gpu and torch.cuda.is_available():
            model = nn.DataParallel(model, device_ids=self.args.device_ids)
        return model

    def _bare_model(self) -> nn.Module:
        """The model without DataParallel, whose state_dict keys match a single-device checkpoint."""
        return self.model.module if isinstance(self.model, nn.DataParallel) else self.model

    def _get_data(self, flag: str):
        return data_provider(self.args, flag)

    def _predict(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward one batch; returns (outputs, targets) over the last pred_len steps, all channels."""
        x, y, x_mark, y_mark = (t.float().to(self.device, non_blocking=True) for t in batch)
        horizon = self.args.pred_len
        # Decoder input: the first label_len steps of y followed by pred_len zeros.  [B, Ll + H, C]
        dec_inp = torch.cat([y[:, : self.args.label_len, :], torch.zeros_like(y[:, -horizon:, :])], dim=1)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = self.runner(x, x_mark, dec_inp, y_mark)
        return out[:, -horizon:, :], y[:, -horizon:, :]

    def _target_slice(self, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f_dim = -1 if self.args.features == "MS" else 0
        return out[..., f_dim:].float(), y[..., f_dim:]

    def _make_optimizer(self) -> torch.optim.Optimizer:
        params = self.model.parameters()
        if self.args.optimizer == "adamw":
            return torch.optim.AdamW(params, lr=self.args.learning_rate, weight_decay=self.args.weight_decay)
        return torch.optim.Adam(params, lr=self.args.learning_rate, weight_decay=self.args.weight_decay)

    def _make_onecycle(self, optimizer: torch.optim.Optimizer, steps_per_epoch: int):
        """OneCycle stepped per optimiser step, as the CAPS recipe: linear anneal, div 10, final div 1e4,
        schedule length train_epochs + 1 epochs, and no momentum cycling (AdamW's beta1 stays as set)."""
        return torch.optim.lr_scheduler.OneCycleLR(
            optimizer,
            max_lr=self.args.learning_rate,
            total_steps=(self.args.train_epochs + 1) * steps_per_epoch,
            pct_start=self.args.pct_start,
            anneal_strategy="linear",
            div_factor=10.0,
            final_div_factor=1e4,
            cycle_momentum=False,
        )

    def _load_datasets(self) -> dict:
        """Build all three splits before anything is written, so bad input leaves no output behind."""
        loaded = {flag: self._get_data(flag) for flag in ("train", "val", "test")}
        check_channels(self.args, loaded["train"][0])
        return loaded

    def vali(self, vali_data, vali_loader, criterion=None) -> float:
        """Mean squared error over every validation element (weighted by samples, unlike TSLib's
        unweighted mean of per-batch losses)."""
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for batch in vali_loader:
                out, y = self._target_slice(*self._predict(batch))
                total += F.mse_loss(out, y, reduction="sum").item()
                count += y.numel()
        self.model.train()
        return total / max(count, 1)

    def train(self, setting: str) -> nn.Module:
        args = self.args
        data = self._load_datasets()
        train_data, train_loader = data["train"]
        vali_data, vali_loader = data["val"]
        test_data, test_loader = data["test"]

        path = os.path.join(args.checkpoints, setting)
        os.makedirs(path, exist_ok=True)

        train_steps = len(train_loader)
        accum = max(1, args.grad_accum)
        optimizer_steps_per_epoch = -(-train_steps // accum)
        optimizer = self._make_optimizer()
        scheduler = self._make_onecycle(optimizer, optimizer_steps_per_epoch) if args.lradj == "onecycle" else None
        scaler = torch.amp.GradScaler(self.device.type, enabled=self.amp_enabled and self.amp_dtype == torch.float16)
        early_stopping = EarlyStopping(patience=args.patience, verbose=True)
        show_bar = not args.no_progress and sys.stdout.isatty()

        start = time.time()
        epochs_run = 0
        for epoch in range(args.train_epochs):
            epochs_run = epoch + 1
            self.model.train()
            epoch_start = time.time()
            iter_time = time.time()
            loss_sum, loss_count = 0.0, 0
            optimizer.zero_grad(set_to_none=True)
            bar = tqdm(train_loader, desc=f"epoch {epoch + 1}/{args.train_epochs}", leave=False,
                       disable=not show_bar, dynamic_ncols=True)
            for i, batch in enumerate(bar):
                out, y = self._target_slice(*self._predict(batch))
                loss = F.mse_loss(out, y)
                group_start = (i // accum) * accum
                group_size = min(accum, train_steps - group_start)
                scaler.scale(loss / group_size).backward()
                if i + 1 == group_start + group_size:
                    if args.max_grad_norm > 0:
                        scaler.unscale_(optimizer)
                        torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.max_grad_norm)
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad(set_to_none=True)
                    if scheduler is not None:
                        scheduler.step()

                batch_loss = loss.item()
                loss_sum += batch_loss * y.shape[0]
                loss_count += y.shape[0]
                if show_bar:
                    bar.set_postfix(loss=f"{batch_loss:.4f}")
                elif (i + 1) % 100 == 0:
                    speed = (time.time() - iter_time) / 100
                    left = speed * ((args.train_epochs - epoch) * train_steps - i)
                    logger.info("\titers: %d, epoch: %d | loss: %.7f", i + 1, epoch + 1, batch_loss)
                    logger.info("\tspeed: %.4fs/iter; left time: %.4fs", speed, left)
                    iter_time = time.time()
            bar.close()

            logger.info("Epoch: %d cost time: %s", epoch + 1, time.time() - epoch_start)
            train_loss = loss_sum / max(loss_count, 1)
            vali_loss = self.vali(vali_data, vali_loader)
            test_loss = self.vali(test_data, test_loader)
            logger.info("Epoch: %d, Steps: %d | Train Loss: %.7f Vali Loss: %.7f Test Loss: %.7f",
                        epoch + 1, train_steps, train_loss, vali_loss, test_loss)
            early_stopping(vali_loss, self._bare_model(), path, epoch=epoch + 1)
            if early_stopping.early_stop:
                logger.info("Early stopping")
                break
            adjust_learning_rate(optimizer, epoch + 1, args)

        best_model_path = os.path.join(path, "checkpoint.pth")
        self._bare_model().load_state_dict(torch.load(best_model_path, map_location=self.device))
        self.train_stats = {
            "epochs_run": epochs_run,
            "best_epoch": early_stopping.best_epoch,
            "train_seconds": round(time.time() - start, 3),
        }
        return self.model

    def _checkpoint_path(self, setting: str) -> Path:
        return Path(self.args.checkpoints) / setting / "checkpoint.pth"

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            ckpt = self._checkpoint_path(setting)
            if not ckpt.is_file():
                raise UserInputError(
                    f"no checkpoint at {ckpt}: train first (--is_training 1) or point --checkpoints at the "
                    "folder that holds <setting>/checkpoint.pth")
            logger.info("loading model")
            self._bare_model().load_state_dict(torch.load(ckpt, map_location=self.device))
        test_data, test_loader = self._get_data("test")
        if not test:
            check_channels(args, test_data)
        folder_path = os.path.join("./test_results", setting)
        os.makedirs(folder_path, exist_ok=True)
        f_dim = -1 if args.features == "MS" else 0
        invert = bool(test_data.scale and args.inverse)

        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for i, batch in enumerate(test_loader):
                out, y = self._predict(batch)
                outputs = out.float().cpu().numpy()
                batch_y = y.cpu().numpy()
                if invert:
                    if outputs.shape[-1] != batch_y.shape[-1]:
                        outputs = np.tile(outputs, [1, 1, batch_y.shape[-1] // outputs.shape[-1]])
                    outputs = self._inverse(test_data, outputs)
                    batch_y = self._inverse(test_data, batch_y)
                pred, true = outputs[..., f_dim:], batch_y[..., f_dim:]
                preds.append(pred)
                trues.append(true)
                if i % 20 == 0:
                    history = batch[0].numpy()
                    if invert:
                        history = self._inverse(test_data, history)
                    gt = np.concatenate([history[0, :, -1], true[0, :, -1]])
                    pd = np.concatenate([history[0, :, -1], pred[0, :, -1]])
                    visual(gt, pd, os.path.join(folder_path, f"{i}.pdf"))

        preds = np.concatenate(preds, axis=0)
        trues = np.concatenate(trues, axis=0)
        logger.info("test shape: %s %s", preds.shape, trues.shape)

        if args.use_dtw:
            n = preds.shape[0]
            dtw_value = float(np.mean(batch_dtw(preds.reshape(n, -1), trues.reshape(n, -1))))
            dtw: float | str = dtw_value
        else:
            dtw = "Not calculated"

        mae, mse, rmse, mape, mspe = metric(preds, trues)
        logger.info("mse:%s, mae:%s, dtw:%s", mse, mae, dtw)

        result_dir = os.path.join("./results", setting)
        atomic_np_save(os.path.join(result_dir, "metrics.npy"), np.array([mae, mse, rmse, mape, mspe]))
        atomic_np_save(os.path.join(result_dir, "pred.npy"), preds)
        atomic_np_save(os.path.join(result_dir, "true.npy"), trues)
        append_text(RESULT_FILE, f"{setting}  \nmse:{mse}, mae:{mae}, dtw:{dtw}\n\n")
        record = {
            "setting": setting,
            "model": args.model,
            "model_id": args.model_id,
            "data": args.data,
            "data_path": args.data_path,
            "features": args.features,
            "seq_len": args.seq_len,
            "pred_len": args.pred_len,
            "seed": getattr(args, "run_seed", args.seed),
            "mse": mse,
            "mae": mae,
            "rmse": rmse,
            "mape": mape,
            "mspe": mspe,
            "dtw": dtw if args.use_dtw else None,
            "epochs_run": self.train_stats.get("epochs_run"),
            "best_epoch": self.train_stats.get("best_epoch"),
            "train_seconds": self.train_stats.get("train_seconds"),
            "params": sum(p.numel() for p in self.model.parameters()),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        append_jsonl(RESULTS_JSONL, record)
        return record

    @staticmethod
    def _inverse(dataset, array: np.ndarray) -> np.ndarray:
        """De-standardise a `[N, T, C]` array with the dataset's scaler."""
        shape = array.shape
        return dataset.inverse_transform(array.reshape(-1, shape[-1])).reshape(shape)
