"""What every short-term forecasting dataset shares (M4, data_provider/m4.py; the custom formats,
data_provider/short_term_files.py): one list of univariate series of unequal lengths, the training windows
drawn from them, the last input windows the forecasts start from, and the strict protocol's held-out horizon.

With horizon H, seq_len L (= 2·H), label_len Ll (= H) and history size k, a training item of a series of n values
draws a cut point c uniformly from [max(1, n − int(k·H)), n) with numpy's global RNG (as TSLib) and returns
(insample `[L, 1]`, outsample `[Ll + H, 1]`, insample_mask, outsample_mask): the up to L values before c,
zero-padded on the left, and the values c − Ll .. c + H, zero-padded where the series has none; the masks are
1 on real values. No scaling.

Under `--protocol strict` the 'train' split holds each training series without its last H values (`history`
keeps the whole series, which the test forecasts start from) and 'val' those H values.
"""

from __future__ import annotations

import argparse

import numpy as np
from torch.utils.data import Dataset

from utils.errors import UserInputError

__all__ = ["SHORT_TERM_DATA", "ShortTermSeries", "check_univariate_and_loss"]

#: The --data values the short-term task reads: M4 and the two custom formats.
SHORT_TERM_DATA = ("m4", "short_term_csv", "tsf")


def check_univariate_and_loss(args: argparse.Namespace, what: str) -> None:
    """--loss is one of the short-term losses and --enc_in = --c_out = 1 (`what`: the data, for the message)."""
    from utils.losses import LOSSES

    if args.loss not in LOSSES:
        raise UserInputError(f"--loss {args.loss!r} is not supported; valid choices: {', '.join(LOSSES)}")
    if args.enc_in != 1 or args.c_out != 1:
        raise UserInputError(f"{what} series are univariate: pass --enc_in 1 --c_out 1 (got --enc_in {args.enc_in} "
                             f"--c_out {args.c_out})")


class ShortTermSeries(Dataset):
    """Univariate series `timeseries` (one per id in `ids`) and the whole training series `history`; subclasses
    read their files and call `set_lengths` and `hold_out_last_horizon` (strict)."""

    scale = False
    n_channels = 1

    def set_lengths(self, size: list[int], history_size: float) -> None:
        """(seq_len, label_len, pred_len) = `size`; training cuts lie in the last int(history_size · H) steps."""
        self.seq_len, self.label_len, self.pred_len = size
        self.history_size = history_size
        self.window_sampling_limit = int(history_size * self.pred_len)

    def hold_out_last_horizon(self, flag: str, what: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(the whole training series, the strict split's series): 'train' gets each series without its last H
        values, 'val' those H values; a series needs H + 2 values (one line naming it otherwise; `what`
        describes the horizon)."""
        horizon = self.pred_len
        short = [(i, len(ts)) for i, ts in zip(self.ids, self.timeseries, strict=True) if len(ts) < horizon + 2]
        if short:
            raise UserInputError(f"{self.series_name} {short[0][0]} has {short[0][1]} training values; --protocol "
                                 f"strict holds out the last {horizon} ({what}) for validation and trains on the "
                                 f"rest, which needs {horizon + 2}; use --protocol tslib")
        part = [ts[-horizon:] if flag == "val" else ts[:-horizon] for ts in self.timeseries]
        return self.timeseries, part

    #: how messages name one series ("M4 series", "series")
    series_name = "series"

    def check_trainable(self) -> None:
        """Every training series has an input and a target value (two values), else one line naming one."""
        short = [i for i, ts in zip(self.ids, self.timeseries, strict=True) if len(ts) < 2]
        if short:
            raise UserInputError(f"{self.series_name} {short[0]} has fewer than 2 training values; "
                                 "a training window needs at least one input and one target value")

    def series_arrays(self) -> list[np.ndarray]:
        """The `[n_i, 1]` float32 arrays the windows are drawn from: each series of this split (under
        `--protocol strict` the training series without their held-out last H values)."""
        return [np.asarray(series, dtype=np.float32)[:, None] for series in self.timeseries]

    def __len__(self) -> int:
        return len(self.timeseries)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(insample `[L, 1]`, outsample `[Ll + H, 1]`, insample_mask, outsample_mask), float64."""
        series = self.timeseries[index]
        n = len(series)
        cut = np.random.randint(low=max(1, n - self.window_sampling_limit), high=n, size=1)[0]
        return self.window(series, cut)

    def window(self, series: np.ndarray, cut: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The training item of `series` cut at `cut` (0 < cut <= len(series))."""
        insample = np.zeros((self.seq_len, 1))
        insample_mask = np.zeros((self.seq_len, 1))
        outsample = np.zeros((self.label_len + self.pred_len, 1))
        outsample_mask = np.zeros((self.label_len + self.pred_len, 1))
        history = series[max(0, cut - self.seq_len):cut]
        insample[self.seq_len - len(history):, 0] = history
        insample_mask[self.seq_len - len(history):, 0] = 1.0
        # outsample[j] holds series[cut − Ll + j] where that exists. TSLib slices from cut − Ll unclamped,
        # so for cut < Ll the negative start counts from the series' end and the item comes out empty
        # (all-zero mask); aligning instead keeps those items' targets. For cut >= Ll both agree.
        start = cut - self.label_len
        future = series[max(0, start):min(len(series), cut + self.pred_len)]
        offset = max(0, -start)
        outsample[offset:offset + len(future), 0] = future
        outsample_mask[offset:offset + len(future), 0] = 1.0
        return insample, outsample, insample_mask, outsample_mask

    def last_insample_window(self, whole: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The last L values of every series (whole: of every whole training series, `history`), left
        zero-padded, and their 0/1 mask: `[N, L]` each."""
        series_list = self.history if whole else self.timeseries
        insample = np.zeros((len(series_list), self.seq_len))
        insample_mask = np.zeros((len(series_list), self.seq_len))
        for i, series in enumerate(series_list):
            last = series[-self.seq_len:]
            insample[i, self.seq_len - len(last):] = last
            insample_mask[i, self.seq_len - len(last):] = 1.0
        return insample, insample_mask

    def inverse_transform(self, data: np.ndarray) -> np.ndarray:
        """The series are not scaled (TSLib's call fails here for M4, issue #541): the identity."""
        return data
