"""FEDformer's frequency enhanced blocks (Zhou et al., "FEDformer: Frequency Enhanced Decomposed
Transformer for Long-term Series Forecasting", ICML 2022, https://arxiv.org/abs/2201.12740, §3.2-3.3),
Fourier version, with TSLib's public names and signatures (`get_frequency_modes`, `FourierBlock`,
`FourierCrossAttention`).

Both blocks keep a fixed set of M rfft modes chosen once at construction (`get_frequency_modes`):
"random" draws M of the first ⌊L/2⌋ bins with numpy's global RNG (`np.random.shuffle`, as TSLib does,
so the same `--seed` picks the same modes: run.py seeds numpy right before building the model),
"low" keeps bins 0 … M − 1. M = min(modes, ⌊L/2⌋).

FEB-f (self-attention replacement; only the query is used, as in the paper), per head h:
    Q = rfft_t(q)                                      [E, ⌊L/2⌋ + 1]
    Y_{:, m} = W_{h, :, :, m}ᵀ Q_{:, i_m}             W = weights1 + i·weights2, `[H, E, E', M]`
    out = irfft(Padding(Y))                           Y fills bins 0 … M − 1 (the paper's padding of
                                                      the M-mode result), the other bins are zero
FEA-f (cross-attention replacement), per head h, with Q̃, K̃, Ṽ the selected modes of q, k, v:
    A = σ(Q̃ᵀ K̃)  (σ = tanh on real and imaginary parts, or softmax of |·| over the key modes)
    Z = Ṽ Aᵀ,  Y_{:, m} = W_{h, :, :, m}ᵀ Z_{:, m}
    out = irfft(Y placed back at the query's bins i_m) / (in_channels · out_channels)

Complex products are written as four real einsums ((a + ib)(c + id) = ac − bd + i(ad + bc)), TSLib's
arithmetic, so FLOP counters see the same real matmuls. FFTs run in float32 at least (cuFFT has no
bf16 transform).

Deliberate differences from TSLib (parameter names, shapes and draws kept):
- The blocks return `[B, L, H, E]` (time second), which `AutoCorrelationLayer` reshapes to `[B, L, D]`.
  TSLib returns `[B, H, E, L]` and its layer `view`s that memory as `[B, L, H·E]`, interleaving time
  steps with channels before the output projection; `output_layout="tslib"` (run.py
  `--attn_output_layout tslib`) reproduces that (`layers.HeadLayout`).
- FEA-f weights the value modes Ṽ; TSLib (and the official code) multiplies the attention by the key
  modes K̃ a second time and ignores v (the authors confirm v was intended: MAZiqing/FEDformer#34).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from layers.HeadLayout import check_output_layout, head_major_to_steps

MODE_SELECT_METHODS = ("random", "low")
CROSS_ACTIVATIONS = ("tanh", "softmax")


def get_frequency_modes(seq_len: int, modes: int = 64, mode_select_method: str = "random") -> list[int]:
    """The rfft bins a block keeps for a length-`seq_len` series: min(modes, ⌊seq_len/2⌋) of the bins
    0 … ⌊seq_len/2⌋ − 1, sorted. "random" shuffles those bins with numpy's global RNG (one
    `np.random.shuffle` of the list, TSLib's draw) and keeps the first; "low" keeps the lowest."""
    if mode_select_method not in MODE_SELECT_METHODS:
        raise ValueError(f"mode_select_method {mode_select_method!r} is not one of {', '.join(MODE_SELECT_METHODS)}")
    modes = min(modes, seq_len // 2)
    if mode_select_method == "random":
        index = list(range(seq_len // 2))
        np.random.shuffle(index)
        return sorted(index[:modes])
    return list(range(modes))


def complex_einsum(equation: str, a_re: torch.Tensor, a_im: torch.Tensor, b_re: torch.Tensor,
                   b_im: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The complex einsum of (a_re + i·a_im) and (b_re + i·b_im) as four real einsums: (real, imag).

    Returned in float32 at least: under autocast the einsums run in half precision, and a half-precision
    complex tensor cannot go through cuFFT at lengths that are not powers of two."""
    real = torch.einsum(equation, a_re, b_re) - torch.einsum(equation, a_im, b_im)
    imag = torch.einsum(equation, a_re, b_im) + torch.einsum(equation, a_im, b_re)
    dtype = torch.promote_types(real.dtype, torch.float32)
    return real.to(dtype), imag.to(dtype)


def _spectrum(x: torch.Tensor) -> torch.Tensor:
    """rfft along time of `[B, L, H, E]` → `[B, H, E, ⌊L/2⌋ + 1]` (complex, float32 at least)."""
    x = x.permute(0, 2, 3, 1)  # [B, H, E, L]
    return torch.fft.rfft(x.to(torch.promote_types(x.dtype, torch.float32)), dim=-1)


def _select(spectrum: torch.Tensor, index: list[int]) -> torch.Tensor:
    """The bins `index` of `spectrum` `[..., F]` → `[..., len(index)]`; bins ≥ F (a series shorter than
    the one the modes were drawn for) are zero."""
    bins = spectrum.shape[-1]
    out = spectrum.new_zeros(*spectrum.shape[:-1], len(index))
    keep = [m for m, i in enumerate(index) if i < bins]
    if keep:
        out[..., keep] = spectrum[..., [index[m] for m in keep]]
    return out


class FourierBlock(nn.Module):
    """FEB-f: q `[B, L, H, E]` (k, v unused) → (`[B, L, H, E']`, None).

    Args:
        in_channels, out_channels: model widths D (heads get D / n_heads each).
        n_heads: heads H.
        seq_len: the series length the modes are drawn for.
        modes: the number of modes kept (at most ⌊seq_len/2⌋).
        mode_select_method: "random" (numpy's global RNG) or "low".
        output_layout: "per_step" (default) or "tslib" (`layers.HeadLayout`).

    weights1/weights2 (real and imaginary parts, `[H, D/H, D/H, M]`) start uniform in
    [0, 1/(in_channels · out_channels)).
    """

    def __init__(self, in_channels: int, out_channels: int, n_heads: int, seq_len: int, modes: int = 0,
                 mode_select_method: str = "random", output_layout: str = "per_step") -> None:
        super().__init__()
        check_output_layout(output_layout)
        self.output_layout = output_layout
        self.index = get_frequency_modes(seq_len, modes=modes, mode_select_method=mode_select_method)
        self.n_heads = n_heads
        self.scale = 1 / (in_channels * out_channels)
        shape = (n_heads, in_channels // n_heads, out_channels // n_heads, len(self.index))
        self.weights1 = nn.Parameter(self.scale * torch.rand(*shape, dtype=torch.float))
        self.weights2 = nn.Parameter(self.scale * torch.rand(*shape, dtype=torch.float))

    def forward(self, q: torch.Tensor, k: torch.Tensor | None = None, v: torch.Tensor | None = None,
                mask: torch.Tensor | None = None, tau: torch.Tensor | None = None,
                delta: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        length = q.shape[1]
        bins = length // 2 + 1
        selected = _select(_spectrum(q), self.index)  # [B, H, E, M]
        # The m-th kept mode lands on output bin m (the paper's padding); bins ≥ F do not exist.
        m = min(len(self.index), bins)
        y_re, y_im = complex_einsum("bhim,hiom->bhom", selected.real[..., :m], selected.imag[..., :m],
                                    self.weights1[..., :m], self.weights2[..., :m])  # [B, H, E', m]
        out_ft = torch.complex(y_re, y_im)
        out = torch.fft.irfft(out_ft, n=length, dim=-1)  # zero-padded to ⌊L/2⌋ + 1 bins: [B, H, E', L]
        return head_major_to_steps(out, self.output_layout, time_dim=3).to(q.dtype), None  # [B, L, H, E']


class FourierCrossAttention(nn.Module):
    """FEA-f: q `[B, L, H, E]`, k and v `[B, S, H, E]` → (`[B, L, H, E']`, None).

    Args:
        in_channels, out_channels: model widths D.
        seq_len_q, seq_len_kv: the lengths the query and key/value modes are drawn for (query first).
        modes, mode_select_method: as `FourierBlock`.
        activation: "tanh" (on real and imaginary parts) or "softmax" (of |·| over the key modes).
        policy: accepted for TSLib's signature, unused (as in TSLib).
        num_heads: heads H.
        output_layout: "per_step" (default) or "tslib" (`layers.HeadLayout`).
    """

    def __init__(self, in_channels: int, out_channels: int, seq_len_q: int, seq_len_kv: int, modes: int = 64,
                 mode_select_method: str = "random", activation: str = "tanh", policy: int = 0,
                 num_heads: int = 8, output_layout: str = "per_step") -> None:
        super().__init__()
        check_output_layout(output_layout)
        self.output_layout = output_layout
        if activation not in CROSS_ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is not one of {', '.join(CROSS_ACTIVATIONS)}")
        self.activation = activation
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.index_q = get_frequency_modes(seq_len_q, modes=modes, mode_select_method=mode_select_method)
        self.index_kv = get_frequency_modes(seq_len_kv, modes=modes, mode_select_method=mode_select_method)
        self.scale = 1 / (in_channels * out_channels)
        shape = (num_heads, in_channels // num_heads, out_channels // num_heads, len(self.index_q))
        self.weights1 = nn.Parameter(self.scale * torch.rand(*shape, dtype=torch.float))
        self.weights2 = nn.Parameter(self.scale * torch.rand(*shape, dtype=torch.float))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
                tau: torch.Tensor | None = None, delta: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        length = q.shape[1]
        q_modes = _select(_spectrum(q), self.index_q)  # [B, H, E, Mq]
        k_modes = _select(_spectrum(k), self.index_kv)  # [B, H, E, Mkv]
        v_modes = _select(_spectrum(v), self.index_kv)  # [B, H, E, Mkv]
        a_re, a_im = complex_einsum("bhex,bhey->bhxy", q_modes.real, q_modes.imag,
                                    k_modes.real, k_modes.imag)  # [B, H, Mq, Mkv]
        if self.activation == "tanh":
            a_re, a_im = a_re.tanh(), a_im.tanh()
        else:
            a_re = torch.softmax(torch.complex(a_re, a_im).abs(), dim=-1)
            a_im = torch.zeros_like(a_re)
        z_re, z_im = complex_einsum("bhxy,bhey->bhex", a_re, a_im, v_modes.real, v_modes.imag)  # [B, H, E, Mq]
        y_re, y_im = complex_einsum("bhex,heox->bhox", z_re, z_im, self.weights1, self.weights2)  # [B, H, E', Mq]
        bins = length // 2 + 1
        out_ft = q_modes.new_zeros(*y_re.shape[:-1], bins)  # [B, H, E', ⌊L/2⌋ + 1]
        keep = [m for m, i in enumerate(self.index_q) if i < bins]
        if keep:
            out_ft[..., [self.index_q[m] for m in keep]] = torch.complex(y_re, y_im)[..., keep]
        out = torch.fft.irfft(out_ft / self.in_channels / self.out_channels, n=length, dim=-1)  # [B, H, E', L]
        return head_major_to_steps(out, self.output_layout, time_dim=3).to(q.dtype), None  # [B, L, H, E']
