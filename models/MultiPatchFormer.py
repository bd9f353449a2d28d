"""MultiPatchFormer (Naghashi et al., "A multiscale model for multivariate time series forecasting",
Scientific Reports 2025, https://doi.org/10.1038/s41598-024-82417-4), long- and short-term forecasting,
with TSLib's architecture, parameter names and construction order.

Per window x `[L, N]`, instance-normalised (mean, biased std + 1e-5; RevIN without affine):
- Multi-scale patch embedding: each variate's series is cut into patches of lengths 8/16/24/32 with
  strides 8/8/7/6 (the last three after replicate-padding the end by their stride); a Conv1d per scale
  maps every patch to D/4 features, and the four scales, which must yield the same number P of patches,
  are concatenated to D features plus a fixed sinusoid table (TSLib's: angle pos / 10000^(2i/D) at
  column pair (i, i+1), i even).
- Temporal encoder: e_layers post-norm blocks over each variate's P patch tokens (causal attention, as
  in TSLib), see `layers/MultiPatchFormer_EncDec.py`.
- Channel embedding: the P·D features of each variate → D by a 1×1 Conv1d, giving N channel tokens.
- Channel-wise encoder: one block whose keys and values are a 1×1 convolution of the tokens (causal over
  the variate order, as in TSLib).
- Multi-step decoder: the horizon is split into 8 parts of ⌊H/8⌋ steps (the last takes the remainder);
  part k is a Linear of the channel token concatenated with parts 1 … k−1:
      ŷ_k = W_k [h ‖ ŷ_1 ‖ … ‖ ŷ_{k−1}] + b_k,   ŷ = [ŷ_1 ‖ … ‖ ŷ_8]  `[N, H]`
  then de-normalised. With --c_out < --enc_in (features MS) the last c_out variates are returned.

Deliberate differences from TSLib (names, shapes and counts kept wherever TSLib runs):
- Decoder part k (k = 3…8) takes d_model + (k−1)·⌊H/8⌋ inputs, the width it is given; TSLib sizes it
  d_model + ⌊(k−1)·H/8⌋ (and d_model + ⌊H/2⌋ for k = 5), which only agrees, and only runs, when
  H mod 8 is 0 or 1.
- The normalisation statistics are detached (the shared `Normalize`); TSLib back-propagates through σ.
- A --seq_len whose four patch scales disagree is rejected up front (TSLib fails inside torch.cat).
As in TSLib, `remap` (D → L) is built but not used by forecasting, and with --e_layers > 1 only the first
channel-wise encoder runs (all of them share `shared_MHA_ch[0]`).
"""

from __future__ import annotations

import argparse
import warnings

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_heads, check_output_channels, check_positive
from layers.MultiPatchFormer_EncDec import Encoder
from layers.SelfAttention_Family import AttentionLayer, FullAttention
from layers.StandardNorm import Normalize
from utils.errors import UserInputError

# (patch length, stride, end padding) of the four scales (TSLib's constants; scale 1 is not padded).
SCALES = ((8, 8, 0), (16, 8, 8), (24, 7, 7), (32, 6, 6))
# TSLib's end paddings as built (scale 1's padding layer is built but not applied).
PADDINGS = (8, 8, 7, 6)
DECODER_PARTS = 8


def scale_patch_counts(seq_len: int) -> tuple[int, ...]:
    """Patches per scale for a window of `seq_len` steps (conv output lengths; ≤ 0: too short)."""
    return tuple((seq_len + pad - length) // stride + 1 for length, stride, pad in SCALES)


def table_patch_count(seq_len: int) -> int:
    """P as TSLib sizes the position table and the channel embedding: ⌊(L − 16) / 8⌋ + 2."""
    return (seq_len - 16) // 8 + 2


def valid_seq_lens(limit: int = 1024) -> list[int]:
    """Window lengths ≤ `limit` for which all four scales and the table agree on P ≥ 1."""
    return [n for n in range(1, limit + 1)
            if min(scale_patch_counts(n)) >= 1 and set(scale_patch_counts(n)) == {table_patch_count(n)}]


def _ranges(values: list[int]) -> str:
    """[62, 63, 68, 69, 70] → '62-63, 68-70'."""
    parts, start = [], None
    for i, v in enumerate(values):
        start = v if start is None else start
        if i + 1 == len(values) or values[i + 1] != v + 1:
            parts.append(str(v) if v == start else f"{start}-{v}")
            start = None
    return ", ".join(parts)


def check_seq_len(seq_len: int) -> None:
    """One-line error unless the four patch scales and the position table agree on the patch count."""
    counts = scale_patch_counts(seq_len)
    if min(counts) < 1 or set(counts) != {table_patch_count(seq_len)}:
        raise UserInputError(
            f"--seq_len {seq_len} gives {'/'.join(map(str, counts))} patches at MultiPatchFormer's patch lengths "
            f"8/16/24/32 (strides 8/8/7/6) but they must all equal {table_patch_count(seq_len)}; "
            f"use --seq_len in {_ranges(valid_seq_lens())}")


def position_table(num_patches: int, d_model: int) -> torch.Tensor:
    """TSLib's fixed table `[1, P, D]`: for even i, sin/cos of pos / 10000^(2i/D) at columns i, i+1."""
    pos = torch.arange(num_patches, dtype=torch.float64).unsqueeze(1)  # [P, 1]
    even = torch.arange(0, d_model, 2, dtype=torch.float64)  # [D/2]
    angle = pos / 10000.0 ** (2.0 * even / d_model)  # [P, D/2]
    table = torch.zeros(num_patches, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float().unsqueeze(0)


def decoder_part_lengths(pred_len: int) -> list[int]:
    """Steps per decoder part: ⌊H/8⌋ for the first seven, the remainder for the eighth."""
    part = pred_len // DECODER_PARTS
    return [part] * (DECODER_PARTS - 1) + [pred_len - (DECODER_PARTS - 1) * part]


class Model(nn.Module):
    """MultiPatchFormer for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len (see `check_seq_len`), pred_len, enc_in, c_out, d_model (a multiple of 4), n_heads,
    d_ff, e_layers, dropout. The marks and the decoder input are not used.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_forecast_config(configs, "MultiPatchFormer")
        check_heads(configs)
        check_positive(configs, "e_layers", "d_ff")
        if configs.d_model % 4 != 0:
            raise UserInputError(f"--d_model {configs.d_model} is not a multiple of 4: MultiPatchFormer gives each "
                                 "of its 4 patch scales d_model/4 features; use e.g. --d_model 256")
        check_seq_len(configs.seq_len)
        check_output_channels(configs, "MultiPatchFormer")
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        d_model, d_ff, n_heads, e_layers = configs.d_model, configs.d_ff, configs.n_heads, configs.e_layers
        num_patches = table_patch_count(configs.seq_len)

        # Built in TSLib's order so the same seed draws the same initial weights.
        for k, pad in enumerate(PADDINGS, start=1):
            setattr(self, f"padding_patch_layer{k}", nn.ReplicationPad1d((0, pad)))
        # TSLib's FullAttention(mask_flag=True): causal, attention dropout 0.1 whatever --dropout is.
        self.shared_MHA = nn.ModuleList(
            AttentionLayer(FullAttention(mask_flag=True), d_model=d_model, n_heads=n_heads) for _ in range(e_layers))
        self.shared_MHA_ch = nn.ModuleList(
            AttentionLayer(FullAttention(mask_flag=True), d_model=d_model, n_heads=n_heads) for _ in range(e_layers))
        self.encoder_list = nn.ModuleList(
            Encoder(d_model, self.shared_MHA[i], d_ff, configs.dropout, channel_wise=False) for i in range(e_layers))
        self.encoder_list_ch = nn.ModuleList(
            Encoder(d_model, self.shared_MHA_ch[0], d_ff, configs.dropout, channel_wise=True) for _ in range(e_layers))
        self.register_buffer("pe", position_table(num_patches, d_model))
        self.embedding_channel = nn.Conv1d(d_model * num_patches, d_model, kernel_size=1)
        for k, (length, stride, _) in enumerate(SCALES, start=1):
            setattr(self, f"embedding_patch_{k}", nn.Conv1d(1, d_model // 4, kernel_size=length, stride=stride))
        parts = decoder_part_lengths(configs.pred_len)
        with warnings.catch_warnings():
            # --pred_len < 8 gives parts of 0 steps: Linears without weights (TSLib's count), not a problem.
            warnings.filterwarnings("ignore", message="Initializing zero-element tensors", category=UserWarning)
            for k, part in enumerate(parts, start=1):
                setattr(self, f"out_linear_{k}", nn.Linear(d_model + sum(parts[: k - 1]), part))
        self.remap = nn.Linear(d_model, configs.seq_len)
        self.normalize = Normalize(configs.enc_in)

    def embed_patches(self, x: torch.Tensor) -> torch.Tensor:
        """Multi-scale patch tokens: normalised series `[B·N, L]` → `[B·N, P, D]` (position table added)."""
        x = x.unsqueeze(1)  # [B·N, 1, L]
        scales = []
        for k, (_, _, pad) in enumerate(SCALES, start=1):
            padded = getattr(self, f"padding_patch_layer{k}")(x) if pad else x  # [B·N, 1, L + pad]
            scales.append(getattr(self, f"embedding_patch_{k}")(padded))  # [B·N, D/4, P]
        return torch.cat(scales, dim=1).transpose(1, 2) + self.pe  # [B·N, P, D]

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """Multi-step decoder: channel tokens `[B, N, D]` → `[B, N, H]`, part k reading parts 1 … k−1."""
        inputs = [h]
        for k in range(1, DECODER_PARTS + 1):
            inputs.append(getattr(self, f"out_linear_{k}")(torch.cat(inputs, dim=-1)))  # [B, N, H_k]
        return torch.cat(inputs[1:], dim=-1)  # [B, N, H]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """x_enc `[B, L, N]` → `[B, H, c_out]`."""
        b, _, n = x_enc.shape
        x = self.normalize(x_enc, "norm").transpose(1, 2).reshape(b * n, -1)  # [B·N, L]
        tokens = self.embed_patches(x)  # [B·N, P, D]
        for encoder in self.encoder_list:
            tokens, _ = encoder(tokens)
        flat = tokens.reshape(b, n, -1)  # [B, N, P·D], patch-major
        channels = self.embedding_channel(flat.transpose(1, 2)).transpose(1, 2)  # [B, N, D]
        channels, _ = self.encoder_list_ch[0](channels)
        out = self.decode(channels).transpose(1, 2)  # [B, H, N]
        return self.normalize(out[:, :, -self.c_out:], "denorm")  # [B, H, c_out]
