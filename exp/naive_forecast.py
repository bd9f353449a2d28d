"""Naive forecasters scored on the test windows a forecasting model is scored on, in the same loop.

For an input window x ``[L, C]`` and horizon H:

- naive (repeat the last value): ŷ[t] = x[L-1] for t = 0..H-1;
- seasonal naive with period p: ŷ[t] = x[L - p + (t mod p)], i.e. the last observed cycle repeated; it needs
  L ≥ p, otherwise it is skipped and the record says why.

Both are scored like the model (`utils.metrics.metric`: MSE = mean (ŷ - y)², MAE = mean |ŷ - y| over every
window, step and scored channel), on the same channels (the last one for --features MS) and in the same space
(standardised, or original units with --inverse). `NaiveScores` keeps running float64 sums, so a shard of the
test windows (one rank under torchrun) is scored alone and the shards are merged by adding their sums.

The period is one day of steps for sub-daily data (hourly 24, 15-minute 96, 10-minute 144), a week for daily
data (7, business days 5), a year for weekly (52) and monthly (12) data. The step comes from the file's
timestamps (their median step), else from what the dataset class knows of its file (Solar 10 min, PEMS 5 min),
else from --freq; TSLib's scripts leave --freq at h for 15-minute ETTm files, so the timestamps come first.

`naive_test_scores` scores them for a finished run from its flags alone, on the windows, shards and batches its
test loop read (`exp/scored_windows.py`), so it returns the fields that run recorded, bit for bit.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from exp.scored_windows import inverts, scored_from, scored_test_windows, shard_loader, to_original_units
from utils.timefeatures import base_unit

__all__ = ["NAIVE_METHODS", "NaiveScores", "naive_test_scores", "period_of_step", "seasonal_period"]

#: the record keys of the naive forecasters, in the order they are reported
NAIVE_METHODS = ("naive", "seasonal_naive")

_DAY = pd.Timedelta(days=1)
#: the step of each --freq base unit whose step is fixed (b, w, m, a are handled by `period_of_step`'s callers)
_UNIT_STEPS = {"s": pd.Timedelta(seconds=1), "t": pd.Timedelta(minutes=1), "h": pd.Timedelta(hours=1),
               "d": _DAY}
#: seasonal periods of --freq units without a fixed step: business days (a week of 5), weeks and months (a year)
_UNIT_PERIODS = {"b": 5, "w": 52, "m": 12}


def period_of_step(step: pd.Timedelta) -> int | None:
    """The seasonal period in steps of a series sampled every `step`: one day of steps when `step` divides a
    day, 7 for daily steps, 52 for weekly and 12 for monthly (28–31 days); None otherwise."""
    if step <= pd.Timedelta(0):
        return None
    if step < _DAY:
        return int(_DAY // step) if _DAY % step == pd.Timedelta(0) else None
    if step == _DAY:
        return 7
    if step == pd.Timedelta(days=7):
        return 52
    if pd.Timedelta(days=28) <= step <= pd.Timedelta(days=31):
        return 12
    return None


def _step_text(step: pd.Timedelta) -> str:
    """A step in its largest whole unit (1h, 15min, 7D, 30s), else as the Timedelta prints."""
    for unit, text in ((_DAY, "D"), (pd.Timedelta(hours=1), "h"), (pd.Timedelta(minutes=1), "min"),
                       (pd.Timedelta(seconds=1), "s")):
        if step % unit == pd.Timedelta(0):
            return f"{step // unit}{text}"
    return str(step)


def seasonal_period(interval: pd.Timedelta | None, freq: str) -> tuple[int | None, str]:
    """(period in steps or None, where it came from): from the dataset's sampling `interval` when known, else
    from `freq` (--freq: a base unit with an optional multiple, e.g. h, 15min, 10min)."""
    if interval is not None and not pd.isna(interval):
        return period_of_step(interval), f"data step {_step_text(interval)}"
    unit = base_unit(freq)
    if unit in _UNIT_PERIODS:
        return _UNIT_PERIODS[unit], f"--freq {freq}"
    if unit not in _UNIT_STEPS:
        return None, f"--freq {freq}"
    multiple = re.match(r"^\s*(\d*)", freq).group(1)
    return period_of_step(_UNIT_STEPS[unit] * (int(multiple) if multiple else 1)), f"--freq {freq}"


@dataclass
class NaiveScores:
    """Running sums of the naive forecasters' errors over test windows.

    pred_len: H. period: the seasonal period p (None: seasonal naive is not scored, `skipped` says why).
    sums: method -> [Σ (ŷ - y)², Σ |ŷ - y|, number of elements], in float64."""

    pred_len: int
    period: int | None
    period_from: str
    skipped: str | None = None
    sums: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def for_test(cls, dataset, args: argparse.Namespace) -> NaiveScores:
        """The accumulator of a run's test windows: its period from the dataset's step or --freq."""
        period, source = seasonal_period(getattr(dataset, "interval", None), args.freq)
        skipped = None
        if period is None:
            skipped = f"no seasonal period is known for the sampling step ({source})"
        elif args.seq_len < period:
            skipped = f"--seq_len {args.seq_len} is shorter than the seasonal period {period} ({source})"
        return cls(pred_len=args.pred_len, period=period, period_from=source, skipped=skipped)

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        """Score a batch: inputs x ``[B, L, C]`` and targets y ``[B, H, C]`` (the scored channels)."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self._add("naive", np.broadcast_to(x[:, -1:, :], y.shape), y)
        if self.skipped is None:
            steps = x.shape[1] - self.period + np.arange(y.shape[1]) % self.period
            self._add("seasonal_naive", x[:, steps, :], y)

    def add_batch(self, batch: Sequence[torch.Tensor], inverse: Callable[[np.ndarray], np.ndarray] | None,
                  target_from: int) -> None:
        """Score a loader batch (x, y, x_mark, y_mark) as the model is scored: de-standardised by `inverse`
        (None: as served) and from channel `target_from` on (-1 for --features MS)."""
        x = batch[0].detach().cpu().numpy()
        y = batch[1][:, -self.pred_len:].detach().cpu().numpy()
        if inverse is not None:
            x, y = inverse(x), inverse(y)
        self.add(x[..., target_from:], y[..., target_from:])

    def _add(self, method: str, forecast: np.ndarray, y: np.ndarray) -> None:
        err = forecast - y
        sums = self.sums.setdefault(method, [0.0, 0.0, 0])
        sums[0] += float(np.sum(err**2))
        sums[1] += float(np.sum(np.abs(err)))
        sums[2] += err.size

    @classmethod
    def merge(cls, shards: Sequence[NaiveScores]) -> NaiveScores:
        """One accumulator holding every shard's sums (the shards share pred_len and period)."""
        merged = cls(shards[0].pred_len, shards[0].period, shards[0].period_from, shards[0].skipped)
        for shard in shards:
            for method, (sq, ab, n) in shard.sums.items():
                total = merged.sums.setdefault(method, [0.0, 0.0, 0])
                total[0], total[1], total[2] = total[0] + sq, total[1] + ab, total[2] + n
        return merged

    def record(self) -> dict:
        """The `results.jsonl` fields: `naive` {mse, mae}; `seasonal_naive` {mse, mae, period, period_from},
        with mse/mae null and `skipped` saying why when it was not scored."""
        scores = {m: {"mse": sq / n, "mae": ab / n} for m, (sq, ab, n) in self.sums.items() if n}
        seasonal = scores.get("seasonal_naive", {"mse": None, "mae": None})
        seasonal.update(period=self.period, period_from=self.period_from)
        if self.skipped is not None:
            seasonal["skipped"] = self.skipped
        return {"naive": scores.get("naive"), "seasonal_naive": seasonal}


def naive_test_scores(args: argparse.Namespace, world_size: int = 1) -> dict:
    """The naive fields (`NaiveScores.record`) a run of `args` writes to its record, without its model: each of
    the `world_size` ranks' shards of its test windows scored alone, then merged in rank order as the run
    merges them. args: run.py's arguments as resolved (`exp.resolved_args.resolve_args`)."""
    windows = scored_test_windows(args)
    inverse = (lambda a: to_original_units(windows, a)) if inverts(windows, args) else None
    shards = []
    for rank in range(world_size):
        scores = NaiveScores.for_test(windows, args)
        for batch in shard_loader(args, windows, "test", rank, world_size):
            scores.add_batch(batch, inverse, scored_from(args))
        shards.append(scores)
    return NaiveScores.merge(shards).record()
