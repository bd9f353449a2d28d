"""The long-term-forecasting training step, in one place: the experiment trains with it, and the efficiency
report (`compare/grid/efficiency.py`) and the profilers (`benchmarks/`) time exactly this step.

For a loader batch (x `[B, L, C]`, y `[B, Ll + H, C]`, x_mark `[B, L, F]`, y_mark `[B, Ll + H, F]`):

    dec  = [y[:, :Ll]; 0]                                     (decoder input, `[B, Ll + H, C]`)
    ŷ    = model(x, x_mark, dec, y_mark)[:, -H:]               (under autocast when AMP is on)
    loss = mean((ŷ[..., f:] - y[:, -H:, f:])²)                 (f = -1 for --features MS, else 0)
    backward of scaler.scale(loss / k)                        (k = size of the accumulation group)
    update: unscale, clip to --max_grad_norm, step, scaler update, zero grads, OneCycle step

One precision path: `torch.autocast(enabled=...)` and `GradScaler(enabled=...)` (loss scaling only for
fp16 on CUDA). Clipping happens after unscaling, so --max_grad_norm bounds the true gradient.

`--train_loop official` swaps in the official CAPS code's loop (`Exp_Main.train`, caps_reference.md §5 and
§8 items 11-13), quirks included, for reproducing its numbers:

    every micro-batch: zero grads; backward of scaler.scale(loss)    (no division by k)
    step batches:      clip the loss-SCALED gradient to --max_grad_norm; scaler.step (unscales, skips
                       on inf/NaN); scaler update; zero grads
    every micro-batch: OneCycle step, with β1 cycled 0.85 ↔ 0.95       (PyTorch's default cycle_momentum)

A step batch is one where the official counter says so (`official_steps_optimizer`): only the last
micro-batch's gradient is ever applied. Under AMP (CUDA only) the GradScaler runs for bf16 as for fp16,
starting at 65536, so the clipped-then-unscaled gradient has norm ≈ --max_grad_norm / scale. On CPU AMP is
off, the scale is 1 and the clip bounds the true gradient, as the official code does without --use_amp.
"""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Callable, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from exp.train_options import OFFICIAL_COUNTER_PERIOD, TRAIN_LOOPS, unknown_train_loop
from utils.flag_defaults import flag_default

Batch = Sequence[torch.Tensor]


def compiled_runner(model: nn.Module, args: argparse.Namespace) -> Callable[..., torch.Tensor]:
    """What the step calls for the forward pass: `model`, or with --compile its torch.compile wrapper in
    --compile_mode (reduce-overhead: the compiled graphs replayed as CUDA graphs)."""
    if not getattr(args, "compile", flag_default("compile")):
        return model
    return torch.compile(model, mode=getattr(args, "compile_mode", flag_default("compile_mode")))


def official_steps_optimizer(batch: int, group_size: int) -> bool:
    """Whether the official loop steps the optimiser after 0-based `batch` of an epoch.

    Its counter is incremented at the top of each batch and reset to 0 after every 100th batch (before the
    check), so at the check it reads (batch + 1) % 100; it steps when counter + 1 is a multiple of
    group_size (--grad_accum). group_size 1 steps every batch; 16 steps 6 times per 100 batches.
    """
    return ((batch + 1) % OFFICIAL_COUNTER_PERIOD + 1) % group_size == 0


def official_optimizer_steps(batches: int, group_size: int) -> int:
    """How many times the official loop steps in the first `batches` batches of an epoch (closed form of
    counting `official_steps_optimizer`): each full 100 batches the counter takes every value 0..99 once."""
    full, rest = divmod(batches, OFFICIAL_COUNTER_PERIOD)
    # Within a block, batches 0..rest-1 leave the counter at 1..rest, so counter + 1 runs over 2..rest+1.
    partial = (rest + 1) // group_size - (1 if group_size == 1 else 0)
    return full * (OFFICIAL_COUNTER_PERIOD // group_size) + partial


def onecycle_steps_per_epoch(args: argparse.Namespace, batches: int) -> int:
    """OneCycle steps per epoch of `batches` micro-batches: ours steps per optimiser step
    (ceil(batches / --grad_accum)); official steps every micro-batch."""
    return batches if args.train_loop == "official" else math.ceil(batches / args.grad_accum)


def unscale_clip_step(parameters: list[torch.Tensor], optimizer: torch.optim.Optimizer,
                      scaler: torch.amp.GradScaler, max_grad_norm: float) -> None:
    """Ours: unscale, clip the true gradient to max_grad_norm (0: no clip), step (the scaler skips steps
    with inf/NaN gradients) and update the scale. The applied gradient g·min(1, c / (‖g‖ + 1e-6))."""
    if max_grad_norm > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)
    scaler.step(optimizer)
    scaler.update()


def clip_scaled_step(parameters: list[torch.Tensor], optimizer: torch.optim.Optimizer,
                     scaler: torch.amp.GradScaler, max_grad_norm: float) -> None:
    """Official: clip the still loss-scaled gradient s·g to max_grad_norm c, then step (the scaler unscales
    inside and skips on inf/NaN) and update the scale. The applied gradient is
    s·g·min(1, c / (s‖g‖ + 1e-6)) / s, i.e. ≈ c·g / (s‖g‖) with norm ≈ c / s whenever s‖g‖ > c: at the
    initial scale 65536 and c = 1 that is 1.5e-5, where Adam's ε (1e-8) starts to count. At s = 1
    (no loss scaling: CPU, or AMP off) it equals `unscale_clip_step`."""
    if max_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)
    scaler.step(optimizer)
    scaler.update()


CLIP_AND_STEP = {"ours": unscale_clip_step, "official": clip_scaled_step}


def amp_settings(args: argparse.Namespace, device: torch.device) -> tuple[bool, torch.dtype]:
    """(enabled, dtype) of autocast: --use_amp takes effect on CUDA only; --amp_dtype bf16 or fp16."""
    enabled = bool(args.use_amp) and device.type == "cuda"
    return enabled, torch.bfloat16 if args.amp_dtype == "bf16" else torch.float16


def make_optimizer(model: nn.Module, args: argparse.Namespace) -> torch.optim.Optimizer:
    """--optimizer adam (TSLib's) or adamw (decoupled --weight_decay), at --learning_rate."""
    cls = torch.optim.AdamW if args.optimizer == "adamw" else torch.optim.Adam
    return cls(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)


def make_onecycle(optimizer: torch.optim.Optimizer, args: argparse.Namespace,
                  steps_per_epoch: int) -> torch.optim.lr_scheduler.OneCycleLR:
    """OneCycle as the CAPS recipe: linear anneal, div 10, final div 1e4, schedule length train_epochs + 1
    epochs of `steps_per_epoch` steps (`onecycle_steps_per_epoch`).

    --train_loop ours: no momentum cycling, so AdamW's beta1 stays as set. official: PyTorch's default
    cycle_momentum, which overwrites beta1 at every step: from max_momentum 0.95 down to base_momentum 0.85
    over the warm-up, then linearly back up to 0.95 at the last step (with --pct_start 0, the official
    scripts' value, beta1 = 0.85 + 0.1·(n + 1) / total after n steps).
    """
    official = args.train_loop == "official"
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        max_lr=args.learning_rate,
        total_steps=(args.train_epochs + 1) * steps_per_epoch,
        pct_start=args.pct_start,
        anneal_strategy="linear",
        div_factor=10.0,
        final_div_factor=1e4,
        cycle_momentum=official,
        base_momentum=0.85,
        max_momentum=0.95,
    )


def model_inputs(batch: Batch, label_len: int, pred_len: int,
                 device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A loader batch on `device` as float32: (x, x_mark, dec, y_mark, y) with dec = [y[:, :Ll]; zeros] `[B, Ll + H, C]`."""
    x, y, x_mark, y_mark = (t.float().to(device, non_blocking=True) for t in batch)
    dec = torch.cat([y[:, :label_len, :], torch.zeros_like(y[:, -pred_len:, :])], dim=1)  # [B, Ll + H, C]
    return x, x_mark, dec, y_mark, y


class ForecastStep:
    """Forward, loss, backward and optimiser update of long-term forecasting.

    model: the module whose parameters are clipped (a DDP/DataParallel wrapper is fine); runner: what is
    called for the forward pass (the model, or its torch.compile wrapper). optimizer, scaler and scheduler
    may be None for evaluation-only use (`predict`, `loss`); a given scaler (e.g. a CPU GradScaler with an
    explicit init_scale, in tests) replaces the default one. Calling the step runs one full optimiser step
    on one batch; the experiment calls the same parts itself to accumulate gradients over micro-batches:
    `backward` for each, then `update` where the optimiser steps and `skip_update` where it does not.
    args.train_loop picks our loop or the official one (module docstring).
    """

    def __init__(self, model: nn.Module, args: argparse.Namespace, device: torch.device, *,
                 runner: Callable[..., torch.Tensor] | None = None,
                 optimizer: torch.optim.Optimizer | None = None,
                 scaler: torch.amp.GradScaler | None = None,
                 scheduler: torch.optim.lr_scheduler.LRScheduler | None = None) -> None:
        if args.train_loop not in TRAIN_LOOPS:
            raise unknown_train_loop(args.train_loop)
        self.model, self.runner, self.device = model, model if runner is None else runner, device
        self.label_len, self.pred_len = args.label_len, args.pred_len
        self.target_from = -1 if args.features == "MS" else 0
        self.max_grad_norm = args.max_grad_norm
        self.amp_enabled, self.amp_dtype = amp_settings(args, device)
        self.official = args.train_loop == "official"
        self.clip_and_step = CLIP_AND_STEP[args.train_loop]
        self.optimizer, self.scheduler = optimizer, scheduler
        if scaler is None and optimizer is not None:
            # The official code builds its GradScaler whenever AMP is on, bf16 included; ours only for fp16.
            scaling = self.amp_enabled and (self.official or self.amp_dtype == torch.float16)
            scaler = torch.amp.GradScaler(device.type, enabled=scaling)
        self.scaler = scaler

    def predict(self, batch: Batch, runner: Callable[..., torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(ŷ, y) over the last pred_len steps, all channels: `[B, H, c_out]`, `[B, H, C]`."""
        x, x_mark, dec, y_mark, y = model_inputs(batch, self.label_len, self.pred_len, self.device)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = (self.runner if runner is None else runner)(x, x_mark, dec, y_mark)
        return out[:, -self.pred_len:, :], y[:, -self.pred_len:, :]

    def targets(self, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The scored channels (the last one for --features MS) with ŷ in float32."""
        return out[..., self.target_from:].float(), y[..., self.target_from:]

    def loss(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """MSE over the scored channels of a `predict` result."""
        return F.mse_loss(*self.targets(out, y))

    def backward(self, loss: torch.Tensor, group_size: int = 1) -> None:
        """Ours: accumulate the gradient of loss / group_size (loss-scaled under fp16 AMP). Official: zero
        the gradients first (as the official code does at the top of every batch) and back-propagate the
        undivided, loss-scaled loss; group_size is ignored."""
        if self.official:
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
        else:
            self.scaler.scale(loss / group_size).backward()

    def update(self) -> None:
        """Step the optimiser, zero the gradients, step OneCycle. Ours: unscale, clip, step
        (`unscale_clip_step`); official: clip the scaled gradient, step (`clip_scaled_step`)."""
        self.clip_and_step(list(self.model.parameters()), self.optimizer, self.scaler, self.max_grad_norm)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scheduler is not None:
            self.scheduler.step()

    def skip_update(self) -> None:
        """A micro-batch after which the optimiser does not step. Ours: nothing (its gradient stays
        accumulated). Official: OneCycle still steps (it steps every batch). The official code also clips
        here; that gradient is zeroed before it is ever applied, so the clip is left out."""
        if self.official and self.scheduler is not None:
            # With --grad_accum > 1 the official loop steps OneCycle before the first optimiser step, so the
            # first step runs at a later learning rate. That is what we reproduce; PyTorch's warning about
            # the order would only alarm.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler\.step\(\)` before",
                                        category=UserWarning)
                self.scheduler.step()

    def __call__(self, batch: Batch) -> torch.Tensor:
        """One optimiser step on one batch; returns the (detached) loss."""
        loss = self.loss(*self.predict(batch))
        self.backward(loss)
        self.update()
        return loss.detach()
