"""Crossformer's hierarchical encoder-decoder (Zhang & Yan, "Crossformer: Transformer Utilizing
Cross-Dimension Dependency for Multivariate Time Series Forecasting", ICLR 2023,
https://openreview.net/forum?id=vSVLM2j9eie), Sec. 3.3. TSLib's public class names and signatures.

Tensors are `[B, N, S, D]`: N variates, S segments per variate, D model width.
- Segment merging (eq. 5): every `win_size` neighbouring segments are concatenated and projected,
  Ẑ_{i} = Linear(LayerNorm([Z_{w·i} ‖ … ‖ Z_{w·i+w−1}])), so S → ⌈S / w⌉ (the last segments are
  repeated when w does not divide S).
- Encoder layer l (`scale_block`): merge (l > 0), then TSA layers (`TwoStageAttentionLayer`).
- Decoder layer l (eq. 6-7): TSA over the decoder tokens, cross attention from each variate's decoder
  segments to the same variate's encoder output of scale l, residual + LayerNorm, MLP + LayerNorm, and a
  Linear head D → seg_len giving this scale's forecast; the forecast is the sum over all scales.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from layers.SelfAttention_Family import TwoStageAttentionLayer


class SegMerging(nn.Module):
    """Merge every `win_size` adjacent segments: `[B, N, S, D]` → `[B, N, ⌈S / win_size⌉, D]`.

    When win_size does not divide S, the last (win_size − S mod win_size) segments are repeated at the end
    (TSLib's padding), then segment i of the output is LayerNorm + Linear of input segments
    win_size·i … win_size·i + win_size − 1 concatenated along D (in that order).
    """

    def __init__(self, d_model: int, win_size: int, norm_layer: type[nn.Module] = nn.LayerNorm) -> None:
        super().__init__()
        self.d_model = d_model
        self.win_size = win_size
        self.linear_trans = nn.Linear(win_size * d_model, d_model)
        self.norm = norm_layer(win_size * d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, s, d = x.shape
        short = -s % self.win_size
        if short:
            x = torch.cat([x, x[:, :, s - short:]], dim=2)  # [B, N, S', D], S' a multiple of win_size
        # Consecutive windows of win_size segments, concatenated along the feature axis.
        x = x.reshape(b, n, -1, self.win_size * d)  # [B, N, S'/w, w·D]
        return self.linear_trans(self.norm(x))  # [B, N, S'/w, D]


class scale_block(nn.Module):  # noqa: N801 - TSLib's class name, kept so its module tree matches
    """One encoder scale: SegMerging (when win_size > 1) then `depth` TSA layers over `seg_num` segments.

    `configs` is accepted for TSLib's signature and not read. `[B, N, S, D]` → (`[B, N, seg_num, D]`, None).
    """

    def __init__(self, configs: object, win_size: int, d_model: int, n_heads: int, d_ff: int, depth: int,
                 dropout: float, seg_num: int = 10, factor: int = 10) -> None:
        super().__init__()
        self.merge_layer = SegMerging(d_model, win_size, nn.LayerNorm) if win_size > 1 else None
        self.encode_layers = nn.ModuleList(
            TwoStageAttentionLayer(configs, seg_num, factor, d_model, n_heads, d_ff, dropout) for _ in range(depth))

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        if self.merge_layer is not None:
            x = self.merge_layer(x)  # [B, N, ⌈S / w⌉, D]
        for layer in self.encode_layers:
            x = layer(x)
        return x, None


class Encoder(nn.Module):
    """Crossformer's encoder: a list of `scale_block`s. `[B, N, S, D]` → ([input, scale 1, …, scale
    e_layers] outputs, None); the decoder cross-attends to output l in its layer l."""

    def __init__(self, attn_layers: list[nn.Module]) -> None:
        super().__init__()
        self.encode_blocks = nn.ModuleList(attn_layers)

    def forward(self, x: torch.Tensor) -> tuple[list[torch.Tensor], None]:
        outputs = [x]
        for block in self.encode_blocks:
            x, _ = block(x)
            outputs.append(x)
        return outputs, None


class DecoderLayer(nn.Module):
    """One decoder scale (eq. 6-7): TSA, cross attention to one encoder scale, MLP, and a Linear head.

    Args:
        self_attention: a TwoStageAttentionLayer over the decoder's segments.
        cross_attention: an AttentionLayer (decoder segments attend to the encoder segments, per variate).
        seg_len: steps each decoder segment predicts.
        d_model: width; d_ff is accepted for TSLib's signature (the MLP here is D → D → D, as TSLib's).
        dropout: dropout on the cross-attention branch.
    """

    def __init__(self, self_attention: nn.Module, cross_attention: nn.Module, seg_len: int, d_model: int,
                 d_ff: int | None = None, dropout: float = 0.1) -> None:
        super().__init__()
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.MLP1 = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, d_model))
        self.linear_pred = nn.Linear(d_model, seg_len)

    def forward(self, x: torch.Tensor, cross: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x `[B, N, S_dec, D]`, cross `[B, N, S_enc, D]` → (`[B, N, S_dec, D]`, prediction
        `[B, N·S_dec, seg_len]`, variate-major)."""
        b, n, s_dec, d = x.shape
        x = self.self_attention(x).reshape(b * n, s_dec, d)  # [B·N, S_dec, D]
        cross = cross.reshape(b * n, cross.shape[2], d)  # [B·N, S_enc, D]
        attended, _ = self.cross_attention(x, cross, cross, None)
        x = self.norm1(x + self.dropout(attended))
        out = self.norm2(x + self.MLP1(x)).reshape(b, n, s_dec, d)  # [B, N, S_dec, D]
        prediction = self.linear_pred(out).reshape(b, n * s_dec, -1)  # [B, N·S_dec, seg_len]
        return out, prediction


class Decoder(nn.Module):
    """Crossformer's decoder: layer l reads encoder output l; the forecast sums the layers' predictions.

    x `[B, N, S_dec, D]`, cross (e_layers + 1 tensors `[B, N, S_l, D]`) → `[B, S_dec·seg_len, N]`.
    """

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.decode_layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor, cross: list[torch.Tensor]) -> torch.Tensor:
        if len(cross) != len(self.decode_layers):
            raise ValueError(f"Decoder has {len(self.decode_layers)} layers but got {len(cross)} encoder outputs")
        b, n, s_dec, _ = x.shape
        total = None
        for layer, enc in zip(self.decode_layers, cross, strict=True):
            x, prediction = layer(x, enc)
            total = prediction if total is None else total + prediction
        # [B, N·S_dec, seg_len] → [B, N, S_dec·seg_len] → [B, S_dec·seg_len, N]
        return total.reshape(b, n, -1).transpose(1, 2)
