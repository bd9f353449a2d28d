"""Exp_Long_Term_Forecast: TSLib's long-term forecasting experiment with its traps fixed, resumable and
distributable; the other four tasks' experiments are built on it.

The experiment builds the model, the data and the forward pass; training is the shared loop of exp/trainer.py
(accumulation, AMP, non-finite guards, early stopping, last.pth and --resume), which calls back the hooks
below: `build_optimizer`, `before_train_batch`, `_predict` and `evaluate_epoch`. Validation loss is weighted
by samples (`--vali_loss batches`: TSLib's unweighted mean of per-batch losses). Under torchrun the model is
wrapped in DistributedDataParallel, train batches come from a DistributedSampler, and val/test windows are
split into contiguous shards whose results are summed (losses) or gathered in order (predictions) on rank 0,
so the metrics equal those of one process.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler

from data_provider.data_factory import build_dataset, build_train_split, check_channels, make_loader
from exp.checkpointing import (
    BEST_FILE,
    LAST_FILE,
    LAST_FORMAT,
    load_checkpoint,
    load_model_state,
    read_last,
    run_fingerprint,
)
from exp.distributed import gather_to_main, on_main
from exp.exp_basic import Exp_Basic
from exp.model_flags import build_model_warning_ignored_flags
from exp.naive_forecast import NaiveScores
from exp.progress import bars_wanted, eval_progress
from exp.resolved_args import resolve_args
from exp.result_record import log_undefined, save_result_arrays, write_result_record
from exp.run_config import run_config
from exp.run_folder import RunFolder
from exp.samplers import TSLIB_EVAL_DRAWS, GlobalStreamSampler, ResumableSampler
from exp.scored_windows import inverts, scored_from, shard_loader, to_original_units
from exp.train_step import ForecastStep, amp_settings, compiled_runner, make_optimizer
from exp.trainer import Trainer
from exp.training_guards import check_finite_outputs, checked_scores
from exp.validation_average import ValidationAverage
from utils.dtw import batch_dtw
from utils.errors import UserInputError
from utils.flag_defaults import flag_default
from utils.metrics import metric
from utils.tools import append_text, atomic_torch_save, visual
from utils.train_split import default_cache_dir, needs_train_split, with_train_split

logger = logging.getLogger(__name__)

RESULT_FILE = "result_long_term_forecast.txt"


class Exp_Long_Term_Forecast(Exp_Basic):  # noqa: N801 - TSLib's public name
    #: the training step (forward, loss, backward, update); a task's experiment names its own
    step_class: type[ForecastStep] = ForecastStep
    #: whether --lradj's per-epoch schedule moves the learning rate after each epoch (exp/trainer.py)
    epoch_lr_schedule: bool = True

    def __init__(self, args, run_seed: int | None = None, config: dict | None = None) -> None:
        """run_seed: the seed of this --itr iteration (run.py passes --seed + ii); None means --seed.
        config: the command's `run_config`, taken before any experiment derived flags from the data (run.py
        passes it, so every --itr iteration records the same one); None means `run_config(args)` now.
        args: as run.py resolves them (exp/resolved_args.py); unresolved ones are resolved here, the same way."""
        args = resolve_args(args)
        self.run_seed = args.seed if run_seed is None else run_seed
        self.config = run_config(args) if config is None else config
        super().__init__(args)
        if args.use_amp and not amp_settings(args, self.device)[0]:
            logger.info("--use_amp is ignored on %s: AMP runs only on CUDA", self.device.type)
        self.runner = compiled_runner(self.model, args)
        # Ranks evaluate shards of different sizes, so evaluation bypasses the DDP wrapper (whose
        # forward may communicate) and runs the bare model.
        if self.dist.enabled:
            self.eval_runner = compiled_runner(self._bare_model(), args)
        else:
            self.eval_runner = self.runner
        # Forward and loss for evaluation; the trainer makes the one with an optimiser.
        self.step = self.step_class(self.model, args, self.device, runner=self.runner)
        self.train_stats: dict = {}
        self._last_state: dict | None = None
        self._stream_noted = False

    def _build_model(self) -> nn.Module:
        try:
            model_class = self.model_dict[self.args.model]
            return build_model_warning_ignored_flags(model_class, self._model_configs(model_class)).float()
        except ValueError as err:
            raise UserInputError(f"--model {self.args.model}: {err}") from err

    def _model_configs(self, model_class: type) -> argparse.Namespace:
        """The configs the model is built from: the args, plus the training split (`utils.train_split`)
        for a model that reads training statistics when built (Koopa, OLinear)."""
        if not needs_train_split(model_class):
            return self.args
        return with_train_split(self.args, build_train_split(self.args, cache_dir=default_cache_dir()))

    def _wrap_model(self, model: nn.Module) -> nn.Module:
        if self.dist.enabled:
            if self.args.use_multi_gpu:
                logger.info("--use_multi_gpu is ignored under torchrun: each process drives one device")
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            # CAPS ablations (--caps_paths) build projections their forward never uses.
            return DistributedDataParallel(model, device_ids=device_ids, find_unused_parameters=True)
        if self.args.use_multi_gpu and self.args.use_gpu and torch.cuda.is_available():
            return nn.DataParallel(model, device_ids=self.device_ids)
        return model

    def _bare_model(self) -> nn.Module:
        """The model without DataParallel/DDP, whose state_dict keys match a single-device checkpoint."""
        wrapped = isinstance(self.model, (nn.DataParallel, DistributedDataParallel))
        return self.model.module if wrapped else self.model

    def _tslib_stream(self) -> bool:
        """Whether loaders draw from the global RNG as TSLib's do (`--rng_stream tslib`, one process)."""
        if self.args.rng_stream != "tslib":
            return False
        if self.dist.world_size > 1:
            if not self._stream_noted:
                logger.info("--rng_stream tslib needs one process: under torchrun the train order follows "
                            "(seed, epoch) as with --rng_stream epoch")
                self._stream_noted = True
            return False
        return True

    def _get_data(self, flag: str):
        """(dataset, loader): train shuffles on this rank's share (exp/samplers.py); val/test read this
        rank's contiguous shard in order (the whole split in one process)."""
        dataset = build_dataset(self.args, flag)
        tslib = self._tslib_stream()
        if flag != "train":
            draws = TSLIB_EVAL_DRAWS[flag] if tslib else 0
            # TSLib's per-batch average depends on its shuffled validation order: replay it.
            shuffle = tslib and flag == "val" and getattr(self.args, "vali_loss", flag_default("vali_loss")) == "batches"
            return dataset, shard_loader(self.args, dataset, flag, self.dist.rank, self.dist.world_size,
                                         seed=self.run_seed, global_draws=draws, shuffle=shuffle)
        if tslib:
            sampler = GlobalStreamSampler(len(dataset))
        else:
            sampler = ResumableSampler(DistributedSampler(dataset, num_replicas=self.dist.world_size,
                                                          rank=self.dist.rank, shuffle=True, seed=self.run_seed))
        return dataset, make_loader(self.args, dataset, flag, sampler, seed=self.run_seed)

    def _predict(self, batch, runner: Callable | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward one batch (`ForecastStep.predict`); runner None is the training forward."""
        return self.step.predict(batch, runner)

    def _load_datasets(self) -> dict:
        """Build all three splits before anything is written, so bad input leaves no output behind."""
        loaded = {flag: self._get_data(flag) for flag in ("train", "val", "test")}
        check_channels(self.args, loaded["train"][0])
        return loaded

    def vali(self, vali_data, vali_loader, criterion=None) -> float:
        """Mean squared error over every validation element (weighted by samples, unlike TSLib's
        unweighted mean of per-batch losses; that one under `--vali_loss batches`), over all ranks' shards."""
        self.model.eval()
        average = ValidationAverage(self.args.vali_loss)
        with torch.no_grad():
            for batch in eval_progress(vali_loader, getattr(vali_data, "flag", "vali"), self._bars()):
                out, y = self.step.targets(*self._predict(batch, self.eval_runner))
                average.add(F.mse_loss(out, y, reduction="sum").item(), y.numel())
        self.model.train()
        return average.result(self.dist)

    def train(self, setting: str) -> nn.Module:
        """Train `setting` (exp/trainer.py), then load its best weights back into the model."""
        trainer = Trainer(self, setting, self._load_datasets())
        self.train_stats = trainer.run()
        self._load_best(trainer.path / BEST_FILE)
        return self.model

    def build_optimizer(self) -> torch.optim.Optimizer:
        """--optimizer adam (TSLib's) or adamw, at --learning_rate (exp/train_step.py)."""
        return make_optimizer(self.model, self.args)

    def before_train_batch(self, epoch: int, batch: int) -> None:
        """Called before 0-based training micro-batch `batch` of 0-based `epoch` (imputation draws its masks)."""

    def evaluate_epoch(self, epoch: int, steps: int, train_loss: float, data: dict) -> tuple[dict, float]:
        """After 1-based `epoch` of `steps` micro-batches: the validation (and test) loss and TSLib's epoch line;
        returns the epoch's curve entry and the figure early stopping watches (the validation loss)."""
        vali_loss = self.vali(*data["val"])
        # --vali_only (tuning trials): the test windows are never evaluated; their loader is still built, so
        # the random stream and the training are those of a normal run. A task that loads no test split while
        # training (--protocol strict) has none to evaluate.
        skip_test = getattr(self.args, "vali_only", flag_default("vali_only")) or "test" not in data
        test_loss = None if skip_test else self.vali(*data["test"])
        logger.info("Epoch: %d, Steps: %d | Train Loss: %.7f Vali Loss: %.7f Test Loss: %s", epoch, steps,
                    train_loss, vali_loss, "skipped" if test_loss is None else f"{test_loss:.7f}")
        return {"epoch": epoch, "train": train_loss, "vali": vali_loss, "test": test_loss}, vali_loss

    @contextlib.contextmanager
    def hold_run_folder(self, setting: str) -> Iterator[None]:
        """Hold `<checkpoints>/<setting>/` for this process during a setting's train + test (exp/run_folder.py):
        rank 0 locks it and checks and writes its config.json, every rank receives a refusal; a failure before
        anything was written leaves no folder."""
        folder = RunFolder(Path(self.args.checkpoints) / setting, self.config)
        on_main(folder.acquire, self.dist)
        try:
            yield
        except BaseException:
            folder.release(failed=True)
            raise
        folder.release(failed=False)

    def resume_state(self, setting: str) -> dict | None:
        """The checked contents of `<checkpoints>/<setting>/last.pth`, or None when there is none yet."""
        if self._last_state is None:
            last = Path(self.args.checkpoints) / setting / LAST_FILE
            self._last_state = on_main(lambda: read_last(last, self.args) if last.is_file() else {}, self.dist)
        return self._last_state or None

    def is_complete(self, setting: str) -> bool:
        """True when last.pth says this setting was trained and tested (a resumed --itr loop skips it)."""
        state = self.resume_state(setting)
        return bool(state and state.get("complete"))

    def mark_complete(self, setting: str) -> None:
        """Replace last.pth by a small record saying this setting is trained and tested."""
        if self.dist.is_main:
            record = {"format": LAST_FORMAT, "args": run_fingerprint(self.args), "complete": True}
            atomic_torch_save(record, Path(self.args.checkpoints) / setting / LAST_FILE)

    def _bars(self) -> bool:
        return bars_wanted(self.args.no_progress, self.dist.is_main)

    def _load_best(self, path: Path) -> None:
        state = on_main(lambda: load_checkpoint(path), self.dist)
        load_model_state(self._bare_model(), state, path)

    def _load_for_test(self, setting: str) -> None:
        """`--is_training 0`: load `<--checkpoints>/<setting>/checkpoint.pth` (one-line error when absent)."""
        ckpt = self._checkpoint_path(setting)
        if not ckpt.is_file():
            raise UserInputError(
                f"no checkpoint at {ckpt}: train first (--is_training 1) or point --checkpoints at the "
                "folder that holds <setting>/checkpoint.pth")
        logger.info("loading model")
        self._load_best(ckpt)

    def _checkpoint_path(self, setting: str) -> Path:
        return Path(self.args.checkpoints) / setting / BEST_FILE

    def _forecast(self, test_data, test_loader, naive: NaiveScores | None = None
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """Predictions and targets ``[N, H, C']`` of this rank's test shard (de-standardised with --inverse);
        None for an empty shard (more ranks than windows). `naive` scores the naive forecasters on the same
        windows in the same loop."""
        f_dim = scored_from(self.args)
        invert = inverts(test_data, self.args)
        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for batch in eval_progress(test_loader, "test", self._bars()):
                out, y = self._predict(batch, self.eval_runner)
                if naive is not None:
                    naive.add_batch(batch, (lambda a: to_original_units(test_data, a)) if invert else None, f_dim)
                outputs = out.float().cpu().numpy()
                batch_y = y.cpu().numpy()
                if invert:
                    if outputs.shape[-1] != batch_y.shape[-1]:
                        outputs = np.tile(outputs, [1, 1, batch_y.shape[-1] // outputs.shape[-1]])
                    outputs = to_original_units(test_data, outputs)
                    batch_y = to_original_units(test_data, batch_y)
                preds.append(outputs[..., f_dim:])
                trues.append(batch_y[..., f_dim:])
        if not preds:
            return None
        return np.concatenate(preds, axis=0), np.concatenate(trues, axis=0)

    def _plot_every_20th_batch(self, test_data, preds: np.ndarray, trues: np.ndarray, folder: str) -> None:
        """TSLib's `<i>.pdf` for every 20th test batch i: input history + truth vs prediction of its
        first window, last channel."""
        invert = inverts(test_data, self.args)
        batch_size = self.args.batch_size
        for i in range(0, math.ceil(len(preds) / batch_size), 20):
            window = i * batch_size
            history = test_data[window][0]  # [L, C]
            if invert:
                history = to_original_units(test_data, history)
            gt = np.concatenate([history[:, -1], trues[window, :, -1]])
            pd = np.concatenate([history[:, -1], preds[window, :, -1]])
            visual(gt, pd, os.path.join(folder, f"{i}.pdf"))
            self.trackers.log_forecast(f"forecast/{i}", gt, pd, os.path.join(folder, f"{i}.pdf"))

    def test(self, setting: str, test: int = 0) -> dict:
        args = self.args
        if test:
            self._load_for_test(setting)
        test_data, test_loader = self._get_data("test")
        if not test:
            check_channels(args, test_data)
        naive = NaiveScores.for_test(test_data, args)
        shards = gather_to_main(self._forecast(test_data, test_loader, naive), self.dist)
        naive_shards = gather_to_main(naive, self.dist)
        if not self.dist.is_main:
            return {}
        shards = [shard for shard in shards if shard is not None]
        preds = np.concatenate([shard[0] for shard in shards], axis=0)  # [N, H, C'] in window order
        trues = np.concatenate([shard[1] for shard in shards], axis=0)
        logger.info("test shape: %s %s", preds.shape, trues.shape)
        check_finite_outputs(preds, "test predictions", setting)
        folder_path = os.path.join("./test_results", setting)
        os.makedirs(folder_path, exist_ok=True)
        self._plot_every_20th_batch(test_data, preds, trues, folder_path)

        if args.use_dtw:
            n = preds.shape[0]
            dtw_value = float(np.mean(batch_dtw(preds.reshape(n, -1), trues.reshape(n, -1))))
            dtw: float | str = dtw_value
        else:
            dtw = "Not calculated"

        mae, mse, rmse, mape, mspe = metric(preds, trues)
        scores, undefined = checked_scores({"mae": mae, "mse": mse, "rmse": rmse}, {"mape": mape, "mspe": mspe},
                                           setting)
        logger.info("mse:%s, mae:%s, dtw:%s", mse, mae, dtw)
        log_undefined(undefined)
        naive_fields = NaiveScores.merge(naive_shards).record()
        logger.info("naive: %s, seasonal naive: %s", naive_fields["naive"], naive_fields["seasonal_naive"])

        save_result_arrays(setting, {"metrics": np.array([mae, mse, rmse, mape, mspe]), "pred": preds, "true": trues})
        append_text(RESULT_FILE, f"{setting}  \nmse:{mse}, mae:{mae}, dtw:{dtw}\n\n")
        return write_result_record(self, setting, {
            "data_path": args.data_path,
            "features": args.features,
            "seq_len": args.seq_len,
            "pred_len": args.pred_len,
            **scores,
            "undefined": undefined or None,
            "dtw": dtw if args.use_dtw else None,
            # the naive forecasters on the same windows, in the same space (exp/naive_forecast.py)
            **naive_fields,
            **self._extra_record_fields(),
        })

    def _extra_record_fields(self) -> dict:
        """Fields a subclass adds to the test record (the zero-shot experiment's model and windows); none here."""
        return {}
