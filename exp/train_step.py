"""The long-term-forecasting training step, in one place: the experiment trains with it, and the efficiency
report (`compare/efficiency.py`) and the profilers (`benchmarks/`) time exactly this step.

For a loader batch (x `[B, L, C]`, y `[B, Ll + H, C]`, x_mark `[B, L, F]`, y_mark `[B, Ll + H, F]`):

    dec  = [y[:, :Ll]; 0]                                     (decoder input, `[B, Ll + H, C]`)
    ŷ    = model(x, x_mark, dec, y_mark)[:, -H:]               (under autocast when AMP is on)
    loss = mean((ŷ[..., f:] - y[:, -H:, f:])²)                 (f = -1 for --features MS, else 0)
    backward of scaler.scale(loss / k)                        (k = size of the accumulation group)
    update: unscale, clip to --max_grad_norm, step, scaler update, zero grads, OneCycle step

One precision path: `torch.autocast(enabled=...)` and `GradScaler(enabled=...)` (loss scaling only for
fp16 on CUDA). Clipping happens after unscaling, so --max_grad_norm bounds the true gradient.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

Batch = Sequence[torch.Tensor]


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
    """OneCycle stepped per optimiser step, as the CAPS recipe: linear anneal, div 10, final div 1e4,
    schedule length train_epochs + 1 epochs, and no momentum cycling (AdamW's beta1 stays as set)."""
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        max_lr=args.learning_rate,
        total_steps=(args.train_epochs + 1) * steps_per_epoch,
        pct_start=args.pct_start,
        anneal_strategy="linear",
        div_factor=10.0,
        final_div_factor=1e4,
        cycle_momentum=False,
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
    may be None for evaluation-only use (`predict`, `loss`). Calling the step runs one full optimiser step
    on one batch; the experiment calls the same parts itself to accumulate gradients over micro-batches.
    """

    def __init__(self, model: nn.Module, args: argparse.Namespace, device: torch.device, *,
                 runner: Callable[..., torch.Tensor] | None = None,
                 optimizer: torch.optim.Optimizer | None = None,
                 scaler: torch.amp.GradScaler | None = None,
                 scheduler: torch.optim.lr_scheduler.LRScheduler | None = None) -> None:
        self.model, self.runner, self.device = model, runner or model, device
        self.label_len, self.pred_len = args.label_len, args.pred_len
        self.target_from = -1 if args.features == "MS" else 0
        self.max_grad_norm = args.max_grad_norm
        self.amp_enabled, self.amp_dtype = amp_settings(args, device)
        self.optimizer, self.scheduler = optimizer, scheduler
        if scaler is None and optimizer is not None:
            scaler = torch.amp.GradScaler(device.type, enabled=self.amp_enabled and self.amp_dtype == torch.float16)
        self.scaler = scaler

    def predict(self, batch: Batch, runner: Callable[..., torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(ŷ, y) over the last pred_len steps, all channels: `[B, H, c_out]`, `[B, H, C]`."""
        x, x_mark, dec, y_mark, y = model_inputs(batch, self.label_len, self.pred_len, self.device)
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = (runner or self.runner)(x, x_mark, dec, y_mark)
        return out[:, -self.pred_len:, :], y[:, -self.pred_len:, :]

    def targets(self, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The scored channels (the last one for --features MS) with ŷ in float32."""
        return out[..., self.target_from:].float(), y[..., self.target_from:]

    def loss(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """MSE over the scored channels of a `predict` result."""
        return F.mse_loss(*self.targets(out, y))

    def backward(self, loss: torch.Tensor, group_size: int = 1) -> None:
        """Accumulate the gradient of loss / group_size (loss-scaled under fp16 AMP)."""
        self.scaler.scale(loss / group_size).backward()

    def update(self) -> None:
        """Unscale, clip, step the optimiser and the scaler, zero the gradients, step OneCycle."""
        if self.max_grad_norm > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        if self.scheduler is not None:
            self.scheduler.step()

    def __call__(self, batch: Batch) -> torch.Tensor:
        """One optimiser step on one batch; returns the (detached) loss."""
        loss = self.loss(*self.predict(batch))
        self.backward(loss)
        self.update()
        return loss.detach()
