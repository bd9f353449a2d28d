"""The short-term (M4) training losses of TSLib's `--loss` flag: SMAPE, MAPE, MASE and MSE.

Every loss has TSLib's signature ``loss(insample, freq, forecast, target, mask)``: insample `[B, L]` or
`[B, L, C]` (the input window, zero-padded on the left), freq the seasonal period m, forecast, target
and mask `[B, H]` or `[B, H, C]` (mask is 1 where the target exists, 0 on right padding). Divisions use
`divide_no_nan` (N-BEATS): a 0/0 or x/0 term becomes 0 instead of NaN/inf, so padded steps and constant
inputs add nothing.

    SMAPE = 200 · mean( |f − y| / (|f| + |y|) · mask )        (denominator without gradient)
    MAPE  = mean( |f − y| · mask / y )                       (signed y, as TSLib: |(f − y)·mask/y|)
    MASE  = mean( |y − f| · mask / s ),  s = mean_t |x[t+m] − x[t]| over the input window
    MSE   = mean( (f − y)² · mask )

TSLib builds `nn.MSELoss()` for `--loss MSE` and calls it with these five arguments, which raises a
TypeError; here MSE has the shared signature and ignores the padded steps.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["LOSSES", "divide_no_nan", "mape_loss", "mase_loss", "mse_loss", "smape_loss"]

Loss = Callable[[torch.Tensor, int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def divide_no_nan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a / b with NaN and +inf results replaced by 0 (TSLib's; -inf is kept, as there)."""
    result = a / b
    return torch.where(torch.isnan(result) | (result == float("inf")), torch.zeros_like(result), result)


def smape_loss(insample: torch.Tensor, freq: int, forecast: torch.Tensor, target: torch.Tensor,
               mask: torch.Tensor) -> torch.Tensor:
    """Symmetric MAPE in percent (0..200); the denominator is detached, as TSLib's `.data`."""
    denominator = forecast.detach().abs() + target.detach().abs()
    return 200 * torch.mean(divide_no_nan((forecast - target).abs(), denominator) * mask)


def mape_loss(insample: torch.Tensor, freq: int, forecast: torch.Tensor, target: torch.Tensor,
              mask: torch.Tensor) -> torch.Tensor:
    """MAPE as a fraction (not percent): mean |(f − y) · mask / y|."""
    return torch.mean(((forecast - target) * divide_no_nan(mask, target)).abs())


def mase_loss(insample: torch.Tensor, freq: int, forecast: torch.Tensor, target: torch.Tensor,
              mask: torch.Tensor) -> torch.Tensor:
    """MASE: errors scaled by each window's mean absolute seasonal difference (lag `freq`, time dim 1)."""
    scale = torch.mean((insample[:, freq:] - insample[:, :-freq]).abs(), dim=1)  # [B] or [B, C]
    return torch.mean((target - forecast).abs() * divide_no_nan(mask, scale[:, None]))


def mse_loss(insample: torch.Tensor, freq: int, forecast: torch.Tensor, target: torch.Tensor,
             mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over every step, padded steps counting as zero error."""
    return torch.mean((forecast - target) ** 2 * mask)


#: `--loss` value → loss, in TSLib's order.
LOSSES: dict[str, Loss] = {"MSE": mse_loss, "MAPE": mape_loss, "MASE": mase_loss, "SMAPE": smape_loss}
