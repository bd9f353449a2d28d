"""MSGNet (Cai, Liang, Chen, Liu, Zhang and Wang, "MSGNet: Learning Multi-Scale Inter-Series
Correlations for Multivariate Time Series Forecasting", AAAI 2024, https://arxiv.org/abs/2401.00423),
TSLib's configuration.

The look-back window `[B, L, N]` is instance-normalised and embedded (`DataEmbedding`: value, position
and time marks → `[B, L, D]`). Each of `--e_layers` ScaleGraph blocks, followed by a shared LayerNorm:
    scale identification:  the k = `--top_k` dominant FFT frequencies f_i of the block input give the
                           scales s_i = ⌊L / f_i⌋ and per-sample amplitudes a_i (`layers/Periods.py`);
    per scale i:           x ← GraphBlock_i(x) (adaptive mix-hop graph convolution over `--c_out`
                           nodes, `layers/MSGBlock.py`); the sequence, zero-padded to a multiple of
                           s_i, is cut into segments of s_i steps; multi-head attention inside each
                           segment (Attention_Block), LayerNorm, GELU, cropped back to L steps → X̂_i;
    aggregation:           out = Σ_i softmax(a)_i X̂_i + x.
The forecast is Linear(D → c_out) per step, then Linear(L → H) along time per channel (`Predict`),
de-normalised.

As in TSLib (kept, since they define its outputs): the graph convolutions of one block are chained,
scale i taking the output of scale i − 1's graph convolution, and the residual adds the last one;
the attention inside a segment is causal (FullAttention's default mask) with dropout fixed at 0.1;
`predict_linear` (Linear(L → L + H)) is built but never applied; `--gcn_dropout` is not read.

Imputation and anomaly detection (TSLib's heads) reconstruct the window: the same normalisation,
embedding and blocks, then `projection` Linear(D → c_out) per step, de-normalised; imputation reads the
time marks, anomaly detection none. Classification (TSLib's head): normalise, embed without marks, the
blocks, then GELU → dropout → zero the padded steps → flatten → `projection` Linear(L·D → num_class).
In every task `--c_out` also sizes the graph (its node count), as in TSLib's GraphBlock, and
`predict_linear` is built (unused) as TSLib builds it: Linear(L → L) for the window tasks, TSLib's
Linear(L → L + pred_len) at its scripts' `--pred_len 0`, so the window heads do not depend on pred_len.

Deliberate differences from TSLib (parameter names, shapes, counts and construction order kept):
- features S/MS (`--c_out 1`): TSLib squeezes the graph block's node axis away and fails; here it runs.
- With `--c_out` < `--enc_in` (MS) the forecast is de-normalised with the last c_out variates'
  statistics (TSLib broadcasts all enc_in statistics onto it, returning enc_in channels).
- The normalisation statistics are detached (the shared `Normalize`); TSLib back-propagates through σ.
- Window tasks: `seq2pred` (TSLib's Linear(L → pred_len), empty at pred_len 0) is not built, nor the
  forecasting `projection` TSLib builds and then replaces, so a seed does not give TSLib's initial weights
  there (the trainable parameters are TSLib's at --pred_len 0).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.ClassificationHead import masked_flat_features
from layers.config_checks import (
    CLASSIFICATION,
    EMBED_TYPES,
    FORECAST_TASKS,
    IMPUTATION,
    check_choice,
    check_heads,
    check_non_negative,
    check_positive,
    check_variate_task_config,
)
from layers.Embed import DataEmbedding
from layers.MSGBlock import Attention_Block, GraphBlock, Predict
from layers.Periods import fft_periods
from layers.StandardNorm import Normalize
from layers.TaskDispatch import TaskForward
from utils.errors import UserInputError

TASKS = (*FORECAST_TASKS, IMPUTATION, "anomaly_detection", CLASSIFICATION)


class ScaleGraphBlock(nn.Module):
    """One MSGNet block `[B, L, D]` → `[B, L, D]` (module doc). Reads seq_len, top_k, d_model, d_ff,
    n_heads, dropout, c_out, conv_channel, skip_channel, gcn_depth, propalpha, node_dim."""

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        self.seq_len, self.k = configs.seq_len, configs.top_k
        self.att0 = Attention_Block(configs.d_model, configs.d_ff, n_heads=configs.n_heads,
                                    dropout=configs.dropout, activation="gelu")
        self.norm = nn.LayerNorm(configs.d_model)
        self.gelu = nn.GELU()
        self.gconv = nn.ModuleList([
            GraphBlock(configs.c_out, configs.d_model, configs.conv_channel, configs.skip_channel,
                       configs.gcn_depth, configs.dropout, configs.propalpha, configs.seq_len, configs.node_dim)
            for _ in range(self.k)])

    def scale_attention(self, x: torch.Tensor, scale: int) -> torch.Tensor:
        """Attention inside segments of `scale` steps: `[B, L, D]` → `[B, L, D]`."""
        b, length, d = x.shape
        padded_len = -(-length // scale) * scale
        out = F.pad(x, (0, 0, 0, padded_len - length))  # [B, ⌈L/s⌉·s, D], zeros after the window
        out = out.reshape(b * padded_len // scale, scale, d)  # [B·⌈L/s⌉, s, D]
        out = self.gelu(self.norm(self.att0(out)))
        return out.reshape(b, padded_len, d)[:, :length]  # [B, L, D]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scales, amplitudes = fft_periods(x, self.k)  # k ints, [B, k]
        per_scale = []
        for graph, scale in zip(self.gconv, scales, strict=True):
            x = graph(x)  # chained across scales, as in TSLib
            per_scale.append(self.scale_attention(x, scale))
        weights = F.softmax(amplitudes, dim=1).to(x.dtype)  # [B, k]
        mixed = (torch.stack(per_scale, dim=-1) * weights[:, None, None, :]).sum(dim=-1)  # [B, L, D]
        return mixed + x


class Model(TaskForward, nn.Module):
    """MSGNet for forecasting, imputation, anomaly detection and classification (see the module doc):
    `[B, L, N]` → `[B, H, c_out]`, `[B, L, c_out]` or logits `[B, num_class]`.

    Reads seq_len, pred_len (forecasting), enc_in, c_out, d_model, d_ff, n_heads, e_layers, top_k,
    dropout, embed, freq, individual, num_class (classification) and the graph flags node_dim, gcn_depth,
    propalpha, conv_channel, skip_channel; uses x_mark_enc (the padding mask in classification), not x_dec.
    """

    # What TaskForward.forward hands to forecast (the window tasks go through window_task_output).
    FORECAST_INPUTS = ("x_enc", "x_mark_enc")

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "MSGNet", TASKS)
        check_heads(configs)
        check_positive(configs, "c_out", "d_ff", "e_layers", "top_k", "node_dim", "conv_channel", "skip_channel")
        check_non_negative(configs, "gcn_depth")
        check_choice(configs, "embed", EMBED_TYPES)
        if configs.top_k > configs.seq_len // 2:
            raise UserInputError(
                f"--top_k {configs.top_k} exceeds the {configs.seq_len // 2} non-zero FFT frequencies of "
                f"--seq_len {configs.seq_len}; use --top_k <= {configs.seq_len // 2}")
        if configs.c_out > configs.d_model:
            raise UserInputError(
                f"--c_out {configs.c_out} exceeds --d_model {configs.d_model}: the graph's c_out nodes are cut "
                "from the d_model features, so use --d_model >= --c_out")
        self.task_name = configs.task_name
        forecasting = self.task_name in FORECAST_TASKS
        self.seq_len, self.layer = configs.seq_len, configs.e_layers
        self.pred_len = configs.pred_len if forecasting else 0
        # Constructor order is TSLib's: a seed gives its initial weights (forecasting).
        self.model = nn.ModuleList([ScaleGraphBlock(configs) for _ in range(configs.e_layers)])
        self.enc_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                           configs.dropout)
        self.layer_norm = nn.LayerNorm(configs.d_model)
        self.predict_linear = nn.Linear(self.seq_len, self.pred_len + self.seq_len)
        if self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(configs.d_model * configs.seq_len, configs.num_class)
        else:
            self.projection = nn.Linear(configs.d_model, configs.c_out, bias=True)
        if forecasting:
            self.seq2pred = Predict(configs.individual, configs.c_out, configs.seq_len, configs.pred_len,
                                    configs.dropout)
        self.normalize = Normalize(configs.enc_in, eps=1e-5)

    def encode(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """Normalise (statistics kept for "denorm"), embed and run the blocks: `[B, L, N]` → `[B, L, D]`."""
        enc_out = self.enc_embedding(self.normalize(x_enc, "norm"), x_mark_enc)  # [B, L, D]
        for block in self.model:
            enc_out = self.layer_norm(block(enc_out))
        return enc_out

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, N]`, marks `[B, L, F]` or None → `[B, H, c_out]`."""
        dec_out = self.projection(self.encode(x_enc, x_mark_enc))  # [B, L, c_out]
        dec_out = self.seq2pred(dec_out.transpose(1, 2)).transpose(1, 2)  # [B, H, c_out]
        return self.normalize(dec_out, "denorm")

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window `[B, L, N]` (0 where masked), marks `[B, L, F]` or None → `[B, L, c_out]`:
        the forecasting encoder, then `projection` Linear(D → c_out) per step, de-normalised. As TSLib's,
        the mask is not read: the normalisation takes the statistics of the zero-filled window."""
        return self.normalize(self.projection(self.encode(x_enc, x_mark_enc)), "denorm")  # [B, L, c_out]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window without time marks: `[B, L, enc_in]` → `[B, L, c_out]` (as imputation)."""
        return self.normalize(self.projection(self.encode(x_enc, None)), "denorm")  # [B, L, c_out]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]`, padding mask `[B, L]` (1 = real step) → logits `[B, num_class]`: the encoder
        without marks, GELU, dropout, the padded steps zeroed, flattened, Linear(L·D → num_class)."""
        enc_out = self.encode(x_enc, None)  # [B, L, D]
        return self.projection(masked_flat_features(enc_out, self.dropout, padding_mask))  # [B, num_class]
