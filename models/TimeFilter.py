"""TimeFilter (Hu et al., "TimeFilter: Patch-Specific Spatial-Temporal Graph Filtration for Time Series
Forecasting", ICML 2025, https://arxiv.org/abs/2501.13041), TSLib's configuration.

RevIN-normalise (no affine) `[B, L, N]`; cut every variate into p = L / `--patch_len` non-overlapping
patches and embed each as a node, Linear(patch_len → D) + sinusoid position over the N·p nodes
(variate-major, `--pos 1`); run `--e_layers` GraphBlocks over the spatial-temporal patch graph (graph
learning, k-NN pruning by `--alpha`, patch-specific filtration of the spatial / temporal /
spatio-temporal neighbours by a top-p mixture of experts `--top_p`, GCN message passing; see
`layers/TimeFilter_layers.py`); flatten each variate's p node features and map D·p → H with one Linear
shared by the variates; de-normalise.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import check_forecast_config, check_heads, check_output_channels, check_positive
from layers.Embed import PositionalEmbedding
from layers.StandardNorm import Normalize
from layers.TimeFilter_layers import TimeFilter_Backbone, patch_graph_masks
from utils.errors import UserInputError

# TSLib sizes the positional table of TimeFilter's patch embedding for 10,000 nodes.
MAX_NODES = 10000


class PatchEmbed(nn.Module):
    """Non-overlapping patches of the last axis, projected (Linear with bias) plus sinusoid positions:
    `[..., T]` → `[..., T / patch_len, D]`; TSLib's signature (`stride` defaults to `patch_len`)."""

    def __init__(self, dim: int, patch_len: int, stride: int | None = None, pos: bool = True) -> None:
        super().__init__()
        self.patch_len = patch_len
        self.stride = patch_len if stride is None else stride
        self.patch_proj = nn.Linear(patch_len, dim)
        self.pos = pos
        if pos:
            self.pe = PositionalEmbedding(dim, MAX_NODES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = x.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [..., nodes, patch_len]
        tokens = self.patch_proj(patches)  # [..., nodes, D]
        if self.pos:
            tokens = tokens + self.pe(tokens)
        return tokens


def _check_timefilter_config(configs: argparse.Namespace) -> None:
    check_forecast_config(configs, "TimeFilter")
    check_heads(configs)
    check_positive(configs, "e_layers", "d_ff", "patch_len")
    check_output_channels(configs, "TimeFilter")
    if configs.seq_len % configs.patch_len != 0:
        raise UserInputError(
            f"--seq_len {configs.seq_len} is not a multiple of --patch_len {configs.patch_len}: TimeFilter cuts "
            "each variate into whole patches; choose --patch_len dividing --seq_len")
    if not 0.0 <= configs.alpha <= 1.0:
        raise UserInputError(f"--alpha {configs.alpha!r} must lie in [0, 1] (the share of each node's weakest "
                             "edges TimeFilter prunes)")
    if not 0.0 <= configs.top_p <= 1.0:
        raise UserInputError(f"--top_p {configs.top_p!r} must lie in [0, 1] (the cumulative routing probability "
                             "of the neighbour regions TimeFilter keeps)")
    if configs.pos not in (0, 1):
        raise UserInputError(f"--pos {configs.pos!r} must be 0 or 1 (positional embedding off/on)")
    nodes = configs.enc_in * (configs.seq_len // configs.patch_len)
    if configs.pos and nodes > MAX_NODES:
        raise UserInputError(
            f"--enc_in {configs.enc_in} x (--seq_len {configs.seq_len} / --patch_len {configs.patch_len}) = {nodes} "
            f"patch nodes exceed TimeFilter's {MAX_NODES} positions; use a larger --patch_len or --pos 0")


class Model(nn.Module):
    """TimeFilter for long/short-term forecasting: `[B, L, enc_in]` → `[B, H, c_out]`.

    Reads seq_len, pred_len, enc_in, c_out, patch_len, d_model, n_heads, e_layers, d_ff, dropout, alpha,
    top_p, pos. With c_out < enc_in (features MS) the last c_out variates are returned. The backbone's
    auxiliary routing loss of the last forward pass is kept in `moe_loss`.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        _check_timefilter_config(configs)
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.c_out = configs.c_out
        self.n_vars = configs.enc_in
        self.dim = configs.d_model
        self.patch_len = configs.patch_len
        self.num_patches = configs.seq_len // configs.patch_len
        self.alpha = configs.alpha
        self.top_p = configs.top_p
        self.num_nodes = self.n_vars * self.num_patches
        self.patch_embed = PatchEmbed(self.dim, self.patch_len, self.patch_len, bool(configs.pos))
        self.backbone = TimeFilter_Backbone(self.dim, self.n_vars, configs.d_ff, configs.n_heads, configs.e_layers,
                                            self.top_p, configs.dropout, self.num_nodes)
        self.head = nn.Linear(self.dim * self.num_patches, self.pred_len)
        self.norm = Normalize(configs.enc_in)
        self.moe_loss: torch.Tensor | None = None

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        b = x_enc.shape[0]
        x = self.norm(x_enc, "norm")  # [B, L, N]
        # Variate-major nodes: the patches of variate 0, then of variate 1, ...
        series = x.transpose(1, 2).reshape(b, -1)  # [B, N·L]
        nodes = self.patch_embed(series)  # [B, N·p, D]
        masks = patch_graph_masks(self.num_nodes, self.n_vars, x.device, x.dtype)  # [N·p, 3, N·p]
        nodes, self.moe_loss = self.backbone(nodes, masks, self.alpha)
        out = self.head(nodes.reshape(b, self.n_vars, -1))  # [B, N, H]
        return self.norm(out.transpose(1, 2)[:, :, -self.c_out:], "denorm")  # [B, H, c_out]
