"""Temporal Fusion Transformer (Lim et al., "Temporal Fusion Transformers for Interpretable Multi-horizon
Time Series Forecasting", IJF 2021, https://arxiv.org/abs/1912.09363), TSLib's forecaster.

Inputs by kind (paper Sec. 3): static variables s (one value per window: the first step's), observed
variables z_{1:L} (known only in the past) and known inputs x_{1:L+H} (the time marks of the look-back
window and of the horizon). Each window is instance-normalised first (mean, biased std), then
    embeddings:        each variable → `[D]` per step (`TFTEmbedding`)
    static encoders:   c_s, c_c, c_h, c_e = GRN_{s,c,h,e}(VSN(s))           (eq. 6-8, none without statics)
    variable selection: ξ_t = VSN_past([z_t ; x_t], c_s) for t ≤ L, VSN_future(x_t, c_s) for t > L
    temporal fusion decoder: LSTM encoder-decoder, gated skip, static enrichment, causal interpretable
        multi-head attention, gated skip, position-wise GRN, gated skip, Linear → `[H, c_out]`
and the forecast is de-normalised with the statistics of the last `c_out` input variates
(`layers/TemporalFusion_Blocks.py` has the equations).

Which input channels are static or observed is declared per dataset (`VARIABLE_TYPES`, TSLib's
`datatype_dict`); datasets not listed, and `--features S` (a single target channel), observe every input
channel and have no static variables, which is what the listed ETTh1/ETTm1 declare for their 7 columns.

Deliberate differences from TSLib (parameter names, shapes, counts and initial weights kept):
- The forecast is `[B, pred_len, c_out]`; TSLib returns `[B, seq_len + pred_len, ...]`, the window's length
  of zeros followed by the forecast, and its loop keeps the last pred_len steps.
- Datasets without a declared split (TSLib: KeyError) and `--features S` on ETTh1/ETTm1 (TSLib: index
  error on the declared 7 columns) observe every input channel.
- With `--features MS` the forecast is de-normalised with the target's statistics (TSLib broadcasts its
  one-channel forecast against all enc_in statistics and the loop keeps the last, which is the same value).
- Static contexts, when a dataset declares static variables, start the LSTM as the paper says (hidden
  state c_h, cell state c_c); TSLib passes them the other way round.
- The normalisation statistics are detached (the shared `Normalize`); TSLib back-propagates through σ.
- Without time marks (M4) the known inputs are zeros instead of a crash.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import torch
import torch.nn as nn

from layers.config_checks import (
    EMBED_TYPES,
    check_choice,
    check_forecast_config,
    check_heads,
    check_output_channels,
    check_positive,
)
from layers.StandardNorm import Normalize
from layers.TemporalFusion_Blocks import (
    StaticCovariateEncoder,
    TemporalFusionDecoder,
    TFTEmbedding,
    VariableSelectionNetwork,
    known_input_count,
)
from utils.errors import UserInputError


class TypePos(NamedTuple):
    """Input-channel indices of the static and the observed variables of a dataset (`--features M/MS`)."""

    static: list[int]
    observed: list[int]


# TSLib's declarations; add a dataset's static/observed columns here (the known inputs are the time marks).
VARIABLE_TYPES: dict[str, TypePos] = {
    "ETTh1": TypePos([], list(range(7))),
    "ETTm1": TypePos([], list(range(7))),
}


def variable_types(data: str, features: str, enc_in: int) -> TypePos:
    """The static/observed split of the `enc_in` input channels for `--data` and `--features`."""
    declared = VARIABLE_TYPES.get(data)
    if declared is None or features == "S":
        return TypePos([], list(range(enc_in)))
    used = declared.static + declared.observed
    if max(used) >= enc_in:
        raise UserInputError(
            f"--enc_in {enc_in} is too small for the TemporalFusionTransformer variable split declared for "
            f"--data {data} (channels up to {max(used)}); use --enc_in {max(used) + 1} or --features S")
    return declared


class Model(nn.Module):
    """TFT for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]` (see the module doc).

    Reads data, features, seq_len, pred_len, enc_in, c_out, d_model, n_heads, dropout, embed, freq;
    uses x_enc, x_mark_enc and the last pred_len steps of x_mark_dec.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "TemporalFusionTransformer")
        check_heads(configs)
        check_positive(configs, "d_model")
        check_choice(configs, "embed", EMBED_TYPES)
        check_output_channels(configs, "TemporalFusionTransformer")
        self.seq_len, self.pred_len = configs.seq_len, configs.pred_len
        types = variable_types(configs.data, configs.features, configs.enc_in)
        self.static_len, self.observed_len = len(types.static), len(types.observed)
        self.known_len = known_input_count(configs.embed, configs.freq)
        d = configs.d_model
        # Constructor order is TSLib's: a seed gives its initial weights.
        self.embedding = TFTEmbedding(d, configs.dropout, configs.embed, configs.freq, configs.pred_len,
                                      types.static, types.observed)
        self.static_encoder = StaticCovariateEncoder(d, self.static_len)
        self.history_vsn = VariableSelectionNetwork(d, self.observed_len + self.known_len)
        self.future_vsn = VariableSelectionNetwork(d, self.known_len)
        self.temporal_fusion_decoder = TemporalFusionDecoder(d, configs.n_heads, configs.dropout, configs.seq_len,
                                                             configs.pred_len, configs.c_out)
        self.normalize = Normalize(configs.enc_in, eps=1e-5)

    def known_marks(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                    x_mark_dec: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The past and future marks; zeros (a valid calendar index too) when the loader gives none."""
        if x_mark_enc is None or x_mark_dec is None:
            x_mark_enc = x_enc.new_zeros(x_enc.shape[0], self.seq_len, self.known_len)
            x_mark_dec = x_enc.new_zeros(x_enc.shape[0], self.pred_len, self.known_len)
        return x_mark_enc, x_mark_dec

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        x_mark_enc, x_mark_dec = self.known_marks(x_enc, x_mark_enc, x_mark_dec)
        x = self.normalize(x_enc, "norm")  # [B, L, N]
        static, observed, known = self.embedding(x, x_mark_enc, x_dec, x_mark_dec)
        c_s, c_c, c_h, c_e = self.static_encoder(static)  # [B, D] each, or None
        history = self.history_vsn(torch.cat([observed, known[:, :self.seq_len]], dim=-2), c_s)  # [B, L, D]
        future = self.future_vsn(known[:, self.seq_len:], c_s)  # [B, H, D]
        out = self.temporal_fusion_decoder(history, future, c_c, c_h, c_e)  # [B, H, c_out]
        return self.normalize(out, "denorm")  # [B, H, c_out]
