"""WPMixer (Murad, Aktukmak and Yilmaz, "WPMixer: Efficient Multi-Resolution Mixing for Long-Term
Time Series Forecasting", AAAI 2025, https://arxiv.org/abs/2412.17176), TSLib's configuration.

The instance-normalised look-back window `[B, L, N]` is split per variate by a J-level discrete
wavelet transform into J + 1 coefficient series (approximation A_J and details D_1 … D_J,
`layers/DWT_Decomposition.py`). Each series has its own resolution branch:
    patching:   the series padded by `--stride` copies of its last value, cut into P patches of
                `--patch_len` with step `--stride` (P = ⌊(n − patch_len) / stride⌋ + 2);
    embedding:  BN over variates, Linear(patch_len → d_model), dropout;
    2 mixers:   z = BN_1(x); z = Dropout(token MLP over the P patches (P → tfactor·P → P));
                z = BN_2(z); out = z + Dropout(embedding MLP over d_model (d → dfactor·d → d));
                the branch applies y_1 = Mixer_1(e), y = y_1 + Mixer_2(y_1), then BN;
    head:       flatten [P, d_model] → Linear to the horizon's band length.
The predicted bands are inverted by the inverse DWT, the last pred_len steps kept and de-normalised.
The MLPs use GELU and `--dropout`; every BatchNorm normalises over the variates.

Flags: TSLib's script asks users to edit wavelet, level, tfactor, dfactor and stride inside the
model file; here they are run.py flags `--wavelet` (db2), `--level` (1), `--tfactor` (5),
`--dfactor` (5), `--stride` (8) with the model file's defaults, and `--patch_len` (16) as in TSLib.

Deliberate differences from TSLib (parameter names, shapes, counts and construction order kept):
- The BatchNorms and the wavelet transform take `--enc_in` variates (TSLib sizes them by `--c_out`,
  so features MS, where c_out = 1 < enc_in, fails there); the last `--c_out` variates are returned,
  de-normalised with their own statistics.
- The normalisation statistics are detached (the shared `Normalize`); TSLib back-propagates through σ.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_output_channels, check_positive
from layers.DWT_Decomposition import Decomposition, discrete_wavelets, wavelet_lengths
from layers.StandardNorm import Normalize
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

# The model file's defaults in TSLib (its script asks to edit them there); run.py flags here.
DEFAULTS = dict(wavelet="db2", level=1, tfactor=5, dfactor=5, stride=8)


def patch_count(length: int, patch_len: int, stride: int) -> int:
    """Patches of a length-`length` series padded by `stride` copies of its last value (TSLib's count)."""
    return int((length - patch_len) / stride + 2)


class TokenMixer(nn.Module):
    """MLP over the patch axis: `[B, D, N, P_in]` → `[B, D, N, P_out]` (Linear, GELU, dropout, Linear).

    TSLib's keyword signature; batch_size, channel and d_model are accepted and unused.
    """

    def __init__(self, input_seq: int, batch_size: int | None = None, channel: int | None = None,
                 pred_seq: int | None = None, dropout: float = 0.0, factor: int = 1,
                 d_model: int | None = None) -> None:
        super().__init__()
        pred_seq = input_seq if pred_seq is None else pred_seq
        self.input_seq, self.pred_seq, self.factor = input_seq, pred_seq, factor
        self.dropoutLayer = nn.Dropout(dropout)
        self.layers = nn.Sequential(nn.Linear(input_seq, pred_seq * factor), nn.GELU(), nn.Dropout(dropout),
                                    nn.Linear(pred_seq * factor, pred_seq))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)  # [..., P] → [..., P_out]


class Mixer(nn.Module):
    """One mixer `[B, N, P, D]` → `[B, N, P, D]`: BN, token mixing (no skip), BN, embedding mixing
    with a skip. TSLib's keyword signature (batch_size unused)."""

    def __init__(self, input_seq: int, out_seq: int, batch_size: int | None = None, channel: int = 1,
                 d_model: int = 1, dropout: float = 0.0, tfactor: int = 1, dfactor: int = 1) -> None:
        super().__init__()
        self.tMixer = TokenMixer(input_seq=input_seq, channel=channel, pred_seq=out_seq, dropout=dropout,
                                 factor=tfactor, d_model=d_model)
        self.dropoutLayer = nn.Dropout(dropout)
        self.norm1 = nn.BatchNorm2d(channel)
        self.norm2 = nn.BatchNorm2d(channel)
        self.embeddingMixer = nn.Sequential(nn.Linear(d_model, d_model * dfactor), nn.GELU(), nn.Dropout(dropout),
                                            nn.Linear(d_model * dfactor, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x)  # [B, N, P, D]
        x = self.dropoutLayer(self.tMixer(x.transpose(2, 3))).transpose(2, 3)  # mixes the P patches
        x = self.norm2(x)
        return x + self.dropoutLayer(self.embeddingMixer(x))  # [B, N, P, D]


class ResolutionBranch(nn.Module):
    """One coefficient series `[B, N, input_seq]` → its predicted band `[B, N, pred_seq]`
    (patching, embedding, two mixers, flatten head). TSLib's keyword signature (batch_size unused)."""

    def __init__(self, input_seq: int, pred_seq: int, batch_size: int | None = None, channel: int = 1,
                 d_model: int = 1, dropout: float = 0.0, embedding_dropout: float = 0.0, tfactor: int = 1,
                 dfactor: int = 1, patch_len: int = 16, patch_stride: int = 8) -> None:
        super().__init__()
        self.input_seq, self.pred_seq = input_seq, pred_seq
        self.patch_len, self.patch_stride = patch_len, patch_stride
        self.patch_num = patch_count(input_seq, patch_len, patch_stride)
        self.patch_norm = nn.BatchNorm2d(channel)
        self.patch_embedding_layer = nn.Linear(patch_len, d_model)
        mixer = dict(input_seq=self.patch_num, out_seq=self.patch_num, channel=channel, d_model=d_model,
                     dropout=dropout, tfactor=tfactor, dfactor=dfactor)
        self.mixer1 = Mixer(**mixer)
        self.mixer2 = Mixer(**mixer)
        self.norm = nn.BatchNorm2d(channel)
        self.dropoutLayer = nn.Dropout(embedding_dropout)
        self.head = nn.Sequential(nn.Flatten(start_dim=-2, end_dim=-1), nn.Linear(self.patch_num * d_model, pred_seq))

    def do_patching(self, x: torch.Tensor) -> torch.Tensor:
        """`[B, N, n]` → patches `[B, N, P, patch_len]` after padding by `stride` copies of the last value."""
        padded = torch.cat([x, x[:, :, -1:].expand(-1, -1, self.patch_stride)], dim=-1)  # [B, N, n + stride]
        return padded.unfold(-1, self.patch_len, self.patch_stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = self.patch_norm(self.do_patching(x))  # [B, N, P, patch_len]
        out = self.mixer1(self.dropoutLayer(self.patch_embedding_layer(patches)))  # [B, N, P, D]
        out = self.norm(out + self.mixer2(out))
        return self.head(out)  # [B, N, pred_seq]


class WPMixerCore(nn.Module):
    """Decomposition, one `ResolutionBranch` per band (approximation first, then the details from
    the finest), inverse transform: `[B, L, N]` → `[B, pred_length, N]`. TSLib's keyword signature
    (batch_size and device unused)."""

    def __init__(self, input_length: int, pred_length: int, wavelet_name: str, level: int,
                 batch_size: int | None = None, channel: int = 1, d_model: int = 1, dropout: float = 0.0,
                 embedding_dropout: float = 0.0, tfactor: int = 1, dfactor: int = 1, device: object = None,
                 patch_len: int = 16, patch_stride: int = 8, no_decomposition: bool = False,
                 use_amp: bool = False) -> None:
        super().__init__()
        self.input_length, self.pred_length = input_length, pred_length
        self.Decomposition_model = Decomposition(input_length=input_length, pred_length=pred_length,
                                                 wavelet_name=wavelet_name, level=level, channel=channel,
                                                 d_model=d_model, tfactor=tfactor, dfactor=dfactor,
                                                 no_decomposition=no_decomposition, use_amp=use_amp)
        self.input_w_dim = self.Decomposition_model.input_w_dim
        self.pred_w_dim = self.Decomposition_model.pred_w_dim
        self.resolutionBranch = nn.ModuleList([
            ResolutionBranch(input_seq=n_in, pred_seq=n_out, channel=channel, d_model=d_model, dropout=dropout,
                             embedding_dropout=embedding_dropout, tfactor=tfactor, dfactor=dfactor,
                             patch_len=patch_len, patch_stride=patch_stride)
            for n_in, n_out in zip(self.input_w_dim, self.pred_w_dim, strict=True)])

    def forward(self, xL: torch.Tensor) -> torch.Tensor:  # noqa: N803 (TSLib's name)
        approximation, details = self.Decomposition_model.transform(xL.transpose(1, 2))  # [B, N, n_j]
        pred_approximation = self.resolutionBranch[0](approximation)
        pred_details = [branch(d) for branch, d in zip(self.resolutionBranch[1:], details, strict=True)]
        y = self.Decomposition_model.inv_transform(pred_approximation, pred_details)  # [B, N, ≥ H]
        return y.transpose(1, 2)[:, -self.pred_length:, :]  # [B, H, N]


def check_wavelet_config(configs: argparse.Namespace, wavelet: str, level: int, stride: int) -> None:
    """Reject wavelets PyWavelets lacks and patches longer than a padded coefficient series."""
    if wavelet not in discrete_wavelets():
        raise UserInputError(f"--wavelet {wavelet!r} is not a discrete PyWavelets wavelet; use e.g. db2, db4, "
                             "sym3, coif1, haar (pywt.wavelist(kind='discrete'))")
    shortest = min(wavelet_lengths(configs.seq_len, wavelet, level))
    if shortest + stride < configs.patch_len:
        raise UserInputError(
            f"--patch_len {configs.patch_len} exceeds the shortest wavelet band of --seq_len {configs.seq_len} "
            f"at --level {level} ({shortest} coefficients) plus --stride {stride} padding; use a smaller "
            "--patch_len or --level, or a longer --seq_len")


class Model(nn.Module):
    """WPMixer for long/short-term forecasting: `[B, L, N]` → `[B, H, c_out]` (see the module doc).

    Reads seq_len, pred_len, enc_in, c_out, d_model, dropout, patch_len, wavelet, level, tfactor,
    dfactor, stride, use_amp; ignores the marks and x_dec. The keyword arguments override the flags
    (TSLib's signature: `Model(args, tfactor=5, dfactor=5, wavelet='db2', level=1, stride=8)`).
    """

    def __init__(self, configs: argparse.Namespace, tfactor: int | None = None, dfactor: int | None = None,
                 wavelet: str | None = None, level: int | None = None, stride: int | None = None,
                 no_decomposition: bool = False) -> None:
        super().__init__()
        check_forecast_config(configs, "WPMixer")
        check_output_channels(configs, "WPMixer")
        given = dict(tfactor=tfactor, dfactor=dfactor, wavelet=wavelet, level=level, stride=stride)
        given = {name: getattr(configs, name, DEFAULTS[name]) if value is None else value
                 for name, value in given.items()}
        check_positive(argparse.Namespace(**{**vars(configs), **given}), "d_model", "patch_len", "tfactor",
                       "dfactor", "level", "stride")
        check_wavelet_config(configs, given["wavelet"], given["level"], given["stride"])
        self.task_name = configs.task_name
        self.pred_len, self.c_out = configs.pred_len, configs.c_out
        self.normalize = Normalize(configs.enc_in, eps=1e-5)
        self.wpmixerCore = WPMixerCore(
            input_length=configs.seq_len, pred_length=configs.pred_len, wavelet_name=given["wavelet"],
            level=given["level"], batch_size=configs.batch_size, channel=configs.enc_in, d_model=configs.d_model,
            dropout=configs.dropout, embedding_dropout=configs.dropout, tfactor=given["tfactor"],
            dfactor=given["dfactor"], patch_len=configs.patch_len, patch_stride=given["stride"],
            no_decomposition=no_decomposition, use_amp=getattr(configs, "use_amp", flag_default("use_amp")))

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, N]` → `[B, H, N]` (normalised, mixed per band, de-normalised)."""
        return self.normalize(self.wpmixerCore(self.normalize(x_enc, "norm")), "denorm")

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.forecast(x_enc)[:, :, -self.c_out:]  # [B, H, c_out]
