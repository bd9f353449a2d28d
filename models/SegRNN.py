"""SegRNN (Lin et al., "SegRNN: Segment Recurrent Neural Network for Long-Term Time Series
Forecasting", 2023, https://arxiv.org/abs/2308.11200), long-term forecasting with parallel multi-step
forecasting (PMF), the variant TSLib ships.

Channel independent: each variate's window x `[L]` is one series.
    centre:     x ← x − x_L                                  (the last value; added back at the end)
    segment:    X = reshape(x) `[n, w]`, n = L / w segments of `--seg_len` w
    embed:      E = ReLU(X W_e + b_e) `[n, d]`
    encode:     h_n = GRU(E) (zero initial state), the last hidden state `[d]`
    PMF decode: for every output segment j = 1..m (m = H / w), one GRU step from h_n on the input
                e_j = [pos_j ‖ chan_c] `[d]` (learned segment-position and variate embeddings, d/2 each)
                gives h_j; ŷ_j = Dropout(h_j) W_p + b_p `[w]`; ŷ = concat_j ŷ_j + x_L `[H]`.
The m decoding steps are independent, so they run as one GRU call on a batch of B·N·m one-step sequences.

Imputation, anomaly detection and classification decode the window itself (H = L, m = L / w), as TSLib:
the first two return that reconstruction; classification flattens it into Linear(N·L → classes) (TSLib
has this head but no classification script; its layout is kept: no pooling, the padding mask not read).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    ALL_TASKS,
    CLASSIFICATION,
    FORECAST_TASKS,
    check_positive,
    check_variate_task_config,
)
from layers.TaskDispatch import EncoderOutputTasks
from utils.errors import UserInputError

TASKS = ALL_TASKS


def check_segments(seq_len: int, pred_len: int | None, seg_len: int, d_model: int) -> None:
    """`--seg_len` must divide `--seq_len` and `--pred_len` (None: the window tasks, which decode the window
    itself); `--d_model` must be even (two halves)."""
    lengths = (("seq_len", seq_len),) if pred_len is None else (("seq_len", seq_len), ("pred_len", pred_len))
    for flag, length in lengths:
        if length % seg_len != 0:
            raise UserInputError(
                f"--seg_len {seg_len} does not divide --{flag} {length}; choose --seg_len as a divisor of "
                + ("both --seq_len and --pred_len" if pred_len is not None else "--seq_len (the series length)"))
    if d_model % 2 != 0:
        raise UserInputError(
            f"--d_model {d_model} must be even: SegRNN splits it into position and channel embeddings")


class Model(EncoderOutputTasks, nn.Module):
    """SegRNN for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`; for imputation and anomaly
    detection it reconstructs the window, `[B, L, enc_in]` → `[B, L, c_out]`; for classification
    `[B, L, enc_in]` → `[B, num_class]` (reads num_class, set by the experiment).

    Reads seq_len, pred_len (forecasting only), seg_len, enc_in, c_out (not for classification), d_model,
    dropout. The marks and the decoder input are not used. With c_out < enc_in (features MS) the last c_out
    variates are returned.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_variate_task_config(configs, "SegRNN", TASKS)
        check_positive(configs, "seg_len", "d_model")
        self.task_name = configs.task_name
        forecasting = self.task_name in FORECAST_TASKS
        check_segments(configs.seq_len, configs.pred_len if forecasting else None, configs.seg_len,
                       configs.d_model)
        self.enc_in = configs.enc_in
        self.c_out = configs.c_out
        self.d_model = configs.d_model
        self.seg_len = configs.seg_len
        # The window tasks decode the window itself (TSLib sets pred_len = seq_len for them).
        self.pred_len = configs.pred_len if forecasting else configs.seq_len
        self.seg_num_x = configs.seq_len // configs.seg_len
        self.seg_num_y = self.pred_len // configs.seg_len
        # Constructor order is TSLib's (embedding, GRU, position, channel, head): a seed gives its weights.
        self.valueEmbedding = nn.Sequential(nn.Linear(self.seg_len, self.d_model), nn.ReLU())
        self.rnn = nn.GRU(input_size=self.d_model, hidden_size=self.d_model, num_layers=1, bias=True,
                          batch_first=True)
        self.pos_emb = nn.Parameter(torch.randn(self.seg_num_y, self.d_model // 2))
        self.channel_emb = nn.Parameter(torch.randn(self.enc_in, self.d_model // 2))
        self.predict = nn.Sequential(nn.Dropout(configs.dropout), nn.Linear(self.d_model, self.seg_len))
        if self.task_name == CLASSIFICATION:
            self.projection = nn.Linear(configs.enc_in * configs.seq_len, configs.num_class)

    def decoder_inputs(self, batch: int) -> torch.Tensor:
        """e_j = [pos_j ‖ chan_c] for every (sample, variate, segment): `[B·N·m, 1, d]`."""
        n, m, half = self.enc_in, self.seg_num_y, self.d_model // 2
        pos = self.pos_emb.unsqueeze(0).expand(n, m, half)  # [N, m, d/2]
        chan = self.channel_emb.unsqueeze(1).expand(n, m, half)  # [N, m, d/2]
        emb = torch.cat([pos, chan], dim=-1)  # [N, m, d]
        return emb.unsqueeze(0).expand(batch, n, m, self.d_model).reshape(-1, 1, self.d_model)  # [B·N·m, 1, d]

    def encoder(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Centre on the last value, encode the segments, decode H steps per series: `[B, L, N]` → `[B, H, N]`."""
        batch = x_enc.shape[0]
        last = x_enc[:, -1:, :].detach()  # [B, 1, N]
        x = (x_enc - last).transpose(1, 2)  # [B, N, L]
        segments = x.reshape(-1, self.seg_num_x, self.seg_len)  # [B·N, n, w]
        _, h_n = self.rnn(self.valueEmbedding(segments))  # [1, B·N, d]
        # Every output segment starts from its series' h_n: repeat it m times, series-major like the inputs.
        h_0 = h_n.repeat_interleave(self.seg_num_y, dim=1)  # [1, B·N·m, d]
        _, h_y = self.rnn(self.decoder_inputs(batch), h_0)  # [1, B·N·m, d]
        y = self.predict(h_y).reshape(batch, self.enc_in, self.pred_len)  # [B, N, H]
        return y.transpose(1, 2) + last  # [B, H, N]
