"""Autoformer (Wu et al., "Autoformer: Decomposition Transformers with Auto-Correlation for Long-Term
Series Forecasting", NeurIPS 2021, https://arxiv.org/abs/2106.13008), TSLib's configuration:
forecasting (long- and short-term alike, as TSLib's), imputation, anomaly detection and classification.

The input window x `[B, L, N]` is split by a moving average into seasonal + trend (eq. 1). The decoder
starts from the last `label_len` steps of each part followed by H placeholders: zeros for the seasonal
part, the window mean for the trend (§3.1). Encoder: DataEmbedding_wo_pos of x and its marks,
`e_layers` Auto-Correlation layers with progressive decomposition (eq. 3) and my_Layernorm. Decoder:
DataEmbedding_wo_pos of the seasonal start, `d_layers` layers of self- and cross-correlation with
progressive decomposition whose trends accumulate onto the trend start (eq. 4), then my_Layernorm and
Linear(D → c_out) on the seasonal part. Forecast = seasonal + trend over the last H steps.
Auto-Correlation (eq. 5–8) lives in `layers/AutoCorrelation.py`.

The window tasks use the encoder alone (TSLib builds no decoder for them; the encoder's own progressive
decomposition still applies, no input decomposition):
    imputation         Linear(D → c_out) of the encoded masked window (with its time marks)
    anomaly_detection  Linear(D → c_out) of the encoded window (no time marks)
    classification     Linear(L·D → num_class) of the flattened GELU/dropout features, padded steps zeroed
"""

from __future__ import annotations

import argparse

import torch.nn as nn

from layers.AutoCorrelation import AutoCorrelation, AutoCorrelationLayer
from layers.Autoformer_EncDec import (
    SeasonalTrendForecast,
    decomposition_decoder,
    decomposition_encoder,
    series_decomp,
)
from layers.config_checks import (
    ALL_TASKS,
    FORECAST_TASKS,
    check_attention_config,
    check_decoder_from_encoder,
    check_output_channels,
    check_positive,
)
from layers.Embed import DataEmbedding_wo_pos
from layers.EncoderTaskHeads import EncoderWindowTasks
from layers.TaskDispatch import TaskForward

TASKS = ALL_TASKS


class Model(TaskForward, SeasonalTrendForecast, EncoderWindowTasks, nn.Module):
    """Autoformer for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` (or None),
    x_mark_dec `[B, label_len + H, F]` (or None) → `[B, H, c_out]`; x_dec is not read: the decoder input is
    built from x_enc's decomposition, as in TSLib. For imputation and anomaly detection it reconstructs the
    window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification `[B, L, enc_in]`, padding mask `[B, L]` →
    `[B, num_class]` (reads num_class, set by the experiment).

    Reads task_name, seq_len, label_len, pred_len, enc_in, dec_in, c_out, d_model, n_heads, e_layers,
    d_layers, d_ff, factor, moving_avg, dropout, activation, embed, freq (label_len, pred_len, dec_in and
    d_layers only when forecasting).

    With c_out < enc_in (features MS) the trend start uses the last c_out variates (the target), so
    the output equals the last c_out channels of TSLib's (which keeps all enc_in channels there).
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc", "x_mark_dec")

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_attention_config(configs, "Autoformer", TASKS, "e_layers", "d_ff", "factor", "moving_avg")
        self.task_name = configs.task_name
        forecast = self.task_name in FORECAST_TASKS
        if forecast:
            check_positive(configs, "dec_in", "d_layers")
            check_output_channels(configs, "Autoformer")
            check_decoder_from_encoder(configs, "Autoformer", "embeds the seasonal part of the encoder input")
        self.seq_len = configs.seq_len
        self.label_len = configs.label_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        d_model, n_heads, dropout = configs.d_model, configs.n_heads, configs.dropout

        def correlation() -> AutoCorrelationLayer:
            return AutoCorrelationLayer(AutoCorrelation(False, configs.factor, attention_dropout=dropout),
                                        d_model, n_heads)

        # Built in TSLib's order (decomp, enc_embedding, encoder, dec_embedding, decoder), so a given
        # seed draws the same initial weights as TSLib's Autoformer.
        self.decomp = series_decomp(configs.moving_avg)
        self.enc_embedding = DataEmbedding_wo_pos(configs.enc_in, d_model, configs.embed, configs.freq, dropout)
        self.encoder = decomposition_encoder(correlation, d_model, configs.d_ff, configs.e_layers,
                                             configs.moving_avg, dropout, configs.activation)
        if forecast:
            self.dec_embedding = DataEmbedding_wo_pos(configs.dec_in, d_model, configs.embed, configs.freq,
                                                      dropout)
            self.decoder = decomposition_decoder(correlation, correlation, d_model, configs.c_out, configs.d_ff,
                                                 configs.d_layers, configs.moving_avg, dropout, configs.activation)
        else:
            self.build_window_head(configs, d_model, dropout)
