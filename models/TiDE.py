"""TiDE (Das et al., "Long-term Forecasting with TiDE: Time-series Dense Encoder", TMLR 2023,
https://arxiv.org/abs/2304.08424), forecasting and imputation (TSLib's task set), in TSLib's
channel-independent variant.

Residual block (the paper's Fig. 1 unit): R(x) = LN(Dropout(W_2 · ReLU(W_1 x + b_1) + b_2) + W_3 x + b_3),
hidden width `--d_model` (the temporal decoder's: `--d_ff`).

Every variate is its own series y `[L]` (the N variates are folded into the batch), with the dynamic
covariates x_{1:L+H} `[L+H, F]`: the time marks of the look-back window (`x_mark_enc`) followed by the
last H marks of the decoder window (`x_mark_dec`), i.e. the calendar of the past and of the horizon.
No static attributes are used. The series is instance-normalised (mean, biased std; RevIN without
affine), then
    feature projection:  x̃_t = R_feat(x_t) `[2]`                            (F → 2, every step)
    dense encoder:       e = R_enc^{e_layers}(y ‖ x̃_{1:L+H}) `[d_model]`     (L + 2(L+H) → d_model)
    dense decoder:       g = R_dec^{d_layers}(e) reshaped `[H, p]`, p = `--c_out`
    temporal decoder:    ŷ_t = R_temp(g_t ‖ x̃_{L+t}) + (W_r y + b_r)_t        (p + 2 → 1, plus the
                         global linear residual L → H)
and de-normalised. As in TSLib, `--c_out` is the decoder's per-step width p (the paper's
decoderOutputDim; TSLib's ETTh1 script sets 8), not an output channel count: the forecast has the
input's N variates under `--features M` whatever `--c_out` is (as TSLib), and the last `--c_out` of them
when `--c_out` < N under MS and S (what the loop scores).

Without marks (`x_mark_enc` or `x_mark_dec` None) the covariates are zeros, as TSLib does.

Imputation decodes the window itself: the horizon is the L input steps, so the covariates are the window's
own marks x_{1:L} (encoder input L + 2L), the dense decoder emits `[L, p]`, the temporal decoder reads
g_t ‖ x̃_t for t = 1..L and the residual is Linear(L → L). The series is normalised by its observed points
(`layers.MaskedNorm`; masked values enter as 0), not by all L values.

Deliberate differences from TSLib (interfaces, parameter names, shapes and counts kept):
- The temporal decoder's LayerNorm is built but not applied: over a width-1 output it returns its bias
  for every input, which in TSLib makes the forecast ignore the encoder, decoder and covariates.
- Middle encoder/decoder blocks are independent layers; TSLib repeats one module object there, so with
  `--e_layers`/`--d_layers` ≥ 3 its middle blocks share weights (identical at TSLib's 2 layers).
- The normalisation statistics are detached (the shared `Normalize`); TSLib back-propagates through σ.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    EMBED_TYPES,
    FORECAST_TASKS,
    IMPUTATION,
    check_choice,
    check_positive,
    check_task_config,
)
from layers.MaskedNorm import masked_denormalize, masked_normalize
from layers.StandardNorm import Normalize
from utils.flag_defaults import flag_default
from utils.timefeatures import num_calendar_features, num_time_features

TASKS = FORECAST_TASKS + (IMPUTATION,)
# Width of the projected covariates x̃_t (TSLib's and the paper's ETT setting).
FEATURE_ENCODE_DIM = 2


class ResBlock(nn.Module):
    """TiDE's residual unit `[..., in_dim]` → `[..., out_dim]`: LN(Dropout(MLP(x)) + Linear(x)).

    Args:
        in_dim, hidden_dim, out_dim: widths of the input, the MLP's hidden layer and the output.
        dropout: dropout on the MLP branch.
        layer_norm: apply the output LayerNorm (it is built either way, keeping TSLib's parameters).
    """

    def __init__(self, in_dim: int, hidden_dim: int, out_dim: int, dropout: float, layer_norm: bool = True) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, out_dim)
        self.fc3 = nn.Linear(in_dim, out_dim)
        self.dropout = nn.Dropout(dropout)
        self.relu = nn.ReLU()
        self.ln = nn.LayerNorm(out_dim)
        self.layer_norm = layer_norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.dropout(self.fc2(self.relu(self.fc1(x)))) + self.fc3(x)  # [..., out_dim]
        return self.ln(out) if self.layer_norm else out


def mark_width(embed: str, freq: str) -> int:
    """Columns F of the marks the data loader yields for `--embed` and `--freq`."""
    return num_time_features(freq) if embed == "timeF" else num_calendar_features(freq)


class Model(nn.Module):
    """TiDE for long/short-term forecasting: `[B, L, N]` → `[B, H, N']`; for imputation: masked
    `[B, L, N]`, marks `[B, L, F]`, mask `[B, L, N]` → `[B, L, N']`, with N' = N under features M and
    min(c_out, N) under MS and S (see the module doc).

    Reads seq_len, pred_len (forecasting only), enc_in, c_out (decoder width), features, d_model, d_ff,
    e_layers, d_layers, dropout, embed, freq; uses x_mark_enc and, forecasting, the last pred_len steps of
    x_mark_dec, not x_dec.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_task_config(configs, "TiDE", TASKS)
        check_positive(configs, "d_model", "d_ff", "e_layers", "d_layers")
        check_choice(configs, "embed", EMBED_TYPES)
        self.task_name = configs.task_name
        forecasting = self.task_name in FORECAST_TASKS
        self.seq_len = configs.seq_len
        # Imputation's horizon is the window itself; its covariates are the window's marks only.
        self.pred_len = configs.pred_len if forecasting else configs.seq_len
        self.covariate_len = self.seq_len + self.pred_len if forecasting else self.seq_len
        self.decode_dim = configs.c_out
        # The variates returned: all N under M (c_out is only the decoder width there, as in TSLib).
        self.out_channels = configs.enc_in if getattr(configs, "features", flag_default("features")) == "M" else configs.c_out
        self.feature_dim = mark_width(configs.embed, configs.freq)
        d, dropout = configs.d_model, configs.dropout
        flatten_dim = self.seq_len + self.covariate_len * FEATURE_ENCODE_DIM
        self.normalize = Normalize(configs.enc_in, eps=1e-5)
        # Constructor order is TSLib's: a seed gives its initial weights (LayerNorms draw nothing).
        self.feature_encoder = ResBlock(self.feature_dim, d, FEATURE_ENCODE_DIM, dropout)
        self.encoders = nn.Sequential(
            ResBlock(flatten_dim, d, d, dropout),
            *(ResBlock(d, d, d, dropout) for _ in range(configs.e_layers - 1)))
        self.decoders = nn.Sequential(
            *(ResBlock(d, d, d, dropout) for _ in range(configs.d_layers - 1)),
            ResBlock(d, d, self.decode_dim * self.pred_len, dropout))
        self.temporalDecoder = ResBlock(self.decode_dim + FEATURE_ENCODE_DIM, configs.d_ff, 1, dropout,
                                        layer_norm=False)
        self.residual_proj = nn.Linear(self.seq_len, self.pred_len)

    def covariates(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """Forecasting: the marks of the look-back window and the horizon `[B, L+H, F]`; imputation: the
        window's marks `[B, L, F]` (x_mark_dec not read). Zeros without marks."""
        if x_mark_enc is None or (self.task_name in FORECAST_TASKS and x_mark_dec is None):
            return x_enc.new_zeros(x_enc.shape[0], self.covariate_len, self.feature_dim)
        if self.task_name not in FORECAST_TASKS:
            return x_mark_enc  # [B, L, F]
        return torch.cat([x_mark_enc, x_mark_dec[:, -self.pred_len:, :]], dim=1)  # [B, L+H, F]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.task_name == IMPUTATION:
            return self.imputation(x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        out = self.decode(self.normalize(x_enc, "norm"), self.covariates(x_enc, x_mark_enc, x_mark_dec))
        out = self.normalize(out, "denorm")  # [B, H, N]
        return out[:, :, -self.out_channels:]  # [B, H, N']

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, N]` (0 where masked), marks `[B, L, F]`, mask `[B, L, N]`
        (1 observed) → `[B, L, N']`: normalised by the observed points, dense encoder over the
        series and its marks, dense and temporal decoders over the L window steps, residual Linear(L → L)."""
        x, means, stdev = masked_normalize(x_enc, mask)  # [B, L, N]
        out = self.decode(x, self.covariates(x_enc, x_mark_enc, None))  # [B, L, N]
        return masked_denormalize(out[:, :, -self.out_channels:], means, stdev)  # [B, L, N']

    def decode(self, x: torch.Tensor, marks: torch.Tensor) -> torch.Tensor:
        """Normalised series `[B, L, N]`, covariates `[B, T, F]` (T = covariate_len) → normalised output
        `[B, H, N]`, every variate its own series."""
        batch, _, n_vars = x.shape
        # Each variate gets its own copy of the covariates, so training draws its own dropout masks (TSLib).
        marks = marks.unsqueeze(1).expand(-1, n_vars, -1, -1).reshape(batch * n_vars, -1, marks.shape[-1])
        y = x.transpose(1, 2).reshape(batch * n_vars, self.seq_len)  # [B·N, L]

        feature = self.feature_encoder(marks)  # [B·N, T, 2]
        hidden = self.encoders(torch.cat([y, feature.flatten(1)], dim=-1))  # [B·N, d]
        decoded = self.decoders(hidden).reshape(-1, self.pred_len, self.decode_dim)  # [B·N, H, p]
        temporal = torch.cat([feature[:, -self.pred_len:], decoded], dim=-1)  # [B·N, H, 2 + p]
        out = self.temporalDecoder(temporal).squeeze(-1) + self.residual_proj(y)  # [B·N, H]
        return out.reshape(batch, n_vars, self.pred_len).transpose(1, 2)  # [B, H, N]
