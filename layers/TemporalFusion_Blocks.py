"""Blocks of the Temporal Fusion Transformer (Lim et al., "Temporal Fusion Transformers for Interpretable
Multi-horizon Time Series Forecasting", IJF 2021, https://arxiv.org/abs/1912.09363), with TSLib's class and
attribute names (its model file defines them inline) so its checkpoints load.

Gating (paper eq. 5): GLU(γ) = σ(W_4 γ + b_4) ⊙ (W_5 γ + b_5). TSLib's `GLU(fc1, fc2)` computes
fc1(γ) ⊙ σ(fc2(γ)) (torch's GLU halves: value first, gate second), the same unit with the roles of
the two layers named the other way round.
Gate-add-norm: GateAddNorm(x, skip) = LayerNorm(P(GLU(x) + skip)), P a Linear when the output width
differs (the variable-selection weights), else the identity.
Gated residual network (eq. 2-4): η_2 = ELU(W_2 a + W_3 c + b_2), η_1 = W_1 η_2 + b_1,
GRN(a, c) = GateAddNorm(Dropout(η_1), skip = a, or a Linear of a when the widths differ).
Variable selection (eq. 6-8): v = Softmax(GRN_v(Ξ, c_s)) over the m_χ variables of the flattened
embeddings Ξ, ξ̃^(j) = GRN_j(ξ^(j)), output Σ_j v_j ξ̃^(j).
Interpretable multi-head attention (eq. 13-16): one value projection W_V shared by the heads,
H̃ = (1/m_H) Σ_h softmax(Q W_Q^h (K W_K^h)ᵀ / √d_attn + M) V W_V, output H̃ W_H, M causal.
Temporal fusion decoder (Sec. 4.5): LSTM encoder over the past and decoder over the future, gate-add-norm
skip over the LSTM, static enrichment GRN, causal interpretable attention, gate-add-norm, position-wise
GRN and a final gate-add-norm skip from the LSTM output, Linear to the output variates.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.Embed import DataEmbedding, TemporalEmbedding
from utils.timefeatures import base_unit, num_time_features


class GLU(nn.Module):
    """Gated linear unit `[..., input_size]` → `[..., output_size]`: fc1(x) ⊙ σ(fc2(x))."""

    def __init__(self, input_size: int, output_size: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(input_size, output_size)
        self.fc2 = nn.Linear(input_size, output_size)
        self.glu = nn.GLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.glu(torch.cat([self.fc1(x), self.fc2(x)], dim=-1))


class GateAddNorm(nn.Module):
    """LayerNorm(P(GLU(x) + skip)): x and skip `[..., input_size]` → `[..., output_size]`."""

    def __init__(self, input_size: int, output_size: int) -> None:
        super().__init__()
        self.glu = GLU(input_size, input_size)
        self.projection = nn.Linear(input_size, output_size) if input_size != output_size else nn.Identity()
        self.layer_norm = nn.LayerNorm(output_size)

    def forward(self, x: torch.Tensor, skip_a: torch.Tensor) -> torch.Tensor:
        return self.layer_norm(self.projection(self.glu(x) + skip_a))


class GRN(nn.Module):
    """Gated residual network: a `[B, (T,) input_size]`, optional context c `[B, context_size]` →
    `[B, (T,) output_size]` (see the module doc). TSLib's signature."""

    def __init__(self, input_size: int, output_size: int, hidden_size: int | None = None,
                 context_size: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        hidden_size = input_size if hidden_size is None else hidden_size
        self.lin_a = nn.Linear(input_size, hidden_size)
        self.lin_c = nn.Linear(context_size, hidden_size) if context_size is not None else None
        self.lin_i = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(dropout)
        self.project_a = nn.Linear(input_size, hidden_size) if hidden_size != input_size else nn.Identity()
        self.gate = GateAddNorm(hidden_size, output_size)

    def forward(self, a: torch.Tensor, c: torch.Tensor | None = None) -> torch.Tensor:
        x = self.lin_a(a)  # [B, (T,) hidden]
        if c is not None:
            context = self.lin_c(c)  # [B, hidden]
            # A per-sample context is added at every time step of a temporal input.
            x = x + (context.unsqueeze(1) if a.dim() == 3 else context)
        x = self.dropout(self.lin_i(F.elu(x)))
        return self.gate(x, self.project_a(a))


class VariableSelectionNetwork(nn.Module):
    """Softmax-weighted sum of per-variable GRNs: x `[B, (T,) V, D]`, context `[B, D]` → `[B, (T,) D]`."""

    def __init__(self, d_model: int, variable_num: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.joint_grn = GRN(d_model * variable_num, variable_num, hidden_size=d_model, context_size=d_model,
                             dropout=dropout)
        self.variable_grns = nn.ModuleList([GRN(d_model, d_model, dropout=dropout) for _ in range(variable_num)])

    def selection_weights(self, x: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """The variable weights v `[B, (T,) V]` (they sum to one over the variables)."""
        return torch.softmax(self.joint_grn(x.flatten(-2), context), dim=-1)

    def forward(self, x: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        weights = self.selection_weights(x, context)  # [B, (T,) V]
        processed = torch.stack([grn(x[..., i, :]) for i, grn in enumerate(self.variable_grns)], dim=-1)  # [.., D, V]
        return torch.matmul(processed, weights.unsqueeze(-1)).squeeze(-1)  # [B, (T,) D]


class StaticCovariateEncoder(nn.Module):
    """Static variables `[B, V_s, D]` → the four contexts (c_s selection, c_c cell, c_h hidden,
    c_e enrichment), each `[B, D]`; without static variables, four Nones (the GRNs stay unused)."""

    def __init__(self, d_model: int, static_len: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.static_vsn = VariableSelectionNetwork(d_model, static_len) if static_len else None
        self.grns = nn.ModuleList([GRN(d_model, d_model, dropout=dropout) for _ in range(4)])

    def forward(self, static_input: torch.Tensor | None) -> list[torch.Tensor | None]:
        if static_input is None:
            return [None] * 4
        features = self.static_vsn(static_input)  # [B, D]
        return [grn(features) for grn in self.grns]


def known_input_count(embed_type: str, freq: str) -> int:
    """Known (calendar) inputs per step: the timeF columns of `freq`, or the calendar tables
    (month, day, weekday, hour, plus minute for minutely or finer data)."""
    if embed_type == "timeF":
        return num_time_features(freq)
    return 5 if base_unit(freq) in ("t", "s") else 4


class TFTTimeFeatureEmbedding(nn.Module):
    """One Linear(1 → D, no bias) per timeF column: `[B, T, F]` → `[B, T, F, D]`."""

    def __init__(self, d_model: int, embed_type: str = "timeF", freq: str = "h") -> None:
        super().__init__()
        self.embed = nn.ModuleList([nn.Linear(1, d_model, bias=False) for _ in range(num_time_features(freq))])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([embed(x[:, :, i:i + 1]) for i, embed in enumerate(self.embed)], dim=-2)


class TFTTemporalEmbedding(TemporalEmbedding):
    """The calendar tables kept apart: integer marks `[B, T, 4 or 5]` → `[B, T, 4 or 5, D]`
    (month, day, weekday, hour, then minute)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.long()
        fields = [self.month_embed(x[:, :, 0]), self.day_embed(x[:, :, 1]), self.weekday_embed(x[:, :, 2]),
                  self.hour_embed(x[:, :, 3])]
        if self.use_minute:
            fields.append(self.minute_embed(x[:, :, 4]))
        return torch.stack(fields, dim=-2)


class TFTEmbedding(nn.Module):
    """Per-variable embeddings: static variables (value at the first step), observed variables (a
    1-channel `DataEmbedding` each: value conv + position) and the known marks of past and future.

    Args:
        d_model: D. dropout: the value embeddings' dropout. embed_type, freq: `--embed`, `--freq`.
        pred_len: H. static_pos, observed_pos: input-channel indices of each kind.

    forward: x_enc `[B, L, N]`, marks `[B, L, F]` and `[B, Ll + H, F]` → (static `[B, V_s, D]` or None,
    observed `[B, L, V_o, D]`, known `[B, L + H, K, D]`).
    """

    def __init__(self, d_model: int, dropout: float, embed_type: str, freq: str, pred_len: int,
                 static_pos: list[int], observed_pos: list[int]) -> None:
        super().__init__()
        self.pred_len = pred_len
        self.static_pos, self.observed_pos = list(static_pos), list(observed_pos)
        if self.static_pos:
            self.static_embedding = nn.ModuleList(
                [DataEmbedding(1, d_model, dropout=dropout) for _ in self.static_pos])
        else:
            self.static_embedding = None
        self.observed_embedding = nn.ModuleList([DataEmbedding(1, d_model, dropout=dropout) for _ in self.observed_pos])
        if embed_type == "timeF":
            self.known_embedding = TFTTimeFeatureEmbedding(d_model, embed_type, freq)
        else:
            self.known_embedding = TFTTemporalEmbedding(d_model, embed_type, freq)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor, x_dec: torch.Tensor | None,
                x_mark_dec: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        static = None
        if self.static_embedding is not None:
            static = torch.stack([embed(x_enc[:, :1, pos:pos + 1], None)[:, 0]
                                  for pos, embed in zip(self.static_pos, self.static_embedding, strict=True)],
                                 dim=-2)  # [B, V_s, D]
        observed = torch.stack([embed(x_enc[:, :, pos:pos + 1], None)
                                for pos, embed in zip(self.observed_pos, self.observed_embedding, strict=True)],
                               dim=-2)  # [B, L, V_o, D]
        marks = torch.cat([x_mark_enc, x_mark_dec[:, -self.pred_len:]], dim=1)  # [B, L + H, F]
        return static, observed, self.known_embedding(marks)  # known [B, L + H, K, D]


class InterpretableMultiHeadAttention(nn.Module):
    """Causal attention with per-head queries/keys and one shared value, averaged over heads:
    `[B, T, D]` → `[B, T, D]`, T ≤ `max_len` (see the module doc).

    Args:
        d_model: D. n_heads: m_H (must divide D; d_attn = D / m_H). dropout: on the output.
        max_len: longest sequence (TSLib: seq_len + pred_len); the causal mask is a saved buffer.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float, max_len: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv_linears = nn.Linear(d_model, (2 * n_heads + 1) * self.d_head, bias=False)
        self.out_projection = nn.Linear(self.d_head, d_model, bias=False)
        self.out_dropout = nn.Dropout(dropout)
        self.scale = self.d_head ** -0.5
        # TSLib saves this additive mask (-inf above the diagonal) in its checkpoints.
        self.register_buffer("mask", torch.full((max_len, max_len), float("-inf")).triu(1))

    def attention_weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-head weights `[B, m_H, T, T]` and the shared values `[B, T, d_attn]`."""
        b, t, _ = x.shape
        q, k, v = self.qkv_linears(x).split([self.n_heads * self.d_head, self.n_heads * self.d_head, self.d_head],
                                            dim=-1)
        q = q.view(b, t, self.n_heads, self.d_head).transpose(1, 2)  # [B, m_H, T, d_attn]
        k = k.view(b, t, self.n_heads, self.d_head).permute(0, 2, 3, 1)  # [B, m_H, d_attn, T]
        scores = torch.matmul(q, k) * self.scale + self.mask[:t, :t]  # [B, m_H, T, T]
        return torch.softmax(scores, dim=-1), v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights, v = self.attention_weights(x)
        heads = torch.matmul(weights, v.unsqueeze(1))  # [B, m_H, T, d_attn]
        return self.out_dropout(self.out_projection(heads.mean(dim=1)))  # [B, T, D]


class TemporalFusionDecoder(nn.Module):
    """LSTM encoder-decoder, static enrichment, causal attention and gated skips (see the module doc):
    past `[B, L, D]`, future `[B, H, D]`, contexts `[B, D]` or None → `[B, H, c_out]`."""

    def __init__(self, d_model: int, n_heads: int, dropout: float, seq_len: int, pred_len: int, c_out: int) -> None:
        super().__init__()
        self.pred_len = pred_len
        self.history_encoder = nn.LSTM(d_model, d_model, batch_first=True)
        self.future_encoder = nn.LSTM(d_model, d_model, batch_first=True)
        self.gate_after_lstm = GateAddNorm(d_model, d_model)
        self.enrichment_grn = GRN(d_model, d_model, context_size=d_model, dropout=dropout)
        self.attention = InterpretableMultiHeadAttention(d_model, n_heads, dropout, seq_len + pred_len)
        self.gate_after_attention = GateAddNorm(d_model, d_model)
        self.position_wise_grn = GRN(d_model, d_model, dropout=dropout)
        self.gate_final = GateAddNorm(d_model, d_model)
        self.out_projection = nn.Linear(d_model, c_out)

    def forward(self, history_input: torch.Tensor, future_input: torch.Tensor, c_c: torch.Tensor | None,
                c_h: torch.Tensor | None, c_e: torch.Tensor | None) -> torch.Tensor:
        # The paper's static contexts start the encoder: hidden state c_h, cell state c_c.
        state = None if c_c is None or c_h is None else (c_h.unsqueeze(0).contiguous(), c_c.unsqueeze(0).contiguous())
        history, state = self.history_encoder(history_input, state)  # [B, L, D]
        future, _ = self.future_encoder(future_input, state)  # [B, H, D]
        temporal = self.gate_after_lstm(torch.cat([history, future], dim=1),
                                        torch.cat([history_input, future_input], dim=1))  # [B, L + H, D]
        enriched = self.enrichment_grn(temporal, c_e)  # [B, L + H, D]
        attended = self.attention(enriched)  # [B, L + H, D]
        # Only the horizon is decoded (no loss on the past).
        out = self.gate_after_attention(attended[:, -self.pred_len:], enriched[:, -self.pred_len:])  # [B, H, D]
        out = self.gate_final(self.position_wise_grn(out), temporal[:, -self.pred_len:])
        return self.out_projection(out)  # [B, H, c_out]
