"""FEDformer (Zhou et al., "FEDformer: Frequency Enhanced Decomposed Transformer for Long-term Series
Forecasting", ICML 2022, https://arxiv.org/abs/2201.12740), TSLib's configuration (Fourier version,
random modes, M = 32): forecasting (long- and short-term alike, as TSLib's), imputation, anomaly
detection and classification.

Autoformer's decomposition architecture (`layers/Autoformer_EncDec.py`) with its Auto-Correlation
replaced by frequency enhanced blocks (`layers/FourierCorrelation.py`):
    seasonal, trend = SeriesDecomp(x)                               moving average, `--moving_avg`
    decoder start: last label_len seasonal steps + H zeros; last label_len trend steps + H window means
    encoder: DataEmbedding(x), e_layers × [S = Decomp(x + FEB-f(x)); Decomp(S + FF(S))], my_Layernorm
    decoder: DataEmbedding(seasonal start), d_layers × [Decomp after FEB-f self, FEA-f cross with the
             encoder output and FF; the three trends projected onto the trend start], my_Layernorm,
             Linear(D → c_out)
    forecast = seasonal + trend over the last H steps.

As in TSLib, one FEB-f module (its weights) is shared by all encoder layers and one by all decoder
layers' self-attention, and one FEA-f by all decoder layers' cross-attention; each layer has its own
q/k/v/out projections. FEB-f reads only its query, so the key and value projections of self-attention
layers are computed (and counted in FLOPs, as in TSLib) but receive no gradient.

The window tasks (imputation, anomaly_detection, classification) read the encoder alone:
    imputation         Linear(D → c_out) of the encoded masked window (with its time marks)
    anomaly_detection  Linear(D → c_out) of the encoded window (no time marks)
    classification     Linear(L·D → num_class) of the flattened GELU/dropout features, padded steps zeroed
As in TSLib the decoder (dec_in, d_layers, c_out, its frequency blocks) is built for every task, unused
outside forecasting: its parameters count in TSLib's totals and checkpoints. There its blocks are drawn
for TSLib's length ⌊seq_len/2⌋ (TSLib's ⌊seq_len/2⌋ + pred_len at the scripts' --pred_len 0), so the
model does not depend on --pred_len or --label_len.

Mode selection: TSLib draws each block's random modes with `np.random.shuffle` on numpy's global RNG at
construction (FEB-f encoder, FEB-f decoder, FEA-f query then key modes). This file does the same, in the
same order, so under our seeding (run.py's `seed_everything(--seed)`: python, numpy and torch seeded
right before the model is built) a given `--seed` selects TSLib's modes and draws TSLib's initial
weights. The modes are not saved in checkpoints (as in TSLib): a test run rebuilds them from `--seed`.

Deliberate differences from TSLib (parameter names, shapes and counts kept):
- The decoder's blocks draw their modes for the decoder's real length label_len + H; TSLib uses
  ⌊seq_len/2⌋ + H, which is the same at its scripts (label_len = seq_len/2) and otherwise draws modes
  for a length the decoder never sees.
- With c_out < enc_in (features MS) the trend start uses the last c_out variates (the target).
- The block-level differences listed in `layers/FourierCorrelation.py` (output layout, FEA-f values);
  `--attn_output_layout tslib` restores TSLib's layout (the FEA-f values stay fixed).
- The wavelet version (`version="Wavelets"`) is not implemented: it raises a one-line error.
"""

from __future__ import annotations

import argparse

import torch.nn as nn

from layers.AutoCorrelation import AutoCorrelationLayer
from layers.Autoformer_EncDec import (
    SeasonalTrendForecast,
    decomposition_decoder,
    decomposition_encoder,
    series_decomp,
)
from layers.config_checks import (
    ALL_TASKS,
    FORECAST_TASKS,
    OUTPUT_LAYOUTS,
    check_attention_config,
    check_decoder_from_encoder,
    check_output_channels,
    read_choice,
)
from layers.Embed import DataEmbedding
from layers.EncoderTaskHeads import EncoderWindowTasks
from layers.FourierCorrelation import MODE_SELECT_METHODS, FourierBlock, FourierCrossAttention
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError

TASKS = ALL_TASKS


def _check_frequency_options(version: str, mode_select: str, modes: int) -> None:
    """FEDformer's constructor keywords: version "fourier" (Wavelets is not implemented), mode_select one of
    MODE_SELECT_METHODS, modes a positive integer; a UserInputError naming the fix otherwise."""
    if version.lower() == "wavelets":
        raise UserInputError("FEDformer version 'Wavelets' is not implemented here; use version='fourier'")
    if version.lower() != "fourier":
        raise UserInputError(f"FEDformer version {version!r} is unknown; use version='fourier'")
    if mode_select not in MODE_SELECT_METHODS:
        raise UserInputError(f"FEDformer mode_select {mode_select!r} is unknown; use one of "
                             f"{', '.join(MODE_SELECT_METHODS)}")
    if isinstance(modes, bool) or not isinstance(modes, int) or modes < 1:
        raise UserInputError(f"FEDformer modes {modes!r} must be a positive integer")


class Model(TaskForward, SeasonalTrendForecast, EncoderWindowTasks, nn.Module):
    """FEDformer for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` (or None),
    x_mark_dec `[B, label_len + H, F]` (or None) → `[B, H, c_out]`; x_dec is not read: the decoder input is
    built from x_enc's decomposition. For imputation and anomaly detection it reconstructs the window,
    `[B, L, enc_in]` → `[B, L, c_out]`; for classification `[B, L, enc_in]`, padding mask `[B, L]` →
    `[B, num_class]` (reads num_class, set by the experiment).

    Reads task_name, seq_len, label_len, pred_len, enc_in, dec_in, c_out, d_model, n_heads, e_layers,
    d_layers, d_ff, moving_avg, dropout, activation, embed, freq (label_len and pred_len only when
    forecasting), attn_output_layout (per_step, or TSLib's interleaved `tslib`).

    Args (TSLib's constructor keywords): version "fourier" (the only one implemented), mode_select
    "random" or "low", modes the number of Fourier modes per block.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc", "x_mark_dec")

    def __init__(self, configs: argparse.Namespace, version: str = "fourier", mode_select: str = "random",
                 modes: int = 32) -> None:
        super().__init__()
        check_attention_config(configs, "FEDformer", TASKS,
                               "dec_in", "c_out", "e_layers", "d_layers", "d_ff", "moving_avg")
        layout = read_choice(configs, "attn_output_layout", OUTPUT_LAYOUTS)
        self.task_name = configs.task_name
        forecast = self.task_name in FORECAST_TASKS
        if forecast:
            check_output_channels(configs, "FEDformer")
            check_decoder_from_encoder(configs, "FEDformer", "embeds the seasonal part of the encoder input")
        _check_frequency_options(version, mode_select, modes)
        self.seq_len = configs.seq_len
        self.label_len = configs.label_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout
        # The decoder's length: what it decodes when forecasting, TSLib's ⌊L/2⌋ (pred_len 0) otherwise.
        dec_len = configs.label_len + configs.pred_len if forecast else configs.seq_len // 2

        # TSLib's construction order: decomposition, embeddings, the three shared frequency blocks
        # (each drawing its modes from numpy, then its weights from torch), encoder, decoder.
        self.decomp = series_decomp(configs.moving_avg)
        self.enc_embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.dec_embedding = DataEmbedding(configs.dec_in, d_model, configs.embed, configs.freq, dropout)
        encoder_self_att = FourierBlock(d_model, d_model, n_heads, configs.seq_len, modes=modes,
                                        mode_select_method=mode_select, output_layout=layout)
        decoder_self_att = FourierBlock(d_model, d_model, n_heads, dec_len, modes=modes,
                                        mode_select_method=mode_select, output_layout=layout)
        decoder_cross_att = FourierCrossAttention(d_model, d_model, dec_len, configs.seq_len, modes=modes,
                                                  mode_select_method=mode_select, num_heads=n_heads,
                                                  output_layout=layout)
        self.encoder = decomposition_encoder(lambda: AutoCorrelationLayer(encoder_self_att, d_model, n_heads),
                                             d_model, configs.d_ff, configs.e_layers, configs.moving_avg, dropout,
                                             configs.activation)
        self.decoder = decomposition_decoder(lambda: AutoCorrelationLayer(decoder_self_att, d_model, n_heads),
                                             lambda: AutoCorrelationLayer(decoder_cross_att, d_model, n_heads),
                                             d_model, configs.c_out, configs.d_ff, configs.d_layers,
                                             configs.moving_avg, dropout, configs.activation)
        if not forecast:
            self.build_window_head(configs, d_model, dropout)
