"""MambaSL's Mamba block with switchable time variance (MambaSL: "Exploring Single-Layer Mamba for Time Series
Classification", https://openreview.net/pdf?id=YDl4vqQqGP), TSLib's `layers/MambaBlock.Mamba_TimeVariant`
in pure torch: TSLib's runs `mamba_ssm`'s CUDA scan, this one the scans of `layers.Mamba_Blocks`.

The block is Mamba's (Gu & Dao, 2023; the paper's Fig. 3): x, z = in_proj(u) `[B, L, E]` each (E = expand ·
d_model), x → causal depthwise Conv1d (kernel d_conv; none when d_conv = 0) → SiLU → selective SSM, gated by
SiLU(z), then out_proj. In the SSM (`layers.Mamba_Blocks`, per channel e and state index n < N)
    h_t = exp(Δ_t A) ⊙ h_{t-1} + Δ_t B_t u_t,   y_t = C_t · h_t (+ D ⊙ u_t),   A = −exp(A_log)
each of Δ, B, C is either input-dependent (selective, from x_proj of the step) or time-invariant:
- timevariant_dt: Δ_t = softplus(dt_proj(x_proj(u_t)[:R])); off: Δ = softplus(b_Δ), the dt_proj bias alone
  (dt_proj's weight stays, unused, as in TSLib);
- timevariant_B / timevariant_C: B_t, C_t `[N]` from x_proj, shared by the channels; off: a learned `[E, N]`
  (one row per channel, uniform [0, 1) at start);
- use_D: the skip term D `[E]` (ones at start), else none.
x_proj emits only the input-dependent parts (R, N, N wide as switched on; absent when all three are off).

Initialisation is the paper's (mamba_ssm's), in TSLib's draw order: dt_proj's weight uniform in ±R^-½·dt_scale
(or constant), its bias the inverse softplus of Δ drawn log-uniform in [dt_min, dt_max] (floored at
dt_init_floor), A_log = log(1..N) for every channel.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.Mamba_Blocks import SELECTIVE_SCANS
from layers.Mamba_Blocks import dt_rank as auto_dt_rank

DT_INITS = ("random", "constant")


def inverse_softplus(y: torch.Tensor) -> torch.Tensor:
    """x with softplus(x) = y > 0, as y + log(1 − e^−y) (expm1 keeps small y accurate)."""
    return y + torch.log(-torch.expm1(-y))


class Mamba_TimeVariant(nn.Module):
    """One Mamba block whose Δ, B, C are each input-dependent or time-invariant (module doc):
    `[B, L, d_input]` → `[B, L, d_output]`.

    TSLib's constructor (parameter names in_proj, conv1d, x_proj, B, C, dt_proj, A_log, D, out_proj), so its
    checkpoints load. `scan` (ours) picks the pure-torch selective scan, 'sequential' or 'parallel'
    (`layers.Mamba_Blocks.SELECTIVE_SCANS`); there is no fused kernel, so `use_fast_path` must stay False.
    `layer_idx` is kept for TSLib's signature (no decoding cache here).

    Args:
        d_model: model width; E = expand · d_model, R = ⌈d_model / 16⌉ for dt_rank 'auto'.
        d_input, d_output: input / output widths (default d_model).
        d_state: state size N per channel.
        d_conv: causal depthwise convolution kernel (0: no convolution).
        dt_min, dt_max, dt_init, dt_scale, dt_init_floor: Δ's initialisation (module doc).
        conv_bias, bias: biases of conv1d / of in_proj and out_proj.
        timevariant_dt, timevariant_B, timevariant_C, use_D: the switches of the module doc.
    """

    def __init__(self, d_model: int, d_input: int | None = None, d_output: int | None = None, d_state: int = 16,
                 d_conv: int = 4, expand: int = 2, dt_rank: int | str = "auto", dt_min: float = 0.001,
                 dt_max: float = 0.1, dt_init: str = "random", dt_scale: float = 1.0, dt_init_floor: float = 1e-4,
                 conv_bias: bool = True, bias: bool = False, use_fast_path: bool = False,
                 layer_idx: int | None = None, device: torch.device | str | None = None,
                 dtype: torch.dtype | None = None, timevariant_dt: bool = True, timevariant_B: bool = True,
                 timevariant_C: bool = True, use_D: bool = True, scan: str = "sequential") -> None:
        super().__init__()
        _check_arguments(d_model, d_state, d_conv, expand, dt_init, use_fast_path, scan)
        factory = {"device": device, "dtype": dtype}
        self.d_model, self.d_state, self.d_conv, self.expand = d_model, d_state, d_conv, expand
        self.d_input = d_model if d_input is None else d_input
        self.d_output = d_model if d_output is None else d_output
        self.d_inner = expand * d_model
        self.dt_rank = auto_dt_rank(d_model) if dt_rank == "auto" else dt_rank
        self.layer_idx, self.scan = layer_idx, scan
        self.tv_dt, self.tv_B, self.tv_C = bool(timevariant_dt), bool(timevariant_B), bool(timevariant_C)
        # Widths of x_proj's output: the input-dependent parts only (Δ's low-rank input, B, C).
        self.tv_proj_dim = [self.dt_rank if self.tv_dt else 0, d_state if self.tv_B else 0,
                            d_state if self.tv_C else 0]

        # Built in TSLib's order, so a seed gives TSLib's initial weights.
        self.in_proj = nn.Linear(self.d_input, 2 * self.d_inner, bias=bias, **factory)
        # Padding d_conv − 1 on both sides; keeping the first L outputs makes the convolution causal.
        self.conv1d = (nn.Conv1d(self.d_inner, self.d_inner, kernel_size=d_conv, padding=d_conv - 1,
                                 groups=self.d_inner, bias=conv_bias, **factory) if d_conv > 0 else nn.Identity())
        widths = sum(self.tv_proj_dim)
        self.x_proj = nn.Linear(self.d_inner, widths, bias=False, **factory) if widths > 0 else None
        if not self.tv_B:
            self.B = nn.Parameter(torch.rand(self.d_inner, d_state, **factory))
        if not self.tv_C:
            self.C = nn.Parameter(torch.rand(self.d_inner, d_state, **factory))
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True, **factory)
        self._init_dt_proj(dt_init, dt_scale, dt_min, dt_max, dt_init_floor)
        states = torch.arange(1, d_state + 1, dtype=torch.float32, device=device)
        self.A_log = nn.Parameter(torch.log(states).repeat(self.d_inner, 1))  # [E, N], float32 whatever dtype
        if use_D:
            self.D = nn.Parameter(torch.ones(self.d_inner, device=device))
        else:
            self.register_parameter("D", None)
        self.out_proj = nn.Linear(self.d_inner, self.d_output, bias=bias, **factory)

    def _init_dt_proj(self, dt_init: str, dt_scale: float, dt_min: float, dt_max: float, floor: float) -> None:
        """The weight uniform in ±R^-½·dt_scale (or that constant); the bias so that softplus(bias) is
        log-uniform in [dt_min, dt_max], floored at `floor`."""
        std = self.dt_rank ** -0.5 * dt_scale
        if dt_init == "constant":
            nn.init.constant_(self.dt_proj.weight, std)
        else:
            nn.init.uniform_(self.dt_proj.weight, -std, std)
        bias = self.dt_proj.bias
        log_dt = torch.rand(self.d_inner, device=bias.device, dtype=bias.dtype) * (
            math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        with torch.no_grad():
            bias.copy_(inverse_softplus(torch.exp(log_dt).clamp(min=floor)))

    def ssm_inputs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(Δ `[B, L, E]`, B, C) of the convolved inner sequence x `[B, L, E]`; B and C are `[B, L, N]` when
        input-dependent, else the learned `[E, N]`."""
        batch, length, _ = x.shape
        parts = (self.x_proj(x).split(self.tv_proj_dim, dim=-1) if self.x_proj is not None
                 else (None, None, None))  # [B, L, R], [B, L, N], [B, L, N] (the switched-off ones unused)
        if self.tv_dt:
            delta = F.softplus(self.dt_proj(parts[0]))  # [B, L, E]
        else:
            delta = F.softplus(self.dt_proj.bias).expand(batch, length, self.d_inner)  # [B, L, E]
        B = parts[1] if self.tv_B else self.B
        C = parts[2] if self.tv_C else self.C
        return delta, B, C

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """hidden_states `[B, L, d_input]` → `[B, L, d_output]`; step t depends on steps ≤ t only."""
        length = hidden_states.shape[1]
        x, z = self.in_proj(hidden_states).chunk(2, dim=-1)  # [B, L, E] each
        x = F.silu(self.conv1d(x.transpose(1, 2))[..., :length].transpose(1, 2))  # [B, L, E]
        delta, B, C = self.ssm_inputs(x)
        A = -torch.exp(self.A_log.float())  # [E, N]
        y = SELECTIVE_SCANS[self.scan](x, delta, A, B, C, self.D) * F.silu(z)  # [B, L, E]
        return self.out_proj(y)  # [B, L, d_output]


def _check_arguments(d_model: int, d_state: int, d_conv: int, expand: int, dt_init: str, use_fast_path: bool,
                     scan: str) -> None:
    for name, value in (("d_model", d_model), ("d_state", d_state), ("expand", expand)):
        if value <= 0:
            raise ValueError(f"Mamba_TimeVariant: {name} {value} must be positive")
    if d_conv < 0:
        raise ValueError(f"Mamba_TimeVariant: d_conv {d_conv} must be >= 0 (0: no convolution)")
    if dt_init not in DT_INITS:
        raise ValueError(f"Mamba_TimeVariant: dt_init {dt_init!r} is not one of {', '.join(DT_INITS)}")
    if use_fast_path:
        raise ValueError("Mamba_TimeVariant: use_fast_path=True asks for mamba_ssm's fused kernel, which this block "
                         "does not have (TSLib fixes it to False too); leave it False")
    if scan not in SELECTIVE_SCANS:
        raise ValueError(f"Mamba_TimeVariant: scan {scan!r} is not one of {', '.join(SELECTIVE_SCANS)}")
