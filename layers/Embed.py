"""Input embeddings shared by the Transformer-family models (TSLib contract §5).

- Positional: the fixed sinusoid of Vaswani et al. (2017),
  PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(p / 10000^(2i/D)).
- Values: a circular Conv1d (kernel 3, no bias) over time (Informer/Autoformer lineage; MambaSL's: any
  kernel, replicate padding), a Linear over the whole window per variate (iTransformer's inverted tokens),
  or a Linear over patches (PatchTST).
- Time marks: a Linear without bias over timeF features, or summed per-field tables over integer
  calendar marks (fixed sinusoid tables or learned ones).

Constructors, calls and parameter names are TSLib's (`TokenEmbedding.tokenConv`, `DataEmbedding(c_in,
d_model, embed_type, freq, dropout)`, `DataEmbedding_inverted(c_in=seq_len, ...)`, ...), so TSLib model
files build them unchanged.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from layers.config_checks import EMBED_TYPES
from utils.timefeatures import base_unit, num_time_features


def sinusoid_table(num_positions: int, d_model: int) -> torch.Tensor:
    """The sinusoid table `[num_positions, d_model]`: even columns sin, odd columns cos."""
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)  # [P, 1]
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model))
    table = torch.zeros(num_positions, d_model)
    table[:, 0::2] = torch.sin(position * div_term)
    # An odd d_model has one fewer cosine column than sine columns.
    table[:, 1::2] = torch.cos(position * div_term[: d_model // 2])
    return table


class PositionalEmbedding(nn.Module):
    """Fixed sinusoidal positions for up to `max_len` steps: `[B, L, *]` → `[1, L, D]`."""

    def __init__(self, d_model: int, max_len: int = 5000) -> None:
        super().__init__()
        # Not persistent: the table is a pure function of (max_len, d_model).
        self.register_buffer("pe", sinusoid_table(max_len, d_model).unsqueeze(0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pe[:, : x.size(1)]  # [1, L, D]

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # TSLib saves the table (a persistent buffer): accept it from a TSLib checkpoint if it is ours.
        saved = state_dict.pop(prefix + "pe", None)
        if saved is not None and not (saved.shape == self.pe.shape and torch.allclose(saved, self.pe.to(saved))):
            error_msgs.append(f"{prefix}pe: the checkpoint's positional table is not the sinusoid of this layer")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class TokenEmbedding(nn.Module):
    """Value embedding by a length-preserving Conv1d over time (no bias, Kaiming-normal init): `[B, L, C]` →
    `[B, L, D]`. TSLib's is kernel 3, circular padding; `kernel_size` and `padding_mode` (our additions) give
    MambaSL's variant (`TokenEmbedding_cls`). An even kernel pads one step more at the end than at the start."""

    def __init__(self, c_in: int, d_model: int, kernel_size: int = 3, padding_mode: str = "circular") -> None:
        super().__init__()
        # TSLib's attribute name, so its checkpoints load.
        self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=kernel_size, padding="same", padding_mode=padding_mode,
                                   bias=False)
        nn.init.kaiming_normal_(self.tokenConv.weight, mode="fan_in", nonlinearity="leaky_relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tokenConv(x.transpose(1, 2)).transpose(1, 2)  # [B, L, D]


class TokenEmbedding_cls(TokenEmbedding):
    """MambaSL's value embedding: the Conv1d of `TokenEmbedding` with kernel `d_kernel` (`--num_kernels`)
    and replicate padding (the first and last values repeated, not wrapped around): `[B, L, C]` → `[B, L, D]`."""

    def __init__(self, c_in: int, d_model: int, d_kernel: int = 3) -> None:
        super().__init__(c_in, d_model, kernel_size=d_kernel, padding_mode="replicate")


class FixedEmbedding(nn.Module):
    """A frozen sinusoid lookup table for an integer calendar field: `[B, L]` → `[B, L, D]`."""

    def __init__(self, c_in: int, d_model: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(c_in, d_model)
        self.emb.weight = nn.Parameter(sinusoid_table(c_in, d_model), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.emb(x).detach()


class TemporalEmbedding(nn.Module):
    """Sum of per-field embeddings of integer marks [month, day, weekday, hour, (minute // 15)].

    Tables: month 13, day 32, weekday 7, hour 24, minute 4; the minute field is used only for
    minutely or finer `freq`, matching the fifth column of `utils.timefeatures.calendar_features`.
    `embed_type` 'fixed' uses frozen sinusoid tables, 'learned' trainable ones.
    """

    def __init__(self, d_model: int, embed_type: str = "fixed", freq: str = "h") -> None:
        super().__init__()
        check_embed_type(embed_type)
        table = FixedEmbedding if embed_type == "fixed" else nn.Embedding
        self.use_minute = base_unit(freq) in ("t", "s")
        if self.use_minute:
            self.minute_embed = table(4, d_model)
        self.hour_embed = table(24, d_model)
        self.weekday_embed = table(7, d_model)
        self.day_embed = table(32, d_model)
        self.month_embed = table(13, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: `[B, L, 4 or 5]` integer-valued marks → `[B, L, D]`."""
        x = x.long()
        out = (self.hour_embed(x[:, :, 3]) + self.weekday_embed(x[:, :, 2])
               + self.day_embed(x[:, :, 1]) + self.month_embed(x[:, :, 0]))
        if self.use_minute:
            out = out + self.minute_embed(x[:, :, 4])
        return out


class TimeFeatureEmbedding(nn.Module):
    """Linear map (no bias) of the timeF marks: `[B, L, F]` → `[B, L, D]`, F = num_time_features(freq).

    `embed_type` is accepted for TSLib's signature; this embedding is the 'timeF' one.
    """

    def __init__(self, d_model: int, embed_type: str = "timeF", freq: str = "h") -> None:
        super().__init__()
        self.embed = nn.Linear(num_time_features(freq), d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.embed(x)


def check_embed_type(embed_type: str) -> None:
    """Reject an `--embed` value other than timeF, fixed or learned."""
    if embed_type not in EMBED_TYPES:
        raise ValueError(f"embed_type {embed_type!r} is not one of {', '.join(EMBED_TYPES)} (--embed)")


def temporal_embedding(d_model: int, embed_type: str, freq: str) -> nn.Module:
    """The mark embedding for `--embed`: 'timeF' → TimeFeatureEmbedding, 'fixed'/'learned' → TemporalEmbedding."""
    if embed_type == "timeF":
        return TimeFeatureEmbedding(d_model, embed_type, freq)
    return TemporalEmbedding(d_model, embed_type, freq)


class DataEmbedding(nn.Module):
    """value + temporal + position, then dropout: `[B, L, C]`, marks `[B, L, F]` → `[B, L, D]`.

    Without marks (None, as in M4 short-term forecasting) the temporal term is left out.
    """

    def __init__(self, c_in: int, d_model: int, embed_type: str = "fixed", freq: str = "h",
                 dropout: float = 0.1) -> None:
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in, d_model)
        self.position_embedding = PositionalEmbedding(d_model)
        self.temporal_embedding = temporal_embedding(d_model, embed_type, freq)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, x_mark: torch.Tensor | None) -> torch.Tensor:
        out = self.value_embedding(x) + self.position_embedding(x)  # [B, L, D]
        if x_mark is not None:
            out = out + self.temporal_embedding(x_mark)
        return self.dropout(out)


class DataEmbedding_cls(nn.Module):
    """MambaSL's embedding: `TokenEmbedding_cls` values + sinusoid positions, then dropout (none at 0), no
    time marks: `[B, L, C]` → `[B, L, D]`. The position table covers max(5000, seq_len) steps (EigenWorms'
    17,984). `embed_type` and `freq` are not read (TSLib's signature keeps them)."""

    def __init__(self, c_in: int, d_model: int, embed_type: str = "fixed", freq: str = "h", dropout: float = 0.1,
                 d_kernel: int = 3, seq_len: int = 5000) -> None:
        super().__init__()
        self.value_embedding = TokenEmbedding_cls(c_in, d_model, d_kernel)
        self.position_embedding = PositionalEmbedding(d_model, max_len=max(5000, seq_len))
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.value_embedding(x) + self.position_embedding(x))  # [B, L, D]


class DataEmbedding_wo_pos(DataEmbedding):
    """value + temporal, then dropout, without the position term (Autoformer's and TimeMixer's embedding):
    `[B, L, C]`, marks `[B, L, F]` or None → `[B, L, D]`.

    Built as `DataEmbedding` (so, like TSLib, it holds a `position_embedding` that the forward does not
    add: the module tree and TSLib checkpoints match).
    """

    def forward(self, x: torch.Tensor, x_mark: torch.Tensor | None) -> torch.Tensor:
        out = self.value_embedding(x)  # [B, L, D]
        if x_mark is not None:
            out = out + self.temporal_embedding(x_mark)
        return self.dropout(out)


class DataEmbedding_inverted(nn.Module):
    """iTransformer's variate tokens: each variate's whole window (and each mark column, as an extra
    variate) is one token, Linear(L → D): `[B, L, N]`, marks `[B, L, F]` → `[B, N + F, D]`.

    TSLib's signature: `c_in` is the window length L (iTransformer passes `configs.seq_len`);
    `embed_type` and `freq` are accepted and unused (marks are tokens, not embedded by type).
    """

    def __init__(self, c_in: int, d_model: int, embed_type: str = "fixed", freq: str = "h",
                 dropout: float = 0.1) -> None:
        super().__init__()
        self.value_embedding = nn.Linear(c_in, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, x_mark: torch.Tensor | None) -> torch.Tensor:
        x = x.transpose(1, 2)  # [B, N, L]
        if x_mark is not None:
            x = torch.cat([x, x_mark.transpose(1, 2)], dim=1)  # [B, N + F, L]
        return self.dropout(self.value_embedding(x))  # [B, N + F, D]


class PatchEmbedding(nn.Module):
    """PatchTST's patch tokens per variate: replicate-pad `padding` steps at the end, cut patches of
    `patch_len` every `stride` steps, Linear(patch_len → D, no bias) + sinusoid position, dropout.

    `[B, N, L]` → (`[B·N, P, D]`, N) with P = ⌊(L + padding − patch_len) / stride⌋ + 1.
    """

    def __init__(self, d_model: int, patch_len: int, stride: int, padding: int, dropout: float) -> None:
        super().__init__()
        self.patch_len = patch_len
        self.stride = stride
        self.padding_patch_layer = nn.ReplicationPad1d((0, padding))
        self.value_embedding = nn.Linear(patch_len, d_model, bias=False)
        self.position_embedding = PositionalEmbedding(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        n_vars = x.shape[1]
        x = self.padding_patch_layer(x)  # [B, N, L + padding]
        x = x.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [B, N, P, patch_len]
        x = x.reshape(-1, x.shape[2], x.shape[3])  # [B·N, P, patch_len]
        x = self.value_embedding(x) + self.position_embedding(x)  # [B·N, P, D]
        return self.dropout(x), n_vars
