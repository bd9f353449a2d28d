"""The imputation training step: TSLib's random point mask, the model's reconstruction, and the MSE on
the hidden points only.

For a loader batch (x `[B, L, C]`, y, x_mark `[B, L, F]`, y_mark; y and y_mark are not used):

    m    = random_point_mask([B, L, C], --mask_rate)          (0 hidden, 1 observed; utils/random_mask.py)
    x̂    = model(x · m, x_mark, None, None, m)                 (`[B, L, c_out]`, under autocast with AMP)
    loss = mean over hidden points of (x̂[..., f:] − x[..., f:])²   (f = -1 for --features MS, else 0)

`predict` hands the target on as x with NaN at the observed points, so `loss` and the experiment's
validation read "what is scored" from the target alone. Backward and update are ForecastStep's.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

from exp.train_step import Batch, ForecastStep
from utils.random_mask import OBSERVED, random_point_mask


class ImputationStep(ForecastStep):
    """ForecastStep with imputation's inputs and loss.

    `generator` is where masks are drawn from: None is the global torch RNG (TSLib's draw); the
    experiment sets a seeded `torch.Generator` for `--rng_stream epoch` (exp/exp_imputation.py).
    """

    def __init__(self, model, args: argparse.Namespace, device: torch.device, **kwargs) -> None:
        super().__init__(model, args, device, **kwargs)
        self.mask_rate = args.mask_rate
        self.generator: torch.Generator | None = None

    def reconstruct(self, batch: Batch, runner=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x̂ `[B, L, c_out]`, x `[B, L, C]`, mask `[B, L, C]`) for one loader batch; draws one mask."""
        x = batch[0].float().to(self.device, non_blocking=True)
        x_mark = batch[2].float().to(self.device, non_blocking=True)
        mask = random_point_mask(tuple(x.shape), self.mask_rate, self.generator, self.device)
        inp = x.masked_fill(mask == 0, 0.0)  # [B, L, C]
        with torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_enabled):
            out = (self.runner if runner is None else runner)(inp, x_mark, None, None, mask)
        return out, x, mask

    def predict(self, batch: Batch, runner=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(x̂ `[B, L, c_out]`, target `[B, L, C]`): the target is x at hidden points and NaN at observed ones."""
        out, x, mask = self.reconstruct(batch, runner)
        return out, x.masked_fill(mask == OBSERVED, float("nan"))

    def loss(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """MSE over the hidden points of the scored channels (TSLib's `criterion(out[mask == 0], x[mask == 0])`).

        A batch with no hidden point (possible at a small --mask_rate) gives a zero loss that still
        back-propagates, where TSLib's mean over nothing is NaN."""
        pred, target = self.targets(out, y)
        hidden = ~torch.isnan(target)
        if not bool(hidden.any()):
            return pred.sum() * 0.0
        return F.mse_loss(pred[hidden], target[hidden])
