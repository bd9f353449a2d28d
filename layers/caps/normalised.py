"""Normalised linear attention (Katharopoulos et al. 2020, eq. 6) built from any linear attention.

    o_t = sum_{i<=t} s(R_t phi(q_t), R_i phi(k_i)) v_i  /  sum_{i<=t} s(phi(q_t), phi(k_i)),   phi = elu + 1

RoPE turns the features after phi (RoFormer, Su et al., eq. 19); the normaliser stays unrotated
(layers/CAPS_Attention.md, "LinAttn hazard"). `dispatch.caps_attention_normalised` runs it on the CAPS kernels.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1 > 0, Katharopoulos et al.'s feature map (exp(x) below 0, x + 1 above)."""
    return F.elu(x) + 1.0


def normalise_linear(
    attend: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor],
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rope_freq: torch.Tensor | None,
) -> torch.Tensor:
    """Normalised linear attention from a linear one: o_t = num_t / den_t with phi = `elu_feature_map`,

        num_t = sum_{i<=t} s(R_t phi(q_t), R_i phi(k_i)) v_i,   den_t = sum_{i<=t} s(phi(q_t), phi(k_i)),

    where attend(q, k, v, rope_freq) -> sum_{i<=t} s(q_t, k_i) v_i is linear attention with scores s (q.k,
    or q.k times non-negative path weights) that rotates q, k by RoPE when rope_freq is given. RoPE acts on
    the features, not on q, k (RoFormer, Su et al., eq. 19): rotated after phi the numerator's score depends
    on t - i alone (phi of a rotated vector would not), and the normaliser stays unrotated, a sum of
    positive terms (>= its i = t term > 0), which rotation would make signed and possibly ~0.
    den is the numerator of v = 1 ([B, T, H, 1]). Shapes as `caps_attention`.
    """
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    num = attend(fq, fk, v, rope_freq)  # [B, T, H, Ev]
    den = attend(fq, fk, v.new_ones(*v.shape[:-1], 1), None)  # [B, T, H, 1]
    return num / den
