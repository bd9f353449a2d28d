"""The training loop the five experiments share: TSLib's `train` with its traps fixed, resumable and distributable.

One `Trainer` is one call of an experiment's `train(setting)`. Per micro-batch: the experiment's forward
(`_predict`), the step's loss and backward (divided by the size of its accumulation group; AMP through
`torch.autocast(enabled=...)` and `GradScaler(enabled=...)`, exp/train_step.py), a NaN/inf loss stopping the
run before anything is stepped or saved, and the optimiser update on the group's last micro-batch (under
`--train_loop official` where the official CAPS loop's counter says). Per epoch: the experiment's evaluation
(`evaluate_epoch`), early stopping on the figure it names, `--lradj`'s per-epoch learning rate and `last.pth`.

`last.pth` (exp/checkpointing.py) is written every `--save_every_steps` optimiser steps, at every epoch end
and when SIGTERM/SIGINT arrives; `--resume` continues from it at the saved batch, bit for bit, because every
RNG state and the epoch's train order are restored (exp/samplers.py). `train_seconds` sums the training wall
time of every invocation that resumed the run. Under torchrun every decision is taken on all ranks alike.
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from exp.checkpointing import (
    BEST_FILE,
    LAST_FILE,
    LAST_FORMAT,
    capture_rng_state,
    load_checkpoint,
    load_model_state,
    restore_rng_state,
    run_fingerprint,
)
from exp.distributed import all_reduce_sum, any_rank, gather_to_main, on_main
from exp.progress import RunShape, TrainClock
from exp.train_step import (
    ForecastStep,
    make_onecycle,
    official_optimizer_steps,
    official_steps_optimizer,
    onecycle_steps_per_epoch,
)
from exp.training_guards import (
    NonFiniteLossError,
    StopSignals,
    TrainingInterrupted,
    check_validation_loss,
    data_source,
    first_non_finite,
    non_finite_inputs,
)
from utils.errors import UserInputError
from utils.flag_defaults import flag_default
from utils.tools import EarlyStopping, adjust_learning_rate, atomic_torch_save

logger = logging.getLogger(__name__)


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


class TrainedExperiment(Protocol):
    """What the trainer reads of an experiment (exp/exp_long_term_forecasting.py and the tasks built on it)."""

    args: Any
    dist: Any
    model: torch.nn.Module
    runner: Any
    device: torch.device
    step: ForecastStep
    step_class: type[ForecastStep]
    trackers: Any
    #: whether --lradj's per-epoch schedule moves the learning rate (classification keeps it, as TSLib)
    epoch_lr_schedule: bool

    def _bare_model(self) -> torch.nn.Module: ...
    def _bars(self) -> bool: ...
    def _predict(self, batch: Any, runner: Any = None) -> tuple[torch.Tensor, torch.Tensor]: ...
    def build_optimizer(self) -> torch.optim.Optimizer: ...
    def before_train_batch(self, epoch: int, batch: int) -> None: ...
    def evaluate_epoch(self, epoch: int, steps: int, train_loss: float, data: dict) -> tuple[dict, float]: ...
    def resume_state(self, setting: str) -> dict | None: ...


class Trainer:
    """One training run of `exp` on `data` ({"train", "val"[, "test"]: (dataset, loader)}) into
    `<--checkpoints>/<setting>/`. Building it makes the optimiser, OneCycle (--lradj onecycle), the
    experiment's step with them and early stopping; `run` trains and returns the training statistics."""

    def __init__(self, exp: TrainedExperiment, setting: str, data: dict) -> None:
        args = exp.args
        self.exp, self.args, self.dist, self.setting, self.data = exp, args, exp.dist, setting, data
        # Not created here: the first checkpoint written creates it, so a run failing before that leaves no
        # empty folder behind.
        self.path = Path(args.checkpoints) / setting
        self.steps_per_epoch = math.ceil(data["train"][1].sampler.epoch_length() / args.batch_size)
        self.optimizer = exp.build_optimizer()
        self.scheduler = (make_onecycle(self.optimizer, args, onecycle_steps_per_epoch(args, self.steps_per_epoch))
                          if args.lradj == "onecycle" else None)
        # The experiment's step (its evaluation too) from now on updates with this optimiser.
        exp.step = exp.step_class(exp.model, args, exp.device, runner=exp.runner, optimizer=self.optimizer,
                                  scheduler=self.scheduler)
        self.scaler = exp.step.scaler
        self.early_stopping = EarlyStopping(patience=args.patience, verbose=True, save=self.dist.is_main)
        self.progress = TrainProgress()
        self.stop = StopSignals()
        self.clock_zero = 0.0  # time.monotonic() at which progress.seconds would have been 0
        self.clock: TrainClock | None = None  # the estimate and progress lines (exp/progress.py)

    def elapsed(self) -> float:
        """Training wall time so far, earlier invocations included (seconds)."""
        return round(time.monotonic() - self.clock_zero, 3)

    def run(self) -> dict[str, Any]:
        """Train until early stopping or --train_epochs (from last.pth under --resume); returns `epochs_run`,
        `best_epoch`, `train_seconds` and `curve`. The best weights stay in checkpoint.pth."""
        if self.args.resume:
            self.resume()
        self.clock_zero = time.monotonic() - self.progress.seconds
        self.clock = TrainClock(self.run_shape(), self.args.train_epochs)
        with self.stop, torch.autograd.set_detect_anomaly(self.args.detect_anomaly):
            while not self.progress.finished:
                self.train_epoch()
                lr = self.optimizer.param_groups[0]["lr"]  # the epoch's, before the schedule moves it
                self.finish_epoch()
                self.exp.trackers.log_epoch(self.progress.curve[-1], lr)
                self.clock.epoch_end(self.progress.epoch, self.progress.finished)
        return {"epochs_run": self.progress.epoch, "best_epoch": self.early_stopping.best_epoch,
                "train_seconds": self.elapsed(), "curve": self.progress.curve}

    def run_shape(self) -> RunShape:
        """The work left to this invocation (exp/progress.py): epochs, steps and evaluation batches."""
        # No test pass per epoch under --vali_only, nor under --protocol strict where the task reads TEST once.
        skipped = getattr(self.args, "vali_only", flag_default("vali_only")) or "test" not in self.data
        test_batches = 0 if skipped else len(self.data["test"][1])
        return RunShape(steps_per_epoch=self.steps_per_epoch, eval_batches=len(self.data["val"][1]) + test_batches,
                        test_batches=test_batches, epochs=self.args.train_epochs - self.progress.epoch)

    def train_epoch(self) -> None:
        """The micro-batches of the current epoch not trained yet, with progress bar or TSLib's lines."""
        args, p = self.args, self.progress
        loader = self.data["train"][1]
        loader.sampler.set_epoch(p.epoch)
        # A resumed epoch replays the same permutation and skips the batches already trained.
        loader.sampler.skip(p.step * args.batch_size)
        self.exp.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        show_bar = self.exp._bars()
        bar = tqdm(loader, desc=f"epoch {p.epoch + 1}/{args.train_epochs}", initial=p.step,
                   total=self.steps_per_epoch, leave=False, disable=not show_bar, dynamic_ncols=True)
        epoch_start = time.time()
        self.clock.epoch_start(p.step)
        for i, batch in enumerate(bar, start=p.step):
            batch_loss = self.train_batch(i, batch)
            self.exp.trackers.log_batch(p.epoch * self.steps_per_epoch + i + 1, batch_loss,
                                        self.optimizer.param_groups[0]["lr"])
            if show_bar:
                bar.set_postfix(loss=f"{batch_loss:.4f}")
            # TSLib's progress lines without a bar, and the run's estimate
            self.clock.step_done(i, p.epoch, batch_loss, text_lines=not show_bar)
        bar.close()
        logger.info("Epoch: %d cost time: %s", p.epoch + 1, time.time() - epoch_start)

    def train_batch(self, i: int, batch: Any) -> float:
        """Forward and backward micro-batch `i` of the epoch (no DDP gradient sync until a micro-batch that steps
        the optimiser: its group's last one, or under --train_loop official the one its counter picks); raises
        NonFiniteLossError before anything is stepped or saved. Returns the batch's loss."""
        exp, accum, p = self.exp, self.args.grad_accum, self.progress
        exp.before_train_batch(p.epoch, i)
        group_start = (i // accum) * accum
        group_size = min(accum, self.steps_per_epoch - group_start)
        syncs = official_steps_optimizer(i, accum) if exp.step.official else i + 1 == group_start + group_size
        no_sync = isinstance(exp.model, DistributedDataParallel) and not syncs
        with exp.model.no_sync() if no_sync else contextlib.nullcontext():
            out, y = exp._predict(batch)
            loss = exp.step.loss(out, y)
            batch_loss = loss.item()
            if any_rank(not math.isfinite(batch_loss), self.dist):
                raise non_finite_loss_error(loss, batch_loss, i + 1, p.epoch + 1, exp._bare_model(), batch,
                                            self.data["train"][0])
            exp.step.backward(loss, group_size)
        p.loss_sum += batch_loss * y.shape[0]
        p.loss_count += y.shape[0]
        if syncs:
            exp.step.update()
            p.step = i + 1
            every = self.args.save_every_steps
            optimizer_steps = (official_optimizer_steps(p.step, accum) if exp.step.official
                               else math.ceil(p.step / accum))
            if every > 0 and optimizer_steps % every == 0:
                self.save_last()
            self.stop_if_requested()
        else:
            exp.step.skip_update()
        return batch_loss

    def finish_epoch(self) -> None:
        """Evaluate, early-stop, schedule the learning rate, save last.pth (TSLib's end-of-epoch order)."""
        p = self.progress
        loss_sum, loss_count = all_reduce_sum([p.loss_sum, float(p.loss_count)], self.dist)
        train_loss = loss_sum / max(loss_count, 1.0)
        entry, watched = self.exp.evaluate_epoch(p.epoch + 1, self.steps_per_epoch, train_loss, self.data)
        p.curve.append(entry)
        self.early_stopping(watched, self.exp._bare_model(), str(self.path), epoch=p.epoch + 1)
        check_validation_loss(entry["vali"], p.epoch + 1, self.early_stopping.best_epoch)
        p.epoch, p.step, p.loss_sum, p.loss_count = p.epoch + 1, 0, 0.0, 0
        if self.early_stopping.early_stop:
            logger.info("Early stopping")
        elif self.exp.epoch_lr_schedule:
            adjust_learning_rate(self.optimizer, p.epoch, self.args)
        p.finished = self.early_stopping.early_stop or p.epoch >= self.args.train_epochs
        self.save_last()
        self.stop_if_requested()

    def stop_if_requested(self) -> None:
        """After a consistent save point: save last.pth and stop when any rank received SIGTERM/SIGINT."""
        if not any_rank(self.stop.signum is not None, self.dist):
            return
        self.save_last()
        # Ranks that did not receive the signal themselves report SIGTERM (what torchrun forwards).
        signum = self.stop.signum or int(signal.SIGTERM)
        p = self.progress
        raise TrainingInterrupted(signum, f"training stopped by signal {signum} at epoch {p.epoch + 1}, batch "
                                          f"{p.step}; state saved to {self.path / LAST_FILE}; run the same command "
                                          "with --resume to continue")

    def save_last(self) -> None:
        """Write last.pth (rank 0) with the RNG states of every rank; a collective, so all ranks call it."""
        rng = gather_to_main(capture_rng_state(), self.dist)
        self.progress.seconds = self.elapsed()
        if not self.dist.is_main:
            return
        atomic_torch_save({
            "format": LAST_FORMAT,
            "args": run_fingerprint(self.args),
            "world_size": self.dist.world_size,
            "progress": asdict(self.progress),
            "model": self.exp._bare_model().state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "scaler": self.scaler.state_dict(),
            "early_stopping": self.early_stopping.state_dict(),
            "best_model": self.early_stopping.best_state,
            "train_sampler": self.data["train"][1].sampler.state_dict(),
            "rng": rng,
        }, self.path / LAST_FILE)

    def resume(self) -> None:
        """--resume: continue from last.pth at its epoch and batch (from scratch when there is none yet)."""
        state = self.exp.resume_state(self.setting)
        last = self.path / LAST_FILE
        if state is None:
            logger.info("--resume: no %s yet; starting from scratch", last)
            return
        if state["world_size"] != self.dist.world_size:
            raise UserInputError(f"--resume: {last} was written by {state['world_size']} process(es) but this "
                                 f"run has {self.dist.world_size}; resume with the same number of processes")
        load_model_state(self.exp._bare_model(), state["model"], last)
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.early_stopping.load_state_dict(state["early_stopping"])
        self.restore_best(state.get("best_model"), last)
        self.progress = TrainProgress(**state["progress"])
        if self.progress.step > 0:
            # Mid-epoch: the epoch's permutation is replayed, not drawn again.
            self.data["train"][1].sampler.load_state_dict(state["train_sampler"])
        restore_rng_state(state["rng"][self.dist.rank])
        logger.info("--resume: continuing %s at epoch %d, batch %d", self.setting, self.progress.epoch + 1,
                    self.progress.step)

    def restore_best(self, best: dict | None, last: Path) -> None:
        """Put the resumed run's best weights so far back in early stopping (rank 0, which saves) and, when it is
        missing, write `checkpoint.pth` from them; a run with a best epoch but neither is refused before it
        trains (on every rank)."""
        stopping = self.early_stopping
        if stopping.best_epoch == 0:
            return
        best_file = self.path / BEST_FILE

        def restore() -> None:
            if best is not None:
                stopping.best_state = best
                if not best_file.is_file():
                    atomic_torch_save(best, best_file)
                    logger.info("--resume: %s was missing; written again from %s", best_file, last)
            elif best_file.is_file():
                # A last.pth of an earlier version: the best weights are only in checkpoint.pth.
                stopping.best_state = load_checkpoint(best_file)
            else:
                raise UserInputError(
                    f"--resume: {best_file} (the epoch-{stopping.best_epoch} best weights) is missing and {last} "
                    "was written by an earlier version that does not carry them; put checkpoint.pth back beside "
                    "it, or drop --resume to train again")

        on_main(restore, self.dist)


def non_finite_loss_error(loss: torch.Tensor, value: float, batch: int, epoch: int, model: torch.nn.Module,
                          inputs: Any = (), dataset: Any = None) -> NonFiniteLossError:
    """Describe a NaN/inf loss: NaN/inf in the input batch itself (naming the data file: the data, not the
    learning rate, produced it), else the first non-finite parameter of `model` (unwrapped), else the first
    non-finite gradient of a diagnostic backward pass (never stepped), else the op --detect_anomaly caught in it."""
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
    culprit = first_non_finite(model) or anomaly or (
        "every parameter and gradient is finite, so the forward pass itself produced it")
    return NonFiniteLossError(
        f"non-finite training loss ({value}) at epoch {epoch}, batch {batch}; {culprit}; {BEST_FILE} and "
        f"{LAST_FILE} keep the last good state; lower --learning_rate or set --max_grad_norm, and use "
        "--detect_anomaly to find the op")
