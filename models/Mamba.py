"""Mamba: one `mamba_ssm.Mamba` block (Gu & Dao, "Mamba: Linear-Time Sequence Modeling with Selective State
Spaces", 2023, https://arxiv.org/abs/2312.00752), TSLib's forecaster over the authors' CUDA kernels.

For each sample, the window is instance-normalised (mean, biased std, detached; `layers.StandardNorm`), then
    x = DataEmbedding(x, x_mark)      `[B, L, d_model]`
    x = Mamba(x)                      one block of the `mamba_ssm` package: in_proj, causal depthwise conv1d,
                                      SiLU, selective SSM (x_proj, dt_proj, A_log, D), SiLU gate, out_proj
    ŷ = Linear(x)                     `[B, L, c_out]` (no residual, no norm: TSLib's layout)
and de-normalised; the forecast is the last `pred_len` of the L outputs, so `--pred_len` ≤ `--seq_len`.
`--e_layers` is not read (one block, as in TSLib); `--d_ff` is the SSM state size, `--expand` and `--d_conv`
the block's inner-width factor and kernel.

`mamba_ssm` needs CUDA: without it `--model Mamba` stops with a one-line error pointing to `--model
MambaSimple`, the same block in pure torch (`layers.Mamba_Blocks`, TSLib's MambaSimple, with residual
RMSNorm blocks). The package is imported when the model is built, not when this file is imported.

Difference from TSLib: with `--c_out` < `--enc_in` (features MS) the forecast keeps `--c_out` channels,
de-normalised with the last `--c_out` input variates' statistics (see models/MambaSimple.py).
"""

from __future__ import annotations

import argparse
import importlib

import torch
import torch.nn as nn

from layers.Embed import DataEmbedding
from layers.StandardNorm import Normalize
from models.MambaSimple import check_mamba_config
from utils.errors import UserInputError
from utils.flag_defaults import flag_default

INSTALL_HINT = ("Mamba needs the mamba_ssm package, which runs on CUDA only: install it on a CUDA machine "
                "(pip install mamba-ssm) or use --model MambaSimple (the same block in pure torch)")


def mamba_ssm_block() -> type[nn.Module]:
    """`mamba_ssm.Mamba`, or a one-line UserInputError saying how to get it."""
    try:
        return importlib.import_module("mamba_ssm").Mamba
    except (ImportError, AttributeError) as err:
        raise UserInputError(f"{INSTALL_HINT} ({type(err).__name__}: {err})") from None


def runs_on_cpu(block: nn.Module) -> bool:
    """Whether a block class can run on CPU tensors (mamba_ssm's cannot; a block may declare `runs_on_cpu`)."""
    return bool(getattr(block, "runs_on_cpu", False))


class Model(nn.Module):
    """Mamba for long/short-term forecasting: x_enc `[B, L, enc_in]`, x_mark_enc `[B, L, F]` or None →
    `[B, pred_len, c_out]`; x_dec and x_mark_dec are not read.

    Reads seq_len, pred_len, enc_in, c_out, d_model, d_ff (state size), expand, d_conv, dropout, embed, freq,
    use_gpu, gpu_type (mamba_ssm's kernels need a CUDA device).
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        check_mamba_config(configs, "Mamba")
        block = mamba_ssm_block()
        wants_cuda = (getattr(configs, "use_gpu", flag_default("use_gpu"))
                      and getattr(configs, "gpu_type", flag_default("gpu_type")) == "cuda")
        if not runs_on_cpu(block) and not (wants_cuda and torch.cuda.is_available()):
            raise UserInputError("Mamba runs mamba_ssm's CUDA kernels, but this run has no CUDA device "
                                 "(no GPU, --no_use_gpu or --gpu_type mps): run it on a CUDA GPU or use "
                                 "--model MambaSimple")
        self.pred_len = configs.pred_len
        d_model = configs.d_model
        self.normalize = Normalize(configs.enc_in, eps=1e-5)
        # Built in TSLib's order, so a seed gives TSLib's initial weights.
        self.embedding = DataEmbedding(configs.enc_in, d_model, configs.embed, configs.freq, configs.dropout)
        self.mamba = block(d_model=d_model, d_state=configs.d_ff, d_conv=configs.d_conv, expand=configs.expand)
        self.out_layer = nn.Linear(d_model, configs.c_out, bias=False)

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        if x_enc.device.type != "cuda" and not runs_on_cpu(self.mamba):
            raise UserInputError(f"Mamba runs mamba_ssm's CUDA kernels; got inputs on {x_enc.device}: "
                                 "move the model and data to a CUDA device or use --model MambaSimple")
        x = self.embedding(self.normalize(x_enc, "norm"), x_mark_enc)  # [B, L, d_model]
        out = self.out_layer(self.mamba(x))  # [B, L, c_out]
        return self.normalize(out[:, -self.pred_len:], "denorm")  # [B, H, c_out]
