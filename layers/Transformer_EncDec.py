"""Post-norm Transformer encoder and decoder blocks (Vaswani et al., 2017, as laid out in TSLib).

Constructors, call signatures (`tau`/`delta` pass through to the attention) and attribute names are
TSLib's, so a model file written against TSLib's layers runs here unchanged and its checkpoints load.

EncoderLayer: x = LN(x + Drop(Attn(x))); out = LN(x + Drop(W₂ Drop(act(W₁ x))))
DecoderLayer: x = LN(x + Drop(SelfAttn(x))); x = LN(x + Drop(CrossAttn(x, enc))); then the FFN as above.
The FFN's W₁ (D → d_ff) and W₂ (d_ff → D) are 1×1 Conv1d layers, TSLib's parameterisation.
ConvLayer is Informer's self-attention distilling (Zhou et al., AAAI 2021, eq. 5): between encoder
layers, MaxPool(ELU(BatchNorm(Conv1d(x)))) halves the sequence length.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.SelfAttention_Family import AttentionLayer, FullAttention

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def activation_fn(activation: str):
    """The FFN activation for `--activation` ('relu' or 'gelu')."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r} is not one of {', '.join(ACTIVATIONS)} (--activation)")
    return ACTIVATIONS[activation]


def _feed_forward(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Drop(W₂ Drop(act(W₁ x))) through `layer`'s conv1, conv2, dropout and activation: `[B, L, D]` → `[B, L, D]`."""
    y = layer.dropout(layer.activation(layer.conv1(x.transpose(1, 2))))  # [B, d_ff, L]
    return layer.dropout(layer.conv2(y).transpose(1, 2))  # [B, L, D]


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each with a residual and a post-LayerNorm. d_ff defaults to 4·D.

    TSLib's signature and attribute names (attention, conv1, conv2, norm1, norm2, dropout), so a TSLib
    model file builds it unchanged and TSLib checkpoints load.
    """

    def __init__(self, attention: nn.Module, d_model: int, d_ff: int | None = None,
                 dropout: float = 0.1, activation: str = "relu") -> None:
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.attention = attention
        # Created in TSLib's order (conv1, conv2, norm1, norm2), so a seed gives TSLib's initial weights.
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation_fn(activation)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x `[B, L, D]` → (`[B, L, D]`, attention weights or None); tau/delta go to the attention."""
        new_x, attn = self.attention(x, x, x, attn_mask=attn_mask, tau=tau, delta=delta)
        x = self.norm1(x + self.dropout(new_x))
        return self.norm2(x + _feed_forward(self, x)), attn


class ConvLayer(nn.Module):
    """Informer's distilling step: circular Conv1d(k=3) → BatchNorm1d → ELU → MaxPool1d(3, stride 2).

    `[B, L, D]` → `[B, ⌊(L + 1) / 2⌋ + 1, D]`: the convolution pads 2 on each side (TSLib's choice), so
    it lengthens the sequence by 2 before the pooling halves it (96 → 98 → 49).
    """

    def __init__(self, c_in: int) -> None:
        super().__init__()
        # TSLib's attribute names, so its checkpoints load.
        self.downConv = nn.Conv1d(c_in, c_in, kernel_size=3, padding=2, padding_mode="circular")
        self.norm = nn.BatchNorm1d(c_in)
        self.activation = nn.ELU()
        self.maxPool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.activation(self.norm(self.downConv(x.transpose(1, 2))))  # [B, D, L + 2]
        return self.maxPool(y).transpose(1, 2)  # [B, ⌊(L + 1) / 2⌋ + 1, D]


class Encoder(nn.Module):
    """A stack of encoder layers, optional distilling layers between them and an optional final norm:
    `[B, L, D]` → (`[B, L', D]`, weights).

    With `conv_layers` (Informer) there must be one fewer than attention layers: attention, conv,
    attention, ..., conv, attention.
    """

    def __init__(self, attn_layers: list[nn.Module], conv_layers: list[nn.Module] | None = None,
                 norm_layer: nn.Module | None = None) -> None:
        super().__init__()
        if conv_layers is not None and len(conv_layers) != len(attn_layers) - 1:
            raise ValueError(f"Encoder needs one fewer conv layer than attention layers, got {len(conv_layers)} "
                             f"conv and {len(attn_layers)} attention layers")
        self.attn_layers = nn.ModuleList(attn_layers)
        self.conv_layers = nn.ModuleList(conv_layers) if conv_layers is not None else None
        self.norm = norm_layer

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """x `[B, L, D]` → (`[B, L', D]`, one weights entry per attention layer).

        `tau` goes to every layer. `delta` (one shift per key) goes to every layer, or with distilling
        only to the first, since the later ones see a shorter sequence (TSLib's rule); `attn_mask`
        likewise stops at the first distilling step.
        """
        attns = []
        distil = self.conv_layers is not None
        for i, layer in enumerate(self.attn_layers):
            first = i == 0
            x, attn = layer(x, attn_mask=attn_mask if first or not distil else None, tau=tau,
                            delta=delta if first or not distil else None)
            attns.append(attn)
            if distil and i < len(self.conv_layers):
                x = self.conv_layers[i](x)  # [B, ⌊(L + 1) / 2⌋ + 1, D]
        if self.norm is not None:
            x = self.norm(x)
        return x, attns


def attention_encoder(attention: Callable[[bool], nn.Module], d_model: int, d_ff: int, e_layers: int,
                      dropout: float, activation: str, norm_layer: nn.Module | None) -> Encoder:
    """`e_layers` post-norm encoder layers, each around a fresh non-causal `attention(False)`, then `norm_layer`
    (layers and their parameters created in TSLib's order)."""
    return Encoder(
        [
            EncoderLayer(attention(False), d_model, d_ff, dropout=dropout, activation=activation)
            for _ in range(e_layers)
        ],
        norm_layer=norm_layer,
    )


def full_attention_encoder(d_model: int, n_heads: int, d_ff: int, e_layers: int, dropout: float,
                           activation: str, norm_layer: nn.Module | None, factor: int = 5) -> Encoder:
    """`e_layers` post-norm encoder layers over non-causal full attention, then `norm_layer`
    (the encoder TSLib's Transformer, iTransformer and PatchTST build inline)."""

    def attention(causal: bool) -> AttentionLayer:
        return AttentionLayer(FullAttention(causal, factor, attention_dropout=dropout), d_model, n_heads)

    return attention_encoder(attention, d_model, d_ff, e_layers, dropout, activation, norm_layer)


class DecoderLayer(nn.Module):
    """Self-attention, cross-attention to the encoder output, then FFN; three post-LayerNorms.

    TSLib's signature and attribute names (self_attention, cross_attention, conv1, conv2, norm1-3, dropout).
    """

    def __init__(self, self_attention: nn.Module, cross_attention: nn.Module, d_model: int,
                 d_ff: int | None = None, dropout: float = 0.1, activation: str = "relu") -> None:
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation_fn(activation)

    def forward(self, x: torch.Tensor, cross: torch.Tensor, x_mask: torch.Tensor | None = None,
                cross_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> torch.Tensor:
        """x `[B, L, D]` (decoder tokens), cross `[B, S, D]` (encoder output) → `[B, L, D]`.

        tau goes to both attentions; delta (one shift per encoder position) only to the cross-attention.
        """
        x = self.norm1(x + self.dropout(self.self_attention(x, x, x, attn_mask=x_mask, tau=tau, delta=None)[0]))
        cross_out = self.cross_attention(x, cross, cross, attn_mask=cross_mask, tau=tau, delta=delta)[0]
        x = self.norm2(x + self.dropout(cross_out))
        return self.norm3(x + _feed_forward(self, x))


class Decoder(nn.Module):
    """A stack of decoder layers, an optional final norm and an optional output projection."""

    def __init__(self, layers: list[nn.Module], norm_layer: nn.Module | None = None,
                 projection: nn.Module | None = None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm_layer
        self.projection = projection

    def forward(self, x: torch.Tensor, cross: torch.Tensor, x_mask: torch.Tensor | None = None,
                cross_mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> torch.Tensor:
        """x `[B, L, D]`, cross `[B, S, D]` → `[B, L, D]`, or `[B, L, c_out]` with a projection."""
        for layer in self.layers:
            x = layer(x, cross, x_mask=x_mask, cross_mask=cross_mask, tau=tau, delta=delta)
        if self.norm is not None:
            x = self.norm(x)
        if self.projection is not None:
            x = self.projection(x)  # [B, L, c_out]
        return x


def attention_decoder(attention: Callable[[bool], nn.Module], d_model: int, d_ff: int, d_layers: int,
                      dropout: float, activation: str, c_out: int) -> Decoder:
    """`d_layers` decoder layers over a fresh causal `attention(True)` (self) and `attention(False)` (cross),
    a final LayerNorm and Linear(D → c_out): the decoder of TSLib's Transformer, Informer and Non-stationary
    Transformer, created in their order."""
    return Decoder(
        [
            DecoderLayer(attention(True), attention(False), d_model, d_ff, dropout=dropout, activation=activation)
            for _ in range(d_layers)
        ],
        norm_layer=nn.LayerNorm(d_model),
        projection=nn.Linear(d_model, c_out),
    )
