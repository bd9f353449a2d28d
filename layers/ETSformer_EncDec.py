"""ETSformer's blocks (Woo et al., "ETSformer: Exponential Smoothing Transformers for Time-series
Forecasting", 2022, https://arxiv.org/abs/2202.01381, §3), with TSLib's public class names and signatures.

Exponential smoothing attention (ESA, §3.2.1), per head h with smoothing weight w_h = sigmoid(·)
(TSLib's parameterisation: w plays the paper's 1 − α) and a learnt initial state v₀:
    ES(V)_t = (1 − w) V_t + w ES(V)_{t−1},  ES(V)_{−1} = v₀
            = Σ_{j ≤ t} (1 − w) w^{t−j} V_j + w^{t+1} v₀               (a causal convolution, done by FFT)
With auxiliary values A (the level equation), ES_t = (1 − w) V_t + w (ES_{t−1} + A_t), which adds
Σ_{j ≤ t} w^{t−j+1} A_j.

Growth (MH-ESA on successive differences): Z = in_proj(x) split into heads; B = ES(Z_t − Z_{t−1}) with
Z_{−1} = z₀; the output prepends v₀ (so it has T + 1 steps: B_{−1} … B_{T−1}), then out_proj.
Frequency attention (FA, §3.2.2): the K largest-amplitude rfft bins of each feature (DC and, for even T,
Nyquist excluded) are summed as cosines over T + H steps, extrapolating the season into the horizon:
    S_τ = Σ_k 2|X_{f_k}| / T · cos(2π f_k τ + arg X_{f_k}),  τ = 0 … T + H − 1.
Level (§3.1): E_t = (1 − w)(X_t − S_t) + w (E_{t−1} + B_{t−1}) per variate, with S and B the season and
growth projected D → c_out; i.e. ES(X − S) with auxiliary values B.
Damping (§3.3): the last growth repeated over the horizon, scaled per head by Σ_{i ≤ h} φ^i, φ = sigmoid(·).

Each smoothing and frequency operation has a slow, obviously-correct reference with the same signature
beside it (`exponential_smoothing_reference`, `fourier_extrapolation_reference`); tests swap them.

Deliberate differences from TSLib (parameter names, shapes and draws kept):
- The level's growth term is smoothed along time, as the level equation above says. TSLib convolves it
  along the last axis (of size 1), so each E_t receives only its own step's growth, scaled by
  w^(T−t)·B_{t−1}, instead of the decayed sum of all earlier growths.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

FEEDFORWARD_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}


def _at_least_float32(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.promote_types(x.dtype, torch.float32))


def causal_conv_fft(x: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """out_t = Σ_{m=0}^{t} kernel_m · x_{t−m} along time by FFT: x `[B, T, H, D]`, kernel `[T, H]` → `[B, T, H, D]`.

    Zero-padded to 2T points so the circular convolution is linear.
    """
    length = x.shape[1]
    n = 2 * length
    spectrum = torch.fft.rfft(_at_least_float32(x), n=n, dim=1)  # [B, n/2 + 1, H, D]
    kernel_spectrum = torch.fft.rfft(_at_least_float32(kernel), n=n, dim=0)  # [n/2 + 1, H]
    return torch.fft.irfft(spectrum * kernel_spectrum[None, :, :, None], n=n, dim=1)[:, :length]


def exponential_smoothing(values: torch.Tensor, weight: torch.Tensor, v0: torch.Tensor,
                          aux_values: torch.Tensor | None = None) -> torch.Tensor:
    """ES of values `[B, T, H, D]` with weights w `[H]` and initial state v0 `[1, 1, H, D]` (plus
    Σ_{j ≤ t} w^{t−j+1} aux_j for aux_values `[B, T, H, D]`) → `[B, T, H, D]`, by FFT convolution."""
    length = values.shape[1]
    weight = _at_least_float32(weight)
    powers = torch.arange(length, device=weight.device, dtype=weight.dtype)[:, None]  # [T, 1]
    decay = weight[None, :] ** powers  # w^m, [T, H]
    out = causal_conv_fft(values, (1 - weight) * decay) + (decay * weight)[None, :, :, None] * v0
    if aux_values is not None:
        out = out + causal_conv_fft(aux_values, decay * weight)
    return out.to(values.dtype)


def exponential_smoothing_reference(values: torch.Tensor, weight: torch.Tensor, v0: torch.Tensor,
                                    aux_values: torch.Tensor | None = None) -> torch.Tensor:
    """`exponential_smoothing` as the recurrence s_t = (1 − w) v_t + w (s_{t−1} + aux_t), s_{−1} = v0,
    one step at a time."""
    w = weight[None, :, None]  # [1, H, 1]
    state = v0[:, 0].expand(values.shape[0], -1, -1)  # [B, H, D]
    out = []
    for t in range(values.shape[1]):
        carried = state if aux_values is None else state + aux_values[:, t]
        state = (1 - w) * values[:, t] + w * carried
        out.append(state)
    return torch.stack(out, dim=1)  # [B, T, H, D]


def _kept_bins(length: int, low_freq: int) -> tuple[int, int]:
    """The rfft bins frequency attention ranks: [low_freq, stop), without Nyquist for even lengths."""
    bins = length // 2 + 1
    return low_freq, bins - 1 if length % 2 == 0 else bins


def fourier_extrapolation(x: torch.Tensor, k: int, pred_len: int, low_freq: int = 1) -> torch.Tensor:
    """Frequency attention: x `[B, T, D]` → the k strongest bins of each feature as cosines over T + pred_len
    steps, `[B, T + pred_len, D]` (bins ranked by amplitude, DC and even-T Nyquist excluded)."""
    length = x.shape[1]
    start, stop = _kept_bins(length, low_freq)
    spectrum = torch.fft.rfft(_at_least_float32(x), dim=1)[:, start:stop]  # [B, F, D]
    amplitude, index = torch.topk(spectrum.abs(), k, dim=1)  # [B, k, D]
    phase = torch.gather(spectrum.angle(), 1, index)  # [B, k, D]
    freq = (index + start).to(amplitude.dtype) / length  # cycles per step
    steps = torch.arange(length + pred_len, device=x.device, dtype=amplitude.dtype)  # [T + H]
    waves = torch.cos(2 * math.pi * freq[:, :, None, :] * steps[None, None, :, None] + phase[:, :, None, :])
    return (2 * amplitude[:, :, None, :] / length * waves).sum(dim=1).to(x.dtype)  # [B, T + H, D]


def fourier_extrapolation_reference(x: torch.Tensor, k: int, pred_len: int, low_freq: int = 1) -> torch.Tensor:
    """`fourier_extrapolation` from the DFT written out, X_f = Σ_t x_t e^{−2πi f t / T}, bin by bin and
    series by series, in float64."""
    b, length, d = x.shape
    start, stop = _kept_bins(length, low_freq)
    t = torch.arange(length, dtype=torch.float64)
    steps = torch.arange(length + pred_len, dtype=torch.float64)
    out = torch.zeros(b, length + pred_len, d, dtype=torch.float64)
    for i in range(b):
        for j in range(d):
            series = x[i, :, j].double()
            coefs = {f: complex((series * torch.cos(2 * math.pi * f * t / length)).sum(),
                                -(series * torch.sin(2 * math.pi * f * t / length)).sum())
                     for f in range(start, stop)}
            for f in sorted(coefs, key=lambda f: abs(coefs[f]), reverse=True)[:k]:
                c = coefs[f]
                out[i, :, j] += 2 * abs(c) / length * torch.cos(2 * math.pi * f * steps / length
                                                                + math.atan2(c.imag, c.real))
    return out


class ExponentialSmoothing(nn.Module):
    """Multi-head ESA: values `[B, T, H, D]` (and aux_values `[B, T, H, D]`) → `[B, T, H, D]`.

    Args:
        dim: per-head width D; nhead: heads H; dropout: on the values (and, with `aux`, on aux_values).
        aux: build the auxiliary-value dropout (the level layer's smoothing of the growth).
        implementation: "fft" (default) or "reference" (the step-by-step recurrence, for tests).
    """

    def __init__(self, dim: int, nhead: int, dropout: float = 0.1, aux: bool = False, *,
                 implementation: str = "fft") -> None:
        super().__init__()
        if implementation not in SMOOTHING:
            raise ValueError(f"implementation {implementation!r} is not one of {', '.join(SMOOTHING)}")
        self._smoothing_weight = nn.Parameter(torch.randn(nhead, 1))
        self.v0 = nn.Parameter(torch.randn(1, 1, nhead, dim))
        self.dropout = nn.Dropout(dropout)
        if aux:
            self.aux_dropout = nn.Dropout(dropout)
        self.implementation = implementation

    @property
    def weight(self) -> torch.Tensor:
        """The smoothing weight w = sigmoid(·) per head, `[H, 1]`."""
        return torch.sigmoid(self._smoothing_weight)

    def forward(self, values: torch.Tensor, aux_values: torch.Tensor | None = None) -> torch.Tensor:
        if aux_values is not None:
            aux_values = self.aux_dropout(aux_values)
        smooth = SMOOTHING[self.implementation]
        return smooth(self.dropout(values), self.weight[:, 0], self.v0, aux_values)


class GrowthLayer(nn.Module):
    """Growth: x `[B, T, d_model]` → smoothed successive differences with v₀ prepended, `[B, T + 1, d_model]`."""

    def __init__(self, d_model: int, nhead: int, d_head: int | None = None, dropout: float = 0.1) -> None:
        super().__init__()
        self.d_head = d_head or d_model // nhead
        self.d_model = d_model
        self.nhead = nhead
        if self.d_head * nhead != d_model:
            raise ValueError(f"d_model {d_model} is not n_heads {nhead} × d_head {self.d_head} (--d_model, --n_heads)")
        self.z0 = nn.Parameter(torch.randn(nhead, self.d_head))
        self.in_proj = nn.Linear(d_model, self.d_head * nhead)
        self.es = ExponentialSmoothing(self.d_head, nhead, dropout=dropout)
        self.out_proj = nn.Linear(self.d_head * nhead, d_model)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        b, t, _ = inputs.shape
        values = self.in_proj(inputs).view(b, t, self.nhead, -1)  # [B, T, H, E]
        values = torch.cat([self.z0.expand(b, 1, -1, -1), values], dim=1)  # [B, T + 1, H, E]
        out = self.es(values[:, 1:] - values[:, :-1])  # [B, T, H, E]
        out = torch.cat([self.es.v0.expand(b, -1, -1, -1).to(out.dtype), out], dim=1)  # [B, T + 1, H, E]
        return self.out_proj(out.reshape(b, t + 1, -1))  # [B, T + 1, d_model]


class FourierLayer(nn.Module):
    """Frequency attention: x `[B, T, d_model]` → season over T + pred_len steps `[B, T + pred_len, d_model]`
    from each feature's k strongest frequencies ≥ low_freq. No parameters.

    `implementation`: "fft" (default) or "reference" (direct DFT sums in float64, for tests).
    """

    def __init__(self, d_model: int, pred_len: int, k: int | None = None, low_freq: int = 1, *,
                 implementation: str = "fft") -> None:
        super().__init__()
        if implementation not in EXTRAPOLATION:
            raise ValueError(f"implementation {implementation!r} is not one of {', '.join(EXTRAPOLATION)}")
        self.d_model = d_model
        self.pred_len = pred_len
        self.k = k
        self.low_freq = low_freq
        self.implementation = implementation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = EXTRAPOLATION[self.implementation](x, self.k, self.pred_len, self.low_freq)
        return out.to(x.dtype)


class LevelLayer(nn.Module):
    """Level: level `[B, T, c_out]`, growth and season `[B, T, d_model]` → E `[B, T, c_out]`
    (E_t = (1 − w)(X_t − S_t) + w (E_{t−1} + B_{t−1}), S and B projected to c_out, per variate)."""

    def __init__(self, d_model: int, c_out: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.d_model = d_model
        self.c_out = c_out
        self.es = ExponentialSmoothing(1, c_out, dropout=dropout, aux=True)
        self.growth_pred = nn.Linear(d_model, c_out)
        self.season_pred = nn.Linear(d_model, c_out)

    def forward(self, level: torch.Tensor, growth: torch.Tensor, season: torch.Tensor) -> torch.Tensor:
        b, t, _ = level.shape
        growth = self.growth_pred(growth).view(b, t, self.c_out, 1)  # [B, T, c_out, 1]
        season = self.season_pred(season).view(b, t, self.c_out, 1)
        out = self.es(level.view(b, t, self.c_out, 1) - season, aux_values=growth)  # [B, T, c_out, 1]
        return out.view(b, t, self.c_out)


class Feedforward(nn.Module):
    """Bias-free two-layer MLP with dropout after each: `[B, T, d_model]` → `[B, T, d_model]`."""

    def __init__(self, d_model: int, dim_feedforward: int, dropout: float = 0.1, activation: str = "sigmoid") -> None:
        super().__init__()
        if activation not in FEEDFORWARD_ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is not one of {', '.join(FEEDFORWARD_ACTIVATIONS)} "
                             "(--activation)")
        self.linear1 = nn.Linear(d_model, dim_feedforward, bias=False)
        self.dropout1 = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model, bias=False)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = FEEDFORWARD_ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout2(self.linear2(self.dropout1(self.activation(self.linear1(x)))))


class EncoderLayer(nn.Module):
    """One ETSformer encoder layer: residual res `[B, T, d_model]`, level `[B, T, c_out]` →
    (res `[B, T, d_model]`, level `[B, T, c_out]`, growth `[B, T + 1, d_model]`, season `[B, T + pred_len, d_model]`).

    season = FA(res); res ← res − season_{:T}; growth = ESA(res); res ← LN(res − growth_{1:});
    res ← LN(res + FF(res)); level ← Level(level, growth_{:T}, season_{:T}).
    """

    def __init__(self, d_model: int, nhead: int, c_out: int, seq_len: int, pred_len: int, k: int,
                 dim_feedforward: int | None = None, dropout: float = 0.1, activation: str = "sigmoid",
                 layer_norm_eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model = d_model
        self.nhead = nhead
        self.c_out = c_out
        self.seq_len = seq_len
        self.pred_len = pred_len
        self.dim_feedforward = dim_feedforward or 4 * d_model
        self.growth_layer = GrowthLayer(d_model, nhead, dropout=dropout)
        self.seasonal_layer = FourierLayer(d_model, pred_len, k=k)
        self.level_layer = LevelLayer(d_model, c_out, dropout=dropout)
        self.ff = Feedforward(d_model, self.dim_feedforward, dropout=dropout, activation=activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, res: torch.Tensor, level: torch.Tensor, attn_mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        season = self.dropout2(self.seasonal_layer(res))  # [B, T + H, D]
        res = res - season[:, :-self.pred_len]
        growth = self.dropout1(self.growth_layer(res))  # [B, T + 1, D]
        res = self.norm1(res - growth[:, 1:])
        res = self.norm2(res + self.ff(res))
        level = self.level_layer(level, growth[:, :-1], season[:, :-self.pred_len])  # [B, T, c_out]
        return res, level, growth, season


class Encoder(nn.Module):
    """Encoder layers in sequence: res `[B, T, d_model]`, level `[B, T, c_out]` → (level, [growth per
    layer], [season per layer]). The last layer's residual is not used (as in TSLib)."""

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, res: torch.Tensor, level: torch.Tensor, attn_mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        growths, seasons = [], []
        for layer in self.layers:
            res, level, growth, season = layer(res, level, attn_mask=None)
            growths.append(growth)
            seasons.append(season)
        return level, growths, seasons


class DampingLayer(nn.Module):
    """Damped growth: the last growth x `[B, 1, D]` → `[B, pred_len, D]`, step h scaled per head by
    Σ_{i=1}^{h} φ^i with φ = sigmoid(_damping_factor)."""

    def __init__(self, pred_len: int, nhead: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.pred_len = pred_len
        self.nhead = nhead
        self._damping_factor = nn.Parameter(torch.randn(1, nhead))
        self.dropout = nn.Dropout(dropout)

    @property
    def damping_factor(self) -> torch.Tensor:
        """φ per head, `[1, H]`."""
        return torch.sigmoid(self._damping_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, d = x.shape
        powers = torch.arange(1, self.pred_len + 1, device=x.device)[:, None]  # [H_pred, 1]
        damping = (self.damping_factor ** powers).cumsum(dim=0)  # [pred_len, nhead]
        x = self.dropout(x.expand(b, self.pred_len, d)).view(b, self.pred_len, self.nhead, -1)
        return (x * damping[None, :, :, None]).view(b, self.pred_len, d)


class DecoderLayer(nn.Module):
    """Horizon of one encoder layer: growth `[B, T + 1, D]`, season `[B, T + pred_len, D]` →
    (damped growth `[B, pred_len, D]`, season `[B, pred_len, D]`)."""

    def __init__(self, d_model: int, nhead: int, c_out: int, pred_len: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.d_model = d_model
        self.nhead = nhead
        self.c_out = c_out
        self.pred_len = pred_len
        self.growth_damping = DampingLayer(pred_len, nhead, dropout=dropout)
        self.dropout1 = nn.Dropout(dropout)

    def forward(self, growth: torch.Tensor, season: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        growth_horizon = self.dropout1(self.growth_damping(growth[:, -1:]))
        return growth_horizon, season[:, -self.pred_len:]


class Decoder(nn.Module):
    """Sums the layers' horizons and projects each sum D → c_out: lists of growths and seasons →
    (growth `[B, pred_len, c_out]`, season `[B, pred_len, c_out]`)."""

    def __init__(self, layers: list[DecoderLayer]) -> None:
        super().__init__()
        self.d_model = layers[0].d_model
        self.c_out = layers[0].c_out
        self.pred_len = layers[0].pred_len
        self.nhead = layers[0].nhead
        self.layers = nn.ModuleList(layers)
        self.pred = nn.Linear(self.d_model, self.c_out)

    def forward(self, growths: list[torch.Tensor], seasons: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        horizons = [layer(growth, season) for layer, growth, season in zip(self.layers, growths, seasons, strict=True)]
        growth_repr = sum(h[0] for h in horizons)
        season_repr = sum(h[1] for h in horizons)
        return self.pred(growth_repr), self.pred(season_repr)


# Interchangeable implementations with one signature each.
SMOOTHING = {"fft": exponential_smoothing, "reference": exponential_smoothing_reference}
EXTRAPOLATION = {"fft": fourier_extrapolation, "reference": fourier_extrapolation_reference}
