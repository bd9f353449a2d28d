"""CAPS forecaster: the full architecture of the CAPS paper (Appendix "Full Architecture").

Pipeline for x `[B, L, C]`, horizon H, T = L + H, Ct decoded channels (the last `c_out`, see
`Model._decoded_channels`):

1. last-value normalisation  x̃_c = x_c − x_{c,L};
2. horizon extension  x_ext = [x̃; W_ext x̃] `[B, C, T]` (W_ext ∈ R^{L×H}, bias-free);
3. F time-feature channels, normalised per window, prepended `[B, F + C, T]`;
4. random-ratio channel dropout (training only) on the copy that feeds the channel tokens;
5. dual tokens h_{c,t} = [W_c x_t ; x_{c,t} V_c] + pos_t + chan_c `[B, Ct, T, D]`;
6. channel-independent pre-norm blocks on `[B·Ct, T, D]` (CAPS attention + 4× GELU MLP);
7. tied read-out ŷ_{c,t} = ⟨h_{c,t}[−d_emb:], V_c⟩ for t > L, plus x_{c,L}.

Width rule of the official code (the paper states other widths): d_emb = 4·nearest_pow2_sqrt(C + F); d_input = the same rule
when `--d_model 0`, else `--d_model`; D = d_input + d_emb; heads = `--n_heads` or d_input // 8.

Drop-in: this file imports only torch, the standard library, `layers.CAPS_Attention` and the `layers/caps/`
folder beside it, and reads every CAPS option with `getattr(configs, name, default)` (defaults from the
attention's CAPS_OPTIONS and the model's CAPS_MODEL_OPTIONS in `layers/caps/model_options.py`, which
exp/arguments.py also turns into run.py flags), so it runs in a stock TSLib checkout.

Time features without a `--time_emb_dim` flag: the channel-token mixer always has C + F inputs with
F = `time_emb_dim` (default 4, the width of TSLib's hourly timeF marks), so parameter shapes never
depend on the batch. At run time the last min(F, marks width) mark columns are used (for timeF marks
finer than hourly, those are the four hourly features the official scripts use) and the remaining
mark channels are zero; marks given as None count as all-zero marks. A zero channel contributes
nothing through the bias-free mixer, so this is exactly "min(F, width) channels, or 0 without marks".

TSLib's other tasks (imputation, anomaly detection, classification) reuse steps 3-6 and the tied
read-out over the window alone (T = L), with bidirectional blocks by default (`--caps_direction`):
layers/CAPS_Attention.md, "CAPS in TSLib's other tasks".
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

from layers.caps.mlp import gelu_mlp
from layers.caps.mlp_branch import residual_gelu_mlp_tiled
from layers.caps.model_options import (
    CAPS_MODEL_OPTIONS,
    MARK_NORM_CHOICES,
)
from layers.caps.rmsnorm import rms_norm
from layers.CAPS_Attention import CAPS_OPTIONS, CAPSAttention, CAPSOption, follow_numerics, parse_paths

FORECAST_TASKS = ("long_term_forecast", "short_term_forecast")
# TSLib's tasks CAPS serves; the last three read the whole window (CAPS_Attention.md, "CAPS in TSLib's other tasks").
CAPS_TASKS = (*FORECAST_TASKS, "imputation", "anomaly_detection", "classification")
TASKS = CAPS_TASKS  # the name every model module declares its tasks under
# Floor on the kept fraction (official) and on 1 − r (paper): keeps the survivor rescale finite.
KEEP_FLOOR = 1e-6
# Added to the per-window standard deviation of each time-feature channel (as the official code).
MARK_STD_EPS = 1e-8
# Paper numerics: a mark whose window std is below this is treated as constant (scale 1).
MARK_STD_FLOOR = 1e-6
# --caps_mark_norm floored: the least scale, a tenth of the unit range of TSLib's timeF marks ([-0.5, 0.5]),
# so a normalised mark stays within +-10 (|m - m_L| <= 1) however still the mark is over the window.
MARK_RANGE_FLOOR = 0.1
# --caps_mark_norm modes that divide by the window std (which needs L >= 2).
MARK_NORMS_WITH_STD = ("window", "official", "floored")
RMS_EPS = 1e-5
INIT_STD = 0.02


def nearest_pow2_sqrt(x: int) -> int:
    """2^max(1, round(log2 √x)), with Python's half-to-even rounding (x = 32 → 4, 128 → 16, 512 → 16).

    log2 √x is computed as log2(x) / 2, which is exact at the tie points (x a power of two)."""
    return 2 ** max(1, round(math.log2(x) / 2))


def caps_widths(enc_in: int, time_emb_dim: int, d_model: int, n_heads: int) -> tuple[int, int, int]:
    """The official width rule: returns (d_input, d_emb, heads); D = d_input + d_emb."""
    d_emb = 4 * nearest_pow2_sqrt(enc_in + time_emb_dim)
    d_input = d_emb if d_model == 0 else d_model
    heads = n_heads if n_heads > 0 else d_input // 8
    return d_input, d_emb, heads


def random_ratio_channel_dropout(x: torch.Tensor, ratio: torch.Tensor, uniform: torch.Tensor,
                                 rescale: str = "paper") -> torch.Tensor:
    """Drop channel n of sample b when uniform[b, n] < ratio[b] and rescale the survivors.

    x: `[B, N, T]`; ratio r: `[B, 1, 1]` in [0, 1); uniform u: `[B, N, 1]` in [0, 1).
    `rescale="paper"`: survivors × 1/(1 − r), so E[output | r] = x for every r.
    `rescale="official"`: survivors × 1/(realised kept fraction of the sample), floored at 1e-6.

    The paper's factor 1/(1 − r) is unbounded as r → 1 (its mean over r ~ U(0, 1) even diverges,
    although the masked product keeps mean 1). A float32 r is at most 1 − 2⁻²⁴; 1 − r is further
    floored at 1e-6, which bounds the factor by 1e6 and changes nothing unless r > 1 − 1e-6.
    """
    keep = (uniform >= ratio).to(x.dtype)  # [B, N, 1]
    if rescale == "official":
        scale = 1.0 / keep.mean(dim=1, keepdim=True).clamp_min(KEEP_FLOOR)  # [B, 1, 1]
    else:
        scale = 1.0 / (1.0 - ratio).clamp_min(KEEP_FLOOR).to(x.dtype)  # [B, 1, 1]
    return x * (keep * scale)


def normalise_marks(mark_enc: torch.Tensor, mark_fut: torch.Tensor, mode: str = "window") -> torch.Tensor:
    """Per-window time-feature normalisation (m − m_L) / s over the whole window (`--caps_mark_norm`).

    mark_enc: `[B, L, F]` encoder marks (L ≥ 2 for the modes with a std, which is unbiased); mark_fut:
    `[B, H, F]`. Returns `[B, L + H, F]`. s by mode (CAPS_Attention.md, "Hazards and switches"):
    - "window" (paper numerics' default; the paper does not describe this step): s = std_L(m) when it
      exceeds 1e-6, else 1. A mark that is nearly constant over the L steps (day-of-year in a 96-hour
      window: std ≈ 3e-3) is amplified by 1/std, and its future values reach 10²–10³.
    - "official": s = std_L(m) + 1e-8, as the official code; a mark constant over the encoder steps
      (day-of-week in an ETTm window that covers one day, about 1% of windows) sends its future to ~1e7.
    - "shift": s = 1, the marks' own scale (TSLib's timeF marks lie in [−0.5, 0.5], so |out| ≤ 1).
    - "floored": s = max(std_L(m), MARK_RANGE_FLOOR = 0.1), so |out| ≤ 10 for timeF marks.
    - "raw": the marks as given, neither shifted nor scaled (TSLib's convention: absolute calendar phase).
    """
    marks = torch.cat([mark_enc, mark_fut], dim=1)  # [B, T, F]
    if mode == "raw":
        return marks
    last = mark_enc[:, -1:, :]  # [B, 1, F]
    if mode == "shift":
        return marks - last
    std = mark_enc.std(dim=1, keepdim=True)  # [B, 1, F]
    if mode == "official":
        spread = std + MARK_STD_EPS
    elif mode == "floored":
        spread = std.clamp_min(MARK_RANGE_FLOOR)
    elif mode == "window":
        spread = torch.where(std > MARK_STD_FLOOR, std, torch.ones_like(std))
    else:
        raise ValueError(f"--caps_mark_norm {mode!r} is invalid: choose one of {', '.join(MARK_NORM_CHOICES[1:])}")
    return (marks - last) / spread  # [B, T, F]


class RMSNorm(nn.Module):
    """y = x · rsqrt(mean(x²) + 1e-5) · w, computed in float32 (float64 for float64 x) and cast back (no bias).

    `fused` (default): `layers.caps.rmsnorm.rms_norm_fused`, the same forward with an analytic backward that
    keeps only x and the inverse RMS; False: the formula under autograd (`rms_norm_reference`)."""

    def __init__(self, dim: int, eps: float = RMS_EPS, fused: bool = True) -> None:
        super().__init__()
        self.eps = eps
        self.fused = fused
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps, self.fused)


class MLP(nn.Module):
    """x ↦ Dropout(W_down GELU(W_up x)), bias-free, hidden width 4·D; W_down is named `c_proj`.

    `tiled` (default): `layers.caps.mlp.gelu_mlp_tiled`, the same forward in cache-sized tiles of token rows,
    keeping only x for backward (W_up x and GELU recomputed there, tile by tile); False: the plain modules under
    autograd (`gelu_mlp_reference`)."""

    def __init__(self, dim: int, dropout: float, tiled: bool = True) -> None:
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim, bias=False)
        self.c_proj = nn.Linear(4 * dim, dim, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.tiled = tiled

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(gelu_mlp(x, self.c_fc.weight, self.c_proj.weight, self.tiled))


def reverse_time(x: torch.Tensor, reverse: torch.Tensor) -> torch.Tensor:
    """x `[N, T, D]` reordered along time by the index `[N, T]` (row n: out[n, t] = x[n, reverse[n, t]])."""
    return x.gather(1, reverse[..., None].expand_as(x))


def time_reversal(lengths: torch.Tensor, total: int) -> torch.Tensor:
    """The index `[N, T]` that reverses the first lengths[n] steps of row n and keeps the rest in place.

    It is an involution, so the same gather undoes it; the steps after lengths[n] (trailing padding) stay
    after the valid ones, so a causal kernel on the reordered row never lets them reach a valid step."""
    steps = torch.arange(total, device=lengths.device)  # [T]
    lengths = lengths[:, None]  # [N, 1]
    return torch.where(steps < lengths, lengths - 1 - steps, steps)  # [N, T]


def bidirectional_attention(attn: nn.Module, x: torch.Tensor, reverse: torch.Tensor) -> torch.Tensor:
    """½ (attn(x) + R attn(R x)), R = `reverse_time(·, reverse)`: the causal layer over the window and over
    its time reversal (one call on the two stacked along the batch), so step t sees every step of the window.

    x: `[N, T, D]`; reverse: `[N, T]` from `time_reversal`. The mean (not the sum) keeps the residual
    branch at the scale the causal block's scaled `c_proj` init assumes."""
    both = attn(torch.cat([x, reverse_time(x, reverse)]))  # [2N, T, D]
    ahead, back = both.chunk(2)
    return 0.5 * (ahead + reverse_time(back, reverse))


class CAPSBlock(nn.Module):
    """Pre-norm block: x ← x + Attn(RMSNorm(x)); x ← x + MLP(RMSNorm(x)). Shapes `[B, T, D]`.

    With `reverse` (`[B, T]`, see `time_reversal`) Attn is `bidirectional_attention`; without it, the causal layer.
    On the CPU, with fused norms, autocast off and no forward hook on the modules, each half runs as tiled
    functions with the same forward: the causal attention half by `CAPSAttention.pre_norm_residual` (norm folded
    into the input projections), the MLP half, with its dropout inactive and the MLP tiled, by
    `layers.caps.mlp_branch.residual_gelu_mlp_tiled`. Otherwise module by module (the GPU: tiles would only add
    kernel launches)."""

    def __init__(self, dim: int, attention: nn.Module, dropout: float) -> None:
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = attention
        self.norm2 = RMSNorm(dim)
        self.mlp = MLP(dim, dropout)

    def forward(self, x: torch.Tensor, reverse: torch.Tensor | None = None) -> torch.Tensor:
        if reverse is None and self._attention_half_prenormed(x):
            x = self.attn.pre_norm_residual(x, self.norm1.weight, self.norm1.eps)
        elif reverse is None:
            x = x + self.attn(self.norm1(x))
        else:
            x = x + bidirectional_attention(self.attn, self.norm1(x), reverse)
        if self._mlp_half_in_tiles(x):
            return residual_gelu_mlp_tiled(x, self.norm2.weight, self.norm2.eps, self.mlp.c_fc.weight,
                                           self.mlp.c_proj.weight)
        return x + self.mlp(self.norm2(x))

    def _attention_half_prenormed(self, x: torch.Tensor) -> bool:
        return (x.device.type == "cpu" and self.norm1.fused and hasattr(self.attn, "pre_norm_residual")
                and not _hooked(self.norm1, self.attn) and not torch.is_autocast_enabled("cpu"))

    def _mlp_half_in_tiles(self, x: torch.Tensor) -> bool:
        dropout_on = self.training and self.mlp.dropout.p > 0
        return (x.device.type == "cpu" and self.norm2.fused and self.mlp.tiled and not dropout_on
                and not _hooked(self.norm2, self.mlp) and not torch.is_autocast_enabled("cpu"))


def _hooked(*modules: nn.Module) -> bool:
    """True when a forward (pre-)hook is registered on one of `modules`: the block then calls them one by one,
    so hooks (`python -m explain`, a user's own) see each module's input and output."""
    return any(module._forward_hooks or module._forward_pre_hooks for module in modules)


def _option(name: str) -> CAPSOption:
    return CAPS_OPTIONS.get(name) or CAPS_MODEL_OPTIONS[name]


def _tslib_flag(configs, name: str):
    """A flag of TSLib's own run.py (seq_len, d_model, dropout, ...): read, never re-defaulted here, so a
    namespace without it is an error rather than a silent value that differs from run.py's default."""
    if not hasattr(configs, name):
        raise ValueError(f"configs has no {name}: CAPS reads TSLib's --{name}; pass the namespace TSLib's "
                         "run.py (or exp.arguments.build_parser) builds")
    return getattr(configs, name)


def _flag_int(configs, name: str, minimum: int) -> int:
    """An integer flag >= minimum: TSLib's own flags are required (see `_tslib_flag`); CAPS's own default to
    their CAPS_OPTIONS / CAPS_MODEL_OPTIONS value (a stock TSLib run.py does not define them)."""
    caps_flag = name in CAPS_OPTIONS or name in CAPS_MODEL_OPTIONS
    value = getattr(configs, name, _option(name).default) if caps_flag else _tslib_flag(configs, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"--{name} {value!r} must be an integer >= {minimum}")
    return value


def _flag_choice(configs, name: str) -> str:
    """A CAPS choice flag, checked against its CAPS_OPTIONS / CAPS_MODEL_OPTIONS choice list."""
    option = _option(name)
    value = getattr(configs, name, option.default)
    if value not in option.choices:
        raise ValueError(f"--{name} {value!r} is not valid; use one of {', '.join(option.choices)}")
    return value


def _checked_widths(enc_in: int, time_emb_dim: int, d_model: int, n_heads: int,
                    rope: str) -> tuple[int, int, int, int]:
    """(d_input, d_emb, heads, width D = d_input + d_emb) of `caps_widths`, or a ValueError naming the flag."""
    d_input, d_emb, heads = caps_widths(enc_in, time_emb_dim, d_model, n_heads)
    width = d_input + d_emb
    if heads == 0:
        raise ValueError(f"--n_heads 0 derives d_input // 8 = {d_input} // 8 = 0 heads; pass --n_heads explicitly")
    if width % heads != 0:
        raise ValueError(f"--n_heads {heads} does not divide the width D = d_input + d_emb = "
                         f"{d_input} + {d_emb} = {width} (--d_model {d_model}); choose --d_model "
                         f"so that --d_model + {d_emb} is a multiple of {heads}")
    if rope != "none" and (width // heads) % 2 != 0:
        raise ValueError(f"RoPE rotates feature pairs but the head width D / --n_heads = {width} / {heads} "
                         "is odd; change --d_model or --n_heads, or pass --caps_rope none")
    return d_input, d_emb, heads, width


class Model(nn.Module):
    """CAPS: forward(x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None) dispatches on `configs.task_name`
    (TSLib's interface; plain tensors in train and eval mode):

    - forecasting (`forecast`, `short_term_forecast`): x_enc `[B, L, C]`, marks `[B, L, F']` / `[B, ≥H, F']`
      or None → `[B, H, Ct]`;
    - `imputation(x_enc, x_mark_enc, x_dec, x_mark_dec, mask)`: x_enc `[B, L, C]` with zeros where mask
      `[B, L, C]` is 0 → `[B, L, Ct]`;
    - `anomaly_detection(x_enc)`: `[B, L, C]` → `[B, L, Ct]`;
    - `classification(x_enc, padding_mask)`: `[B, L, C]`, `[B, L]` (1 = valid step, trailing padding) →
      logits `[B, configs.num_class]`.

    The non-forecast heads and their choices are described in layers/CAPS_Attention.md ("CAPS in TSLib's
    other tasks")."""

    def __init__(self, configs) -> None:
        super().__init__()
        e_layers, d_model, n_heads, dropout = self._read_task_flags(configs)
        attention_options = self._read_caps_flags(configs)
        num_class = self._checked_num_class(configs) if self.task_name == "classification" else 0
        rope = attention_options["rope"]
        d_input, d_emb, heads, width = _checked_widths(self.enc_in, self.time_emb_dim, d_model, n_heads, rope)
        self.d_input, self.d_emb, self.width = d_input, d_emb, width
        self._build_layers(heads, e_layers, dropout, attention_options, num_class)

    def _read_task_flags(self, configs) -> tuple[int, int, int, float]:
        """Sets task_name, seq_len, pred_len (0 outside forecasting) and enc_in; returns (e_layers, d_model,
        n_heads, dropout), each checked."""
        task = _tslib_flag(configs, "task_name")
        if task not in CAPS_TASKS:
            raise ValueError(f"--task_name {task!r} is not supported by CAPS; use one of {', '.join(CAPS_TASKS)}")
        self.task_name = task
        self.seq_len = _flag_int(configs, "seq_len", 1)
        # Only forecasting has a horizon; TSLib's other tasks run with --pred_len 0 (or leave the default).
        self.pred_len = _flag_int(configs, "pred_len", 1) if task in FORECAST_TASKS else 0
        self.enc_in = _flag_int(configs, "enc_in", 1)
        e_layers = _flag_int(configs, "e_layers", 1)
        d_model = _flag_int(configs, "d_model", 0)
        n_heads = _flag_int(configs, "n_heads", 0)
        dropout = float(_tslib_flag(configs, "dropout"))
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"--dropout {dropout!r} must lie in [0, 1)")
        return e_layers, d_model, n_heads, dropout

    def _read_caps_flags(self, configs) -> dict:
        """Sets the model's CAPS switches (numerics, mark_norm, dropout_rescale, checkpoint_rows, time_emb_dim,
        channel_dropout, bidirectional, n_targets); returns CAPSAttention's keyword options (attn, paths,
        rope, numerics, chunk_size, impl, path1_max, path2_decay, rope_layout)."""
        # The attention's options are validated by CAPSAttention (the softmax => naive rule included).
        attn = _flag_choice(configs, "caps_attn")
        paths = parse_paths(getattr(configs, "caps_paths", CAPS_OPTIONS["caps_paths"].default))
        rope = _flag_choice(configs, "caps_rope")
        self.numerics = _flag_choice(configs, "caps_numerics")
        switches = {name: follow_numerics(f"--{name}", _flag_choice(configs, name), _option(name).choices,
                                          self.numerics)
                    for name in ("caps_path1_max", "caps_path2_decay", "caps_rope_layout", "caps_mark_norm",
                                 "caps_dropout_rescale")}
        self.mark_norm, self.dropout_rescale = switches["caps_mark_norm"], switches["caps_dropout_rescale"]
        impl = _flag_choice(configs, "caps_impl")
        chunk = _flag_int(configs, "caps_chunk", 0)  # 0: the device's default chunk
        self.checkpoint_rows = _flag_int(configs, "caps_checkpoint_rows", 0)
        self.time_emb_dim = _flag_int(configs, "time_emb_dim", 0)
        channel_dropout = getattr(configs, "random_channel_dropout", _option("random_channel_dropout").default)
        if channel_dropout not in (0, 1):
            raise ValueError(f"--random_channel_dropout {channel_dropout!r} must be 0 (off) or 1 (on)")
        self.channel_dropout = channel_dropout == 1
        if self.time_emb_dim > 0 and self.seq_len < 2 and self.mark_norm in MARK_NORMS_WITH_STD:
            raise ValueError(f"--seq_len {self.seq_len} leaves no spread to normalise time features by; "
                             "use --seq_len >= 2, --time_emb_dim 0 or --caps_mark_norm shift")
        direction = _flag_choice(configs, "caps_direction")
        forecasting = self.task_name in FORECAST_TASKS
        self.bidirectional = direction == "bidirectional" or (direction == "auto" and not forecasting)
        # Classification pools every channel (c_out means nothing there); the other tasks decode the last c_out.
        self.n_targets = self.enc_in if self.task_name == "classification" else self._decoded_channels(configs)
        return dict(attn=attn, paths=paths, rope=rope, numerics=self.numerics, chunk_size=chunk or None,
                    impl=impl, path1_max=switches["caps_path1_max"], path2_decay=switches["caps_path2_decay"],
                    rope_layout=switches["caps_rope_layout"])

    @staticmethod
    def _checked_num_class(configs) -> int:
        """configs.num_class, a whole number >= 1 (classification only)."""
        num_class = getattr(configs, "num_class", None)
        if isinstance(num_class, bool) or not isinstance(num_class, int) or num_class < 1:
            raise ValueError(f"classification needs configs.num_class >= 1 (got {num_class!r}); the "
                             "classification experiment sets it from the training set's labels")
        return num_class

    def _build_layers(self, heads: int, e_layers: int, dropout: float, attention_options: dict,
                      num_class: int) -> None:
        """The parameters, in the official code's creation order (seeded runs draw its initial weights):
        token mixers, embeddings, blocks, the classification head, the custom init, then out_fill / mask_emb."""
        task, width = self.task_name, self.width
        self.channel_token_mixer = nn.Linear(self.time_emb_dim + self.enc_in, self.d_input, bias=False)
        self.value_token_mixer = nn.Parameter(INIT_STD * torch.randn(self.n_targets, 1, self.d_emb))
        self.pos_emb = nn.Embedding(self.seq_len + self.pred_len, width)
        self.channel_emb = nn.Parameter(torch.zeros(1, self.n_targets, 1, width))
        self.blocks = nn.ModuleList(
            CAPSBlock(width, CAPSAttention(width, heads, dropout=dropout, **attention_options), dropout)
            for _ in range(e_layers)
        )
        if task == "classification":
            # Masked mean over the valid steps of each channel's final states, then one linear layer.
            self.class_norm = RMSNorm(width)
            self.class_dropout = nn.Dropout(dropout)
            self.projection = nn.Linear(self.n_targets * width, num_class)
        self.apply(self._init_module)
        proj_std = INIT_STD / math.sqrt(2 * e_layers)
        for name, param in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(param, mean=0.0, std=proj_std)
        if task in FORECAST_TASKS:
            # Created after the custom init, as in the official code: PyTorch's default U(±1/√L) init.
            self.out_fill = nn.Linear(self.seq_len, self.pred_len, bias=False)
        if task == "imputation":
            # Added to the token of every masked (channel, step): the model knows which zeros are missing values.
            self.mask_emb = nn.Parameter(torch.zeros(1, self.n_targets, 1, width))

    def _decoded_channels(self, configs) -> int:
        """Ct, the number of last channels decoded: --number_of_targets k when given (k must equal --c_out),
        else --c_out (1..enc_in). TSLib's MS data puts the target last, so --features MS --c_out 1 decodes
        the target."""
        n_targets = _flag_int(configs, "number_of_targets", 0)
        if n_targets > self.enc_in:
            raise ValueError(f"--number_of_targets {n_targets} exceeds --enc_in {self.enc_in}; "
                             f"use a value in 0..{self.enc_in} (0 = the last --c_out channels)")
        c_out = _tslib_flag(configs, "c_out")
        if n_targets and c_out != n_targets:
            raise ValueError(f"--number_of_targets {n_targets} disagrees with --c_out {c_out}: CAPS decodes the "
                             f"last --c_out channels; pass --c_out {n_targets} or --number_of_targets 0")
        if isinstance(c_out, bool) or not isinstance(c_out, int) or not 1 <= c_out <= self.enc_in:
            raise ValueError(f"--c_out {c_out!r} must lie in 1..{self.enc_in} (--enc_in): CAPS decodes the last "
                             f"--c_out channels; pass --c_out {self.enc_in} for all of them, 1 for the target")
        return c_out

    @staticmethod
    def _init_module(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.zeros_(module.weight)

    def _time_channels(self, x_mark_enc: torch.Tensor | None, x_mark_dec: torch.Tensor | None,
                       like: torch.Tensor) -> torch.Tensor:
        """The F = time_emb_dim mark channels `[B, F, T]`: the last min(F, width) normalised mark
        columns, right-aligned, with zeros in front (all zeros when marks are None). x_mark_dec's last
        pred_len steps are the horizon's marks (none outside forecasting)."""
        batch, total = like.shape[0], like.shape[-1]
        channels = like.new_zeros(batch, self.time_emb_dim, total)  # [B, F, T]
        if x_mark_enc is None or x_mark_dec is None:
            return channels
        used = min(self.time_emb_dim, x_mark_enc.shape[-1])
        if x_mark_dec.shape[1] < self.pred_len:
            raise ValueError(f"x_mark_dec has {x_mark_dec.shape[1]} steps; CAPS needs its last "
                             f"--pred_len {self.pred_len} steps")
        enc = x_mark_enc[..., -used:].to(like.dtype)  # [B, L, used]
        fut = x_mark_dec[:, x_mark_dec.shape[1] - self.pred_len:, -used:].to(like.dtype)  # [B, H, used]
        channels[:, self.time_emb_dim - used:] = normalise_marks(enc, fut, self.mark_norm).transpose(1, 2)
        return channels

    def _drop_channels(self, inputs: torch.Tensor) -> torch.Tensor:
        """Random-ratio channel dropout with fresh draws: r ~ U(0, 1) per sample, u ~ U(0, 1) per
        (sample, channel), both in float32. inputs: `[B, N, T]`."""
        batch, channels = inputs.shape[:2]
        ratio = torch.rand(batch, 1, 1, device=inputs.device)
        uniform = torch.rand(batch, channels, 1, device=inputs.device)
        return random_ratio_channel_dropout(inputs, ratio, uniform, rescale=self.dropout_rescale)

    def _block_stack(self, z: torch.Tensor, reverse: torch.Tensor | None = None) -> torch.Tensor:
        for block in self.blocks:
            z = block(z, reverse)
        return z

    def _run_blocks(self, z: torch.Tensor, reverse: torch.Tensor | None = None) -> torch.Tensor:
        """The block stack on z `[B·Ct, T, D]` (bidirectional with the reversal index `[B·Ct, T]`, causal
        without). With `--caps_checkpoint_rows N` (N > 0) and gradients on, it runs over groups of N channel
        sequences whose activations are recomputed in backward (activation checkpointing): the sequences
        are independent, so only the group inputs are kept."""
        rows = self.checkpoint_rows
        if rows == 0 or rows >= z.shape[0] or not torch.is_grad_enabled() or torch.compiler.is_compiling():
            return self._block_stack(z, reverse)
        reverses = [None] * len(z.split(rows)) if reverse is None else reverse.split(rows)
        return torch.cat([checkpoint(self._block_stack, part, rev, use_reentrant=False)
                          for part, rev in zip(z.split(rows), reverses, strict=True)])

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None = None) -> torch.Tensor:
        """TSLib's dispatch on `configs.task_name` (shapes in the class docstring)."""
        if self.task_name == "long_term_forecast":
            return self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)
        if self.task_name == "short_term_forecast":
            return self.short_term_forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)
        if self.task_name == "imputation":
            return self.imputation(x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        if self.task_name == "anomaly_detection":
            return self.anomaly_detection(x_enc)
        return self.classification(x_enc, x_mark_enc)

    def short_term_forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                            x_dec: torch.Tensor | None = None,
                            x_mark_dec: torch.Tensor | None = None) -> torch.Tensor:
        """The forecast path (`forecast`). TSLib's M4 experiment passes no marks (None): the time channels
        are then zero and contribute nothing (pass `--time_emb_dim 0` to drop their mixer columns)."""
        return self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)

    def forecast(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                 x_mark_dec: torch.Tensor | None) -> torch.Tensor:
        """x_enc `[B, L, C]`, marks `[B, L, F']` / `[B, ≥H, F']` or None → ŷ `[B, H, Ct]`.

        x_dec is accepted for the TSLib signature and unused: the horizon is filled by the learned
        extension W_ext, not by decoder inputs."""
        batch = x_enc.shape[0]
        targets, horizon = self.n_targets, self.pred_len
        x = x_enc.transpose(1, 2)  # [B, C, L]
        last = x[..., -1:]  # [B, C, 1]
        x = x - last
        x = torch.cat([x, self.out_fill(x)], dim=-1)  # [B, C, T]
        total = x.shape[-1]

        mixer_in = x
        if self.time_emb_dim > 0:
            mixer_in = torch.cat([self._time_channels(x_mark_enc, x_mark_dec, x), x], dim=1)  # [B, F+C, T]
        if self.training and self.channel_dropout:
            mixer_in = self._drop_channels(mixer_in)
        channel_tok = self.channel_token_mixer(mixer_in.transpose(1, 2))  # [B, T, d_input]

        values = x[:, -targets:, :, None] * self.value_token_mixer  # [B, Ct, T, d_emb]
        # The channel token is shared by all target channels: expand is a view, cat writes h once.
        h = torch.cat([channel_tok[:, None].expand(batch, targets, total, self.d_input), values], dim=-1)
        h += self.pos_emb.weight + self.channel_emb  # [B, Ct, T, D]

        reverse = self._full_reversal(batch * targets, total, x.device) if self.bidirectional else None
        z = self._run_blocks(h.view(batch * targets, total, self.width), reverse)  # [B·Ct, T, D]

        read = z.view(batch, targets, total, self.width)[:, :, -horizon:, -self.d_emb:]  # [B, Ct, H, d_emb]
        y = torch.einsum("bche,ce->bch", read, self.value_token_mixer[:, 0, :])  # [B, Ct, H]
        return (y + last[:, -targets:]).transpose(1, 2)  # [B, H, Ct]

    # ---- TSLib's other tasks (layers/CAPS_Attention.md, "CAPS in TSLib's other tasks") ----------------

    @staticmethod
    def _full_reversal(rows: int, total: int, device: torch.device) -> torch.Tensor:
        """The reversal index `[rows, T]` of whole windows (t ↦ T − 1 − t)."""
        return torch.arange(total - 1, -1, -1, device=device).expand(rows, total)

    def _check_window(self, x_enc: torch.Tensor) -> None:
        if x_enc.shape[1] != self.seq_len:
            raise ValueError(f"x_enc has {x_enc.shape[1]} steps but CAPS was built for --seq_len {self.seq_len}")

    def _window_states(self, x: torch.Tensor, x_mark_enc: torch.Tensor | None,
                       missing: torch.Tensor | None = None, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The final states `[B, Ct, L, D]` of the window x `[B, C, L]` (already shifted), with no horizon.

        x_mark_enc: `[B, L, F']` marks or None; missing: `[B, Ct, L]` bool, adds `mask_emb` where True;
        lengths: `[B]` valid steps per sample (trailing padding) for the bidirectional reversal, None = L.
        The tokens are the forecast path's (step 5), over T = L."""
        batch, _, total = x.shape
        targets = self.n_targets
        mixer_in = x
        if self.time_emb_dim > 0:
            no_future = None if x_mark_enc is None else x_mark_enc[:, :0]
            mixer_in = torch.cat([self._time_channels(x_mark_enc, no_future, x), x], dim=1)  # [B, F+C, L]
        if self.training and self.channel_dropout:
            mixer_in = self._drop_channels(mixer_in)
        channel_tok = self.channel_token_mixer(mixer_in.transpose(1, 2))  # [B, L, d_input]
        values = x[:, -targets:, :, None] * self.value_token_mixer  # [B, Ct, L, d_emb]
        h = torch.cat([channel_tok[:, None].expand(batch, targets, total, self.d_input), values], dim=-1)
        h = h + self.pos_emb.weight + self.channel_emb  # [B, Ct, L, D]
        if missing is not None:
            h = h + missing[..., None].to(h.dtype) * self.mask_emb
        reverse = None
        if self.bidirectional:
            if lengths is None:
                reverse = self._full_reversal(batch * targets, total, x.device)
            else:
                reverse = time_reversal(lengths.repeat_interleave(targets), total)  # [B·Ct, L]
        z = self._run_blocks(h.reshape(batch * targets, total, self.width), reverse)  # [B·Ct, L, D]
        return z.view(batch, targets, total, self.width)

    def _read_out(self, z: torch.Tensor) -> torch.Tensor:
        """The tied read-out ⟨z_{c,t}[−d_emb:], V_c⟩: z `[B, Ct, L, D]` → `[B, Ct, L]`."""
        return torch.einsum("bcte,ce->bct", z[..., -self.d_emb:], self.value_token_mixer[:, 0, :])

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window: x_enc `[B, L, C]` (zeros where masked, as TSLib feeds it), marks
        `[B, L, F']` or None, mask `[B, L, C]` (1 observed, 0 missing; None = all observed) → `[B, L, Ct]`.

        Each channel is shifted by the mean of its observed values (CAPS's location-only normalisation;
        the last value may be missing), masked points enter as 0 (= that mean) and their tokens get
        `mask_emb`. x_dec and x_mark_dec are unused (TSLib passes None)."""
        self._check_window(x_enc)
        x = x_enc.transpose(1, 2)  # [B, C, L]
        observed = torch.ones_like(x, dtype=torch.bool) if mask is None else mask.transpose(1, 2) != 0
        x = torch.where(observed, x, torch.zeros_like(x))
        shift = x.sum(-1, keepdim=True) / observed.sum(-1, keepdim=True).clamp_min(1)  # [B, C, 1]
        x = torch.where(observed, x - shift, torch.zeros_like(x))
        z = self._window_states(x, x_mark_enc, missing=~observed[:, -self.n_targets:])
        return (self._read_out(z) + shift[:, -self.n_targets:]).transpose(1, 2)  # [B, L, Ct]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window x_enc `[B, L, C]` → `[B, L, Ct]`; each channel is shifted by its window
        mean (no marks: TSLib's anomaly loaders have none)."""
        self._check_window(x_enc)
        x = x_enc.transpose(1, 2)  # [B, C, L]
        shift = x.mean(-1, keepdim=True)  # [B, C, 1]
        z = self._window_states(x - shift, None)
        return (self._read_out(z) + shift[:, -self.n_targets:]).transpose(1, 2)  # [B, L, Ct]

    def classification(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None) -> torch.Tensor:
        """Logits `[B, num_class]` of x_enc `[B, L, C]` with TSLib's padding mask x_mark_enc `[B, L]` (non-zero
        = valid; padding trailing, as TSLib's collate_fn; None = no padding).

        Values are not shifted (TSLib's UEA loader normalises each series already and the level may be
        the class). Padded steps are zeroed, stay after the valid ones in both directions and are left
        out of the mean over time of each channel's RMS-normed final states `[B, C, D]`, which are
        flattened and projected: padded steps do not reach the logits."""
        self._check_window(x_enc)
        batch, total, _ = x_enc.shape
        if x_mark_enc is None:
            valid = torch.ones(batch, total, dtype=torch.bool, device=x_enc.device)
        else:
            valid = x_mark_enc.reshape(batch, total) != 0  # [B, L]
            if not torch.compiler.is_compiling() and bool((valid[:, 1:] & ~valid[:, :-1]).any()):
                raise ValueError("CAPS classification needs trailing padding (valid steps first, as TSLib's "
                                 "collate_fn pads); got a padding mask with a valid step after a padded one")
        x = torch.where(valid[:, None, :], x_enc.transpose(1, 2), torch.zeros((), dtype=x_enc.dtype,
                                                                              device=x_enc.device))  # [B, C, L]
        lengths = valid.sum(-1)  # [B]
        z = self.class_norm(self._window_states(x, None, lengths=lengths))  # [B, C, L, D]
        z = torch.where(valid[:, None, :, None], z, torch.zeros((), dtype=z.dtype, device=z.device))
        pooled = z.sum(2) / lengths.clamp_min(1)[:, None, None].to(z.dtype)  # [B, C, D]
        return self.projection(self.class_dropout(pooled.flatten(1)))  # [B, num_class]
