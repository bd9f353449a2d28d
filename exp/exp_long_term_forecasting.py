"""Exp_Long_Term_Forecast: TSLib's train / vali / test loop with its traps fixed, resumable and distributable.

One forward/loss path serves AMP and full precision (`torch.autocast(enabled=...)` plus
`GradScaler(enabled=...)`); validation loss is weighted by samples; gradient clipping happens after
unscaling; gradient accumulation divides each micro-batch loss by the size of its group. `--train_loop
official` trains with the official CAPS code's loop instead, quirks included (exp/train_step.py).

Long runs: `last.pth` (exp/checkpointing.py) is written every `--save_every_steps` optimiser steps, at
every epoch end and when SIGTERM/SIGINT arrives; `--resume` continues from it bit-for-bit, because every RNG
state and the epoch's shuffle seed are restored (exp/samplers.py: `--rng_stream tslib` draws the train
order and TSLib's loader seeds from the global RNG, `epoch` makes it a function of (seed, epoch)). A NaN/inf loss stops the
run before any checkpoint is overwritten. Under torchrun the model is wrapped in
DistributedDataParallel, train batches come from a DistributedSampler, and val/test windows are split
into contiguous shards whose results are summed (losses) or gathered in order (predictions) on rank 0,
so the metrics equal those of one process.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm

from data_provider.data_factory import build_dataset, build_train_split, check_channels, make_loader
from exp.checkpointing import (
    BEST_FILE,
    LAST_FILE,
    LAST_FORMAT,
    capture_rng_state,
    load_checkpoint,
    load_model_state,
    read_last,
    restore_rng_state,
    run_fingerprint,
)
from exp.distributed import all_reduce_sum, broadcast_from_main, gather_to_main
from exp.exp_basic import Exp_Basic
from exp.model_flags import build_model_warning_ignored_flags
from exp.naive_forecast import NaiveScores
from exp.progress import RunShape, TrainClock, bars_wanted, eval_progress
from exp.run_config import record_fields, run_config
from exp.run_folder import RunFolder
from exp.samplers import TSLIB_EVAL_DRAWS, GlobalStreamSampler, ResumableSampler, ShardSampler
from exp.train_step import (
    ForecastStep,
    amp_settings,
    compiled_runner,
    make_onecycle,
    make_optimizer,
    official_optimizer_steps,
    official_steps_optimizer,
    onecycle_steps_per_epoch,
)
from exp.training_guards import (
    NonFiniteLossError,
    StopSignals,
    TrainingInterrupted,
    check_finite_outputs,
    check_validation_loss,
    checked_scores,
    data_source,
    first_non_finite,
    non_finite_inputs,
)
from exp.validation_average import ValidationAverage
from utils.dtw import batch_dtw
from utils.errors import UserInputError
from utils.metrics import metric
from utils.tools import (
    EarlyStopping,
    adjust_learning_rate,
    append_jsonl,
    append_text,
    atomic_np_save,
    atomic_torch_save,
    visual,
)
from utils.train_split import default_cache_dir, needs_train_split, with_train_split

logger = logging.getLogger(__name__)

RESULT_FILE = "result_long_term_forecast.txt"
RESULTS_JSONL = "results.jsonl"


def log_undefined(undefined: dict[str, str]) -> None:
    """Say in the log which scores are recorded as null, and why."""
    for name, reason in undefined.items():
        logger.warning("%s is undefined and recorded as null: %s", name, reason)


@dataclass
class TrainProgress:
    """Where training stands: `epoch` is 0-based and in progress, `step` counts its micro-batches done,
    `seconds` is the training wall time up to the last save, summed over every invocation that resumed it,
    `curve` holds one entry per finished epoch (`epoch`, `train`, `vali`, `test` losses, plus a task's own
    figures) so an interrupted run's progress is readable from last.pth and a finished run's from its record."""

    epoch: int = 0
    step: int = 0
    loss_sum: float = 0.0
    loss_count: int = 0
    finished: bool = False
    seconds: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)


@dataclass
class _Training:
    """Everything one call of `train` mutates (saved to last.pth by `_save_last`)."""

    path: Path
    data: dict[str, tuple[Any, DataLoader]]
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler | None
    scaler: torch.amp.GradScaler
    early_stopping: EarlyStopping
    steps_per_epoch: int
    progress: TrainProgress = field(default_factory=TrainProgress)
    stop: StopSignals = field(default_factory=StopSignals)
    clock_zero: float = 0.0  # time.monotonic() at which progress.seconds would have been 0
    clock: TrainClock | None = None  # the estimate and progress lines (exp/progress.py)

    def elapsed(self) -> float:
        """Training wall time so far, earlier invocations included (seconds)."""
        return round(time.monotonic() - self.clock_zero, 3)


class Exp_Long_Term_Forecast(Exp_Basic):  # noqa: N801 - TSLib's public name
    #: the training step (forward, loss, backward, update); a task's experiment names its own
    step_class: type[ForecastStep] = ForecastStep

    def __init__(self, args, run_seed: int | None = None, config: dict | None = None) -> None:
        """run_seed: the seed of this --itr iteration (run.py passes --seed + ii); None means --seed.
        config: the command's `run_config`, taken before any experiment derived flags from the data (run.py
        passes it, so every --itr iteration records the same one); None means `run_config(args)` now."""
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
        # Forward and loss for evaluation; `_start_training` makes the one with an optimiser.
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
        if flag == "train" and tslib:
            sampler = GlobalStreamSampler(len(dataset))
        elif flag == "train":
            sampler = ResumableSampler(DistributedSampler(dataset, num_replicas=self.dist.world_size,
                                                          rank=self.dist.rank, shuffle=True, seed=self.run_seed))
        else:
            draws = TSLIB_EVAL_DRAWS[flag] if tslib else 0
            # TSLib's per-batch average depends on its shuffled validation order: replay it.
            shuffle = tslib and flag == "val" and getattr(self.args, "vali_loss", "samples") == "batches"
            sampler = ShardSampler(len(dataset), self.dist.rank, self.dist.world_size, global_draws=draws,
                                   shuffle=shuffle)
        return dataset, make_loader(self.args, dataset, flag, sampler, seed=self.run_seed)

    def _predict(self, batch, runner: Callable | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward one batch (`ForecastStep.predict`); runner None is the training forward."""
        return self.step.predict(batch, runner)

    def _load_datasets(self) -> dict:
        """Build all three splits before anything is written, so bad input leaves no output behind."""
        loaded = {flag: self._get_data(flag) for flag in ("train", "val", "test")}
        check_channels(self.args, loaded["train"][0])
        return loaded

    def _any_rank(self, condition: bool) -> bool:
        """True when `condition` holds on at least one rank (so every rank takes the same branch)."""
        return all_reduce_sum([float(condition)], self.dist)[0] > 0

    def _on_main(self, read: Callable[[], Any]) -> Any:
        """Run `read` on rank 0 only and hand its result, or its UserInputError, to every rank."""
        outcome = None
        if self.dist.is_main:
            try:
                outcome = (True, read())
            except UserInputError as err:
                outcome = (False, str(err))
        ok, value = broadcast_from_main(outcome, self.dist)
        if not ok:
            raise UserInputError(value)
        return value

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

    def _start_training(self, setting: str, data: dict) -> _Training:
        args = self.args
        # Not created here: the first checkpoint written creates it, so a run failing before that leaves no
        # empty folder behind.
        path = Path(args.checkpoints) / setting
        train_loader = data["train"][1]
        steps = math.ceil(train_loader.sampler.epoch_length() / args.batch_size)
        optimizer = make_optimizer(self.model, args)
        scheduler = (make_onecycle(optimizer, args, onecycle_steps_per_epoch(args, steps))
                     if args.lradj == "onecycle" else None)
        self.step = self.step_class(self.model, args, self.device, runner=self.runner, optimizer=optimizer,
                                 scheduler=scheduler)
        return _Training(
            path=path,
            data=data,
            optimizer=optimizer,
            scheduler=scheduler,
            scaler=self.step.scaler,
            early_stopping=EarlyStopping(patience=args.patience, verbose=True, save=self.dist.is_main),
            steps_per_epoch=steps,
        )

    @contextlib.contextmanager
    def hold_run_folder(self, setting: str) -> Iterator[None]:
        """Hold `<checkpoints>/<setting>/` for this process during a setting's train + test (exp/run_folder.py):
        rank 0 locks it and checks and writes its config.json, every rank receives a refusal; a failure before
        anything was written leaves no folder."""
        folder = RunFolder(Path(self.args.checkpoints) / setting, self.config)
        self._on_main(folder.acquire)
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
            self._last_state = self._on_main(lambda: read_last(last, self.args) if last.is_file() else {})
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

    def _resume(self, t: _Training, setting: str) -> None:
        state = self.resume_state(setting)
        last = t.path / LAST_FILE
        if state is None:
            logger.info("--resume: no %s yet; starting from scratch", last)
            return
        if state["world_size"] != self.dist.world_size:
            raise UserInputError(f"--resume: {last} was written by {state['world_size']} process(es) but this "
                                 f"run has {self.dist.world_size}; resume with the same number of processes")
        load_model_state(self._bare_model(), state["model"], last)
        t.optimizer.load_state_dict(state["optimizer"])
        if t.scheduler is not None:
            t.scheduler.load_state_dict(state["scheduler"])
        t.scaler.load_state_dict(state["scaler"])
        t.early_stopping.load_state_dict(state["early_stopping"])
        self._restore_best(t, state.get("best_model"), last)
        t.progress = TrainProgress(**state["progress"])
        if t.progress.step > 0:
            # Mid-epoch: the epoch's permutation is replayed, not drawn again.
            t.data["train"][1].sampler.load_state_dict(state["train_sampler"])
        restore_rng_state(state["rng"][self.dist.rank])
        logger.info("--resume: continuing %s at epoch %d, batch %d", setting, t.progress.epoch + 1, t.progress.step)

    def _restore_best(self, t: _Training, best: dict | None, last: Path) -> None:
        """Put the resumed run's best weights so far back in `t.early_stopping` (rank 0, which saves) and,
        when it is missing, write `checkpoint.pth` from them; a run with a best epoch but neither is
        refused before it trains (on every rank)."""
        if t.early_stopping.best_epoch == 0:
            return
        best_file = t.path / BEST_FILE

        def restore() -> None:
            if best is not None:
                t.early_stopping.best_state = best
                if not best_file.is_file():
                    atomic_torch_save(best, best_file)
                    logger.info("--resume: %s was missing; written again from %s", best_file, last)
            elif best_file.is_file():
                # A last.pth of an earlier version: the best weights are only in checkpoint.pth.
                t.early_stopping.best_state = load_checkpoint(best_file)
            else:
                raise UserInputError(
                    f"--resume: {best_file} (the epoch-{t.early_stopping.best_epoch} best weights) is missing "
                    f"and {last} was written by an earlier version that does not carry them; put "
                    "checkpoint.pth back beside it, or drop --resume to train again")

        self._on_main(restore)

    def _save_last(self, t: _Training) -> None:
        """Write last.pth (rank 0) with the RNG states of every rank; a collective, so all ranks call it."""
        rng = gather_to_main(capture_rng_state(), self.dist)
        t.progress.seconds = t.elapsed()
        if not self.dist.is_main:
            return
        atomic_torch_save({
            "format": LAST_FORMAT,
            "args": run_fingerprint(self.args),
            "world_size": self.dist.world_size,
            "progress": asdict(t.progress),
            "model": self._bare_model().state_dict(),
            "optimizer": t.optimizer.state_dict(),
            "scheduler": t.scheduler.state_dict() if t.scheduler is not None else None,
            "scaler": t.scaler.state_dict(),
            "early_stopping": t.early_stopping.state_dict(),
            "best_model": t.early_stopping.best_state,
            "train_sampler": t.data["train"][1].sampler.state_dict(),
            "rng": rng,
        }, t.path / LAST_FILE)

    def _stop_if_requested(self, t: _Training) -> None:
        """After a consistent save point: save last.pth and stop when any rank received SIGTERM/SIGINT."""
        if not self._any_rank(t.stop.signum is not None):
            return
        self._save_last(t)
        # Ranks that did not receive the signal themselves report SIGTERM (what torchrun forwards).
        signum = t.stop.signum or int(signal.SIGTERM)
        p = t.progress
        raise TrainingInterrupted(signum, f"training stopped by signal {signum} at epoch {p.epoch + 1}, batch "
                                          f"{p.step}; state saved to {t.path / LAST_FILE}; run the same command "
                                          "with --resume to continue")

    def _train_batch(self, t: _Training, i: int, batch) -> float:
        """Forward and backward one micro-batch (no DDP gradient sync until a micro-batch that steps the
        optimiser: its group's last one, or under --train_loop official the one its counter picks); raises
        NonFiniteLossError before anything is stepped or saved."""
        accum, p = self.args.grad_accum, t.progress
        group_start = (i // accum) * accum
        group_size = min(accum, t.steps_per_epoch - group_start)
        if self.step.official:
            syncs = official_steps_optimizer(i, accum)
        else:
            syncs = i + 1 == group_start + group_size
        no_sync = isinstance(self.model, DistributedDataParallel) and not syncs
        with self.model.no_sync() if no_sync else contextlib.nullcontext():
            out, y = self._predict(batch)
            loss = self.step.loss(out, y)
            batch_loss = loss.item()
            if self._any_rank(not math.isfinite(batch_loss)):
                raise self._non_finite_error(loss, batch_loss, i + 1, p.epoch + 1, batch, t.data["train"][0])
            self.step.backward(loss, group_size)
        p.loss_sum += batch_loss * y.shape[0]
        p.loss_count += y.shape[0]
        if syncs:
            self.step.update()
            p.step = i + 1
            every = self.args.save_every_steps
            optimizer_steps = (official_optimizer_steps(p.step, accum) if self.step.official
                               else math.ceil(p.step / accum))
            if every > 0 and optimizer_steps % every == 0:
                self._save_last(t)
            self._stop_if_requested(t)
        else:
            self.step.skip_update()
        return batch_loss

    def _non_finite_error(self, loss: torch.Tensor, value: float, batch: int, epoch: int, inputs=(),
                          dataset=None) -> NonFiniteLossError:
        """Describe a NaN/inf loss: NaN/inf in the input batch itself (naming the data file: the data, not the
        learning rate, produced it), else the first non-finite parameter, else the first non-finite gradient of
        a diagnostic backward pass (never stepped), else the op --detect_anomaly caught in it."""
        in_data = non_finite_inputs(inputs)
        if in_data is not None:
            return NonFiniteLossError(
                f"non-finite training loss ({value}) at epoch {epoch}, batch {batch}; the input batch itself holds "
                f"NaN or inf ({in_data}) read from {data_source(dataset)} (train split), so the data produced it, not "
                "the learning rate; check the file for missing or extreme values (--fillna fills missing ones in CSV "
                "files)")
        anomaly = None
        try:
            loss.backward()
        except RuntimeError as err:
            # Only anomaly mode raises here: it names the backward function that produced NaN.
            anomaly = f"autograd anomaly: {str(err).splitlines()[0]}"
        culprit = first_non_finite(self._bare_model()) or anomaly or (
            "every parameter and gradient is finite, so the forward pass itself produced it")
        return NonFiniteLossError(
            f"non-finite training loss ({value}) at epoch {epoch}, batch {batch}; {culprit}; {BEST_FILE} and "
            f"{LAST_FILE} keep the last good state; lower --learning_rate or set --max_grad_norm, and use "
            "--detect_anomaly to find the op")

    def _train_epoch(self, t: _Training) -> None:
        args, p = self.args, t.progress
        loader = t.data["train"][1]
        loader.sampler.set_epoch(p.epoch)
        # A resumed epoch replays the same permutation and skips the batches already trained.
        loader.sampler.skip(p.step * args.batch_size)
        self.model.train()
        t.optimizer.zero_grad(set_to_none=True)
        show_bar = self._bars()
        bar = tqdm(loader, desc=f"epoch {p.epoch + 1}/{args.train_epochs}", initial=p.step,
                   total=t.steps_per_epoch, leave=False, disable=not show_bar, dynamic_ncols=True)
        epoch_start = time.time()
        t.clock.epoch_start(p.step)
        for i, batch in enumerate(bar, start=p.step):
            batch_loss = self._train_batch(t, i, batch)
            self.trackers.log_batch(p.epoch * t.steps_per_epoch + i + 1, batch_loss, t.optimizer.param_groups[0]["lr"])
            if show_bar:
                bar.set_postfix(loss=f"{batch_loss:.4f}")
            # TSLib's progress lines without a bar, and the run's estimate
            t.clock.step_done(i, p.epoch, batch_loss, text_lines=not show_bar)
        bar.close()
        logger.info("Epoch: %d cost time: %s", p.epoch + 1, time.time() - epoch_start)

    def _finish_epoch(self, t: _Training) -> None:
        """Validate, early-stop, schedule the learning rate, save last.pth (TSLib's end-of-epoch order)."""
        p = t.progress
        loss_sum, loss_count = all_reduce_sum([p.loss_sum, float(p.loss_count)], self.dist)
        train_loss = loss_sum / max(loss_count, 1.0)
        vali_loss = self.vali(*t.data["val"])
        # --vali_only (tuning trials): the test windows are never evaluated; their loader is still built, so
        # the random stream and the training are those of a normal run. A task that loads no test split while
        # training (--protocol strict) has none to evaluate.
        skip_test = getattr(self.args, "vali_only", False) or "test" not in t.data
        test_loss = None if skip_test else self.vali(*t.data["test"])
        logger.info("Epoch: %d, Steps: %d | Train Loss: %.7f Vali Loss: %.7f Test Loss: %s",
                    p.epoch + 1, t.steps_per_epoch, train_loss, vali_loss,
                    "skipped" if test_loss is None else f"{test_loss:.7f}")
        p.curve.append({"epoch": p.epoch + 1, "train": train_loss, "vali": vali_loss, "test": test_loss})
        t.early_stopping(vali_loss, self._bare_model(), str(t.path), epoch=p.epoch + 1)
        check_validation_loss(vali_loss, p.epoch + 1, t.early_stopping.best_epoch)
        p.epoch, p.step, p.loss_sum, p.loss_count = p.epoch + 1, 0, 0.0, 0
        if t.early_stopping.early_stop:
            logger.info("Early stopping")
        else:
            adjust_learning_rate(t.optimizer, p.epoch, self.args)
        p.finished = t.early_stopping.early_stop or p.epoch >= self.args.train_epochs
        self._save_last(t)
        self._stop_if_requested(t)

    def train(self, setting: str) -> nn.Module:
        data = self._load_datasets()
        t = self._start_training(setting, data)
        if self.args.resume:
            self._resume(t, setting)
        t.clock_zero = time.monotonic() - t.progress.seconds
        t.clock = TrainClock(self._run_shape(t), self.args.train_epochs)
        with t.stop, torch.autograd.set_detect_anomaly(self.args.detect_anomaly):
            while not t.progress.finished:
                self._train_epoch(t)
                lr = t.optimizer.param_groups[0]["lr"]  # the epoch's, before the schedule moves it
                self._finish_epoch(t)
                self.trackers.log_epoch(t.progress.curve[-1], lr)
                t.clock.epoch_end(t.progress.epoch, t.progress.finished)
        self._load_best(t.path / BEST_FILE)
        self.train_stats = {
            "epochs_run": t.progress.epoch,
            "best_epoch": t.early_stopping.best_epoch,
            "train_seconds": t.elapsed(),
            "curve": t.progress.curve,
        }
        return self.model

    def _bars(self) -> bool:
        return bars_wanted(self.args.no_progress, self.dist.is_main)

    def _run_shape(self, t: _Training) -> RunShape:
        """The work left to this invocation (exp/progress.py): epochs, steps and evaluation batches."""
        # No test pass per epoch under --vali_only, nor under --protocol strict where the task reads TEST once.
        skipped = getattr(self.args, "vali_only", False) or "test" not in t.data
        test_batches = 0 if skipped else len(t.data["test"][1])
        return RunShape(steps_per_epoch=t.steps_per_epoch, eval_batches=len(t.data["val"][1]) + test_batches,
                        test_batches=test_batches, epochs=self.args.train_epochs - t.progress.epoch)

    def _load_best(self, path: Path) -> None:
        state = self._on_main(lambda: load_checkpoint(path))
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

    def _run_record_fields(self) -> dict:
        """The fields every task's `results.jsonl` record shares: training statistics, size, world, time and the
        configuration (`config`, `config_hash`, `code_version`)."""
        return {
            "epochs_run": self.train_stats.get("epochs_run"),
            "best_epoch": self.train_stats.get("best_epoch"),
            "train_seconds": self.train_stats.get("train_seconds"),
            # one entry per trained epoch (None under --is_training 0)
            "curve": self.train_stats.get("curve"),
            "params": sum(p.numel() for p in self._bare_model().parameters()),
            "world_size": self.dist.world_size,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            # the evaluation protocol (data_provider/protocol.py)
            "protocol": getattr(self.args, "protocol", "tslib"),
            # the flags behind the result, their hash and the commit (exp/run_config.py)
            **record_fields(self.config),
        }

    def _checkpoint_path(self, setting: str) -> Path:
        return Path(self.args.checkpoints) / setting / BEST_FILE

    def _forecast(self, test_data, test_loader, naive: NaiveScores | None = None
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """Predictions and targets ``[N, H, C']`` of this rank's test shard (de-standardised with --inverse);
        None for an empty shard (more ranks than windows). `naive` scores the naive forecasters on the same
        windows in the same loop."""
        f_dim = -1 if self.args.features == "MS" else 0
        invert = bool(test_data.scale and self.args.inverse)
        preds, trues = [], []
        self.model.eval()
        with torch.no_grad():
            for batch in eval_progress(test_loader, "test", self._bars()):
                out, y = self._predict(batch, self.eval_runner)
                if naive is not None:
                    naive.add_batch(batch, (lambda a: self._inverse(test_data, a)) if invert else None, f_dim)
                outputs = out.float().cpu().numpy()
                batch_y = y.cpu().numpy()
                if invert:
                    if outputs.shape[-1] != batch_y.shape[-1]:
                        outputs = np.tile(outputs, [1, 1, batch_y.shape[-1] // outputs.shape[-1]])
                    outputs = self._inverse(test_data, outputs)
                    batch_y = self._inverse(test_data, batch_y)
                preds.append(outputs[..., f_dim:])
                trues.append(batch_y[..., f_dim:])
        if not preds:
            return None
        return np.concatenate(preds, axis=0), np.concatenate(trues, axis=0)

    def _plot_every_20th_batch(self, test_data, preds: np.ndarray, trues: np.ndarray, folder: str) -> None:
        """TSLib's `<i>.pdf` for every 20th test batch i: input history + truth vs prediction of its
        first window, last channel."""
        invert = bool(test_data.scale and self.args.inverse)
        batch_size = self.args.batch_size
        for i in range(0, math.ceil(len(preds) / batch_size), 20):
            window = i * batch_size
            history = test_data[window][0]  # [L, C]
            if invert:
                history = self._inverse(test_data, history)
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
            "seed": self.run_seed,
            **scores,
            "undefined": undefined or None,
            "dtw": dtw if args.use_dtw else None,
            # the naive forecasters on the same windows, in the same space (exp/naive_forecast.py)
            **naive_fields,
            **self._run_record_fields(),
        }
        append_jsonl(RESULTS_JSONL, record)
        return record

    @staticmethod
    def _inverse(dataset, array: np.ndarray) -> np.ndarray:
        """De-standardise a `[..., C]` array with the dataset's scaler."""
        shape = array.shape
        return dataset.inverse_transform(array.reshape(-1, shape[-1])).reshape(shape)
